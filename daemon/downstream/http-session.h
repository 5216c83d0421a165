// SPDX-License-Identifier: MIT
// http-session: MCP agents over Streamable HTTP: a session is one agent (a peer of the registry
// with no fd, peer_new_sink), its POSTs and GET streams are exchanges, and what the core writes
// to the agent is routed to them, as a JSON body or SSE events.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/strbuf.h"
#include "daemon/downstream/http-resume.h"
#include "daemon/downstream/peer.h"

/*
 * Sessions open at once (2025 era; a 2026-07-28 connection's own session counts too): each is
 * an agent, and a person's HTTP clients are a few; past this a client that never ends its
 * sessions (no DELETE) is leaking them, and the least recently used idle one is ended.
 */
#define HTTP_MAX_SESSIONS 256
/*
 * A 2025 session with no request and no open stream for this long is ended: a client that went
 * away without DELETE leaves no agent behind. An hour spans a person's pause between tasks;
 * a client that comes back later gets 404 and starts a new session, as the spec says it must.
 */
#define HTTP_SESSION_IDLE_MS (60 * 60 * 1000)
/*
 * Streams (POSTs waiting for their answer, and the GET stream) open at once in one session:
 * an agent's parallel calls are a handful; 32 leaves room for a busy one while keeping one
 * client from holding every connection place.
 */
#define HTTP_MAX_STREAMS_PER_SESSION 32
/* Bytes of a session id: 128 random bits in hex, as the line protocol's session tokens. */
#define HTTP_SESSION_ID_LEN 32

typedef struct HttpSession HttpSession;
typedef struct HttpExchange HttpExchange;

/* How an exchange writes to its connection (downstream/http-server.c). */
typedef struct HttpExchangeOps {
    /* A whole response: status, extra header lines (each ending in CRLF), a JSON body. */
    void (*reply)(void *conn, int status, const char *headers, const char *body, size_t n);
    /* The head of an SSE response (200, text/event-stream), then events. */
    void (*sse_start)(void *conn, const char *headers);
    /* One event: id (NULL: none) and a message; n == 0 is a priming event (an id only). */
    void (*sse_event)(void *conn, const char *id, const char *data, size_t n);
    /* The SSE response is over: the connection takes its next request. */
    void (*sse_end)(void *conn);
} HttpExchangeOps;

/* One request of a connection that waits for what mcpd says: a POST's answer, or a GET stream. */
struct HttpExchange {
    HttpSession *session; /* NULL once the session ended (the connection then ends it) */
    const HttpExchangeOps *ops;
    void *conn;
    char *id;           /* the awaited request's id, as canonical JSON; NULL for the GET stream */
    bool sse_ok;        /* the client accepts text/event-stream */
    bool json_ok;       /* ... and application/json */
    bool started;       /* SSE head written */
    bool initialize;    /* answers an initialize: carries the session id header */
    HttpReplay *replay; /* a 2025 stream's events, for Last-Event-ID (http-resume.c) */
    HttpExchange *next, *prev;
};

/* Every HTTP session, for one PeerRegistry. */
typedef struct HttpSessions {
    PeerRegistry *peers;
    HttpSession *first;
    size_t n;
} HttpSessions;

/* What the request says about the agent beyond its body: as _meta of the line protocol. */
typedef struct HttpIdentity {
    const char *server;  /* /servers/NAME/mcp: NAME (mcpd/server), or NULL for /mcp */
    const char *project; /* Mcpd-Project header (mcpd/cwd), or NULL */
    const char *session; /* Mcpd-Session header (mcpd/session), or NULL */
} HttpIdentity;

/** Outcomes of http_session_post() beyond 0 (an exchange now waits for the answer). */
enum {
    HTTP_POST_ACCEPTED = 202, /* notifications and responses: nothing to wait for */
};

/**
 * A new session for an agent of uid/pid on endpoint server (NULL: /mcp); modern: a 2026-07-28
 * connection's (no id is handed out). NULL when no place is left (*whyp says why).
 */
HttpSession *http_session_new(HttpSessions *ss, uid_t uid, pid_t pid, const char *server,
                              bool modern, const char **whyp);
/** The live 2025 session with id (n bytes) on endpoint server, or NULL (unknown, ended, other). */
HttpSession *http_session_find(HttpSessions *ss, const char *id, size_t n, const char *server);
/** Whether s is an agent of endpoint server (NULL: /mcp). */
bool http_session_serves(const HttpSession *s, const char *server);
/** The session's id (NUL-terminated; "" for a modern one). */
const char *http_session_id(const HttpSession *s);
/** Whether the session is ended or its agent gone. */
bool http_session_dead(const HttpSession *s);
/** Streams open now in s. */
size_t http_session_streams(const HttpSession *s);
/**
 * One JSON-RPC message POSTed (body, n bytes; changed in place). A request links ex to s until
 * its answer; the rest is HTTP_POST_ACCEPTED. A message that is not one JSON-RPC object is an
 * HTTP status (400) with *errp a JSON-RPC error body (caller frees).
 */
int http_session_post(HttpSession *s, HttpExchange *ex, char *body, size_t n,
                      const HttpIdentity *ident, char **errp);
/**
 * ex becomes s's GET stream (notifications and server requests not tied to a request); false
 * when s has one already.
 */
bool http_session_listen(HttpSession *s, HttpExchange *ex);
/** ex's connection is gone or done: s forgets it. Safe when ex is not linked. */
void http_exchange_detach(HttpExchange *ex);
/**
 * ex's connection dropped: a 2025 stream still waiting (a POST's answer, the GET stream) is
 * kept for HTTP_RESUME_WINDOW_MS, still collecting its events, for a GET with Last-Event-ID;
 * anything else is detached.
 */
void http_exchange_drop(HttpExchange *ex);
/**
 * ex (a GET with Last-Event-ID: last, n bytes) resumes the stream the id names: the events
 * after it are sent, then the stream goes on (or ends, when its answer was among them). A
 * stream not kept (ended, expired, unknown) gives an SSE response that ends at once.
 */
void http_session_resume(HttpSession *s, HttpExchange *ex, const char *last, size_t n);
/** End s (DELETE, expiry, its connection gone): its agent leaves, its exchanges end. */
void http_session_end(HttpSessions *ss, HttpSession *s);
/** End the sessions idle since before now_ms - HTTP_SESSION_IDLE_MS. */
void http_sessions_sweep(HttpSessions *ss, int64_t now_ms);
/** End every session. */
void http_sessions_deinit(HttpSessions *ss);
