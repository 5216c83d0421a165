// SPDX-License-Identifier: MIT
// wssearch: search a workspace's tools (live and cached) for a query (mcpd/searchTools).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "daemon/core/workspace.h"

/*
 * Most tools one search returns: a search is for the few tools a task needs; 50 definitions is
 * already some 12,000 tokens (the corpus's average, docs/search.md). A larger limit is cut here.
 */
#define WSSEARCH_LIMIT_MAX     50
#define WSSEARCH_LIMIT_DEFAULT 5

/*
 * The best min(limit, matches) tools of the workspace's view for query (len bytes) that the
 * agent peer_id may use (its profile), as {"tools":[{name, title?, description, inputSchema,
 * _meta}], "searched": tools ranked}. The index is built on the first search after the view
 * changed. limit is 1..WSSEARCH_LIMIT_MAX.
 */
yajl_val wssearch_tools(Workspace *ws, uint64_t peer_id, const char *query, size_t len,
                        size_t limit);
/** Free the workspace's index (safe when it has none). */
void wssearch_deinit(Workspace *ws);
/**
 * What a workspace asks of its view (WorkspaceViews): a tools/list answered with an agent's
 * search-mode list or else the view, the view's hash, and at its end the index, then the view.
 */
extern const WorkspaceViews wssearch_views;

/* ---- search mode: an agent sees mcpd's two tools and what its searches found ---- */

/* mcpd's own tools in search mode (their definitions: toolsearch_tools_json). */
#define WSSEARCH_TOOL_SEARCH "mcpd_search_tools"
#define WSSEARCH_TOOL_CALL   "mcpd_call_tool"
/*
 * Tools one agent's searches add to its list: each costs the model its definition on every
 * turn, and a session that has searched this much would be better served by all mode. Past it
 * the oldest found tool leaves the list.
 */
#define WSSEARCH_FOUND_MAX 128

/** Whether mode is one wssearch_set_mode() takes. */
bool wssearch_mode_known(const char *mode);
/**
 * mode "search" or "all" for the agent p (mcpd/toolMode, or _meta["mcpd/toolMode"] at its
 * initialize); -EINVAL for another. With notify, a change is told list_changed.
 */
int wssearch_set_mode(WorkspaceRegistry *wr, Peer *p, const char *mode, bool notify);
/**
 * wsprofile_choose(), then the profile's mode: search puts the agent in search mode (auto
 * decides at its first tools/list, in wssearch_send_list()).
 */
int wssearch_choose_profile(WorkspaceRegistry *wr, Peer *p, const char *asked, char **whyp);
/** What the agent in search mode is shown, into c (then true); false: not in search mode. */
bool wssearch_agent_cost(Workspace *ws, uint64_t peer_id, TokenCost *c);
/**
 * The agent's tools/list if it is in search mode (then true); false: list it as usual. An agent
 * whose profile says auto is put in search mode here first if its tools pass the budget.
 */
bool wssearch_send_list(Workspace *ws, Peer *p, yajl_val id);
/**
 * mcpd_search_tools called with args (JSON text, NULL: {}): the CallToolResult as JSON text (to
 * free). The tools found join the agent's list (search mode), which is told list_changed.
 */
char *wssearch_call(Workspace *ws, Peer *p, const char *args, size_t len);
/** The agent has gone: forget its mode and what it found. */
void wssearch_forget(WorkspaceRegistry *wr, uint64_t peer_id);
/** Forget every agent (daemon exit). */
void wssearch_registry_deinit(WorkspaceRegistry *wr);
