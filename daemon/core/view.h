// SPDX-License-Identifier: MIT
// view: a workspace's tool view, built once per change, shared: the names agents call, the
// tools/list bytes queued by reference, and the hash that says whether it changed.
#pragma once

#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "daemon/core/workspace.h"
#include "daemon/downstream/peer.h"

/** The tool agents of ws call name, or NULL. */
const ViewTool *ws_view_find(Workspace *ws, const char *name);
/** Rebuild the tool view if anything changed since it was built. */
void ws_view_ensure(Workspace *ws);
/** Free the view (safe on a workspace that never built one). */
void ws_view_deinit(Workspace *ws);
/* One tool of the view: ws->servers[server], tool index in its set, and its exposed name. */
typedef void (*ViewEachFn)(void *ud, size_t server, size_t tool, const char *name);
/** Call fn for each tool of the view (built first if it must be), in server order. */
void ws_view_each(Workspace *ws, ViewEachFn fn, void *ud);
/* Whether an agent is shown server's tool j (ws_view_where). */
typedef bool (*ViewKeepFn)(void *ud, Server *s, size_t j);
/** The view's tools that keep() keeps, as {"tools":[...]} text in the view's order and bytes. */
char *ws_view_where(Workspace *ws, ViewKeepFn keep, void *ud, size_t *lenp);
/** Answer a tools/list with the view: its bytes are queued by reference, never copied. */
void ws_view_send(Workspace *ws, Peer *p, yajl_val id);
/** The SHA-256 (hex) of the view's JSON, hashed once per build. */
const char *ws_view_hash(Workspace *ws);
/** Drop one reference to a view's JSON (safe on NULL); returns NULL. */
ViewText *view_text_unref(ViewText *vt);
