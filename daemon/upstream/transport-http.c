// SPDX-License-Identifier: MIT
// transport-http: MCP over Streamable HTTP and legacy HTTP+SSE (and the auto probe), on libcurl.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/idmap.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/http.h"
#include "daemon/upstream/oauth-login.h"
#include "daemon/upstream/oauth-store.h"
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
    char *hdr_session;
    StrBuf www_auth;
    StrBuf resp;
    SseParser parser;
    char *last_event_id; /* for XFER_RESUME: what to send */
    int64_t timeout_ms;  /* inactivity bound (re-armed by SSE events), 0: none */
    uint64_t cap_ms;     /* monotonic hard end, 0: none */
    struct event *timer;
    struct event *ev_delay; /* XFER_RESUME: waits the server's retry delay before starting */
    bool timed_out;
    struct Xfer *next, *prev;
} Xfer;

/* Upcalls wait here and run from the loop, never inside curl or inside send(). */
typedef struct Upcall {
    enum { UP_MESSAGE, UP_AUTH, UP_CLOSED } kind;
    char *text;
    size_t len;
    struct Upcall *next;
} Upcall;

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
    struct event *ev_deliver, *ev_free, *ev_get;
    IdMap outstanding; /* request ids sent and not yet answered */
    uint64_t init_id;
    bool have_init_id;
    bool get_wanted, get_unsupported;
    int64_t get_retry_ms;
    char *get_last_id;
    char *probe_status; /* auto: what the POST said, for the failure message */
    bool closing, reported;
    struct HttpTransport *next_live, *prev_live;
};

static unsigned n_live;
static HttpTransport *all_http;

static const TransportOps http_ops_auto, http_ops_streamable, http_ops_legacy;

unsigned transport_http_live_count(void)
{
    return n_live;
}

/* ---- upcalls ---- */

static void upcall_push(HttpTransport *t, int kind, const char *text, size_t len)
{
    Upcall *u = xcalloc(1, sizeof(*u));

    u->kind = kind;
    u->text = xstrndup(text ? text : "", len);
    u->len = len;
    *t->up_tail = u;
    t->up_tail = &u->next;
    event_active(t->ev_deliver, EV_TIMEOUT, 0);
}

static void report_closed(HttpTransport *t, const char *fmt, ...) _printf_(2, 3);
static void report_closed(HttpTransport *t, const char *fmt, ...)
{
    va_list ap;
    StrBuf sb = STRBUF_INIT;

    if (t->reported || t->closing)
        return;
    t->reported = true;
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    upcall_push(t, UP_CLOSED, strbuf_str(&sb), sb.len);
    strbuf_deinit(&sb);
}

static void on_deliver(evutil_socket_t fd, short what, void *arg)
{
    HttpTransport *t = arg;
    Upcall *u;

    (void)fd, (void)what;
    while ((u = t->up_head)) {
        t->up_head = u->next;
        if (!t->up_head)
            t->up_tail = &t->up_head;
        if (!t->closing) {
            if (u->kind == UP_MESSAGE && t->base.cb.message)
                t->base.cb.message(t->base.userdata, u->text, u->len);
            else if (u->kind == UP_AUTH && t->base.cb.auth)
                t->base.cb.auth(t->base.userdata, u->text);
            else if (u->kind == UP_CLOSED && t->base.cb.closed)
                t->base.cb.closed(t->base.userdata, u->text);
        }
        free(u->text);
        free(u);
    }
}

/* A JSON-RPC error for a request whose HTTP exchange failed: upstream.c sees a normal reply. */
static void synth_error(HttpTransport *t, uint64_t id, const char *fmt, ...) _printf_(3, 4);
static void synth_error(HttpTransport *t, uint64_t id, const char *fmt, ...)
{
    StrBuf msg = STRBUF_INIT, line = STRBUF_INIT;
    va_list ap;

    if (!id || !idmap_remove(&t->outstanding, id))
        return;
    va_start(ap, fmt);
    strbuf_vprintf(&msg, fmt, ap);
    va_end(ap);
    strbuf_printf(&line,
                  "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"error\":{\"code\":-32000,"
                  "\"message\":",
                  id);
    json_write_string(&line, msg.data, msg.len);
    strbuf_puts(&line, "}}");
    log_full(LOG_INFO, t->base.server, "http", "request %" PRIu64 " failed: %s", id,
             strbuf_str(&msg));
    upcall_push(t, UP_MESSAGE, line.data, line.len);
    strbuf_deinit(&msg);
    strbuf_deinit(&line);
}

/* Note what an incoming message answers, then queue it for upstream.c. */
static void take_one(HttpTransport *t, yajl_val m, const char *text, size_t len)
{
    yajl_val id = json_get(m, "id");

    if (YAJL_IS_OBJECT(m) && !json_get(m, "method") && YAJL_IS_INTEGER(id) && id->u.number.i > 0) {
        uint64_t rid = (uint64_t)id->u.number.i;
        idmap_remove(&t->outstanding, rid);
        if (t->have_init_id && rid == t->init_id) {
            const char *v = json_get_string(json_get_object(m, "result"), "protocolVersion");
            if (v) {
                free(t->protocol_version);
                t->protocol_version = xstrdup(v);
            }
        }
    }
    upcall_push(t, UP_MESSAGE, text, len);
}

/* One body or event holding a message (or, on 2025-03-26 sessions, an array of them). */
static void take_messages(HttpTransport *t, const char *text, size_t len)
{
    _cleanup_json_ yajl_val v = NULL;
    size_t i = 0;

    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    if (i == len)
        return;
    v = json_parse(text, NULL);
    if (!YAJL_IS_ARRAY(v)) {
        /* Not JSON at all still goes up: upstream.c reports it like a bad stdout line. */
        take_one(t, v, text + i, len - i);
        return;
    }
    for (size_t k = 0; k < v->u.array.len; k++) {
        StrBuf sb = STRBUF_INIT;
        json_write(&sb, v->u.array.values[k]);
        take_one(t, v->u.array.values[k], sb.data, sb.len);
        strbuf_deinit(&sb);
    }
}

/* ---- transfers ---- */

static void xfer_free(Xfer *x)
{
    HttpTransport *t = x->t;

    if (x->prev)
        x->prev->next = x->next;
    else
        t->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    if (x->easy) {
        http_stop(x->easy);
        curl_easy_cleanup(x->easy);
    }
    curl_slist_free_all(x->hdrs);
    if (x->timer)
        event_free(x->timer);
    if (x->ev_delay)
        event_free(x->ev_delay);
    sse_parser_deinit(&x->parser);
    strbuf_deinit(&x->resp);
    strbuf_deinit(&x->www_auth);
    free(x->hdr_session);
    free(x->last_event_id);
    free(x->url);
    free(x->body);
    free(x);
}

static void arm_timer(Xfer *x)
{
    int64_t ms = x->timeout_ms;
    struct timeval tv;

    if (ms <= 0)
        return;
    if (x->cap_ms) {
        uint64_t now = now_ms();
        ms = MIN(ms, x->cap_ms > now ? (int64_t)(x->cap_ms - now) : 0);
    }
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    evtimer_add(x->timer, &tv);
}

static bool header_name_is(const char *line, size_t n, const char *name)
{
    size_t k = strlen(name);
    return n > k && line[k] == ':' && strncasecmp(line, name, k) == 0;
}

static char *header_value(const char *line, size_t n, size_t name_len)
{
    const char *v = line + name_len + 1, *end = line + n;

    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    return xstrndup(v, (size_t)(end - v));
}

static void on_headers_done(Xfer *x);

/* Status shows how messages fare: the optional GET stream's 405 is not news. */
static void note_status(Xfer *x)
{
    if (x->kind == XFER_POST || x->kind == XFER_LEGACY_GET)
        x->t->last_status = x->status;
}

static size_t on_header(char *data, size_t size, size_t nitems, void *userdata)
{
    Xfer *x = userdata;
    size_t n = size * nitems;

    if (n <= 2 && (data[0] == '\r' || data[0] == '\n')) {
        on_headers_done(x);
        return n;
    }
    if (header_name_is(data, n, "mcp-session-id")) {
        free(x->hdr_session);
        x->hdr_session = header_value(data, n, strlen("mcp-session-id"));
    } else if (header_name_is(data, n, "www-authenticate")) {
        char *v = header_value(data, n, strlen("www-authenticate"));
        if (x->www_auth.len)
            strbuf_puts(&x->www_auth, ", ");
        strbuf_puts(&x->www_auth, v);
        free(v);
    }
    return n;
}

static void headers_apply(Xfer *x, const char *ct);

static void on_headers_done(Xfer *x)
{
    char *ct = NULL;

    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
    headers_apply(x, ct);
}

/* The status and content type of a response are known (ct may be NULL): decide how to read it. */
static void headers_apply(Xfer *x, const char *ct)
{
    HttpTransport *t = x->t;

    if (x->status < 200) {
        /* 100 Continue and friends: the real response follows. */
        strbuf_reset(&x->www_auth);
        return;
    }
    x->headers_done = true;
    note_status(x);
    x->sse = x->status / 100 == 2 && ct && strncasecmp(ct, "text/event-stream", 17) == 0;
    if (x->status / 100 == 2 && x->hdr_session && x->kind == XFER_POST &&
        !streq(x->hdr_session, t->session_id)) {
        bool valid = *x->hdr_session != '\0';
        for (const char *p = x->hdr_session; *p; p++)
            valid = valid && *p >= 0x21 && *p <= 0x7e;
        if (valid) {
            free(t->session_id);
            t->session_id = xstrdup(x->hdr_session);
        }
    }
    if (!x->sse)
        return;
    if (x->kind == XFER_GET) {
        /* A live server stream has no end; only its start was bounded. */
        evtimer_del(x->timer);
        x->timeout_ms = 0;
    } else {
        arm_timer(x);
    }
}

static int on_event(void *userdata, const SseEvent *ev)
{
    Xfer *x = userdata;
    HttpTransport *t = x->t;

    x->got_event = true;
    if (x->timeout_ms > 0)
        arm_timer(x); /* activity (progress, priming) keeps a stream alive, up to its cap */
    if (x->kind == XFER_LEGACY_GET && streq(ev->event, "endpoint")) {
        _cleanup_free_ char *u = http_url_resolve(x->url, ev->data);
        if (!u || !http_same_origin(u, t->url)) {
            report_closed(t, "the SSE endpoint event names %s, which is not on the origin of %s",
                          u ? "a URL" : "an invalid URL", t->shown_url);
            return 1;
        }
        free(t->post_url);
        t->post_url = xstrdup(u);
        evtimer_del(x->timer);
        x->timeout_ms = 0;
        /* Flushing sends, which curl forbids inside its callbacks: do it from the loop. */
        event_active(t->ev_get, EV_TIMEOUT, 0);
        return 0;
    }
    if (!streq(ev->event, "message") || ev->data_len == 0)
        return 0; /* priming events and unknown types carry no message */
    take_messages(t, ev->data, ev->data_len);
    return 0;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
    Xfer *x = userdata;
    size_t n = size * nmemb;

    if (!x->headers_done)
        on_headers_done(x);
    if (x->sse) {
        if (sse_parser_feed(&x->parser, data, n, on_event, x) != 0)
            return 0; /* fatal for this transport: stop the transfer */
        return n;
    }
    if (x->resp.len + n > (x->status / 100 == 2 ? JSONRPC_MAX_LINE_DEFAULT : ERROR_BODY_MAX))
        return x->status / 100 == 2 ? 0 : n; /* a huge error page is cut, not fatal */
    strbuf_append(&x->resp, data, n);
    return n;
}

static struct curl_slist *add_header(struct curl_slist *l, const char *name, const char *value)
{
    _cleanup_free_ char *h = xasprintf("%s: %s", name, value);
    return curl_slist_append(l, h);
}

/* The configured headers, minus those the transport owns and any that could split a line. */
static struct curl_slist *add_config_headers(HttpTransport *t, struct curl_slist *l)
{
    static const char *const owned[] = {"content-type",         "accept",        "mcp-session-id",
                                        "mcp-protocol-version", "last-event-id", "expect"};
    yajl_val h = t->headers;

    for (size_t i = 0; YAJL_IS_OBJECT(h) && i < h->u.object.len; i++) {
        const char *k = h->u.object.keys[i], *v = YAJL_GET_STRING(h->u.object.values[i]);
        bool skip = !v || !*v || strpbrk(k, "\r\n:") || strpbrk(v, "\r\n");
        for (size_t j = 0; !skip && j < N_ELEMENTS(owned); j++)
            skip = strcasecmp(k, owned[j]) == 0;
        if (skip) {
            /* The value is never logged: it is often a secret. */
            log_full(LOG_DEBUG, t->base.server, "http", "header \"%s\" not sent", k);
            continue;
        }
        l = add_header(l, k, v);
    }
    return l;
}

static void on_xfer_timeout(evutil_socket_t fd, short what, void *arg);
static void on_xfer_done(void *userdata, CURL *easy, CURLcode result);

/* (Re)build the easy handle for x->url and start it. */
static int xfer_launch(Xfer *x)
{
    HttpTransport *t = x->t;
    bool streamable = t->mode != MODE_LEGACY;
    struct curl_slist *l = NULL;
    int r;

    if (x->easy) {
        http_stop(x->easy);
        curl_easy_cleanup(x->easy);
    }
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
    x->status = 0;
    x->headers_done = x->sse = false;
    free(x->hdr_session);
    x->hdr_session = NULL;
    strbuf_reset(&x->www_auth);
    strbuf_reset(&x->resp);
    sse_parser_reset(&x->parser);
    x->easy = http_easy_new(x->url);
    if (!x->easy)
        return -ENOMEM;
    switch (x->kind) {
    case XFER_POST:
        l = curl_slist_append(l, "Content-Type: application/json");
        l = curl_slist_append(l, "Accept: application/json, text/event-stream");
        l = curl_slist_append(l, "Expect:"); /* no 100-continue round trip for large bodies */
        curl_easy_setopt(x->easy, CURLOPT_POST, 1L);
        curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, x->body);
        curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
        break;
    case XFER_DELETE:
        curl_easy_setopt(x->easy, CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    default:
        l = curl_slist_append(l, "Accept: text/event-stream");
        l = curl_slist_append(l, "Cache-Control: no-cache");
        if (x->last_event_id)
            l = add_header(l, "Last-Event-ID", x->last_event_id);
    }
    x->sent_session = streamable && t->session_id && !x->foreign;
    if (x->sent_session)
        l = add_header(l, "MCP-Session-Id", t->session_id);
    if (streamable && t->protocol_version && !x->foreign)
        l = add_header(l, "MCP-Protocol-Version", t->protocol_version);
    if (!x->foreign)
        l = add_config_headers(t, l);
    if (!x->foreign) /* a stored sign-in (mcpctl login), unless the config sets Authorization */
        l = oauth_store_add_bearer(l, t->url, t->headers);
    x->hdrs = l;
    curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, l);
    curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
    if (!x->timer)
        x->timer = evtimer_new(t->base.base, on_xfer_timeout, x);
    arm_timer(x);
    r = http_start(t->base.base, x->easy, on_xfer_done, x);
    return r;
}

static Xfer *xfer_new(HttpTransport *t, XferKind kind, const char *url, int64_t timeout_ms)
{
    Xfer *x = xcalloc(1, sizeof(*x));

    x->t = t;
    x->kind = kind;
    x->url = xstrdup(url);
    x->timeout_ms = timeout_ms;
    sse_parser_init(&x->parser, JSONRPC_MAX_LINE_DEFAULT);
    x->next = t->xfers;
    if (t->xfers)
        t->xfers->prev = x;
    t->xfers = x;
    return x;
}

static void xfer_start_or_fail(Xfer *x)
{
    int r = xfer_launch(x);

    if (r < 0) {
        synth_error(x->t, x->req_id, "cannot start the HTTP request: %s", strerror(-r));
        xfer_free(x);
    }
}

/* ---- sending ---- */

typedef struct OutInfo {
    uint64_t id; /* a request's integer id, else 0 */
    bool request;
    const char *method;
    uint64_t cancel_id; /* notifications/cancelled: the request given up */
    yajl_val root;
} OutInfo;

static void out_info(OutInfo *o, const char *body)
{
    yajl_val id, rid;

    memset(o, 0, sizeof(*o));
    o->root = json_parse(body, NULL);
    o->method = json_get_string(o->root, "method");
    id = json_get(o->root, "id");
    o->request = o->method && id;
    if (o->request && YAJL_IS_INTEGER(id) && id->u.number.i > 0)
        o->id = (uint64_t)id->u.number.i;
    if (streq(o->method, "notifications/cancelled") &&
        YAJL_IS_INTEGER(rid = json_get(json_get_object(o->root, "params"), "requestId")) &&
        rid->u.number.i > 0)
        o->cancel_id = (uint64_t)rid->u.number.i;
}

/* The request gave up upstream: its open stream, if any, is no longer wanted. */
static void drop_streams_for(HttpTransport *t, uint64_t id)
{
    Xfer *x = t->xfers, *next;

    idmap_remove(&t->outstanding, id);
    for (; x; x = next) {
        next = x->next;
        if (x->req_id == id && (x->kind == XFER_RESUME || (x->kind == XFER_POST && x->sse)))
            xfer_free(x);
    }
}

static void post_message(HttpTransport *t, char *body, size_t len)
{
    OutInfo o;
    const char *url = t->mode == MODE_LEGACY ? t->post_url : t->url;
    int64_t bound = t->timeout_ms;
    Xfer *x;

    out_info(&o, body);
    if (streq(o.method, "tools/call") && t->call_timeout_ms > bound)
        bound = t->call_timeout_ms;
    x = xfer_new(t, XFER_POST, url, bound);
    x->body = body;
    x->body_len = len;
    x->is_request = o.request;
    x->req_id = o.id;
    x->is_initialized_note = streq(o.method, "notifications/initialized");
    if (streq(o.method, "tools/call") && t->max_call_ms > 0)
        x->cap_ms = now_ms() + (uint64_t)MAX(t->max_call_ms, bound);
    if (o.id) {
        idmap_put(&t->outstanding, o.id, t);
        if (streq(o.method, "initialize")) {
            t->init_id = o.id;
            t->have_init_id = true;
        }
    }
    if (o.cancel_id)
        drop_streams_for(t, o.cancel_id);
    json_free(o.root);
    xfer_start_or_fail(x);
}

static void hold_message(HttpTransport *t, char *body)
{
    t->held = xrealloc(t->held, (t->n_held + 1) * sizeof(*t->held));
    t->held[t->n_held++] = body;
}

static void flush_held(HttpTransport *t)
{
    char **held = t->held;
    size_t n = t->n_held;

    t->held = NULL;
    t->n_held = 0;
    for (size_t i = 0; i < n; i++)
        post_message(t, held[i], strlen(held[i]));
    free(held);
}

static int http_send(Transport *tr, const char *line, size_t len)
{
    HttpTransport *t = (HttpTransport *)tr;
    char *body;

    if (t->closing || t->reported)
        return -ENOTCONN;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    body = xstrndup(line, len);
    /* Until the probe answers, or the legacy endpoint is known, messages wait in order. */
    if ((t->mode == MODE_PROBE && t->xfers) || (t->mode == MODE_LEGACY && !t->post_url) ||
        t->n_held) {
        hold_message(t, body);
        return 0;
    }
    post_message(t, body, len);
    return 0;
}

/* ---- streams ---- */

static Xfer *get_new(HttpTransport *t, XferKind kind, const char *last_id, uint64_t req_id,
                     unsigned resumes)
{
    Xfer *x = xfer_new(t, kind, t->url, kind == XFER_RESUME ? t->call_timeout_ms : t->timeout_ms);

    if (kind == XFER_RESUME && t->timeout_ms > x->timeout_ms)
        x->timeout_ms = t->timeout_ms;
    x->last_event_id = last_id ? xstrdup(last_id) : NULL;
    x->req_id = req_id;
    x->resumes = resumes;
    return x;
}

/* The loop-side hook: flush held messages (legacy endpoint known) or (re)open the GET stream. */
static void on_get_timer(evutil_socket_t fd, short what, void *arg)
{
    HttpTransport *t = arg;

    (void)fd, (void)what;
    if (t->closing || t->reported)
        return;
    if (t->mode == MODE_LEGACY) {
        if (t->post_url && t->n_held)
            flush_held(t);
        return;
    }
    if (t->get_wanted && !t->get_unsupported) {
        bool open = false;
        for (Xfer *x = t->xfers; x; x = x->next)
            open = open || x->kind == XFER_GET;
        if (!open)
            xfer_start_or_fail(get_new(t, XFER_GET, t->get_last_id, 0, 0));
    }
}

static void on_resume_timer(evutil_socket_t fd, short what, void *arg)
{
    Xfer *x = arg;

    (void)fd, (void)what;
    if (x->t->reported || !idmap_get(&x->t->outstanding, x->req_id))
        xfer_free(x);
    else
        xfer_start_or_fail(x);
}

/* A stream ended before its response: wait `retry` and GET with Last-Event-ID (2025-11-25). */
static void schedule_resume(Xfer *x)
{
    HttpTransport *t = x->t;
    int64_t ms = x->parser.retry_ms >= 0 ? MAX(x->parser.retry_ms, RETRY_MIN_MS) : RETRY_DEFAULT_MS;
    Xfer *r;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    if (!x->parser.id.len || x->resumes >= RESUME_MAX) {
        synth_error(t, x->req_id, "the server closed the response stream before answering%s",
                    x->parser.id.len ? " (gave up resuming it)" : " (and it cannot be resumed)");
        return;
    }
    /* A transfer from now on, so closing the transport also cancels the wait. */
    r = get_new(t, XFER_RESUME, strbuf_str(&x->parser.id), x->req_id, x->resumes + 1);
    r->ev_delay = evtimer_new(t->base.base, on_resume_timer, r);
    evtimer_add(r->ev_delay, &tv);
    log_full(LOG_DEBUG, t->base.server, "http", "stream dropped: resuming in %" PRId64 " ms", ms);
}

/* The standalone GET ended: reopen it after the server's retry (or a growing default). */
static void schedule_get(HttpTransport *t, Xfer *x)
{
    int64_t ms;
    struct timeval tv;

    if (x->parser.id.len) {
        free(t->get_last_id);
        t->get_last_id = xstrdup(strbuf_str(&x->parser.id));
    }
    if (x->parser.retry_ms >= 0)
        ms = MAX(x->parser.retry_ms, RETRY_MIN_MS);
    else if (x->got_event)
        ms = RETRY_DEFAULT_MS;
    else
        ms = t->get_retry_ms =
            MIN(t->get_retry_ms ? t->get_retry_ms * 3 / 2 : RETRY_DEFAULT_MS, RETRY_MAX_MS);
    if (x->got_event)
        t->get_retry_ms = 0;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    evtimer_add(t->ev_get, &tv);
}

/* ---- completion ---- */

/* A short text for an HTTP error: the JSON-RPC error message in the body, or its start. */
static char *error_text(Xfer *x)
{
    _cleanup_json_ yajl_val v = x->resp.len ? json_parse(strbuf_str(&x->resp), NULL) : NULL;
    const char *m = json_get_string(json_get_object(v, "error"), "message");
    StrBuf sb = STRBUF_INIT;

    strbuf_printf(&sb, "HTTP %ld", x->status);
    if (m)
        strbuf_printf(&sb, ": %.300s", m);
    else if (x->resp.len && !memchr(x->resp.data, '<', MIN(x->resp.len, 64)))
        strbuf_printf(&sb, ": %.200s", strbuf_str(&x->resp));
    return strbuf_detach(&sb, NULL);
}

static void start_legacy(HttpTransport *t)
{
    t->mode = MODE_LEGACY;
    t->base.ops = &http_ops_legacy;
    xfer_start_or_fail(xfer_new(t, XFER_LEGACY_GET, t->url, t->timeout_ms));
}

static bool follow_redirect(Xfer *x)
{
    HttpTransport *t = x->t;
    char *loc = NULL;

    if (x->status / 100 != 3 || x->status == 304 || x->kind == XFER_DELETE)
        return false;
    curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc);
    if (!loc || x->redirects >= REDIRECT_MAX)
        return false;
    x->redirects++;
    free(x->url);
    x->url = xstrdup(loc);
    /* Headers (credentials, session) never go to another origin, and it stays that way. */
    if (!http_same_origin(x->url, t->url)) {
        if (!x->foreign)
            log_full(LOG_NOTICE, t->base.server, "http",
                     "redirected to another origin: following without the configured headers");
        x->foreign = true;
    }
    xfer_start_or_fail(x);
    return true;
}

static bool session_expired(Xfer *x)
{
    if (!x->sent_session)
        return false;
    if (x->status == 404)
        return true;
    /* The TS SDK answers an unknown session with 400 "No valid session ID provided". */
    return x->status == 400 && strcasestr(strbuf_str(&x->resp), "session") != NULL;
}

static void auth_needed(HttpTransport *t, Xfer *x)
{
    const char *w = x->www_auth.len ? strbuf_str(&x->www_auth) : NULL;

    if (t->reported)
        return;
    upcall_push(t, UP_AUTH, w ? w : "", w ? strlen(w) : 0);
    report_closed(t, "HTTP 401 Unauthorized: the server needs authorization%s%s%s",
                  w ? " (WWW-Authenticate: " : "", w ? w : "", w ? ")" : "");
}

static void post_done(Xfer *x, CURLcode res)
{
    HttpTransport *t = x->t;
    _cleanup_free_ char *why = NULL;

    if (res != CURLE_OK && !x->headers_done) {
        why = xasprintf("%s", x->timed_out ? "no response in time" : curl_easy_strerror(res));
        if (t->mode == MODE_PROBE)
            t->mode = MODE_STREAMABLE; /* nothing answered: nothing to fall back on */
        synth_error(t, x->req_id, "HTTP request to %s failed: %s", t->shown_url, why);
        return;
    }
    if (t->mode == MODE_PROBE) {
        if (x->status == 400 || x->status == 404 || x->status == 405) {
            /* The backwards-compatibility probe: an old server does not take the POST. */
            free(t->probe_status);
            t->probe_status = xasprintf("HTTP %ld", x->status);
            hold_message(t, x->body);
            x->body = NULL;
            idmap_remove(&t->outstanding, x->req_id);
            log_full(LOG_INFO, t->base.server, "http",
                     "POST initialize got HTTP %ld: trying the legacy SSE transport", x->status);
            start_legacy(t);
            return;
        }
        t->mode = MODE_STREAMABLE;
        t->base.ops = &http_ops_streamable;
    }
    if (x->status == 401)
        return auth_needed(t, x);
    if (session_expired(x)) {
        report_closed(t,
                      "session expired (HTTP %ld for a request with the session id): "
                      "starting a new session",
                      x->status);
        return;
    }
    if (x->status == 403 && strcasestr(strbuf_str(&x->www_auth), "insufficient_scope")) {
        /* Step-up: the call fails with the way out; the challenge's scope goes to mcpd/login. */
        upcall_push(t, UP_AUTH, x->www_auth.data, x->www_auth.len);
        synth_error(t, x->req_id,
                    "HTTP 403 insufficient_scope: the server wants more scope: run: "
                    "mcpctl login %s",
                    t->base.server);
        return;
    }
    if (x->status / 100 != 2) {
        _cleanup_free_ char *e = error_text(x);
        if (!x->is_request)
            log_full(LOG_WARNING, t->base.server, "http", "POST of a message failed: %s", e);
        synth_error(t, x->req_id, "%s", e);
        return;
    }
    if (res != CURLE_OK) {
        why = xasprintf("%s", x->timed_out ? "timed out" : curl_easy_strerror(res));
        if (x->sse && !x->timed_out)
            return schedule_resume(x);
        synth_error(t, x->req_id, "HTTP response from %s %s (body incomplete)", t->shown_url, why);
        return;
    }
    if (t->mode == MODE_LEGACY)
        return; /* the answer comes on the SSE stream */
    if (x->sse) {
        if (x->req_id && idmap_get(&t->outstanding, x->req_id))
            schedule_resume(x);
    } else if (x->is_request && x->resp.len) {
        /* Only a request's body is an answer; some servers put {} on notifications too. */
        take_messages(t, strbuf_str(&x->resp), x->resp.len);
    }
    if (x->req_id && !x->sse && idmap_get(&t->outstanding, x->req_id) && x->status != 202)
        synth_error(t, x->req_id, "HTTP %ld without a JSON-RPC response to the request", x->status);
    if (x->is_initialized_note) {
        t->get_wanted = true;
        event_active(t->ev_get, EV_TIMEOUT, 0);
    }
}

static void get_done(Xfer *x, CURLcode res)
{
    HttpTransport *t = x->t;

    if (x->headers_done && x->status / 100 != 2) {
        /* 405 is the specified "no stream here"; servers send 400 and 404 too. */
        log_full(LOG_DEBUG, t->base.server, "http", "no standalone GET stream (HTTP %ld)",
                 x->status);
        if (session_expired(x))
            report_closed(t,
                          "session expired (HTTP %ld on the GET stream): starting a new "
                          "session",
                          x->status);
        t->get_unsupported = true;
        return;
    }
    if (res != CURLE_OK && !x->headers_done)
        log_full(LOG_DEBUG, t->base.server, "http", "GET stream failed: %s",
                 curl_easy_strerror(res));
    if (!x->sse && x->headers_done) {
        t->get_unsupported = true; /* answered, but not with a stream */
        return;
    }
    schedule_get(t, x);
}

static void resume_done(Xfer *x, CURLcode res)
{
    HttpTransport *t = x->t;

    if (!idmap_get(&t->outstanding, x->req_id))
        return;
    if (x->headers_done && x->status / 100 != 2) {
        synth_error(t, x->req_id, "the response stream dropped and resuming it failed: HTTP %ld",
                    x->status);
        return;
    }
    if (res != CURLE_OK && !x->headers_done) {
        synth_error(t, x->req_id, "the response stream dropped and resuming it failed: %s",
                    x->timed_out ? "no response in time" : curl_easy_strerror(res));
        return;
    }
    if (x->timed_out) {
        synth_error(t, x->req_id, "no response in time on the resumed stream");
        return;
    }
    schedule_resume(x);
}

static void legacy_get_done(Xfer *x, CURLcode res)
{
    HttpTransport *t = x->t;
    _cleanup_free_ char *e = NULL;

    if (x->status == 401)
        return auth_needed(t, x);
    if (x->headers_done && (x->status / 100 != 2 || !x->sse)) {
        e = x->status / 100 == 2 ? xasprintf("HTTP %ld but not an event stream", x->status)
                                 : error_text(x);
        if (t->probe_status)
            report_closed(t,
                          "neither Streamable HTTP (POST: %s) nor legacy SSE (GET: %s) "
                          "answered at %s",
                          t->probe_status, e, t->shown_url);
        else
            report_closed(t, "SSE stream at %s refused: %s", t->shown_url, e);
        return;
    }
    if (x->timed_out)
        report_closed(t, "SSE stream at %s sent no endpoint event in time", t->shown_url);
    else if (res != CURLE_OK)
        report_closed(t, "SSE stream at %s failed: %s", t->shown_url, curl_easy_strerror(res));
    else
        report_closed(t, "SSE stream at %s ended", t->shown_url);
}

static void http_maybe_free(HttpTransport *t);

static void on_xfer_done(void *userdata, CURL *easy, CURLcode res)
{
    Xfer *x = userdata;
    HttpTransport *t = x->t;

    (void)easy;
    evtimer_del(x->timer);
    if (!x->headers_done && x->status == 0)
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->status >= 200 && !x->headers_done) {
        x->headers_done = true;
        note_status(x);
    }
    if (!t->closing) {
        if (follow_redirect(x))
            return;
        switch (x->kind) {
        case XFER_POST:
            post_done(x, res);
            break;
        case XFER_GET:
            get_done(x, res);
            break;
        case XFER_RESUME:
            resume_done(x, res);
            break;
        case XFER_LEGACY_GET:
            legacy_get_done(x, res);
            break;
        case XFER_DELETE:
            break;
        }
    }
    xfer_free(x);
    /* The probe decided for Streamable HTTP: what waited for it goes out now. */
    if (!t->closing && !t->reported && t->n_held && t->mode == MODE_STREAMABLE)
        flush_held(t);
    http_maybe_free(t);
}

static void on_xfer_timeout(evutil_socket_t fd, short what, void *arg)
{
    Xfer *x = arg;

    (void)fd, (void)what;
    x->timed_out = true;
    /* Treated as a failed transfer; the easy handle is stopped first so curl forgets it. */
    http_stop(x->easy);
    on_xfer_done(x, x->easy, CURLE_OPERATION_TIMEDOUT);
}

/* ---- lifecycle ---- */

static void http_free(HttpTransport *t)
{
    Upcall *u;

    while (t->xfers)
        xfer_free(t->xfers);
    while ((u = t->up_head)) {
        t->up_head = u->next;
        free(u->text);
        free(u);
    }
    for (size_t i = 0; i < t->n_held; i++)
        free(t->held[i]);
    free(t->held);
    if (t->prev_live)
        t->prev_live->next_live = t->next_live;
    else
        all_http = t->next_live;
    if (t->next_live)
        t->next_live->prev_live = t->prev_live;
    event_free(t->ev_deliver);
    event_free(t->ev_free);
    event_free(t->ev_get);
    idmap_deinit(&t->outstanding);
    json_free(t->headers);
    free(t->url);
    free(t->shown_url);
    free(t->post_url);
    free(t->session_id);
    free(t->protocol_version);
    free(t->get_last_id);
    free(t->probe_status);
    free(t->base.server);
    free(t);
    n_live--;
}

static void on_free(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    http_free(arg);
}

static void http_maybe_free(HttpTransport *t)
{
    if (t->closing && !t->xfers)
        event_active(t->ev_free, EV_TIMEOUT, 0);
}

static void http_close(Transport *tr)
{
    HttpTransport *t = (HttpTransport *)tr;
    Xfer *x;

    if (t->closing)
        return;
    t->closing = true;
    t->base.cb = (TransportCallbacks){0};
    event_del(t->ev_get);
    while (t->xfers)
        xfer_free(t->xfers);
    if (t->session_id && t->mode == MODE_STREAMABLE && !t->reported) {
        /* The spec's "client SHOULD send DELETE"; bounded, and a 405 is fine. */
        x = xfer_new(t, XFER_DELETE, t->url,
                     MIN(t->timeout_ms ? t->timeout_ms : DELETE_TIMEOUT_MS, DELETE_TIMEOUT_MS));
        if (xfer_launch(x) < 0)
            xfer_free(x);
    }
    http_maybe_free(t);
}

void transport_http_kill_all(void)
{
    for (HttpTransport *t = all_http; t; t = t->next_live)
        while (t->xfers)
            xfer_free(t->xfers);
    for (HttpTransport *t = all_http; t; t = t->next_live)
        http_maybe_free(t);
}

void transport_http_shutdown(void)
{
    while (all_http) {
        HttpTransport *t = all_http;
        t->closing = true;
        http_free(t);
    }
    oauth_login_shutdown();
    http_shutdown();
}

static void http_status(Transport *tr, yajl_val obj)
{
    HttpTransport *t = (HttpTransport *)tr;
    static const char *const modes[] = {"probing", "streamable-http", "sse"};
    yajl_val signed_in = oauth_store_describe(t->url);

    json_object_set(obj, "url", json_string_new(t->shown_url));
    json_object_set(obj, "httpTransport", json_string_new(modes[t->mode]));
    json_object_set(obj, "session", json_bool_new(t->session_id != NULL));
    if (t->last_status)
        json_object_set(obj, "lastHttpStatus", json_int_new(t->last_status));
    if (t->mode == MODE_STREAMABLE)
        json_object_set(obj, "getStream", json_bool_new(t->get_wanted && !t->get_unsupported));
    if (signed_in)
        json_object_set(obj, "signIn", signed_in);
}

static const TransportOps http_ops_auto = {
    .kind = "auto",
    .send = http_send,
    .close = http_close,
    .status = http_status,
};
static const TransportOps http_ops_streamable = {
    .kind = "http",
    .send = http_send,
    .close = http_close,
    .status = http_status,
};
static const TransportOps http_ops_legacy = {
    .kind = "sse",
    .send = http_send,
    .close = http_close,
    .status = http_status,
};

int transport_http_new(Transport **tp, struct event_base *base, const ServerConfig *cfg,
                       int64_t max_call_timeout_ms, const TransportCallbacks *cb, void *userdata,
                       char **whyp)
{
    HttpTransport *t;
    char *shown = http_url_redact(cfg->url);

    if (!shown || (!startswith(cfg->url, "http://") && !startswith(cfg->url, "https://"))) {
        *whyp = xasprintf("\"url\" of server %s is not an http:// or https:// URL", cfg->name);
        free(shown);
        return -EINVAL;
    }
    t = xcalloc(1, sizeof(*t));
    n_live++;
    t->base.cb = *cb;
    t->base.userdata = userdata;
    t->base.base = base;
    t->base.server = xstrdup(cfg->name);
    t->url = xstrdup(cfg->url);
    t->shown_url = shown;
    t->headers = json_copy(cfg->headers);
    t->timeout_ms = cfg->timeout_ms;
    t->call_timeout_ms = cfg->call_timeout_ms;
    t->max_call_ms = max_call_timeout_ms;
    t->up_tail = &t->up_head;
    t->ev_deliver = event_new(base, -1, 0, on_deliver, t);
    t->ev_free = event_new(base, -1, 0, on_free, t);
    t->ev_get = evtimer_new(base, on_get_timer, t);
    t->next_live = all_http;
    if (all_http)
        all_http->prev_live = t;
    all_http = t;
    switch (cfg->type) {
    case TRANSPORT_SSE:
        start_legacy(t);
        break;
    case TRANSPORT_HTTP:
        t->mode = MODE_STREAMABLE;
        t->base.ops = &http_ops_streamable;
        break;
    default:
        t->mode = MODE_PROBE;
        t->base.ops = &http_ops_auto;
    }
    log_full(LOG_INFO, cfg->name, "connect", "connecting to %s (%s)", shown, t->base.ops->kind);
    *tp = &t->base;
    return 0;
}

/*
 * Fuzzing entry (tests/fuzz/fuzz-http.c). data (n bytes, then a NUL) is one response as curl
 * hands it over: a status line and header lines up to an empty line (interim 1xx blocks may come
 * first), then the body, given to the write callback chunk bytes at a time. kind % 4 picks the
 * transfer (POST, GET, resume, legacy GET); a POST then ends as a finished request would. It runs
 * the same header, content-type, body, SSE and message handling as a live transfer, with no
 * network: nothing is started, upcalls are dropped, and the transport is freed before returning.
 */
void transport_http_fuzz_response(struct event_base *base, unsigned kind, const char *data,
                                  size_t n, size_t chunk);
void transport_http_fuzz_response(struct event_base *base, unsigned kind, const char *data,
                                  size_t n, size_t chunk)
{
    static const XferKind kinds[] = {XFER_POST, XFER_GET, XFER_RESUME, XFER_LEGACY_GET};
    char name[] = "fuzz", url[] = "http://127.0.0.1:9/mcp";
    ServerConfig cfg = {.name = name, .type = TRANSPORT_HTTP, .url = url, .timeout_ms = 1000};
    TransportCallbacks cb = {0};
    _cleanup_free_ char *why = NULL, *ct = NULL;
    Transport *tr;
    size_t off = 0;

    if (transport_http_new(&tr, base, &cfg, 1000, &cb, NULL, &why) < 0)
        abort();
    HttpTransport *t = (HttpTransport *)tr;
    Xfer *x = xfer_new(t, kinds[kind % N_ELEMENTS(kinds)], t->url, t->timeout_ms);
    x->timer = evtimer_new(base, on_xfer_timeout, x);
    x->is_request = true;
    x->req_id = 1;
    idmap_put(&t->outstanding, 1, t);
    while (!x->headers_done && off < n) {
        const char *line = data + off, *nl = memchr(line, '\n', n - off);
        size_t len = nl ? (size_t)(nl - line) + 1 : n - off;
        off += len;
        if (len > 5 && strncmp(line, "HTTP/", 5) == 0) {
            const char *sp = memchr(line, ' ', len);
            x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
            free(ct), ct = NULL;
        } else if (line[0] == '\r' || line[0] == '\n') {
            headers_apply(x, ct);
        } else {
            if (header_name_is(line, len, "content-type"))
                free(ct), ct = header_value(line, len, strlen("content-type"));
            on_header((char *)line, 1, len, x);
        }
    }
    while (x->headers_done && off < n) {
        size_t k = MIN(chunk, n - off);
        if (on_write((char *)data + off, 1, k, x) != k)
            break;
        off += k;
    }
    if (x->headers_done && x->kind == XFER_POST)
        post_done(x, CURLE_OK);
    on_deliver(-1, 0, t);
    http_free(t);
}
