// SPDX-License-Identifier: MIT
// http-session: MCP agents over Streamable HTTP: sessions (one peer each, with no fd), their
// exchanges, and the routing of what the core writes to them (JSON body or SSE events).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/jsonscan.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/downstream/http-session.h"

struct HttpSession {
    HttpSessions *ss;
    uint64_t peer_id;
    char id[HTTP_SESSION_ID_LEN + 1]; /* "" for a 2026-07-28 connection's session */
    char *server;                     /* endpoint /servers/NAME/mcp, or NULL for /mcp */
    bool modern;
    StrBuf acc;                 /* the unfinished line of what the core wrote */
    HttpExchange *exchanges;    /* POSTs waiting for their answer, newest first */
    HttpExchange *get;          /* the GET stream, or NULL */
    size_t n_streams;           /* exchanges linked, the GET stream too */
    uint64_t last_used_ms;      /* monotonic: its last request or stream end */
    uint32_t next_stream;       /* the number of the last SSE stream opened (2025 era) */
    struct HttpOrphan *orphans; /* streams whose connection dropped, newest first */
    HttpSession *next, *prev;   /* in HttpSessions, most recently used first */
};

/* An error body for a request refused before it reached the agent. */
static char *error_body(int code, const char *message)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_error(&sb, NULL, code, message, NULL);
    return strbuf_detach(&sb, NULL);
}

/* An id as canonical JSON text: plain strings and integers as sent, others rewritten. */
static char *canon_id(JsonSpan v)
{
    _cleanup_json_ yajl_val t = NULL;
    int64_t i;

    if (jsonscan_is_int(v, &i) || jsonscan_is_plain_string(v))
        return xstrndup(v.p, v.n);
    if (json_parse_full(&t, v.p, v.n, JSON_UTF8_REPAIR, NULL) != 0)
        return NULL;
    StrBuf sb = STRBUF_INIT;
    json_write(&sb, t);
    return strbuf_detach(&sb, NULL);
}

static void session_touch(HttpSession *s);

static void link_exchange(HttpSession *s, HttpExchange *ex)
{
    ex->session = s;
    ex->prev = NULL;
    ex->next = s->exchanges;
    if (s->exchanges)
        s->exchanges->prev = ex;
    s->exchanges = ex;
    s->n_streams++;
}

void http_exchange_detach(HttpExchange *ex)
{
    HttpSession *s = ex->session;

    if (!s)
        return;
    if (s->get == ex) {
        s->get = NULL;
    } else {
        if (ex->prev)
            ex->prev->next = ex->next;
        else
            s->exchanges = ex->next;
        if (ex->next)
            ex->next->prev = ex->prev;
    }
    s->n_streams--;
    s->last_used_ms = now_ms();
    ex->session = NULL;
    ex->next = ex->prev = NULL;
    free(ex->id);
    ex->id = NULL;
    http_replay_free(ex->replay);
    ex->replay = NULL;
}

/* Extra header lines of a response to ex: the session id on the answer to initialize. */
static void head_lines(const HttpExchange *ex, const HttpSession *s, char *buf, size_t n)
{
    if (ex->initialize && s->id[0])
        snprintf(buf, n, "Mcp-Session-Id: %s\r\n", s->id);
    else
        buf[0] = 0;
}

/* ---- resumption (2025 era): numbered events, streams kept across a dropped connection ---- */

/* A stream whose connection dropped before its end, kept for a Last-Event-ID resume. */
typedef struct HttpOrphan {
    HttpReplay *replay;
    char *id;   /* the awaited answer's request id; NULL for the GET stream */
    bool ended; /* its answer came (and is in replay) */
    uint64_t since_ms;
    struct HttpOrphan *next;
} HttpOrphan;

/* The SSE head of ex's response; a 2025 stream gets a number and a priming event (its id). */
static void stream_open(HttpExchange *ex, const char *head)
{
    char id[HTTP_EVENT_ID_LEN];

    ex->ops->sse_start(ex->conn, head);
    ex->started = true;
    if (ex->session->modern) /* 2026-07-28: no resumption, a broken stream is a lost request */
        return;
    ex->replay = http_replay_new(++ex->session->next_stream);
    http_replay_id(ex->replay, 0, id);
    ex->ops->sse_event(ex->conn, id, "", 0);
}

/* One message on ex's SSE stream, numbered and kept when the stream is resumable. */
static void stream_send(HttpExchange *ex, const char *line, size_t len)
{
    char id[HTTP_EVENT_ID_LEN];

    if (!ex->replay) {
        ex->ops->sse_event(ex->conn, NULL, line, len);
        return;
    }
    http_replay_id(ex->replay, http_replay_add(ex->replay, line, len), id);
    ex->ops->sse_event(ex->conn, id, line, len);
}

static void orphan_free(HttpOrphan *o)
{
    http_replay_free(o->replay);
    free(o->id);
    free(o);
}

/* Forget the orphans of s kept since before cutoff (all with cutoff UINT64_MAX). */
static void orphans_expire(HttpSession *s, uint64_t cutoff)
{
    for (HttpOrphan **op = &s->orphans; *op;) {
        HttpOrphan *o = *op;
        if (o->since_ms < cutoff) {
            *op = o->next;
            orphan_free(o);
        } else {
            op = &o->next;
        }
    }
}

void http_exchange_drop(HttpExchange *ex)
{
    HttpSession *s = ex->session;
    size_t n = 0;

    if (s && ex->replay && (ex->id || s->get == ex) && !http_session_dead(s)) {
        HttpOrphan *o = xcalloc(1, sizeof(*o));
        o->replay = ex->replay;
        o->id = ex->id;
        o->since_ms = now_ms();
        o->next = s->orphans;
        s->orphans = o;
        ex->replay = NULL;
        ex->id = NULL;
        /* At most as many kept as a session may have streams: the oldest go first. */
        for (HttpOrphan **op = &s->orphans; *op; op = &(*op)->next)
            if (++n > HTTP_MAX_STREAMS_PER_SESSION) {
                HttpOrphan *rest = *op;
                *op = NULL;
                while (rest) {
                    HttpOrphan *next = rest->next;
                    orphan_free(rest);
                    rest = next;
                }
                break;
            }
        log_debug("http: session %s: stream %u dropped before its end; kept for a resume", s->id,
                  o->replay->stream);
    }
    http_exchange_detach(ex);
}

/*
 * A message for an orphan, kept: the answer it waits for (answer_id), or one that had no open
 * stream, on the newest call's stream (call_bound, as stream_for() chooses) or the GET stream.
 * False if there is none.
 */
static bool orphan_take(HttpSession *s, const char *answer_id, bool call_bound, const char *line,
                        size_t len)
{
    for (HttpOrphan *o = s->orphans; o; o = o->next) {
        if (o->ended || (answer_id ? !o->id || !streq(o->id, answer_id) : !o->id == call_bound))
            continue;
        http_replay_add(o->replay, line, len);
        o->ended = answer_id != NULL;
        return true;
    }
    return false;
}

static void replay_one(void *ctx, uint64_t seq, const char *data, size_t n)
{
    HttpExchange *ex = ctx;
    char id[HTTP_EVENT_ID_LEN];

    http_replay_id(ex->replay, seq, id);
    ex->ops->sse_event(ex->conn, id, data, n);
}

void http_session_resume(HttpSession *s, HttpExchange *ex, const char *last, size_t n)
{
    uint32_t stream = 0;
    uint64_t seq = 0;
    HttpOrphan **op = &s->orphans;
    bool known = http_replay_parse_id(last, n, &stream, &seq);

    session_touch(s);
    for (; known && *op; op = &(*op)->next)
        if ((*op)->replay->stream == stream)
            break;
    HttpOrphan *o = known ? *op : NULL;
    if (!o || (!o->id && !o->ended && s->get)) {
        /*
         * Not kept (ended, expired, not ours), or the GET stream is open again: 405, what a
         * server with no stream to offer answers a GET. An SSE response that ended at once
         * would have SDK clients resume again and again (they resume after an error answer).
         */
        _cleanup_free_ char *body =
            error_body(JSONRPC_INVALID_REQUEST, "Last-Event-ID names no stream mcpd keeps (it "
                                                "ended, or was dropped more than 5 minutes ago)");
        size_t bn = strlen(body);
        log_debug("http: session %s: Last-Event-ID %.*s names no stream kept", s->id,
                  (int)MIN(n, (size_t)HTTP_EVENT_ID_LEN), last);
        ex->ops->reply(ex->conn, 405, "Allow: POST, DELETE\r\n", body,
                       bn && body[bn - 1] == '\n' ? bn - 1 : bn);
        return;
    }
    ex->ops->sse_start(ex->conn, "");
    ex->started = true;
    *op = o->next;
    ex->replay = o->replay;
    o->replay = NULL;
    http_replay_after(ex->replay, seq, replay_one, ex);
    if (o->ended) {
        http_replay_free(ex->replay);
        ex->replay = NULL;
        ex->ops->sse_end(ex->conn);
    } else if (o->id) {
        ex->id = o->id; /* the stream goes on: its answer comes here */
        o->id = NULL;
        link_exchange(s, ex);
    } else {
        ex->session = s;
        s->get = ex;
        s->n_streams++;
    }
    orphan_free(o);
}

/* A message that is not an answer, on ex's stream (its SSE head first). */
static void event_to(HttpExchange *ex, const char *line, size_t len)
{
    char head[64 + HTTP_SESSION_ID_LEN];

    if (!ex->started) {
        head_lines(ex, ex->session, head, sizeof(head));
        stream_open(ex, head);
    }
    stream_send(ex, line, len);
}

/*
 * The status of a 2026-07-28 answer sent as a JSON body (the era's HTTP binding): an unknown
 * method is 404, an unsupported protocol version or a capability the client did not declare
 * 400, everything else 200 with the error in the body.
 */
static int answer_status(const HttpSession *s, JsonSpan error)
{
    static const char *const names[] = {"code"};
    JsonSpan code[1];
    int64_t c;

    if (!s->modern || !error.p || jsonscan_members(error.p, error.n, names, 1, code) < 0)
        return 200;
    if (!jsonscan_is_int(code[0], &c))
        return 200;
    if (c == JSONRPC_METHOD_NOT_FOUND)
        return 404;
    if (c == MCP_ERROR_UNSUPPORTED_PROTOCOL_VERSION || c == MCP_ERROR_MISSING_CLIENT_CAPABILITY)
        return 400;
    return 200;
}

/* The answer to ex's request: the last of its stream, or its whole JSON body. */
static void answer(HttpExchange *ex, const char *line, size_t len, JsonSpan error)
{
    HttpSession *s = ex->session;
    const HttpExchangeOps *ops = ex->ops;
    void *conn = ex->conn;
    char head[64 + HTTP_SESSION_ID_LEN];
    bool started;
    int status = answer_status(s, error);

    head_lines(ex, s, head, sizeof(head));
    if (!ex->started && !ex->json_ok) /* a client that takes SSE only */
        event_to(ex, line, len);
    else if (ex->started)
        stream_send(ex, line, len);
    started = ex->started;
    http_exchange_detach(ex); /* before the connection, which may take its next request */
    if (started)
        ops->sse_end(conn);
    else
        ops->reply(conn, status, head, line, len);
}

/* The newest POST still waiting whose client takes SSE, or NULL. */
static HttpExchange *newest_post(HttpSession *s)
{
    for (HttpExchange *ex = s->exchanges; ex; ex = ex->next)
        if (ex->sse_ok)
            return ex;
    return NULL;
}

/*
 * Where a request or notification of the agent's goes: progress, log messages and server
 * requests belong to a call in flight, so the newest waiting POST takes them (as the spec
 * advises: on the stream of the request they relate to); other notifications (list changes,
 * resource updates) go on the GET stream. With no such stream, the other kind; with none at
 * all, it is dropped: the agent has no place to receive it (it is told of changes it missed by
 * list_changed on its next stream, as any client that reconnects is).
 */
static bool is_call_bound(bool request, JsonSpan method)
{
    return request || jsonscan_span_eq(method, "\"notifications/progress\"") ||
           jsonscan_span_eq(method, "\"notifications/message\"");
}

static HttpExchange *stream_for(HttpSession *s, bool request, JsonSpan method)
{
    bool call_bound = is_call_bound(request, method);
    HttpExchange *post = newest_post(s);

    if (call_bound)
        return post ? post : s->get;
    return s->get ? s->get : post;
}

/* One whole message the core wrote to s's agent. */
static void route_line(HttpSession *s, const char *line, size_t len)
{
    static const char *const names[] = {"id", "method", "error"};
    JsonSpan v[3];

    if (jsonscan_members(line, len, names, 3, v) < 0) {
        log_debug("http: session %s: a message mcpd wrote does not scan; dropped", s->id);
        return;
    }
    if (!v[1].p) {
        _cleanup_free_ char *id = v[0].p ? canon_id(v[0]) : NULL;
        for (HttpExchange *ex = s->exchanges; id && ex; ex = ex->next)
            if (ex->id && streq(ex->id, id)) {
                answer(ex, line, len, v[2]);
                return;
            }
        if (id && orphan_take(s, id, false, line, len))
            return; /* its connection dropped: kept for the client's resume */
        log_debug("http: session %s: no stream waits for the answer to %s (its client left)", s->id,
                  id ? id : "null");
        return;
    }
    HttpExchange *ex = stream_for(s, v[0].p != NULL, v[1]);
    if (ex)
        event_to(ex, line, len);
    else if (!orphan_take(s, NULL, is_call_bound(v[0].p != NULL, v[1]), line, len))
        log_debug("http: session %s: no open stream for %.*s; dropped", s->id, (int)v[1].n, v[1].p);
}

/* The peer's output: whole lines are routed, a partial one waits in acc for its end. */
static void on_sink(Peer *p, const char *data, size_t n, void *ctx)
{
    HttpSession *s = ctx;
    const char *nl;

    (void)p;
    if (s->acc.len) {
        strbuf_append(&s->acc, data, n);
        data = s->acc.data;
        n = s->acc.len;
    }
    size_t used = 0;
    while ((nl = memchr(data + used, '\n', n - used))) {
        route_line(s, data + used, (size_t)(nl - data - used));
        used = (size_t)(nl - data) + 1;
    }
    if (data == s->acc.data) {
        memmove(s->acc.data, s->acc.data + used, n - used);
        s->acc.len = n - used;
        if (!s->acc.len)
            strbuf_deinit(&s->acc); /* an idle session holds no buffer (a list can be MiBs) */
    } else if (used < n) {
        strbuf_append(&s->acc, data + used, n - used);
    }
}

static void session_touch(HttpSession *s)
{
    HttpSessions *ss = s->ss;

    s->last_used_ms = now_ms();
    if (ss->first == s)
        return;
    s->prev->next = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = NULL;
    s->next = ss->first;
    ss->first->prev = s;
    ss->first = s;
}

/* At HTTP_MAX_SESSIONS: end the least recently used session with no open stream. */
static bool evict_idle(HttpSessions *ss)
{
    HttpSession *last = NULL;

    for (HttpSession *s = ss->first; s; s = s->next)
        if (!s->n_streams && !s->modern)
            last = s;
    if (!last)
        return false;
    log_notice("http: %d sessions open, the most; ending the least recently used (%s), idle "
               "for %llu s",
               HTTP_MAX_SESSIONS, last->id,
               (unsigned long long)((now_ms() - last->last_used_ms) / 1000));
    http_session_end(ss, last);
    return true;
}

HttpSession *http_session_new(HttpSessions *ss, uid_t uid, pid_t pid, const char *server,
                              bool modern, const char **whyp)
{
    unsigned char raw[HTTP_SESSION_ID_LEN / 2];

    if (ss->n >= HTTP_MAX_SESSIONS && !evict_idle(ss)) {
        *whyp = "mcpd holds its most HTTP sessions, all of them in use; end unused ones (DELETE)";
        return NULL;
    }
    if (!modern && random_bytes(raw, sizeof(raw)) < 0) {
        *whyp = "no randomness for a session id";
        return NULL;
    }
    HttpSession *s = xcalloc(1, sizeof(*s));
    Peer *p = peer_new_sink(ss->peers, uid, pid, on_sink, s);
    if (!p) {
        free(s);
        *whyp = "mcpd serves its most clients at once; close unused ones";
        return NULL;
    }
    s->ss = ss;
    s->peer_id = p->id;
    s->modern = modern;
    s->server = server ? xstrdup(server) : NULL;
    for (size_t i = 0; !modern && i < sizeof(raw); i++)
        snprintf(s->id + 2 * i, 3, "%02x", raw[i]);
    s->last_used_ms = now_ms();
    s->next = ss->first;
    if (ss->first)
        ss->first->prev = s;
    ss->first = s;
    ss->n++;
    return s;
}

bool http_session_dead(const HttpSession *s)
{
    return !peer_get(s->ss->peers, s->peer_id);
}

HttpSession *http_session_find(HttpSessions *ss, const char *id, size_t n, const char *server)
{
    if (n != HTTP_SESSION_ID_LEN)
        return NULL;
    for (HttpSession *s = ss->first; s; s = s->next)
        if (!s->modern && memcmp(s->id, id, n) == 0)
            return http_session_serves(s, server) && !http_session_dead(s) ? s : NULL;
    return NULL;
}

bool http_session_serves(const HttpSession *s, const char *server)
{
    return s->server ? server && streq(s->server, server) : !server;
}

const char *http_session_id(const HttpSession *s)
{
    return s->id;
}

size_t http_session_streams(const HttpSession *s)
{
    return s->n_streams;
}

/*
 * The request rewritten with the agent's identity from the request's URL and headers, in
 * params._meta as the line protocol takes it (unless the body set it): into out, or false
 * when there is nothing to add.
 */
static bool add_identity(StrBuf *out, const char *body, size_t n, const HttpIdentity *ident)
{
    _cleanup_json_ yajl_val msg = NULL;
    const char *keys[] = {MCPD_META_SERVER, MCPD_META_CWD, MCPD_META_SESSION};
    const char *vals[] = {ident->server, ident->project, ident->session};

    if (!ident->server && !ident->project && !ident->session)
        return false;
    if (json_parse_full(&msg, body, n, JSON_UTF8_REFUSE, NULL) != 0 || !YAJL_IS_OBJECT(msg))
        return false;
    yajl_val params = json_get(msg, "params");
    if (params && !YAJL_IS_OBJECT(params))
        return false;
    if (!params) {
        params = json_object_new();
        json_object_set(msg, "params", params);
    }
    yajl_val meta = json_get_object(params, "_meta");
    if (!meta) {
        meta = json_object_new();
        json_object_set(params, "_meta", meta);
    }
    for (size_t i = 0; i < 3; i++)
        if (vals[i] && !json_get(meta, keys[i]))
            json_object_set(meta, keys[i], json_string_new(vals[i]));
    json_write(out, msg);
    return true;
}

/* The headers of a 2026-07-28 POST against its body (its HTTP binding), checked by the server. */
int http_session_post(HttpSession *s, HttpExchange *ex, char *body, size_t n,
                      const HttpIdentity *ident, char **errp)
{
    static const char *const names[] = {"id", "method"};
    JsonSpan v[2];
    Peer *p = peer_get(s->ss->peers, s->peer_id);

    session_touch(s);
    if (!p) {
        *errp = error_body(JSONRPC_INVALID_REQUEST, "the session has ended; start a new one");
        return 404;
    }
    if (n && body[0] == '[') {
        *errp = error_body(JSONRPC_INVALID_REQUEST,
                           "batches are not taken over HTTP: send one message per POST");
        return 400;
    }
    if (jsonscan_members(body, n, names, 2, v) < 0 || (!v[0].p && !v[1].p)) {
        *errp = error_body(JSONRPC_PARSE_ERROR,
                           "the body is not one JSON-RPC message (a JSON object with a method "
                           "or an id)");
        return 400;
    }
    bool request = v[0].p && v[1].p;
    if (request) {
        if (s->n_streams >= HTTP_MAX_STREAMS_PER_SESSION) {
            *errp = error_body(JSONRPC_INVALID_REQUEST,
                               "too many requests in flight in this session (at most 32)");
            return 429;
        }
        ex->id = canon_id(v[0]);
        ex->initialize = jsonscan_span_eq(v[1], "\"initialize\"");
        link_exchange(s, ex);
    }
    StrBuf sb = STRBUF_INIT;
    bool meta_wanted = request && (s->modern || ex->initialize);
    bool alive = meta_wanted && add_identity(&sb, body, n, ident) ? peer_deliver(p, sb.data, sb.len)
                                                                  : peer_deliver(p, body, n);
    strbuf_deinit(&sb);
    if (!alive && request && ex->session) {
        /* Refused by the line protocol's own checks, which end the agent: so does the session. */
        http_exchange_detach(ex);
        *errp = error_body(JSONRPC_INVALID_REQUEST,
                           "the message was refused and the session ended; start a new one");
        return 400;
    }
    return request ? 0 : HTTP_POST_ACCEPTED;
}

bool http_session_listen(HttpSession *s, HttpExchange *ex)
{
    if (s->get)
        return false;
    session_touch(s);
    ex->session = s;
    s->get = ex;
    s->n_streams++;
    stream_open(ex, "");
    return true;
}

void http_session_end(HttpSessions *ss, HttpSession *s)
{
    Peer *p = peer_get(ss->peers, s->peer_id);

    while (s->exchanges || s->get) {
        HttpExchange *ex = s->get ? s->get : s->exchanges;
        const HttpExchangeOps *ops = ex->ops;
        void *conn = ex->conn;
        bool started = ex->started;
        http_exchange_detach(ex);
        if (started)
            ops->sse_end(conn);
        else
            ops->reply(conn, 404, "", "", 0);
    }
    if (p)
        peer_close(p, NULL);
    if (s->prev)
        s->prev->next = s->next;
    else
        ss->first = s->next;
    if (s->next)
        s->next->prev = s->prev;
    ss->n--;
    orphans_expire(s, UINT64_MAX);
    strbuf_deinit(&s->acc);
    free(s->server);
    free(s);
}

void http_sessions_sweep(HttpSessions *ss, int64_t now)
{
    HttpSession *next;

    for (HttpSession *s = ss->first; s; s = next) {
        next = s->next;
        if (now > HTTP_RESUME_WINDOW_MS)
            orphans_expire(s, (uint64_t)(now - HTTP_RESUME_WINDOW_MS));
        if (!s->modern && !s->n_streams &&
            ((int64_t)s->last_used_ms + HTTP_SESSION_IDLE_MS < now || http_session_dead(s)))
            http_session_end(ss, s);
    }
}

void http_sessions_deinit(HttpSessions *ss)
{
    while (ss->first)
        http_session_end(ss, ss->first);
}
