// SPDX-License-Identifier: MIT
// http-server: Streamable HTTP connections for agents (from the socket, or the opt-in loopback
// listener): reading and bounding requests, the Host/Origin/token checks, the endpoints, and
// writing responses and SSE streams; what a request means to MCP is http-session.c's.

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/durable.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/jsonscan.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/downstream/http-chunked.h"
#include "daemon/downstream/http-parse.h"
#include "daemon/downstream/http-server.h"

/*
 * Output a connection may have queued before its client counts as not reading and is closed:
 * four maximal messages, as a peer of the line protocol (PEER_QUEUE_FACTOR).
 */
#define HTTP_QUEUE_FACTOR 4
/* Bytes read per read(2); a POST body beyond it is read in further reads. */
#define HTTP_READ_CHUNK 16384
/* Connections accepted per wake-up of the loopback listener, so a flood cannot starve the loop. */
#define HTTP_ACCEPTS_PER_WAKE 64
/* How often idle sessions are looked for (HTTP_SESSION_IDLE_MS is the bound itself). */
#define HTTP_SWEEP_MS 60000
/* Bytes of a server name in /servers/NAME/mcp: as long as a server name in a config (naming.c). */
#define HTTP_MAX_SERVER_NAME 128
/*
 * Refusals (no token, a foreign Host or Origin) are logged at most once a minute after the
 * first: a web page or a port scanner can cause them at will.
 */
#define HTTP_REFUSED_LOG_BURST 1
#define HTTP_REFUSED_LOG_RATE  1
/* A request's first byte: an uppercase letter starts every method. */

struct HttpConn {
    HttpServer *srv;
    uint64_t id;
    int fd;
    uid_t uid;
    pid_t pid;
    bool tcp;
    struct event *ev_read, *ev_write, *ev_timer, *ev_resume;
    char *in; /* what was read and not yet taken as a request */
    size_t in_len, in_cap, scan;
    struct evbuffer *out;
    HttpExchange ex;         /* the request that waits for mcpd, while busy */
    HttpChunked chunked;     /* the decoding of the current request's chunked body */
    bool busy;               /* ex waits (an answer, or a stream is open) */
    bool reading;            /* ev_read is added */
    bool close_after;        /* the last response is out: close */
    bool dead;               /* closed; freed from the server's reap step */
    HttpSession *modern;     /* this connection's 2026-07-28 agent, or NULL */
    uint64_t request_start;  /* monotonic ms of the current request's first byte, 0: none */
    uint64_t last_active_ms; /* for the choice of what to close at HTTP_MAX_CONNS */
    HttpConn *next, *prev, *reap_next;
};

static const HttpExchangeOps conn_ops;

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 202:
        return "Accepted";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Error";
    }
}

/* ---- connections: lifetime ---- */

static void conn_close(HttpConn *c, const char *why)
{
    HttpServer *srv = c->srv;

    if (c->dead)
        return;
    c->dead = true;
    if (why)
        log_debug("http: connection %llu closed: %s", (unsigned long long)c->id, why);
    event_del(c->ev_read);
    event_del(c->ev_write);
    event_del(c->ev_timer);
    event_del(c->ev_resume);
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    srv->n_conns--;
    /* Its exchange and session may be on the stack (a write that overflowed): freed later. */
    c->reap_next = srv->reap;
    srv->reap = c;
    event_active(srv->ev_reap, EV_TIMEOUT, 0);
}

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
    HttpServer *srv = arg;

    (void)fd, (void)what;
    while (srv->reap) {
        HttpConn *c = srv->reap;
        srv->reap = c->reap_next;
        http_exchange_drop(&c->ex); /* a 2025 stream cut short waits for a resume */
        if (c->modern)
            http_session_end(&srv->sessions, c->modern); /* closing the stream cancels (2026) */
        event_free(c->ev_read);
        event_free(c->ev_write);
        event_free(c->ev_timer);
        event_free(c->ev_resume);
        evbuffer_free(c->out);
        close(c->fd);
        free(c->in);
        free(c);
    }
}

/* Arm the connection's one timer for its state: a request's whole time, or idleness. */
static void set_timer(HttpConn *c)
{
    uint64_t ms;

    if (c->busy) {
        event_del(c->ev_timer); /* a stream waits on mcpd, whose own timeouts bound it */
        return;
    }
    if (c->request_start) {
        uint64_t end = c->request_start + (uint64_t)c->srv->request_timeout_ms, now = now_ms();
        ms = end > now ? end - now : 0;
    } else {
        ms = HTTP_IDLE_TIMEOUT_MS;
    }
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000 * 1000)};
    event_add(c->ev_timer, &tv);
}

/* ---- connections: output ---- */

static void flush(HttpConn *c)
{
    while (evbuffer_get_length(c->out)) {
        int w = evbuffer_write(c->out, c->fd);
        if (w < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                event_add(c->ev_write, NULL);
                return;
            }
            conn_close(c, strerror(errno));
            return;
        }
    }
    event_del(c->ev_write);
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
    HttpConn *c = arg;

    (void)fd, (void)what;
    flush(c);
    if (!c->dead && c->close_after && !c->busy && !evbuffer_get_length(c->out))
        conn_close(c, NULL); /* the last response is out */
}

/* Queue bytes; a client whose queue passes its bound is not reading and is closed. */
static void conn_write(HttpConn *c, const void *data, size_t n)
{
    if (c->dead)
        return;
    evbuffer_add(c->out, data, n);
    if (evbuffer_get_length(c->out) > HTTP_QUEUE_FACTOR * c->srv->max_body) {
        conn_close(c, "output queue full: the client is not reading");
        return;
    }
    flush(c);
}

/* The connection takes its next request, from the loop (never inside the core's writes). */
static void resume(HttpConn *c)
{
    c->busy = false;
    c->last_active_ms = now_ms();
    if (!c->dead)
        event_active(c->ev_resume, EV_TIMEOUT, 0);
}

static void write_head(HttpConn *c, int status, const char *type, const char *headers,
                       const char *length)
{
    char head[512];
    int n = snprintf(
        head, sizeof(head), "HTTP/1.1 %d %s\r\n%s%s%s%sCache-Control: no-store\r\n%s%s\r\n", status,
        reason_phrase(status), type ? "Content-Type: " : "", type ? type : "", type ? "\r\n" : "",
        length, c->close_after ? "Connection: close\r\n" : "", headers ? headers : "");
    conn_write(c, head, (size_t)MIN(n, (int)sizeof(head) - 1));
}

static void send_reply(HttpConn *c, int status, const char *headers, const char *body, size_t n)
{
    char length[48];

    snprintf(length, sizeof(length), "Content-Length: %zu\r\n", n);
    write_head(c, status, n ? "application/json" : NULL, headers, length);
    conn_write(c, body, n);
}

static void op_reply(void *conn, int status, const char *headers, const char *body, size_t n)
{
    HttpConn *c = conn;

    send_reply(c, status, headers, body, n);
    resume(c);
}

static void op_sse_start(void *conn, const char *headers)
{
    HttpConn *c = conn;
    char extra[256];

    snprintf(extra, sizeof(extra), "X-Accel-Buffering: no\r\n%s", headers);
    write_head(c, 200, "text/event-stream", extra, "Transfer-Encoding: chunked\r\n");
}

static void op_sse_event(void *conn, const char *id, const char *data, size_t n)
{
    HttpConn *c = conn;
    char pre[HTTP_EVENT_ID_LEN + 32], size[32];
    /* A priming event is an id alone (2025-11-25): the client can resume from it. */
    int p = snprintf(pre, sizeof(pre), "%s%s%s%s", id ? "id: " : "", id ? id : "", id ? "\n" : "",
                     n ? "event: message\ndata: " : "data: ");
    int k = snprintf(size, sizeof(size), "%zx\r\n", (size_t)p + n + 2);

    conn_write(c, size, (size_t)k);
    conn_write(c, pre, (size_t)p);
    conn_write(c, data, n);
    conn_write(c, "\n\n\r\n", 4);
}

static void op_sse_end(void *conn)
{
    HttpConn *c = conn;

    conn_write(c, "0\r\n\r\n", 5);
    resume(c);
}

static const HttpExchangeOps conn_ops = {
    .reply = op_reply,
    .sse_start = op_sse_start,
    .sse_event = op_sse_event,
    .sse_end = op_sse_end,
};

/* A refusal with a JSON-RPC error body; close: the connection ends after it. */
/* A JSON-RPC error as a whole response; id may be NULL. */
static void send_error(HttpConn *c, int status, yajl_val id, int code, const char *message,
                       const char *headers)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_error(&sb, id, code, message, NULL);
    if (sb.len && sb.data[sb.len - 1] == '\n')
        sb.len--;
    send_reply(c, status, headers, sb.data, sb.len);
    strbuf_deinit(&sb);
}

static void refuse(HttpConn *c, int status, int code, const char *message, const char *headers,
                   bool close)
{
    if (close)
        c->close_after = true;
    send_error(c, status, NULL, code, message, headers);
    if (close)
        resume(c); /* closes once the refusal is out */
}

/* A refusal of a request whose body was read: the error carries its id (null when it has none). */
static void refuse_request(HttpConn *c, int status, int code, const char *message, const char *body,
                           size_t n)
{
    static const char *const names[] = {"id"};
    JsonSpan v[1] = {{0}};
    _cleanup_json_ yajl_val id = NULL;

    if (jsonscan_members(body, n, names, 1, v) >= 0 && v[0].p)
        (void)json_parse_full(&id, v[0].p, v[0].n, JSON_UTF8_REPAIR, NULL);
    send_error(c, status, id, code, message, NULL);
}

/* A refusal a web page or another local user can cause: logged, rate-limited. */
static void refuse_logged(HttpConn *c, int status, const char *message, const char *headers)
{
    HttpServer *srv = c->srv;
    unsigned dropped = 0;

    srv->n_refused++;
    if (ratelimit_take(&srv->refused_log, now_ms(), HTTP_REFUSED_LOG_BURST, HTTP_REFUSED_LOG_RATE,
                       &dropped))
        log_warning("http: refused a request on %s with %d: %s (%llu refused in all%s)",
                    c->tcp ? "the loopback port" : "the socket", status, message,
                    (unsigned long long)srv->n_refused, dropped ? "; some not logged" : "");
    refuse(c, status, JSONRPC_INVALID_REQUEST, message, headers, true);
}

/* ---- requests ---- */

/* The endpoint of a target: 0 with *serverp (NULL: /mcp), or -1 when it is not one of ours. */
static int endpoint(const HttpHead *h, char *server, const char **serverp, const char **queryp,
                    size_t *query_lenp)
{
    const char *t = h->target, *q = memchr(t, '?', h->target_len);
    size_t n = q ? (size_t)(q - t) : h->target_len;

    *queryp = q ? q + 1 : NULL;
    *query_lenp = q ? h->target_len - n - 1 : 0;
    *serverp = NULL;
    if (n == 4 && memcmp(t, "/mcp", 4) == 0)
        return 0;
    if (n <= 13 || memcmp(t, "/servers/", 9) != 0 || memcmp(t + n - 4, "/mcp", 4) != 0)
        return -1;
    size_t len = n - 13;
    if (len > HTTP_MAX_SERVER_NAME)
        return -1;
    for (size_t i = 0; i < len; i++) {
        char ch = t[9 + i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_' || ch == '.' || ch == '@'))
            return -1;
    }
    memcpy(server, t + 9, len);
    server[len] = 0;
    *serverp = server;
    return 0;
}

/* Whether host[:port] (n bytes) names this machine's loopback; port, if given, must be port. */
static bool loopback_authority(const char *s, size_t n, int port)
{
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};

    for (size_t i = 0; i < 3; i++) {
        size_t k = strlen(names[i]);
        if (n < k || strncasecmp(s, names[i], k) != 0)
            continue;
        if (n == k)
            return true;
        if (s[k] != ':' || n - k - 1 == 0 || n - k - 1 > 5)
            continue;
        int p = 0;
        for (size_t j = k + 1; j < n; j++)
            p = s[j] >= '0' && s[j] <= '9' ? p * 10 + (s[j] - '0') : -1000000;
        if (p == port || port < 0)
            return true;
    }
    return false;
}

/*
 * DNS rebinding (the spec's MUST): a page of another site that resolves its name to 127.0.0.1
 * sends its own name as Host and Origin. On the loopback port Host must name loopback with
 * this port; on either transport an Origin, when sent, must be a loopback one (any port: a
 * local web tool, such as the Inspector, runs on a port of its own). Returns why, or NULL.
 */
static const char *foreign(const HttpConn *c, const HttpHead *h)
{
    size_t n;
    const char *v = http_field(h, "Host", &n);

    if (c->tcp && (!v || !loopback_authority(v, n, c->srv->tcp_port)))
        return "the Host header does not name this loopback port (DNS rebinding protection)";
    v = http_field(h, "Origin", &n);
    if (!v)
        return NULL;
    if (n > 7 && strncasecmp(v, "http://", 7) == 0 && loopback_authority(v + 7, n - 7, -1))
        return NULL;
    if (n > 8 && strncasecmp(v, "https://", 8) == 0 && loopback_authority(v + 8, n - 8, -1))
        return NULL;
    return "the Origin is not a loopback one (DNS rebinding protection)";
}

/* Whether the request carries the token: Authorization: Bearer, or ?token= for clients
 * that cannot set a header. */
static bool has_token(const HttpConn *c, const HttpHead *h, const char *query, size_t qn)
{
    const HttpServer *srv = c->srv;
    size_t n;
    const char *v = http_field(h, "Authorization", &n);

    if (v && n == 7 + HTTP_TOKEN_LEN && strncasecmp(v, "Bearer ", 7) == 0)
        return mem_equal_consttime(v + 7, srv->token, HTTP_TOKEN_LEN);
    for (size_t i = 0; query && i + 6 + HTTP_TOKEN_LEN <= qn; i++) {
        if ((i == 0 || query[i - 1] == '&') && memcmp(query + i, "token=", 6) == 0 &&
            (i + 6 + HTTP_TOKEN_LEN == qn || query[i + 6 + HTTP_TOKEN_LEN] == '&'))
            return mem_equal_consttime(query + i + 6, srv->token, HTTP_TOKEN_LEN);
    }
    return false;
}

/* A header value as a NUL-terminated copy in buf (truncated values are refused by the caller). */
static const char *field_str(const HttpHead *h, const char *name, char *buf, size_t size)
{
    size_t n;
    const char *v = http_field(h, name, &n);

    if (!v || n >= size)
        return NULL;
    memcpy(buf, v, n);
    buf[n] = 0;
    return buf;
}

/* A JSON string span equal to text (n bytes), without escapes. */
static bool span_is(JsonSpan s, const char *text, size_t n)
{
    return s.p && s.n == n + 2 && s.p[0] == '"' && memcmp(s.p + 1, text, n) == 0;
}

/*
 * The 2026-07-28 binding: Mcp-Method must say the body's method, and Mcp-Name the name (or uri)
 * it acts on; MCP-Protocol-Version must be a version mcpd speaks. Returns why not, or NULL.
 */
static const char *headers_mismatch(const HttpHead *h, const char *body, size_t n, bool modern)
{
    static const char *const top[] = {"method", "params"}, *const inner[] = {"name", "uri"};
    JsonSpan v[2] = {{0}}, in[2] = {{0}};
    size_t hn, vn;
    const char *hv = http_field(h, "Mcp-Method", &hn),
               *ver = http_field(h, "MCP-Protocol-Version", &vn);
    char version[32];

    if (ver) {
        if (vn >= sizeof(version))
            return "MCP-Protocol-Version names no version mcpd speaks";
        memcpy(version, ver, vn);
        version[vn] = 0;
        /* A stateless request with an unknown version is answered -32022 by the core, with the
         * versions it takes, once modern_meta_wrong() has seen _meta say the same. */
        if (!modern && !mcp_protocol_find(version) && !streq(version, MCP_PROTOCOL_2026_07_28))
            return "MCP-Protocol-Version names no version mcpd speaks";
    }
    if (!modern && !hv)
        return NULL;
    if (jsonscan_members(body, n, top, 2, v) < 0)
        return NULL; /* the session refuses the body itself */
    if (hv && !span_is(v[0], hv, hn))
        return "the Mcp-Method header does not match the body's method";
    if (modern && ver && streq(version, MCP_PROTOCOL_2026_07_28) && !hv)
        return "a 2026-07-28 request needs the Mcp-Method header";
    hv = http_field(h, "Mcp-Name", &hn);
    if (!v[1].p || jsonscan_members(v[1].p, v[1].n, inner, 2, in) < 0)
        return NULL;
    bool read = span_is(v[0], "resources/read", 14);
    JsonSpan named = read ? in[1] : in[0];
    bool names_one = read || span_is(v[0], "tools/call", 10) || span_is(v[0], "prompts/get", 11);
    if (!hv && named.p && names_one && modern && ver && streq(version, MCP_PROTOCOL_2026_07_28))
        return "a 2026-07-28 tools/call, prompts/get or resources/read needs the Mcp-Name header";
    if (hv && named.p && !span_is(named, hv, hn))
        return "the Mcp-Name header does not match the body";
    return NULL;
}

/*
 * A 2026-07-28 request (a POST with no session that is not initialize) must say its revision
 * and capabilities in _meta, the revision the MCP-Protocol-Version header says. Returns why
 * not with *codep (-32602 for a missing field, the header mismatch error), or NULL.
 */
static const char *modern_meta_wrong(const HttpHead *h, const char *body, size_t n, int *codep)
{
    static const char *const top[] = {"id", "method", "params"}, *const in_params[] = {"_meta"},
                             *const in_meta[] = {MCP_META_PROTOCOL_VERSION,
                                                 MCP_META_CLIENT_CAPABILITIES};
    JsonSpan v[3] = {{0}}, p[1] = {{0}}, m[2] = {{0}};
    size_t vn;
    const char *ver = http_field(h, "MCP-Protocol-Version", &vn);

    if (jsonscan_members(body, n, top, 3, v) < 0 || !v[0].p || !v[1].p)
        return NULL; /* not a request: the session says what is wrong with it */
    if (v[2].p)
        (void)jsonscan_members(v[2].p, v[2].n, in_params, 1, p);
    if (p[0].p)
        (void)jsonscan_members(p[0].p, p[0].n, in_meta, 2, m);
    *codep = JSONRPC_INVALID_PARAMS;
    if (!m[0].p || !m[1].p)
        return "a 2026-07-28 request carries params._meta with " MCP_META_PROTOCOL_VERSION
               " and " MCP_META_CLIENT_CAPABILITIES " (or starts a 2025 session with initialize)";
    *codep = MCP_ERROR_HEADER_MISMATCH;
    if (ver && !span_is(m[0], ver, vn))
        return "the MCP-Protocol-Version header does not match _meta's protocol version";
    return NULL;
}

/* Whether the body is an initialize request (a new 2025 session starts with it). */
static bool is_initialize(const char *body, size_t n)
{
    static const char *const names[] = {"method"};
    JsonSpan v[1];

    return jsonscan_members(body, n, names, 1, v) >= 0 && span_is(v[0], "initialize", 10);
}

static void start_exchange(HttpConn *c, const HttpHead *h)
{
    c->ex = (HttpExchange){
        .ops = &conn_ops,
        .conn = c,
        .sse_ok = http_field_lists(h, "Accept", "text/event-stream"),
        .json_ok = !http_field(h, "Accept", &(size_t){0}) ||
                   http_field_lists(h, "Accept", "application/json"),
    };
    c->busy = true;
}

static void handle_post(HttpConn *c, const HttpHead *h, char *body, size_t n, HttpIdentity *ident)
{
    HttpServer *srv = c->srv;
    size_t sn;
    const char *sid = http_field(h, "Mcp-Session-Id", &sn), *why = NULL;
    HttpSession *s = NULL;
    bool created = false;
    char *err = NULL;

    if (!http_field_lists(h, "Content-Type", "application/json"))
        return refuse(c, 415, JSONRPC_INVALID_REQUEST,
                      "a POST carries one JSON-RPC message as Content-Type: application/json", NULL,
                      false);
    if (http_field(h, "Accept", &(size_t){0}) &&
        !http_field_lists(h, "Accept", "application/json") &&
        !http_field_lists(h, "Accept", "text/event-stream"))
        return refuse(c, 406, JSONRPC_INVALID_REQUEST,
                      "the client must accept application/json or text/event-stream", NULL, false);
    if (sid) {
        s = http_session_find(&srv->sessions, sid, sn, ident->server);
        if (!s)
            return refuse(c, 404, JSONRPC_INVALID_REQUEST,
                          "no such session (ended, expired, or of another endpoint): start a new "
                          "one with initialize",
                          NULL, false);
    } else if (is_initialize(body, n)) {
        s = http_session_new(&srv->sessions, c->uid, c->pid, ident->server, false, &why);
        created = true;
    } else {
        /* A client's pool may send the next request, to another endpoint, on this connection:
         * the agent is the connection's for one endpoint. HTTP/1.1 answers in order, so the
         * old agent has nothing in flight that a listen would not have kept the connection for. */
        if (c->modern && !http_session_serves(c->modern, ident->server)) {
            http_session_end(&srv->sessions, c->modern);
            c->modern = NULL;
        }
        if (!c->modern)
            c->modern = http_session_new(&srv->sessions, c->uid, c->pid, ident->server, true, &why);
        s = c->modern;
    }
    if (!s)
        return refuse(c, 503, JSONRPC_INVALID_REQUEST, why, NULL, false);
    if ((why = headers_mismatch(h, body, n, s == c->modern))) {
        if (created)
            http_session_end(&srv->sessions, s);
        return refuse_request(c, 400, MCP_ERROR_HEADER_MISMATCH, why, body, n);
    }
    int code;
    if (s == c->modern && (why = modern_meta_wrong(h, body, n, &code)))
        return refuse_request(c, 400, code, why, body, n);
    start_exchange(c, h);
    int r = http_session_post(s, &c->ex, body, n, ident, &err);
    if (r == 0)
        return; /* the exchange is answered by the session, maybe already */
    c->busy = false;
    if (r == HTTP_POST_ACCEPTED) {
        send_reply(c, 202, NULL, "", 0);
    } else {
        send_reply(c, r, NULL, err,
                   strlen(err) && err[strlen(err) - 1] == '\n' ? strlen(err) - 1 : strlen(err));
        if (created)
            http_session_end(&srv->sessions, s);
    }
    free(err);
}

static void handle_get(HttpConn *c, const HttpHead *h, const HttpIdentity *ident)
{
    size_t sn;
    const char *sid = http_field(h, "Mcp-Session-Id", &sn);
    HttpSession *s;

    if (!sid)
        return refuse(c, 405, JSONRPC_INVALID_REQUEST,
                      "a GET stream belongs to a session (Mcp-Session-Id); the 2026-07-28 era "
                      "has none (use subscriptions/listen)",
                      "Allow: POST\r\n", false);
    if (!http_field_lists(h, "Accept", "text/event-stream"))
        return refuse(c, 406, JSONRPC_INVALID_REQUEST, "a GET stream is text/event-stream", NULL,
                      false);
    if (!(s = http_session_find(&c->srv->sessions, sid, sn, ident->server)))
        return refuse(c, 404, JSONRPC_INVALID_REQUEST, "no such session: start a new one", NULL,
                      false);
    if (http_session_streams(s) >= HTTP_MAX_STREAMS_PER_SESSION)
        return refuse(c, 429, JSONRPC_INVALID_REQUEST, "too many streams open in this session",
                      NULL, false);
    start_exchange(c, h);
    size_t ln;
    const char *last = http_field(h, "Last-Event-ID", &ln);
    if (last) {
        http_session_resume(s, &c->ex, last, ln);
        return;
    }
    if (!http_session_listen(s, &c->ex)) {
        c->busy = false;
        refuse(c, 409, JSONRPC_INVALID_REQUEST, "the session's GET stream is already open", NULL,
               false);
    }
}

static void handle_delete(HttpConn *c, const HttpHead *h, const HttpIdentity *ident)
{
    size_t sn;
    const char *sid = http_field(h, "Mcp-Session-Id", &sn);
    HttpSession *s = sid ? http_session_find(&c->srv->sessions, sid, sn, ident->server) : NULL;

    if (!s)
        return refuse(c, sid ? 404 : 400, JSONRPC_INVALID_REQUEST,
                      sid ? "no such session" : "DELETE needs the Mcp-Session-Id to end", NULL,
                      false);
    http_session_end(&c->srv->sessions, s);
    send_reply(c, 200, NULL, "", 0);
}

/* One whole request. */
static void handle(HttpConn *c, const HttpHead *h, char *body, size_t n)
{
    char server[HTTP_MAX_SERVER_NAME + 1], project[PATH_MAX], token[128];
    const char *query, *why;
    size_t qn;
    HttpIdentity ident = {0};

    if (!h->keep_alive)
        c->close_after = true;
    if (endpoint(h, server, &ident.server, &query, &qn) < 0)
        return refuse(c, 404, JSONRPC_INVALID_REQUEST,
                      "no such endpoint: mcpd serves /mcp (every server) and /servers/NAME/mcp",
                      NULL, false);
    if ((why = foreign(c, h)))
        return refuse_logged(c, 403, why, NULL);
    if (c->tcp && !has_token(c, h, query, qn))
        return refuse_logged(c, 401,
                             "no valid bearer token (Authorization: Bearer, from mcpctl "
                             "http-token)",
                             "WWW-Authenticate: Bearer realm=\"mcpd\"\r\n");
    ident.project = field_str(h, "Mcpd-Project", project, sizeof(project));
    ident.session = field_str(h, "Mcpd-Session", token, sizeof(token));
    if (http_method_is(h, "POST"))
        handle_post(c, h, body, n, &ident);
    else if (http_method_is(h, "GET"))
        handle_get(c, h, &ident);
    else if (http_method_is(h, "DELETE"))
        handle_delete(c, h, &ident);
    else
        refuse(c, 405, JSONRPC_INVALID_REQUEST, "mcpd's endpoints take POST, GET and DELETE",
               "Allow: GET, POST, DELETE\r\n", false);
}

/*
 * Decode what arrived of h's chunked body in place, after its head: HTTP_CHUNKED_DONE (the body
 * is c->chunked.out bytes after the head, what follows it is next), HTTP_CHUNKED_AGAIN, or the
 * status to refuse with.
 */
static int dechunk(HttpConn *c, const HttpHead *h)
{
    size_t n = c->in_len - h->head_len;
    int r = http_chunked_step(&c->chunked, c->in + h->head_len, &n, c->srv->max_body);

    c->in_len = h->head_len + n;
    return r;
}

/* Take the requests whole in the input, until one waits for mcpd or more must be read. */
static void process(HttpConn *c)
{
    HttpHead h;

    while (!c->dead && !c->busy && !c->close_after) {
        if (c->in_len == 0) {
            c->request_start = 0;
            break;
        }
        if (!c->request_start)
            c->request_start = now_ms();
        int r = http_parse_head(&h, c->in, c->in_len, &c->scan);
        if (r == HTTP_PARSE_AGAIN)
            break;
        if (r != HTTP_PARSE_OK) {
            refuse(c, r, JSONRPC_INVALID_REQUEST, "malformed or oversized HTTP request", NULL,
                   true);
            break;
        }
        if (h.content_length > c->srv->max_body) {
            refuse(c, 413, JSONRPC_INVALID_REQUEST,
                   "the body is larger than maxMessageBytes: one message per POST", NULL, true);
            break;
        }
        size_t body_len = h.content_length, whole = h.head_len + body_len;
        if (h.chunked) {
            if ((r = dechunk(c, &h)) != HTTP_CHUNKED_DONE) {
                if (r != HTTP_CHUNKED_AGAIN)
                    refuse(c, r, JSONRPC_INVALID_REQUEST,
                           r == 413 ? "the chunked body is larger than maxMessageBytes (or in "
                                      "too many chunks): one message per POST"
                                    : "malformed chunked body",
                           NULL, true);
                break;
            }
            body_len = c->chunked.out;
            whole = h.head_len + body_len;
            c->chunked = (HttpChunked){0};
        }
        if (c->in_len < whole)
            break;
        handle(c, &h, c->in + h.head_len, body_len);
        memmove(c->in, c->in + whole, c->in_len - whole);
        c->in_len -= whole;
        c->scan = 0;
        c->request_start = c->in_len ? now_ms() : 0;
        c->last_active_ms = now_ms();
    }
    if (!c->dead && c->close_after && !c->busy) {
        resume(c); /* the last response is queued: closed once it is out */
        return;
    }
    if (!c->dead) {
        set_timer(c);
        if (!c->reading && c->in_len < HTTP_MAX_HEAD) {
            event_add(c->ev_read, NULL);
            c->reading = true;
        }
    }
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
    HttpConn *c = arg;

    (void)fd, (void)what;
    if (c->close_after && !c->busy) {
        if (!evbuffer_get_length(c->out))
            conn_close(c, NULL);
        else
            event_add(c->ev_write, NULL); /* on_writable closes it once the rest is out */
        return;
    }
    process(c);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    HttpConn *c = arg;

    (void)fd, (void)what;
    if (c->busy)
        return;
    if (c->request_start) {
        refuse(c, 408, JSONRPC_INVALID_REQUEST, "the request did not arrive whole within 30 s",
               NULL, true);
        return;
    }
    conn_close(c, "idle");
}

/*
 * Bytes of a connection's input buffer at most: one request whole (its head, a maximal body,
 * and for a chunked one the trailer section, read before the body counts as whole).
 */
static size_t input_cap(const HttpServer *srv)
{
    return HTTP_MAX_HEAD + srv->max_body + HTTP_TRAILER_MAX;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    HttpConn *c = arg;
    size_t cap = input_cap(c->srv);

    (void)what;
    if (c->in_len >= cap || (c->busy && c->in_len >= HTTP_MAX_HEAD)) {
        /* The next request waits behind this one: read no more until it is taken. */
        event_del(c->ev_read);
        c->reading = false;
        return;
    }
    if (c->in_cap - c->in_len < HTTP_READ_CHUNK) {
        c->in_cap = MIN(MAX(c->in_cap * 2, c->in_len + HTTP_READ_CHUNK), cap);
        c->in = xrealloc(c->in, c->in_cap);
    }
    ssize_t n = read(fd, c->in + c->in_len, c->in_cap - c->in_len);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        conn_close(c, n == 0 ? NULL : strerror(errno));
        return;
    }
    if (n < 0)
        return;
    c->in_len += (size_t)n;
    process(c);
}

/* ---- accepting ---- */

static size_t conns_of(const HttpServer *srv, pid_t pid)
{
    size_t n = 0;

    for (const HttpConn *c = srv->conns; c; c = c->next)
        n += c->pid == pid;
    return n;
}

/* At HTTP_MAX_CONNS: close the connection that has waited longest with no stream open. */
static bool evict(HttpServer *srv)
{
    HttpConn *old = NULL;

    for (HttpConn *c = srv->conns; c; c = c->next)
        if (!c->busy && (!old || c->last_active_ms <= old->last_active_ms))
            old = c;
    if (!old)
        return false;
    conn_close(old, "the most HTTP connections are open: the longest idle one makes room");
    return true;
}

/* A connection turned away before it is read: 503 and closed. */
static void turn_away(int fd, const char *why)
{
    char buf[512];
    int n = snprintf(buf, sizeof(buf),
                     "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
                     strlen(why) + 1, why);

    (void)!send(fd, buf, (size_t)MIN(n, (int)sizeof(buf) - 1), MSG_NOSIGNAL | MSG_DONTWAIT);
    close(fd);
}

static HttpConn *conn_new(HttpServer *srv, int fd, uid_t uid, pid_t pid, bool tcp)
{
    if (pid > 0 && conns_of(srv, pid) >= HTTP_MAX_CONNS_PER_PID) {
        turn_away(fd, "too many HTTP connections from this process");
        return NULL;
    }
    if (srv->n_conns >= HTTP_MAX_CONNS && !evict(srv)) {
        log_warning("http: %d connections open, every one in use: refusing a new one",
                    HTTP_MAX_CONNS);
        turn_away(fd, "mcpd serves its most HTTP connections at once");
        return NULL;
    }
    HttpConn *c = xcalloc(1, sizeof(*c));
    c->srv = srv;
    c->id = ++srv->next_conn_id;
    c->fd = fd;
    c->uid = uid;
    c->pid = pid;
    c->tcp = tcp;
    c->last_active_ms = now_ms();
    c->out = evbuffer_new();
    c->ev_read = event_new(srv->base, fd, EV_READ | EV_PERSIST, on_readable, c);
    c->ev_write = event_new(srv->base, fd, EV_WRITE | EV_PERSIST, on_writable, c);
    c->ev_timer = evtimer_new(srv->base, on_timer, c);
    c->ev_resume = evtimer_new(srv->base, on_resume, c);
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->n_conns++;
    (void)fd_set_nonblock(fd);
    event_add(c->ev_read, NULL);
    c->reading = true;
    set_timer(c);
    return c;
}

void http_server_adopt(int fd, uid_t uid, pid_t pid, const char *data, size_t n, void *arg)
{
    HttpServer *srv = arg;
    HttpConn *c = conn_new(srv, fd, uid, pid, false);

    if (!c)
        return;
    c->in_cap = MAX(n, (size_t)HTTP_READ_CHUNK);
    c->in = xmalloc(c->in_cap);
    c->in_len = MIN(n, input_cap(srv));
    memcpy(c->in, data, c->in_len);
    process(c);
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
    HttpServer *srv = arg;

    (void)what;
    for (int i = 0; i < HTTP_ACCEPTS_PER_WAKE; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                log_warning("http: accept on the loopback port failed: %s", strerror(errno));
            return;
        }
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
        /* Anyone on this machine can connect: the token says it is the user. */
        conn_new(srv, fd, getuid(), 0, true);
    }
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
    HttpServer *srv = arg;

    (void)fd, (void)what;
    http_sessions_sweep(&srv->sessions, (int64_t)now_ms());
}

void http_server_init(HttpServer *srv, struct event_base *base, PeerRegistry *peers,
                      size_t max_body)
{
    memset(srv, 0, sizeof(*srv));
    srv->base = base;
    srv->sessions.peers = peers;
    srv->max_body = max_body;
    srv->tcp_fd = -1;
    srv->request_timeout_ms = HTTP_REQUEST_TIMEOUT_MS;
    srv->ev_reap = evtimer_new(base, on_reap, srv);
    srv->ev_sweep = event_new(base, -1, EV_PERSIST, on_sweep, srv);
    struct timeval tv = {HTTP_SWEEP_MS / 1000, 0};
    event_add(srv->ev_sweep, &tv);
}

/* spec as an address of loopback: 0, or -EINVAL when it is not one. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *lenp)
{
    const char *colon = strrchr(spec, ':');
    char host[64];
    int64_t port;

    if (!colon || (size_t)(colon - spec) >= sizeof(host) ||
        parse_int64(colon + 1, 0, 65535, &port) < 0)
        return -EINVAL;
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = 0;
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (streq(host, "localhost"))
        strcpy(host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127)
            return -EINVAL;
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
        *lenp = sizeof(*in4);
        return 0;
    }
    if (streq(host, "[::1]")) {
        in6->sin6_family = AF_INET6;
        in6->sin6_addr = in6addr_loopback;
        in6->sin6_port = htons((uint16_t)port);
        *lenp = sizeof(*in6);
        return 0;
    }
    return -EINVAL;
}

/* A new token, written 0600 at path for mcpctl http-token. */
static int write_token(HttpServer *srv, const char *path, char **whyp)
{
    unsigned char raw[HTTP_TOKEN_LEN / 2];
    _cleanup_free_ char *dir = paths_dirname(path);

    if (random_bytes(raw, sizeof(raw)) < 0) {
        *whyp = xstrdup("no randomness for the HTTP token");
        return -EIO;
    }
    hex_encode(srv->token, raw, sizeof(raw));
    srv->token[HTTP_TOKEN_LEN] = 0;
    int r = durable_write_mode(dir, path, srv->token, HTTP_TOKEN_LEN, 0600, whyp);
    if (r < 0)
        return r;
    srv->token_path = xstrdup(path);
    return 0;
}

int http_server_listen(HttpServer *srv, const char *spec, const char *token_path, char **whyp)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int fd, r;

    if (parse_listen(spec, &ss, &len) < 0) {
        *whyp = xasprintf("listen \"%s\": give a loopback address and port, such as "
                          "127.0.0.1:8765 (mcpd serves HTTP on loopback only)",
                          spec);
        return -EINVAL;
    }
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int)) < 0 ||
        bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, SOMAXCONN) < 0) {
        r = -errno;
        *whyp = xasprintf("listen \"%s\": %s", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        return r;
    }
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        srv->tcp_port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                      : ((struct sockaddr_in6 *)&ss)->sin6_port);
    if ((r = write_token(srv, token_path, whyp)) < 0) {
        close(fd);
        return r;
    }
    srv->tcp_fd = fd;
    srv->ev_tcp = event_new(srv->base, fd, EV_READ | EV_PERSIST, on_accept, srv);
    event_add(srv->ev_tcp, NULL);
    log_notice("serving MCP over HTTP on %s port %d (bearer token in %s)",
               ss.ss_family == AF_INET ? "127.0.0.1" : "::1", srv->tcp_port, token_path);
    return 0;
}

void http_server_deinit(HttpServer *srv)
{
    if (!srv->base)
        return;
    while (srv->conns)
        conn_close(srv->conns, NULL);
    on_reap(-1, 0, srv); /* their 2026-07-28 sessions end with them */
    http_sessions_deinit(&srv->sessions);
    if (srv->ev_tcp)
        event_free(srv->ev_tcp);
    if (srv->tcp_fd >= 0)
        close(srv->tcp_fd);
    if (srv->token_path)
        unlink(srv->token_path);
    free(srv->token_path);
    event_free(srv->ev_sweep);
    event_free(srv->ev_reap);
    memset(srv, 0, sizeof(*srv));
}
