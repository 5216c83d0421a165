// SPDX-License-Identifier: MIT
// upstream: an MCP client session over one transport (handshake, requests, timeouts, paging).
#pragma once

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/idmap.h"
#include "common/mcp.h"
#include "common/pool.h"
#include "daemon/sys/loglimit.h"
#include "daemon/config/config.h"
#include "daemon/sys/deadline.h"
#include "daemon/upstream/era.h"
#include "daemon/upstream/request-line.h"
#include "daemon/upstream/transport.h"

/* The revisions mcpd asks for and accepts back: common/mcp.h (MCP_PROTOCOL_*). */

typedef struct Upstream Upstream;

/* A modern list's ttlMs: when it runs out, the owner hears the list changed and re-lists. */
typedef struct UpstreamListTtl {
    Upstream *u;
    unsigned kind;
    struct event *ev;
} UpstreamListTtl;

typedef enum UpstreamOutcome {
    UPSTREAM_OK,        /* result is set */
    UPSTREAM_ERROR,     /* the server answered with a JSON-RPC error: code, message, data */
    UPSTREAM_TIMEOUT,   /* no answer in time; cancelled upstream */
    UPSTREAM_CLOSED,    /* the transport died or the session was closed */
    UPSTREAM_CANCELLED, /* cancelled by mcpd (the agent gave up): send nothing */
} UpstreamOutcome;

typedef struct UpstreamReply {
    UpstreamOutcome outcome;
    yajl_val result; /* borrowed; NULL when the result came as raw (UPSTREAM_RAW) */
    const char *raw; /* UPSTREAM_RAW: the result's JSON text, valid during the call */
    size_t raw_len;
    int64_t code;
    const char *message; /* errors; for a tools/list that a bound cut short, the note saying so */
    yajl_val data;       /* borrowed, may be NULL */
} UpstreamReply;

/* Bounds on one tools/list (Settings max_tools_per_server, max_list_pages, max_list_bytes). */
typedef struct UpstreamListLimits {
    int64_t max_tools; /* tools kept; the rest is dropped and not fetched */
    int64_t max_pages; /* pages fetched */
    int64_t max_bytes; /* bytes of pages read; the page that crosses it is kept */
} UpstreamListLimits;

/* Called exactly once per request; it owns ctx from then on. */
typedef void (*UpstreamReplyFn)(Upstream *u, void *ctx, const UpstreamReply *reply);

/* Events from an upstream to its owner (the manager); none run after upstream_close(). */
typedef struct UpstreamEvents {
    void (*ready)(void *userdata);                      /* initialize done */
    void (*closed)(void *userdata, const char *reason); /* the session is dead */
    void (*notification)(void *userdata, const char *method, yajl_val params);
    /* A server-to-client request other than ping; answer with upstream_respond*(). */
    void (*request)(void *userdata, yajl_val id, const char *method, yajl_val params);
    /* HTTP 401: challenge is the WWW-Authenticate text; closed() follows. May be NULL. */
    void (*auth_required)(void *userdata, const char *challenge);
} UpstreamEvents;

struct Upstream {
    uint64_t id;
    char *name;
    struct event_base *base;
    Transport *transport;
    IdMap pending;           /* request id -> UpstreamPending */
    DeadlineQueue deadlines; /* the pending requests' timeouts, behind one timer */
    Pool pending_pool;       /* freed UpstreamPendings, made again by the next requests */
    IdMap wire_ids;          /* modern HTTP: id of a re-issued request -> its pending id */
    size_t n_raw_pending;    /* of them, those that take a raw result */
    uint64_t next_id;
    bool initialized, closed, dead;
    yajl_val server_info;  /* owned, from the initialize result */
    yajl_val capabilities; /* owned */
    char *protocol_version;
    char *instructions;
    UpstreamEvents ev;
    void *userdata;
    struct event *ev_free;
    int64_t max_call_timeout_ms;
    StrBuf scratch;     /* reused for outgoing lines */
    size_t message_len; /* length of the message being handled (tools/list counts bytes) */
    UpstreamEra era;
    ProtocolEra pin;            /* the server's "protocol" field */
    unsigned discover_tries;    /* server/discover sent in this session */
    bool init_sent;             /* initialize sent in this session */
    uint64_t era_key;           /* the server's key in the era memory */
    int64_t timeout_ms;         /* the server's handshake bound */
    bool stdio;                 /* a child process: its discover probe is bounded shorter */
    uint64_t probe_id;          /* the server/discover probe waiting for its answer, or 0 */
    uint64_t probe_ping_id;     /* stdio: the ping sent behind the probe, unanswered, or 0 */
    bool probe_alive;           /* stdio: that ping was answered while the probe waited */
    const char *next_log_level; /* modern: the calling agent's level for the next request */
    uint64_t listen_id;         /* modern: the subscriptions/listen request open, or 0 */
    int64_t listen_backoff_ms;  /* the wait before the next listen after a break */
    struct event *ev_listen;    /* re-listen timer */
    yajl_val listen_uris;       /* modern: resources subscribed (an array), or NULL */
    UpstreamListTtl ttl[4];     /* modern: tools, prompts, resources, templates freshness */
    LogLimit stray_log;         /* warnings about answers to requests never sent */
};

/**
 * Start a session for cfg: create the transport and send initialize. Failures to even start
 * (no such command) return -errno with *whyp set.
 */
int upstream_start(Upstream **up, struct event_base *base, const ServerConfig *cfg,
                   const char *default_cwd, int64_t max_call_timeout_ms, const UpstreamEvents *ev,
                   void *userdata, char **whyp);
/* Request flags. */
enum {
    /* params._meta.progressToken is set to the request id, and progress re-arms the timer */
    UPSTREAM_PROGRESS = 1u << 0,
    /* a plain result may arrive as raw JSON text (UpstreamReply.raw), without a tree */
    UPSTREAM_RAW = 1u << 1,
};

/** Send a request; params is taken (may be NULL). timeout_ms 0 means none. */
int upstream_request(Upstream *u, const char *method, yajl_val params, int64_t timeout_ms,
                     unsigned flags, UpstreamReplyFn fn, void *ctx, uint64_t *idp);
/**
 * The same with params given as JSON text: meta is the members of params._meta (text between
 * its braces, without progressToken; NULL or "" for none) and body the other members of params
 * (text between the braces of params, without _meta).
 */
int upstream_request_text(Upstream *u, const char *method, const char *meta, const char *body,
                          int64_t timeout_ms, unsigned flags, UpstreamReplyFn fn, void *ctx,
                          uint64_t *idp);
/**
 * upstream_request_text with the body given as n_body pieces, written one after the other
 * (the hot path of tools/call: the tool's name, then the agent's arguments as they came).
 */
int upstream_request_parts(Upstream *u, const char *method, const char *meta,
                           const UpstreamPart *body, size_t n_body, int64_t timeout_ms,
                           unsigned flags, UpstreamReplyFn fn, void *ctx, uint64_t *idp);
/** Send a notification; params is taken. */
int upstream_notify(Upstream *u, const char *method, yajl_val params);
/**
 * The ctx of the request (sent with UPSTREAM_PROGRESS, still pending) that the params of a
 * notifications/progress name, or NULL: progress reaches its request's owner without a lookup.
 */
void *upstream_progress_ctx(Upstream *u, yajl_val params);
/** Cancel a request: notifications/cancelled upstream, and the reply fn runs with CANCELLED. */
void upstream_cancel(Upstream *u, uint64_t id, const char *reason);
/** Answer a server-to-client request (id as the server sent it). */
void upstream_respond(Upstream *u, yajl_val id, yajl_val result);
void upstream_respond_error(Upstream *u, yajl_val id, int code, const char *message);
/**
 * Fetch the pages of tools/list; fn gets result {tools:[...]} with all of them, or with those
 * within lim and reply->message saying which bound cut the list short. A cursor given twice
 * ends paging with UPSTREAM_ERROR. The result is the list's own: fn may take its "tools"
 * (json_object_take) rather than copy a large list.
 */
void upstream_list_tools(Upstream *u, int64_t timeout_ms, const UpstreamListLimits *lim,
                         UpstreamReplyFn fn, void *ctx);
/**
 * The same for any paged list: method (prompts/list, resources/list, resources/templates/list),
 * key (the result's array: prompts, resources, resourceTemplates) and the capability without
 * which the list is [] without asking. method and key must be static strings.
 */
void upstream_list(Upstream *u, const char *method, const char *key, const char *capability,
                   int64_t timeout_ms, const UpstreamListLimits *lim, UpstreamReplyFn fn,
                   void *ctx);
/**
 * End the session: pending requests fail with CLOSED, the transport shuts down in the
 * background, and u is freed from the loop. Safe inside any callback.
 */
void upstream_close(Upstream *u);
/** Does the session speak 2026-07-28 (no session, per-request _meta, MRTR)? */
static inline bool upstream_is_modern(const Upstream *u)
{
    return u->era == UPSTREAM_ERA_MODERN;
}
/**
 * Modern sessions: the log level (a static MCP level name) of the agent whose request is sent
 * next; it goes in that request's _meta and is forgotten after it.
 */
static inline void upstream_next_log_level(Upstream *u, const char *level)
{
    u->next_log_level = level;
}
/** Requests in flight. */
static inline size_t upstream_n_pending(const Upstream *u)
{
    return u->pending.n;
}
