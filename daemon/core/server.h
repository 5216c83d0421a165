// SPDX-License-Identifier: MIT
// server: one upstream server's lifecycle (connect pipeline, backoff, breaker, health, tool
// list and its cache), reported upward through ServerEvents.
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/time.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/hash.h"
#include "common/idmap.h"
#include "common/list.h"
#include "daemon/sys/loglimit.h"
#include "daemon/config/config.h"
#include "daemon/core/progress-memo.h"
#include "daemon/core/toolstats.h"
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
/*
 * URL-mode elicitations a server has open (sent to an agent, the completion not yet seen): the
 * agent that was asked gets notifications/elicitation/complete. Each waits on a person in a
 * browser, so a handful per server is already unusual; past 8 the oldest is forgotten (its
 * completion is dropped, the agent can retry the call).
 */
#define SERVER_URL_ELICITATIONS 8
/* An elicitationId longer than this is not remembered (ids are UUID-sized in practice). */
#define SERVER_URL_ELICITATION_ID_MAX 256

typedef struct ServerRegistry ServerRegistry;

/* One upstream server connection and everything known about it. */
typedef struct Server {
    uint64_t id;
    ServerRegistry *reg;
    ServerConfig *cfg;
    ServerState state;
    int64_t since_wall_ms;
    char *last_error;
    int64_t last_error_wall_ms; /* when last_error was set */
    Upstream *up;
    struct Resolve *resolving; /* connect-time values (resolve.h) in flight, or NULL */

    struct ToolSet *tools;   /* upstream tool objects as JSON text (toolset.h), or NULL */
    bool tools_deferred;     /* tools are a stand-in (last known) while not connected */
    size_t n_tools_filtered; /* tools its filters (enabledTools, ...) hide from agents */
    uint64_t connect_started_ms;
    struct event *ev_connect_timeout, *ev_retry, *ev_health;
    uint64_t last_used_ms; /* monotonic: last call started or finished */
    /*
     * Idle: a lazy server parked with its cached tools, or one stopped for idleness; the next
     * call starts it (server_wake). Stays set through that start until it connects, so its
     * tools are listed as while it runs, and a start that fails is no crash loop.
     */
    bool idle_stopped;
    uint64_t *pins; /* peer ids of the agents that pinned it up (mcpd/pin), one each */
    size_t n_pins;
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
    ProgressMemo progress; /* which tools' calls ask it for progress (call.c) */
    ToolStats tool_stats;  /* calls, errors, durations per tool since mcpd started (call.c) */
    unsigned n_refs;       /* workspaces that use it */
    char *start_dir;       /* where a stdio server starts when its config names no cwd */
    List calls;            /* every call routed to it (call.c links and owns them) */
    IdMap requests;        /* id -> ServerRequest: its requests forwarded to agents (call.c) */
    LogLimit request_log;  /* the log lines of its requests nobody can answer (call.c) */
    /* Its open URL-mode elicitations, a ring (call.c). */
    struct {
        char *id;             /* elicitationId, or NULL: a free slot */
        uint64_t peer_id;     /* the agent asked */
        uint64_t upstream_id; /* the connection that asked (a restart starts afresh) */
    } url_elicitations[SERVER_URL_ELICITATIONS];
    unsigned url_elicitation_next;
    int log_level;        /* logging/setLevel sent upstream, or -1 */
    bool needs_auth;      /* HTTP 401: not retried until reload or mcpd/connect */
    char *auth_challenge; /* its WWW-Authenticate text */

    struct ServerSurface *surface; /* prompts, resources, subscriptions (surface.h), or NULL */
} Server;

/*
 * What a server tells the layers above (workspaces, calls, the surface, mcpd/wait), as
 * UpstreamEvents does one layer down. Every member may be NULL; ud is ServerRegistry.ud.
 */
typedef struct ServerEvents {
    /** A new server (created by server_acquire): caches of the layers above may load. */
    void (*created)(void *ud, Server *s);
    /** Any change of state (for sd_notify STATUS=). */
    void (*state_changed)(void *ud, Server *s);
    /** "connecting" began or ended: waiting calls, mcpd/wait, the start-up gates, the views. */
    void (*settled)(void *ud, Server *s);
    /** A re-list brought tools that differ from those held. */
    void (*tools_changed)(void *ud, Server *s);
    /** Its session is up and its first tools/list done. */
    void (*connected)(void *ud, Server *s);
    /** It will not come back by itself: what the layers above hold of it is void. */
    void (*cleared)(void *ud, Server *s);
    /** An upstream notification other than tools/list_changed. */
    void (*notification)(void *ud, Server *s, const char *method, yajl_val params);
    /** An upstream request (sampling, elicitation, roots). */
    void (*request)(void *ud, Server *s, yajl_val id, const char *method, yajl_val params);
    /** The session of Upstream upstream_id ended: requests it made are void. */
    void (*closed)(void *ud, Server *s, uint64_t upstream_id);
    /** HTTP 401 and failed: stored credentials may be refreshed (oauth-login). */
    void (*signed_out)(void *ud, Server *s);
    /** It is going away (state STOPPED, no session): everything of it upstairs goes. */
    void (*removed)(void *ud, Server *s);
    /** Whether something above needs it running (a subscription, a task): no idle stop. */
    bool (*busy)(void *ud, Server *s);
} ServerEvents;

/* Every server, by id and in creation order, and what they share. */
struct ServerRegistry {
    struct event_base *base;
    const Settings *settings; /* the daemon's, updated in place on reload */
    const char *cache_dir;
    IdMap by_id;    /* id -> Server */
    Server **order; /* creation order */
    size_t n_order;
    uint64_t next_id;
    bool shutting_down;
    const ServerEvents *ev;
    void *ud;
};

static inline void tv_ms(struct timeval *tv, int64_t ms)
{
    tv->tv_sec = ms / 1000;
    tv->tv_usec = (ms % 1000) * 1000;
}

/** Set up an empty registry; ev (static) and ud receive every server's events. */
void server_registry_init(ServerRegistry *reg, struct event_base *base, const Settings *settings,
                          const char *cache_dir, const ServerEvents *ev, void *ud);
/** Disconnect and remove every server (daemon exit); transports finish in the background. */
void server_registry_shutdown(ServerRegistry *reg);
/** Release the registry (after shutdown). */
void server_registry_deinit(ServerRegistry *reg);
/** A server by id, or NULL when it has gone. */
static inline Server *server_get(ServerRegistry *reg, uint64_t id)
{
    return idmap_get(&reg->by_id, id);
}
/** Find or create the server for cfg started in start_dir; takes a reference. */
Server *server_acquire(ServerRegistry *reg, const ServerConfig *cfg, const char *start_dir,
                       bool *createdp);
/** Drop a reference; the last one disconnects and frees the server. */
void server_release(Server *s);
/** Start connecting (no-op when connecting, connected, disabled or shutting down). */
void server_connect(Server *s);
/** mcpd/connect: reset the breaker and reconnect unless connected or connecting. */
void server_restart(Server *s);
/**
 * A session found dead or stale (no answer to a ping after a resume, HTTP streams from before a
 * sleep): closed and connected again at once, counted as a restart; why goes to the log.
 */
void server_reconnect_now(Server *s, const char *why);
/** mcpd/disconnect: stop the server and drop its tools until it is connected again. */
void server_stop(Server *s);
/** Name of a state. */
const char *server_state_name(ServerState s);
/** The state as status shows it: "idle" for a stopped server a call starts, else its name. */
const char *server_state_word(const Server *s);
/**
 * A workspace wants it: a lazy stdio server with tools from its cache is parked idle (its first
 * call starts it); any other starts connecting now (an empty cache is filled by one start).
 */
void server_activate(Server *s);
/** A call needs it: an idle server starts (the call waits, like for a connecting one). */
void server_wake(Server *s);
/** After how long without a call it stops (0: never): stdio servers only. */
int64_t server_idle_timeout_ms(const Server *s);
/** An agent's mcpd/pin: on keeps it running until unpinned or the agent goes; starts it. */
void server_pin(Server *s, uint64_t peer_id, bool on);
/** Into a status object: start, idleTimeoutMs, idle (stopped, a call starts it), pins. */
void server_ondemand_status(const Server *s, yajl_val o);
/** An agent went: the pins it held are released. */
void server_registry_unpin(ServerRegistry *reg, uint64_t peer_id);
