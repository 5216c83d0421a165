// SPDX-License-Identifier: MIT
// manager: upstream servers and their lifecycle (connect pipeline, start-up gate, tools, calls).
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/idmap.h"
#include "common/strbuf.h"
#include "daemon/config.h"
#include "daemon/peer.h"
#include "daemon/upstream.h"

typedef enum ServerState {
    SERVER_DISABLED,
    SERVER_CONNECTING,
    SERVER_CONNECTED,
    SERVER_FAILED,
    SERVER_BACKOFF,
    SERVER_STOPPED,
} ServerState;

/* Reconnect policy beyond the seed (DESIGN section 4). */
#define BACKOFF_FIRST_MS  500
#define BACKOFF_MAX_MS    60000
#define BREAKER_FAILURES  5
#define BREAKER_WINDOW_MS 60000
/* Agents hear of tool changes at most this often; a burst of changes makes one notification. */
#define LIST_CHANGED_COALESCE_MS 50

typedef struct Manager Manager;

/* One upstream server connection and everything known about it. */
typedef struct Server {
    uint64_t id;
    Manager *m;
    ServerConfig *cfg;
    ServerState state;
    int64_t since_wall_ms;
    char *last_error;
    Upstream *up;
    yajl_val tools;      /* array of upstream tool objects, or NULL */
    bool tools_deferred; /* tools are a stand-in (last known) while not connected */
    uint64_t connect_started_ms;
    struct event *ev_connect_timeout, *ev_retry, *ev_health;
    uint64_t last_used_ms; /* monotonic: last call started or finished */
    bool idle_stopped;     /* stopped for idleness: restarts on the next call */
    bool ping_in_flight;
    int64_t next_attempt_wall_ms;
    int64_t backoff_ms;
    uint64_t failures[BREAKER_FAILURES]; /* monotonic ms of recent failures, ring */
    unsigned n_failures;
    unsigned restarts;
    int64_t cache_saved_wall_ms; /* when the cached tool list was written; 0: none */
    unsigned calls_in_flight;
    uint64_t calls_total;
    bool needs_auth;      /* HTTP 401: not retried until reload or mcpd/connect */
    char *auth_challenge; /* its WWW-Authenticate text */
} Server;

/* One exposed tool in a workspace's view. */
typedef struct ViewTool {
    char *name;
    uint64_t server_id;
    const char *tool; /* borrowed from the server's tool list; valid until the view rebuilds */
} ViewTool;

/* The set of servers an agent sees, and its derived tool view. */
typedef struct Workspace {
    char *root; /* NULL: the user workspace */
    uint64_t connect_started_ms;
    struct event *ev_gate;
    struct ListWaiter *waiters;
    bool dirty;
    ViewTool *view;
    size_t n_view;
    StrBuf view_json; /* {"tools":[...]} ready to send */
    char notified_hash[2 * SHA256_DIGEST_SIZE + 1];
    unsigned n_collisions;
} Workspace;

struct Manager {
    struct event_base *base;
    PeerRegistry *peers;
    Settings settings;
    const char *config_file;
    char *home;
    char *cache_dir;
    IdMap servers;  /* id -> Server */
    Server **order; /* discovery order */
    size_t n_order;
    uint64_t next_server_id;
    ConfigSet problems; /* discovery problems of the last load (servers unused) */
    Workspace ws;
    IdMap calls;                         /* id -> Call */
    struct ServerWaiter *server_waiters; /* mcpd/wait requests */
    uint64_t next_call_id;
    struct event *ev_notify;
    bool shutting_down;
    int64_t started_wall_ms;
    void (*on_change)(void *userdata); /* a server changed state (for sd_notify STATUS=) */
    void *on_change_ud;
};

/** Set up; nothing connects until manager_load(). */
void manager_init(Manager *m, struct event_base *base, PeerRegistry *peers, const Settings *s,
                  const char *config_file);
/** Release everything (after manager_shutdown and the transports are gone). */
void manager_deinit(Manager *m);
/** Discover and connect every enabled server in parallel (start-up and reload). */
yajl_val manager_load(Manager *m);
/** Disconnect everything (daemon exit); transports finish in the background. */
void manager_shutdown(Manager *m);

/** tools/list for a peer: answered now or once the start-up gate opens. */
void manager_list_tools(Manager *m, Peer *p, yajl_val id);
/** tools/call for a peer (params already checked to have a string name). */
void manager_call_tool(Manager *m, Peer *p, yajl_val id, yajl_val params);
/** notifications/cancelled from a peer. */
void manager_cancel(Manager *m, Peer *p, yajl_val request_id);
/** A peer went away: cancel its calls upstream and forget its waiters. */
void manager_peer_gone(Manager *m, Peer *p);
/** mcpd/status result. */
yajl_val manager_status(Manager *m);
/** mcpd/connect: (re)connect one server, resetting its breaker. */
int manager_connect(Manager *m, const char *name, char **whyp);
/** mcpd/disconnect: stop one server and remove its tools. */
int manager_disconnect(Manager *m, const char *name, char **whyp);
/** mcpd/logs: a server's recent stderr. */
int manager_logs(Manager *m, const char *name, StrBuf *out, char **whyp);
/** mcpd/wait: reply once the server settles (connected, failed) or timeout_ms passes. */
void manager_wait(Manager *m, Peer *p, yajl_val id, const char *name, int64_t timeout_ms);
/** Counts for sd_notify STATUS= and logs. */
void manager_counts(Manager *m, unsigned *connectedp, unsigned *totalp, unsigned *toolsp);
/** Name of a state. */
const char *server_state_name(ServerState s);
