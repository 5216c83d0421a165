// SPDX-License-Identifier: MIT
// wsprofile: the profile each agent was given (mcpd.json's profiles) and what it lets the agent
// see: its tools/list, the tools its searches rank, the tools it may call, auto's choice of mode.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "common/tokens.h"
#include "daemon/core/workspace.h"

/**
 * Give the agent p its profile, once it is attached: asked (its _meta["mcpd/profile"], from
 * `mcpctl bridge --profile`) if set, else its project's choice (<root>/.mcpd/mcpd.json
 * "profile"), else clientProfiles[its clientInfo.name], else none. -ENOENT, with *whyp saying
 * what to do, when asked names no profile. (wssearch_choose_profile() also applies its mode.)
 */
int wsprofile_choose(WorkspaceRegistry *wr, Peer *p, const char *asked, char **whyp);
/** Whether wsprofile_choose() ran for this agent (a 2026-07-28 agent is given one once). */
bool wsprofile_chosen(WorkspaceRegistry *wr, uint64_t peer_id);
/** The agent's profile, or NULL (none, or it left mcpd.json at a reload). */
const Profile *wsprofile_of(WorkspaceRegistry *wr, uint64_t peer_id);
/** Whether the agent may see and call server's tool (its own name). */
bool wsprofile_allows_tool(WorkspaceRegistry *wr, uint64_t peer_id, const char *server,
                           const char *tool);
/** Whether the agent may see and call server s's tool j. */
bool wsprofile_allows(WorkspaceRegistry *wr, uint64_t peer_id, Server *s, size_t j);
/** Whether the agent's profile pins server s's tool j. */
bool wsprofile_pinned(WorkspaceRegistry *wr, uint64_t peer_id, Server *s, size_t j);
/**
 * An agent whose profile says auto, at its first list: whether what it would see passes the
 * token budget (then it goes to search mode). False for any other agent, and after the first.
 */
bool wsprofile_decide(Workspace *ws, Peer *p);
/** The agent's tools/list if its profile narrows it (then true); false: list it as usual. */
bool wsprofile_send_list(Workspace *ws, Peer *p, yajl_val id);
/**
 * What the agent is shown in all mode, into c, and its mode ("all", or "auto" not decided yet)
 * into *modep; false when it is shown the workspace's whole view.
 */
bool wsprofile_agent_cost(Workspace *ws, uint64_t peer_id, TokenCost *c, const char **modep);
/** The agent has gone: forget its profile. */
void wsprofile_forget(WorkspaceRegistry *wr, uint64_t peer_id);
/** Forget every agent (daemon exit). */
void wsprofile_registry_deinit(WorkspaceRegistry *wr);
