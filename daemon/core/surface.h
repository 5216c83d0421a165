// SPDX-License-Identifier: MIT
// surface: prompts, resources, resource templates, subscriptions and completion of the
// upstreams, listed, named, routed and rewritten into each workspace's view.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include <yajl/yajl_tree.h>

#include "common/json.h"
#include "daemon/core/manager.h"

typedef enum SurfaceKind {
    SURFACE_PROMPTS,
    SURFACE_RESOURCES,
    SURFACE_TEMPLATES,
    SURFACE_N,
} SurfaceKind;

/*
 * Items per page of a merged prompts/list, resources/list or resources/templates/list: large
 * enough that a usual workspace fits in one page, small enough that one reply stays far below
 * maxMessageBytes even with long descriptions.
 */
#define SURFACE_PAGE_SIZE 500
/*
 * Longest URI an agent may name. Web servers and browsers refuse request targets beyond about
 * 8 KiB; MCP resource URIs are identifiers, far shorter.
 */
#define SURFACE_MAX_URI_BYTES 8192
/*
 * Steps one URI-template match may take: {var} parts backtrack, so a hostile template with many
 * variables could otherwise cost time exponential in its length.
 */
#define SURFACE_MATCH_STEPS 100000

/* A server's part: its lists, capabilities and subscriptions (Server.surface). */
typedef struct ServerSurface ServerSurface;
/* A workspace's part: its coalesced list_changed notifications (Workspace.surface). */
typedef struct WsSurface WsSurface;

/* ---- servers (through ManagerExt) ---- */

/** The server's session is up (first list done): capabilities kept, lists fetched, resubscribed. */
void surface_server_connected(Server *s);
/** The server's subscriptions sent to it again (after a resume); how many. */
size_t surface_resubscribe(Server *s);
/** A new server: its last known surface from the cache, shown deferred until it connects. */
void surface_load_cache(Server *s);
/** The server's lists are void (disconnected for good): they leave every view. */
void surface_server_clear(Server *s);
/** Free everything of a server's part (the server is being freed). */
void surface_server_free(Server *s);
/** An upstream notification of the surface; false when it is not one. */
bool surface_notification(Server *s, const char *method, yajl_val params);
/** Whether it holds what needs server s running: an agent's resource subscription. */
bool surface_server_busy(Server *s);
/** Counts for status: prompts, resources, resourceTemplates, subscriptions. */
void surface_status(Server *s, yajl_val o);

/* ---- workspaces and calls (through WorkspaceExt) ---- */

void surface_ws_free(Workspace *ws);
/**
 * The workspace's server set changed: agents hear of prompt and resource changes (coalesced).
 * first: a new workspace, whose lists now are what its agents start from (nothing is sent).
 */
void surface_ws_changed(Workspace *ws, bool first);
/** The URI agents of ws see for uri as server s names it (new string). */
char *surface_expose_uri(Workspace *ws, Server *s, const char *uri);
/** Rewrite the URIs in a result of s (tool content, read contents, prompt messages) for ws. */
void surface_rewrite_result(Workspace *ws, Server *s, yajl_val result);
/** Whether a raw result may hold URIs to rewrite (cheap test for the tools/call hot path). */
bool surface_raw_has_uris(const char *raw, size_t len);

/* ---- agents (methods-mcp.c, manager.c) ---- */

/** Capabilities for initialize: exactly what at least one of the workspace's servers offers. */
void surface_capabilities(Manager *m, Peer *p, yajl_val caps);
/** Each server's instructions, labelled; NULL when none has any. */
char *surface_instructions(Manager *m, Peer *p);
void surface_list(Manager *m, Peer *p, yajl_val id, SurfaceKind kind, yajl_val params);
/** The same behind the workspace's start-up gate, like tools/list (ws_list_gated). */
void surface_list_gated(Manager *m, Peer *p, yajl_val id, SurfaceKind kind, yajl_val params);
void surface_prompt_get(Manager *m, Peer *p, yajl_val id, yajl_val params);
void surface_read(Manager *m, Peer *p, yajl_val id, yajl_val params);
/**
 * Subscribe p to a resource's updates (on) or end that: 0, or a JSON-RPC error code with
 * *whyp (the caller frees it) naming the server and what to do.
 */
int surface_subscribe_uri(Manager *m, Peer *p, const char *uri, bool on, char **whyp);
/** resources/subscribe (on) or resources/unsubscribe, answered to p. */
void surface_subscribe(Manager *m, Peer *p, yajl_val id, yajl_val params, bool on);
void surface_complete(Manager *m, Peer *p, yajl_val id, yajl_val params);
/*
 * Single-server passthrough: an agent that asked for one server at initialize sees only its
 * tools, prompts and resources, under their own names and URIs, unchanged.
 */
/* Outcomes the caller must handle (STYLE.md 5). */
enum {
    SURFACE_E_UNKNOWN_SERVER = 1, /* no server of that name in the agent's workspace */
};
/**
 * Make p see only the server name (of its workspace): 0, or SURFACE_E_UNKNOWN_SERVER with *whyp
 * saying so.
 */
int surface_passthrough_set(Manager *m, Peer *p, const char *name, char **whyp);
/** p sees its whole workspace again (no passthrough). */
void surface_passthrough_clear(Manager *m, const Peer *p);
/** Whether p is a passthrough agent; *sp is then its server, or NULL when it has gone. */
bool surface_passthrough(Manager *m, const Peer *p, Server **sp);
void surface_passthrough_deinit(Manager *m);
/** A peer went away: its subscriptions end (upstream too, when it was the last). */
void surface_peer_gone(Manager *m, Peer *p);

/* ---- set-up ---- */

/** Plug the surface into the core (its ManagerExt and WorkspaceExt); once, after manager_init. */
void surface_init(Manager *m);
