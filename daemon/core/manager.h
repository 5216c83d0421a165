// SPDX-License-Identifier: MIT
// manager: upstream servers and their lifecycle (connect pipeline, start-up gate, tools, calls).
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/idmap.h"
#include "common/jsonscan.h"
#include "common/strbuf.h"
#include "daemon/config/config.h"
#include "daemon/downstream/peer.h"
#include "daemon/upstream/upstream.h"

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
/*
 * A re-list's cache write waits this long, so a burst of list_changed makes one fsynced write;
 * a crash in the window costs only a stale cache, which the next connect rewrites.
 */
#define CACHE_WRITE_DEBOUNCE_MS 2000
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
    int64_t last_error_wall_ms; /* when last_error was set */
    Upstream *up;
    struct Resolve *resolving; /* connect-time values (resolve.h) in flight, or NULL */

    yajl_val tools;          /* array of upstream tool objects, or NULL */
    bool tools_deferred;     /* tools are a stand-in (last known) while not connected */
    size_t n_tools_filtered; /* tools its filters (enabledTools, ...) hide from agents */
    uint64_t connect_started_ms;
    struct event *ev_connect_timeout, *ev_retry, *ev_health;
    uint64_t last_used_ms; /* monotonic: last call started or finished */
    bool idle_stopped;     /* stopped for idleness: restarts on the next call */
    bool ping_in_flight;
    int64_t next_attempt_wall_ms;
    int64_t backoff_ms;
    uint64_t failures[BREAKER_FAILURES]; /* monotonic ms of recent failures, ring */
    unsigned n_failures;
    unsigned restarts;           /* every automatic respawn/reconnect after a failure or a loss */
    int64_t cache_saved_wall_ms; /* when the cached tool list was written; 0: none */
    struct event *ev_cache;      /* a re-list's debounced cache write */
    uint64_t cache_writes;       /* cache files written, for status */
    char *cache_problem;         /* why its cache is not used (not private), or NULL */
    bool listing;                /* a tools/list is in flight (one at most) */
    bool relist_pending;         /* list_changed came during it: re-list once it ends */
    uint64_t lists_total;        /* tools/list runs started, for status */
    char *list_note;             /* the bound that cut the last list short, or NULL */
    char tools_fp[2 * SHA256_DIGEST_SIZE + 1]; /* fingerprint of tools as last listed */
    unsigned calls_in_flight;
    uint64_t calls_total;
    unsigned n_refs;      /* workspaces that use it */
    char *start_dir;      /* where a stdio server starts when its config names no cwd */
    IdMap live_calls;     /* upstream request id -> Call, for routing progress */
    int log_level;        /* logging/setLevel sent upstream, or -1 */
    bool needs_auth;      /* HTTP 401: not retried until reload or mcpd/connect */
    char *auth_challenge; /* its WWW-Authenticate text */

    struct ServerSurface *surface; /* prompts, resources, subscriptions (surface.h), or NULL */
} Server;

/* One exposed tool in a workspace's view. */
typedef struct ViewTool {
    char *name;
    uint64_t server_id;
    const char *tool; /* borrowed from the server's tool list; valid until the view rebuilds */
} ViewTool;

/*
 * A project root (or the user workspace): the servers its agents see and its tool view.
 * Servers are shared between workspaces by identity (name, config hash, start directory).
 */
typedef struct Workspace {
    uint64_t id;
    Manager *m;
    char *root;       /* realpath; NULL: the user workspace */
    Server **servers; /* in priority order; each holds a reference */
    size_t n_servers;
    ConfigSet problems; /* discovery problems of its last load */
    uint64_t connect_started_ms;
    struct event *ev_gate, *ev_notify, *ev_linger;
    struct ListWaiter *waiters;
    bool dirty;
    ViewTool *view;
    size_t n_view;
    StrBuf view_json; /* {"tools":[...]} ready to send */
    char notified_hash[2 * SHA256_DIGEST_SIZE + 1];
    unsigned n_collisions;
    unsigned n_agents;

    struct WsSurface *surface; /* prompts and resources notifications (surface.h), or NULL */
} Workspace;

/* An agent session: the agent that opened it and the subagents that joined by its token. */
typedef struct Session {
    uint64_t id;
    char token[2 * SESSION_TOKEN_BYTES + 1];
    uid_t uid;
    uint64_t owner_peer_id;
    uint64_t workspace_id;
    unsigned n_members;
} Session;

/* Per-agent limit of tools/call requests in flight; beyond it calls get MCPD_ERROR_TOO_MANY_CALLS.
 */
#define AGENT_MAX_CALLS_IN_FLIGHT 256

struct Manager {
    struct event_base *base;
    PeerRegistry *peers;
    Settings settings;
    const char *config_file;
    char *home;
    char *cache_dir;
    IdMap servers;  /* id -> Server */
    Server **order; /* creation order */
    size_t n_order;
    uint64_t next_server_id;
    IdMap workspaces; /* id -> Workspace */
    Workspace *user_ws;
    uint64_t next_workspace_id;
    IdMap sessions; /* id -> Session */
    uint64_t next_session_id;
    IdMap calls;                         /* id -> Call */
    IdMap server_requests;               /* downstream id -> ServerRequest */
    struct ServerWaiter *server_waiters; /* mcpd/wait requests */
    uint64_t next_call_id;
    uint64_t next_request_id;
    StrBuf scratch; /* reused for replies on the hot path */
    bool shutting_down;
    int64_t started_wall_ms;
    void (*on_change)(void *userdata); /* a server changed state (for sd_notify STATUS=) */
    void *on_change_ud;

    IdMap passthrough; /* peer id -> name of the one server it sees as itself (surface.h) */
};

/** Set up; nothing connects until manager_load(). */
void manager_init(Manager *m, struct event_base *base, PeerRegistry *peers, const Settings *s,
                  const char *config_file);
/** Release everything (after manager_shutdown and the transports are gone). */
void manager_deinit(Manager *m);
/** Start-up: the user workspace discovers and connects its servers in parallel. */
void manager_start(Manager *m);
/**
 * Reload: rediscover every workspace (or only the one of root, when set), disconnect what
 * changed or went away, connect what is new; servers whose config did not change stay.
 */
yajl_val manager_reload(Manager *m, const char *root);
/** Disconnect everything (daemon exit); transports finish in the background. */
void manager_shutdown(Manager *m);

/** tools/list for a peer: answered now or once the start-up gate opens. */
void manager_list_tools(Manager *m, Peer *p, yajl_val id);
/** tools/call for a peer (params already checked to have a string name). */
void manager_call_tool(Manager *m, Peer *p, yajl_val id, yajl_val params);
/**
 * The same from scanned text (the hot path): id an integer or a string without escapes, name a
 * string without escapes, args an object or absent, token absent or the only member of _meta.
 */
void manager_call_tool_fast(Manager *m, Peer *p, JsonSpan id, JsonSpan name, JsonSpan args,
                            JsonSpan token);
/** notifications/cancelled from a peer. */
void manager_cancel(Manager *m, Peer *p, yajl_val request_id);
/**
 * initialize: place a peer in a workspace and a session. With a token it joins that session
 * (its workspace); otherwise cwd (or NULL: the user workspace) selects the workspace and a new
 * session starts. Returns 0 or -errno with *whyp set.
 */
int manager_attach(Manager *m, Peer *p, const char *cwd, const char *token, char **whyp);
/** The session token a peer hands to its subagents. */
const char *manager_peer_token(Manager *m, Peer *p);
/** A peer went away: cancel its calls upstream, forget its waiters, leave its workspace. */
void manager_peer_gone(Manager *m, Peer *p);
/** A response from a peer to a request mcpd forwarded to it (sampling, elicitation, roots). */
void manager_peer_response(Manager *m, Peer *p, JsonrpcMsg *msg);
/**
 * The agent's id (JSON text, to free) of the call that caused request_id, a request mcpd
 * forwarded to that agent; NULL when none is known. For MRTR toward 2026-07-28 agents.
 */
char *call_cause_of_request(Manager *m, uint64_t request_id);
/** logging/setLevel from a peer (level already checked); upstream levels follow. */
void manager_set_log_level(Manager *m, Peer *p, int level);
/** mcpd/status result. */
yajl_val manager_status(Manager *m);
/*
 * Control by server name: the server of that name in the peer's workspace, else the first
 * of that name in any workspace.
 */
/** mcpd/connect: (re)connect one server, resetting its breaker. */
int manager_connect(Manager *m, Peer *p, const char *name, char **whyp);
/** mcpd/disconnect: stop one server and remove its tools. */
int manager_disconnect(Manager *m, Peer *p, const char *name, char **whyp);
/**
 * mcpd/logs: a server's recorded runs from run `since` on (0: all kept), each with its exit and
 * stderr tail, plus "text": the stderr of the latest run (or the transport's log).
 */
int manager_logs(Manager *m, Peer *p, const char *name, uint64_t since, yajl_val *resultp,
                 char **whyp);
/** mcpd/wait: reply once the server settles (connected, failed) or timeout_ms passes. */
void manager_wait(Manager *m, Peer *p, yajl_val id, const char *name, int64_t timeout_ms);
/** Counts for sd_notify STATUS= and logs. */
void manager_counts(Manager *m, unsigned *connectedp, unsigned *totalp, unsigned *toolsp);
/** An MCP log level's rank (0 debug .. 7 emergency), or -1 for an unknown name. */
int mcp_log_level(const char *name);
/** Name of a state. */
const char *server_state_name(ServerState s);
