// SPDX-License-Identifier: MIT
// manager-private: what manager.c (servers), workspace.c (workspaces, views, sessions) and
// call.c (calls and everything routed per agent) share; nothing else includes it.
#pragma once

#include <sys/time.h>

#include "daemon/core/manager.h"

/* A tools/list waiting for a workspace's start-up gate. */
typedef struct ListWaiter {
    uint64_t peer_id;
    yajl_val id;
    struct ListWaiter *next;

    int kind;        /* -1: tools/list; else the SurfaceKind of a prompts or resources list */
    yajl_val params; /* that list's params (its cursor), or NULL */
} ListWaiter;

static inline void tv_ms(struct timeval *tv, int64_t ms)
{
    tv->tv_sec = ms / 1000;
    tv->tv_usec = (ms % 1000) * 1000;
}

/* manager.c */
void manager_reply_result(Manager *m, uint64_t peer_id, yajl_val id, yajl_val result);
void manager_reply_error(Manager *m, uint64_t peer_id, yajl_val id, int code, const char *msg);
/** Send one notification to a live peer. */
void manager_notify_peer(Manager *m, uint64_t peer_id, const char *method, yajl_val params);
/** The server for a control request by name (the peer's workspace first). */
Server *manager_find_server(Manager *m, Peer *p, const char *name);
/** Find or create the server for cfg started in start_dir; takes a reference. */
Server *server_acquire(Manager *m, const ServerConfig *cfg, const char *start_dir, bool *createdp);
/** Drop a reference; the last one disconnects and frees the server. */
void server_release(Server *s);
void server_connect(Server *s);
yajl_val problems_json(const ConfigSet *set);

/* workspace.c */
Workspace *ws_new(Manager *m, const char *root);
/** (Re)discover a workspace's servers and connect them; results: name -> what happened. */
void ws_load(Workspace *ws, yajl_val results);
void ws_free(Workspace *ws);
bool ws_has_server(const Workspace *ws, const Server *s);
/** The workspace of a peer (the user workspace for one not attached). */
Workspace *ws_of_peer(Manager *m, const Peer *p);
const ViewTool *ws_view_find(Workspace *ws, const char *name);
void ws_view_ensure(Workspace *ws);
/** A server's tools or state changed: every workspace that sees it rebuilds and is told. */
void server_views_changed(Server *s);
void ws_peer_left(Manager *m, Peer *p);
void sessions_deinit(Manager *m);

/* call.c */
void calls_server_settled(Server *s);
/** The server is going away: its calls fail, its forwarded requests are dropped. */
void calls_server_removed(Server *s);
/** The server's session ended: requests it forwarded to agents are withdrawn. */
void calls_upstream_closed(Server *s, uint64_t upstream_id);
void calls_peer_gone(Manager *m, Peer *p);
void calls_deinit(Manager *m);
/** Upstream notifications and requests that concern agents. */
void route_notification(Server *s, const char *method, yajl_val params);
void route_request(Server *s, yajl_val id, const char *method, yajl_val params);
/** Set the upstream log level to the most verbose any of its agents asked for. */
void logging_update(Server *s);
