// SPDX-License-Identifier: MIT
// transport-http-private: the data the HTTP transport's files share, and its bounds. Its layers,
// each with its own header of functions, each calling only those below it: transport-http-xfer
// (one transfer) at the bottom, telling the layers above what a transfer brought through the
// XferHooks that transport-http sets; transport-http-upcall (what goes up to upstream.c, from the
// loop) and transport-http-modern (2026-07-28 headers) above it; transport-http-incoming (the
// messages of a body or event) and transport-sse (legacy HTTP+SSE) above those; transport-http
// (the transport, Streamable HTTP and the auto probe) on top. Nothing else includes it.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/idmap.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/sse.h"
#include "daemon/upstream/transport.h"

/* The SDK client's reconnect delay when a stream gives no retry field, and its growth. */
#define RETRY_DEFAULT_MS 1000
#define RETRY_MAX_MS     30000
/* A server's retry of 0 must not make a stream that closes at once a busy loop. */
#define RETRY_MIN_MS 100
/* A POST stream that keeps dropping is given up after this many resumptions. */
#define RESUME_MAX 5
/* Redirect chains longer than this are a loop. */
#define REDIRECT_MAX 5
/* The DELETE that ends a session must not hold up a daemon that is shutting down. */
#define DELETE_TIMEOUT_MS 5000
/* An error body is only read for its message. */
#define ERROR_BODY_MAX (64u * 1024u)
/*
 * WWW-Authenticate kept from one response: real challenges are a few hundred bytes, so this
 * holds every one a server sends; a flood of them would otherwise fill errors, status and logs.
 */
#define WWW_AUTH_MAX (8u * 1024u)
/* Of that, what an error message quotes: enough for the realm, scope and resource_metadata. */
#define WWW_AUTH_SHOWN 512
/*
 * The longest Mcp-Session-Id sent back. Servers use UUIDs (36 bytes) or signed tokens of a few
 * hundred bytes; common front ends refuse request header lines past 8 KiB (nginx's default
 * large_client_header_buffers), so a longer id could never come back whole, and repeating tens
 * of KB on every request is an amplification a hostile server should not get.
 */
#define SESSION_ID_MAX 4096
/*
 * Entries of one JSON batch (2025-03-26) taken as they come. mcpd sends one message per POST, so
 * a batch is one answer plus what the server says alongside it (progress, log lines, its own
 * requests): a few, or a few hundred for a chatty tool. Past this only answers are kept.
 */
#define HT_BATCH_MAX 1024u
/*
 * Messages queued for upstream.c past which a stream's transfer is paused until they are
 * delivered. A server streaming millions of tiny events filled the queue faster than the loop
 * drained it (2M events: +386 MiB, every other server and agent stalled); at this many the
 * loop turns over about every millisecond of work, and a paused stream loses nothing (curl
 * keeps the chunk and hands it over again).
 */
#define HT_UPCALLS_MAX 1024u
/*
 * Bytes of response headers read from one response. Real MCP servers send a few KB; the largest
 * single header mcpd keeps whole (a 90 KB Mcp-Session-Id, refused later by SESSION_ID_MAX with
 * its own message) passes curl's 100 KB bound on one line, and this leaves room for the rest. A
 * server sending 100 MB of headers, or dripping them forever, is cut here (or at the transfer's
 * timeout) with an error naming it, rather than by whatever bound curl's build happens to have.
 */
#define HT_HEADERS_MAX (256u * 1024u)

typedef enum HttpMode {
    MODE_PROBE,      /* auto: the initialize POST decides */
    MODE_STREAMABLE, /* Streamable HTTP */
    MODE_LEGACY,     /* HTTP+SSE (2024-11-05) */
} HttpMode;

typedef enum XferKind {
    XFER_POST,       /* one message */
    XFER_GET,        /* the standalone stream for server messages */
    XFER_RESUME,     /* GET with Last-Event-ID for a POST stream that dropped */
    XFER_LEGACY_GET, /* the legacy SSE stream */
    XFER_DELETE,     /* end of session */
} XferKind;

typedef struct HttpTransport HttpTransport;

typedef struct Xfer {
    HttpTransport *t;
    XferKind kind;
    CURL *easy;
    struct curl_slist *hdrs;
    char *url;
    char *body; /* POST body, kept for redirects */
    size_t body_len;
    uint64_t req_id; /* the request whose response this transfer should bring, or 0 */
    bool is_request; /* the POST carries a request (not a notification or response) */
    bool is_initialized_note;
    bool sent_session; /* an MCP-Session-Id went with it */
    bool foreign;      /* redirected to another origin: configured headers stripped */
    unsigned redirects, resumes;
    long status;
    bool headers_done, sse, got_event;
    bool too_big; /* a 2xx body or SSE event passed the message bound: the transfer was stopped */
    bool paused;  /* its stream waits for queued messages to be delivered (HT_UPCALLS_MAX) */
    bool headers_cut; /* the response failed between its status line and its end of headers */
    bool line_cut; /* a GET or legacy SSE line passed the message bound: the stream was dropped */
    size_t header_bytes;          /* read so far, against HT_HEADERS_MAX */
    char errbuf[CURL_ERROR_SIZE]; /* curl's own account of a failure, often more than its code */
    char *hdr_session;
    char *content_encoding; /* a Content-Encoding the server sent anyway (mcpd asks for none) */
    StrBuf www_auth;
    StrBuf resp;
    SseParser parser;
    char *last_event_id; /* for XFER_RESUME: what to send */
    int64_t timeout_ms;  /* inactivity bound (re-armed by SSE events), 0: none */
    uint64_t cap_ms;     /* monotonic hard end, 0: none */
    struct event *timer;
    struct event *ev_delay; /* XFER_RESUME: waits the server's retry delay before starting */
    bool timed_out;
    bool modern;                 /* a 2026-07-28 request: no session, its own headers */
    struct curl_slist *mcp_hdrs; /* modern: MCP-Protocol-Version, Mcp-Method, Mcp-Name, ... */
    struct Xfer *next, *prev;
} Xfer;

/* What waits for upstream.c (transport-http-upcall.c's own). */
typedef struct Upcall Upcall;

/*
 * What one transfer tells the layers above it, set by transport_http_new (transport-http.c): the
 * transfer layer calls nothing above it, only these.
 */
typedef struct XferHooks {
    /* An SSE event came (after the transfer's own bookkeeping); nonzero stops the transfer. */
    int (*event)(Xfer *x, const SseEvent *ev);
    /* A POST's 2xx brought a new Mcp-Session-Id: whether the session goes on with it. */
    bool (*session)(Xfer *x);
    /* The transfer could not be started (r < 0): its request fails; x is freed after. */
    void (*unstarted)(Xfer *x, int r);
    /* It finished, failed or timed out. */
    void (*done)(Xfer *x, CURLcode res);
} XferHooks;

struct HttpTransport {
    Transport base;
    HttpMode mode;
    char *url;       /* the configured URL: the MCP endpoint, or the SSE URL */
    char *shown_url; /* without credentials */
    char *post_url;  /* legacy: from the endpoint event */
    yajl_val headers;
    char *session_id;
    char *protocol_version;
    long last_status;
    int64_t timeout_ms, call_timeout_ms, max_call_ms;
    Xfer *xfers;
    char **held; /* messages waiting for the transport to be decided or the endpoint */
    size_t n_held;
    Upcall *up_head, **up_tail;
    size_t n_upcalls; /* queued: past HT_UPCALLS_MAX streams pause */
    struct event *ev_deliver, *ev_free, *ev_get;
    IdMap outstanding; /* request ids sent and not yet answered */
    uint64_t init_id;
    bool have_init_id;
    bool get_wanted, get_unsupported;
    int64_t get_retry_ms;
    char *get_last_id;
    char *probe_status; /* auto: what the POST said, for the failure message */
    bool closing, reported;
    bool modern;           /* a modern request was answered: the server speaks 2026-07-28 */
    yajl_val tool_headers; /* {tool: {param: HeaderName}} from the tools' x-mcp-header */
    IdMap list_ids;        /* tools/list requests in flight: 1 first page, 2 a later one */
    XferHooks hooks;       /* how its transfers tell the layers above them */
    struct HttpTransport *next_live, *prev_live;
};
