// SPDX-License-Identifier: MIT
// upstream: an MCP client session over one transport (handshake, requests, timeouts, paging).

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/jsonscan.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/sys/turn.h"
#include "daemon/upstream/tool-headers.h"
#include "daemon/upstream/transport-http.h"
#include "daemon/upstream/transport-stdio.h"
#include "daemon/upstream/upstream.h"

/*
 * An auto stdio server is asked server/discover and, right behind it, ping: 2025 servers answer
 * ping before initialize (the 2025 lifecycle allows it; both SDKs do). Any error to the probe is
 * its answer (initialize follows), a notification or a stderr line is not. A ping answered while
 * the probe waits means the server is up and has read the probe: it gets this much longer (one
 * that answers in order has answered already; this covers concurrent handlers on a loaded
 * machine), then silence means a 2025 server that drops unknown methods. Paid on the first
 * connect only: the era is remembered and kept in the tool cache entry (era.c).
 */
#define UPSTREAM_DISCOVER_GRACE_MS 1000
/*
 * A stdio server that answers neither is still starting, or drops every request before
 * initialize. The npm servers answered the probe 3.4 to 6 s after their spawn on this 2-core
 * machine under the other tests' load (docs/upstream-era.md), and more under heavier load: a
 * bound below a start would send initialize to a modern server that is merely slow. At most half
 * the server's handshake bound ("timeout", 30 s by default): initialize has the other half. Over
 * HTTP every server answers a POST (a legacy one with a 4xx), so silence there is a slow
 * server: the probe gets the whole handshake bound.
 */
#define UPSTREAM_DISCOVER_SILENCE_MS 15000
/* -32022 with our version among the supported: retried once, then the server is not believed. */
#define UPSTREAM_DISCOVER_TRIES_MAX 2

/* A listen stream that broke is opened again after this, doubling up to the cap (seconds of
 * silence cost nothing; a server that keeps dropping it is not hammered). */
#define LISTEN_BACKOFF_MIN_MS 1000
#define LISTEN_BACKOFF_MAX_MS 60000
/*
 * 2026-07-28 over HTTP: a response stream that breaks loses the request, which is sent again
 * under a new id. A server that breaks it every time is given up on after this many.
 */
#define UPSTREAM_REISSUE_MAX 3
/* Warnings about a server's stray answers and bad lines: a burst, then this many a second. */
#define STRAY_LOG_BURST 10
#define STRAY_LOG_RATE  1
/* A list's ttlMs below this is read as this: a server cannot make mcpd poll it in a loop. */
#define LIST_TTL_MIN_MS 1000

/* The lists whose ttlMs mcpd honours, and what it tells its owner when one runs out. */
static const struct {
    const char *method, *changed;
} ttl_lists[] = {
    {"tools/list", "notifications/tools/list_changed"},
    {"prompts/list", "notifications/prompts/list_changed"},
    {"resources/list", "notifications/resources/list_changed"},
    {"resources/templates/list", "notifications/resources/list_changed"},
};

static void era_remember(Upstream *u, UpstreamEra era)
{
    era_note(u->era_key, era);
}

typedef struct UpstreamPending {
    Upstream *u;
    uint64_t id;
    UpstreamReplyFn fn;
    void *ctx;
    DeadlineNode deadline; /* in u->deadlines while it has a timeout */
    struct event *local;   /* an answer made here, from the loop (subscribe_by_listen) */
    int64_t timeout_ms;
    uint64_t deadline_cap_ms; /* hard cap for progress-extended calls, monotonic */
    bool progress;
    bool raw;          /* a plain result may be delivered as text */
    char *line;        /* modern HTTP: the request as sent, for a re-issue; else NULL */
    uint64_t wire_id;  /* the id it was last sent under, when re-issued; else 0 */
    unsigned reissues; /* times sent again after a broken stream */
} UpstreamPending;

static void pending_free(UpstreamPending *p)
{
    deadline_clear(&p->u->deadlines, &p->deadline);
    if (p->local)
        event_free(p->local);
    free(p->line);
    pool_put(&p->u->pending_pool, p);
}

/* The id the server knows a request by (a re-issue changed it). */
static uint64_t wire_id(const UpstreamPending *p)
{
    return p->wire_id ? p->wire_id : p->id;
}

/* The request an answer is for, by the id it came under. */
static UpstreamPending *pending_by_wire(Upstream *u, uint64_t id)
{
    UpstreamPending *p = idmap_get(&u->pending, id);
    uintptr_t orig;

    if (p || !u->wire_ids.n || !(orig = (uintptr_t)idmap_get(&u->wire_ids, id)))
        return p;
    return idmap_get(&u->pending, orig);
}

/* Remove p from the table and deliver its one reply. */
static void pending_finish(UpstreamPending *p, const UpstreamReply *reply)
{
    Upstream *u = p->u;

    idmap_remove(&u->pending, p->id);
    if (p->wire_id)
        idmap_remove(&u->wire_ids, p->wire_id);
    if (p->raw)
        u->n_raw_pending--;
    p->fn(u, p->ctx, reply);
    pending_free(p);
}

static void fail_pending(UpstreamPending *p, UpstreamOutcome outcome, const char *message)
{
    UpstreamReply r = {.outcome = outcome, .code = MCP_ERROR_CONNECTION_CLOSED, .message = message};
    pending_finish(p, &r);
}

static inline __attribute__((always_inline)) int send_line(Upstream *u, StrBuf *sb)
{
    if (u->closed || !u->transport)
        return -ENOTCONN;
    return transport_send(u->transport, sb->data, sb->len);
}

int upstream_notify(Upstream *u, const char *method, yajl_val params)
{
    StrBuf sb = STRBUF_INIT;
    int r;

    jsonrpc_write_notification(&sb, method, params);
    json_free(params);
    r = send_line(u, &sb);
    strbuf_deinit(&sb);
    return r;
}

static void on_request_timeout(DeadlineNode *n, void *ud)
{
    UpstreamPending *p = container_of(n, UpstreamPending, deadline);
    Upstream *u = ud;
    /* The agent sees only this text: it names the server, and what to change if it is just slow. */
    _cleanup_free_ char *msg = xasprintf("Request to MCP server \"%s\" timed out after %" PRId64
                                         "ms; if the server is slow rather than stuck, raise its "
                                         "callTimeout (or timeout) in the config",
                                         u->name, p->timeout_ms);
    yajl_val params = json_object_new();

    /* The lifecycle page: on timeout, cancel upstream and stop waiting. */
    json_object_set(params, "requestId", json_int_new((int64_t)wire_id(p)));
    json_object_set(params, "reason", json_string_new("timeout"));
    upstream_notify(u, "notifications/cancelled", params);
    fail_pending(p, UPSTREAM_TIMEOUT, msg);
}

/* now: the monotonic clock in ms, read once by the caller. */
static void arm_timer(UpstreamPending *p, uint64_t now)
{
    int64_t ms = p->timeout_ms;

    if (ms <= 0)
        return;
    if (p->deadline_cap_ms) {
        int64_t left = p->deadline_cap_ms > now ? (int64_t)(p->deadline_cap_ms - now) : 0;
        ms = MIN(ms, left);
    }
    deadline_set(&p->u->deadlines, &p->deadline, now + (uint64_t)ms);
}

/* Record a request that has been sent. */
static inline __attribute__((always_inline)) void pending_add(Upstream *u, uint64_t id,
                                                              int64_t timeout_ms, unsigned flags,
                                                              UpstreamReplyFn fn, void *ctx)
{
    UpstreamPending *p = pool_get(&u->pending_pool);
    /* One reading of the clock: only a request with a bound or a cap needs it. */
    uint64_t now = timeout_ms > 0 || ((flags & UPSTREAM_PROGRESS) && u->max_call_timeout_ms > 0)
                       ? turn_now_ms()
                       : 0;

    p->u = u;
    p->id = id;
    p->fn = fn;
    p->ctx = ctx;
    p->timeout_ms = timeout_ms;
    p->progress = flags & UPSTREAM_PROGRESS;
    p->raw = flags & UPSTREAM_RAW;
    u->n_raw_pending += p->raw;
    if (p->progress && u->max_call_timeout_ms > 0)
        p->deadline_cap_ms = now + (uint64_t)u->max_call_timeout_ms;
    arm_timer(p, now);
    idmap_put(&u->pending, id, p);
}

/* A modern request: params become text, so _meta is built in one place. */
static int request_modern(Upstream *u, const char *method, yajl_val params, int64_t timeout_ms,
                          unsigned flags, UpstreamReplyFn fn, void *ctx, uint64_t *idp)
{
    _cleanup_json_ yajl_val meta = json_object_take(params, "_meta");
    _cleanup_free_ char *meta_text = NULL, *body = json_members_text(params);

    json_free(json_object_take(meta, MCP_META_PROGRESS_TOKEN));
    meta_text = json_members_text(meta);
    json_free(params);
    return upstream_request_text(u, method, meta_text, body, timeout_ms, flags, fn, ctx, idp);
}

int upstream_request(Upstream *u, const char *method, yajl_val params, int64_t timeout_ms,
                     unsigned flags, UpstreamReplyFn fn, void *ctx, uint64_t *idp)
{
    uint64_t id;
    int r;

    if (upstream_is_modern(u) || streq(method, "server/discover"))
        return request_modern(u, method, params, timeout_ms, flags, fn, ctx, idp);
    id = ++u->next_id;
    if (flags & UPSTREAM_PROGRESS) {
        yajl_val meta = json_get_object(params, "_meta");
        if (!meta) {
            meta = json_object_new();
            json_object_set(params, "_meta", meta);
        }
        json_object_set(meta, MCP_META_PROGRESS_TOKEN, json_int_new((int64_t)id));
    }
    strbuf_reset(&u->scratch);
    jsonrpc_write_request(&u->scratch, id, method, params);
    json_free(params);
    r = send_line(u, &u->scratch);
    if (r < 0)
        return r;
    pending_add(u, id, timeout_ms, flags, fn, ctx);
    if (idp)
        *idp = id;
    return 0;
}

static void listen_restart(Upstream *u);

static void on_local_ok(evutil_socket_t fd, short what, void *arg)
{
    _cleanup_json_ yajl_val empty = json_object_new();
    UpstreamReply r = {.outcome = UPSTREAM_OK, .result = empty};

    (void)fd, (void)what;
    pending_finish(arg, &r);
}

/*
 * 2026-07-28 has no resources/subscribe: the URI joins (or leaves) the resourceSubscriptions of
 * the listen stream, which is opened again, and the request is answered here, from the loop.
 */
static int subscribe_by_listen(Upstream *u, const char *method, const char *body,
                               UpstreamReplyFn fn, void *ctx, uint64_t *idp)
{
    _cleanup_free_ char *text = xasprintf("{%s}", body ? body : "");
    _cleanup_json_ yajl_val b = json_parse(text, NULL);
    const char *uri = json_get_string(b, "uri");
    bool on = streq(method, "resources/subscribe");
    uint64_t id = ++u->next_id;
    UpstreamPending *p;
    size_t i;

    if (!uri)
        return -EINVAL;
    if (!u->listen_uris)
        u->listen_uris = json_array_new();
    for (i = 0; i < json_array_len(u->listen_uris); i++)
        if (streq(YAJL_GET_STRING(json_array_at(u->listen_uris, i)), uri))
            break;
    if (on && i == json_array_len(u->listen_uris))
        json_array_push(u->listen_uris, json_string_new(uri));
    else if (!on && i < json_array_len(u->listen_uris)) {
        yajl_val a = u->listen_uris;
        json_free(a->u.array.values[i]);
        memmove(&a->u.array.values[i], &a->u.array.values[i + 1],
                (a->u.array.len - i - 1) * sizeof(*a->u.array.values));
        a->u.array.len--;
    }
    listen_restart(u);
    pending_add(u, id, 0, 0, fn, ctx);
    p = idmap_get(&u->pending, id);
    p->local = evtimer_new(u->base, on_local_ok, p);
    event_active(p->local, EV_TIMEOUT, 0);
    if (idp)
        *idp = id;
    return 0;
}

int upstream_request_parts(Upstream *u, const char *method, const char *meta,
                           const UpstreamPart *body, size_t n_body, int64_t timeout_ms,
                           unsigned flags, UpstreamReplyFn fn, void *ctx, uint64_t *idp)
{
    uint64_t id;
    StrBuf *sb = &u->scratch;
    /* The first byte spares the usual tools/call a strcmp. */
    bool modern = upstream_is_modern(u) || (*method == 's' && streq(method, "server/discover"));
    int r;

    if (upstream_is_modern(u) &&
        (streq(method, "resources/subscribe") || streq(method, "resources/unsubscribe"))) {
        _cleanup_free_ char *text = request_parts_join(body, n_body);
        return subscribe_by_listen(u, method, text, fn, ctx, idp);
    }
    id = ++u->next_id;
    if (modern && streq(method, "ping"))
        method = "server/discover"; /* 2026-07-28 has no ping: discover is the health check */
    else if (modern && streq(method, "logging/setLevel"))
        return -EOPNOTSUPP; /* the level goes with each request instead */
    if (modern) {
        _cleanup_free_ char *text = request_parts_join(body, n_body);
        const char *level = u->next_log_level;
        u->next_log_level = NULL; /* for this request only */
        request_line_modern(sb, id, method, meta, text, flags & UPSTREAM_PROGRESS, level);
    } else
        request_line_legacy(sb, id, method, meta, body, n_body, flags & UPSTREAM_PROGRESS);
    r = send_line(u, sb);
    if (r < 0)
        return r;
    pending_add(u, id, timeout_ms, flags, fn, ctx);
    if (modern && !u->stdio && !streq(method, "subscriptions/listen")) {
        UpstreamPending *p = idmap_get(&u->pending, id);
        p->line = xstrndup(sb->data, sb->len); /* kept for a re-issue (broken stream) */
    }
    if (idp)
        *idp = id;
    return 0;
}

int upstream_request_text(Upstream *u, const char *method, const char *meta, const char *body,
                          int64_t timeout_ms, unsigned flags, UpstreamReplyFn fn, void *ctx,
                          uint64_t *idp)
{
    UpstreamPart part = {body ? body : "", body ? strlen(body) : 0};

    return upstream_request_parts(u, method, meta, &part, 1, timeout_ms, flags, fn, ctx, idp);
}

void upstream_cancel(Upstream *u, uint64_t id, const char *reason)
{
    UpstreamPending *p = idmap_get(&u->pending, id);
    yajl_val params;

    if (!p)
        return;
    params = json_object_new();
    json_object_set(params, "requestId", json_int_new((int64_t)wire_id(p)));
    if (reason)
        json_object_set(params, "reason", json_string_new(reason));
    upstream_notify(u, "notifications/cancelled", params);
    fail_pending(p, UPSTREAM_CANCELLED, reason ? reason : "cancelled");
}

/*
 * The HTTP transport lost a modern request's response stream: the request goes again, the
 * same bytes under a new id (its progress token stays, so progress still finds it).
 */
static bool reissue(Upstream *u, UpstreamPending *p)
{
    const char *rest = p->line ? strstr(p->line, ",\"method\":") : NULL;
    uint64_t id = ++u->next_id;
    StrBuf *sb = &u->scratch;

    if (!rest || p->reissues >= UPSTREAM_REISSUE_MAX)
        return false;
    strbuf_reset(sb);
    strbuf_printf(sb, "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 "%s", id, rest);
    if (send_line(u, sb) < 0)
        return false;
    if (p->wire_id)
        idmap_remove(&u->wire_ids, p->wire_id);
    p->wire_id = id;
    p->reissues++;
    idmap_put(&u->wire_ids, id, (void *)(uintptr_t)p->id);
    free(p->line);
    p->line = xstrndup(sb->data, sb->len);
    log_full(LOG_INFO, u->name, "http",
             "the response stream broke: request %" PRIu64 " sent again as %" PRIu64, p->id, id);
    return true;
}

/*
 * An answer that matches no waiting request. A late one (an id mcpd sent; timed out or
 * cancelled) is dropped quietly; an error with id null means the server could not read a
 * request; any other id (never sent, or retyped: "7" for 7) is the server's fault. The last
 * two are warnings with a burst limit: a server can send them as fast as it likes.
 */
static void stray_response(Upstream *u, const JsonrpcMsg *m)
{
    yajl_val id = m->id;
    if (YAJL_IS_INTEGER(id) && id->u.number.i > 0 && (uint64_t)id->u.number.i <= u->next_id) {
        log_debug("[%s] late answer to request %lld dropped", u->name, (long long)id->u.number.i);
        return;
    }
    if (!loglimit_take(&u->stray_log))
        return;
    if (!id && m->kind == JSONRPC_ERROR_RESPONSE) {
        const char *text = json_get_string(m->error, "message");
        log_full(LOG_WARNING, u->name, "protocol",
                 "the server could not read a request mcpd sent: %.300s",
                 text ? text : "(no message)");
        return;
    }
    _cleanup_free_ char *text = json_to_string(id);
    log_full(LOG_WARNING, u->name, "protocol",
             "the server answered a request mcpd never sent (id %.64s%s): ignored. JSON-RPC "
             "answers must carry the request's id unchanged (mcpd sends integers); a server that "
             "rewrites ids leaves its calls waiting until they time out",
             text ? text : "?", text && strlen(text) > 64 ? "..." : "");
}

static void handle_response(Upstream *u, JsonrpcMsg *m)
{
    UpstreamPending *p;
    UpstreamReply r = {0};

    /*
     * An error with id null while the era probe waits: the server could not read it (a 2025
     * server choking on server/discover's params), which is the probe's answer.
     */
    if ((!m->id || YAJL_IS_NULL(m->id)) && m->kind == JSONRPC_ERROR_RESPONSE && u->probe_id)
        p = idmap_get(&u->pending, u->probe_id);
    else if (!YAJL_IS_INTEGER(m->id) || m->id->u.number.i <= 0)
        p = NULL;
    else
        p = pending_by_wire(u, (uint64_t)m->id->u.number.i);
    if (!p) {
        stray_response(u, m);
        return;
    }
    if (m->kind == JSONRPC_RESPONSE && !p->raw &&
        streq(json_get_string(m->result, "resultType"), "input_required")) {
        /* Only calls (raw, see call.c and mrtr.c) can gather input; a list or probe cannot. */
        r.outcome = UPSTREAM_ERROR;
        r.code = JSONRPC_INTERNAL_ERROR;
        r.message = "the server asked for input (resultType input_required) where mcpd has no "
                    "agent to ask";
    } else if (m->kind == JSONRPC_RESPONSE) {
        r.outcome = UPSTREAM_OK;
        r.result = m->result;
    } else {
        yajl_val code = json_get(m->error, "code");
        r.outcome = UPSTREAM_ERROR;
        r.code = YAJL_IS_INTEGER(code) ? code->u.number.i : JSONRPC_INTERNAL_ERROR;
        r.message = json_get_string(m->error, "message");
        if (!r.message)
            r.message = "(no message)";
        r.data = json_get(m->error, "data");
        if (YAJL_IS_TRUE(json_get(r.data, MCPD_DATA_STREAM_LOST)) && reissue(u, p))
            return;
    }
    pending_finish(p, &r);
}

void upstream_respond(Upstream *u, yajl_val id, yajl_val result)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_result(&sb, id, result);
    send_line(u, &sb);
    strbuf_deinit(&sb);
}

void upstream_respond_error(Upstream *u, yajl_val id, int code, const char *message)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_error(&sb, id, code, message, NULL);
    send_line(u, &sb);
    strbuf_deinit(&sb);
}

/* Server-to-client requests: ping is answered here, the rest go to the owner (agents). */
static void handle_server_request(Upstream *u, JsonrpcMsg *m)
{
    if (streq(m->method, "ping"))
        upstream_respond(u, m->id, NULL);
    else if (u->ev.request && !u->closed)
        u->ev.request(u->userdata, m->id, m->method, m->params);
    else
        upstream_respond_error(u, m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found");
}

/* The request sent with UPSTREAM_PROGRESS that a progress notification names, or NULL. */
static UpstreamPending *progress_target(Upstream *u, yajl_val params)
{
    yajl_val tok = json_get(params, "progressToken");
    UpstreamPending *p;

    if (YAJL_IS_INTEGER(tok) && tok->u.number.i > 0 &&
        (p = idmap_get(&u->pending, (uint64_t)tok->u.number.i)) && p->progress)
        return p;
    return NULL;
}

/* Progress for one of our calls re-arms its timer (bounded by the hard cap). */
static void note_progress(Upstream *u, yajl_val params)
{
    UpstreamPending *p = progress_target(u, params);

    if (p)
        arm_timer(p, now_ms());
}

void *upstream_progress_ctx(Upstream *u, yajl_val params)
{
    UpstreamPending *p = u ? progress_target(u, params) : NULL;

    return p ? p->ctx : NULL;
}

/*
 * The hot path: a plain result for a request that takes raw text is handed over as the bytes
 * it came in, validated by the scanner but never parsed into a tree. Anything else: false.
 */
static bool fast_response(Upstream *u, const char *line, size_t len)
{
    static const char *const names[] = {"jsonrpc", "id", "result", "error", "method"};
    JsonSpan v[N_ELEMENTS(names)];
    UpstreamPending *p;
    int64_t id;

    /* Nothing waits for raw text (a tools/list in flight, say): not worth a scan. */
    if (!u->n_raw_pending || jsonscan_members(line, len, names, N_ELEMENTS(names), v) < 0 ||
        !jsonscan_span_eq(v[0], "\"2.0\"") || v[3].p || v[4].p || !v[2].p ||
        !jsonscan_is_int(v[1], &id) || id <= 0 || !(p = pending_by_wire(u, (uint64_t)id)) ||
        !p->raw)
        return false;
    UpstreamReply r = {.outcome = UPSTREAM_OK, .raw = v[2].p, .raw_len = v[2].n};
    pending_finish(p, &r);
    return true;
}

/* Any message but a plain result for a call (fast_response): parsed into a tree. */
static void on_message_parsed(Upstream *u, char *line, size_t len)
{
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;
    int r = jsonrpc_msg_parse(&m, line, len, &err);

    if (r != 0) {
        /* One bad line is the server's bug, not a reason to drop the session (seed bug B9). */
        if (loglimit_take(&u->stray_log))
            log_full(LOG_WARNING, u->name, "protocol",
                     "skipping a message that is not JSON-RPC (%s): %.200s", err, line);
        jsonrpc_msg_deinit(&m);
        return;
    }
    switch (m.kind) {
    case JSONRPC_RESPONSE:
    case JSONRPC_ERROR_RESPONSE:
        handle_response(u, &m);
        break;
    case JSONRPC_REQUEST:
        handle_server_request(u, &m);
        break;
    case JSONRPC_NOTIFICATION:
        if (streq(m.method, "notifications/progress"))
            note_progress(u, m.params);
        if (streq(m.method, "notifications/subscriptions/acknowledged")) {
            u->listen_backoff_ms = 0; /* the stream is up: a later break starts the pause afresh */
            break;
        }
        if (u->ev.notification && !u->closed)
            u->ev.notification(u->userdata, m.method, m.params);
        break;
    }
    jsonrpc_msg_deinit(&m);
}

static void on_message(void *userdata, char *line, size_t len)
{
    Upstream *u = userdata;

    u->message_len = len;
    if (!fast_response(u, line, len))
        on_message_parsed(u, line, len);
}

static void on_transport_closed(void *userdata, const char *reason)
{
    Upstream *u = userdata;
    size_t pos = 0;
    void *v;

    if (u->closed || u->dead)
        return;
    u->dead = true;
    if (!u->initialized && u->era_key) {
        /*
         * A child that ended on the probe, before any initialize, is a strict 2025 server (some
         * end on any request before initialize): the next start sends initialize. Otherwise the
         * era is probed again. Either way a wrong guess costs one failed start, never a loop.
         */
        if (u->stdio && u->pin == PROTOCOL_AUTO && u->discover_tries && !u->init_sent)
            era_remember(u, UPSTREAM_ERA_LEGACY);
        else
            era_remember(u, UPSTREAM_ERA_UNKNOWN);
    }
    while (idmap_next(&u->pending, &pos, NULL, &v))
        fail_pending(v, UPSTREAM_CLOSED, reason);
    if (u->ev.closed)
        u->ev.closed(u->userdata, reason);
}

static void on_transport_auth(void *userdata, const char *challenge)
{
    Upstream *u = userdata;

    if (!u->closed && u->ev.auth_required)
        u->ev.auth_required(u->userdata, challenge);
}

static void on_initialize(Upstream *u, void *ctx, const UpstreamReply *r)
{
    const char *version = NULL;
    const char *why = NULL;
    _cleanup_free_ char *msg = NULL;

    (void)ctx;
    /* A dead transport is reported once, by on_transport_closed. */
    if (r->outcome == UPSTREAM_CANCELLED || u->dead || u->closed)
        return;
    if (r->outcome == UPSTREAM_ERROR)
        why = msg = xasprintf("initialize failed: MCP error %" PRId64 ": %s", r->code, r->message);
    else if (r->outcome != UPSTREAM_OK)
        why = msg = xasprintf("initialize failed: %s", r->message);
    else if (!(version = json_get_string(r->result, "protocolVersion")))
        why = "initialize result has no protocolVersion";
    else if (!mcp_protocol_find(version))
        why = msg = xasprintf("server answered protocol version \"%s\", which mcpd does not speak",
                              version);
    if (why) {
        era_remember(u, UPSTREAM_ERA_UNKNOWN); /* re-probe next time */
        if (u->ev.closed)
            u->ev.closed(u->userdata, why);
        return;
    }
    u->era = UPSTREAM_ERA_LEGACY;
    era_remember(u, UPSTREAM_ERA_LEGACY);
    u->protocol_version = xstrdup(version);
    u->server_info = json_copy(json_get_object(r->result, "serverInfo"));
    u->capabilities = json_copy(json_get_object(r->result, "capabilities"));
    if (json_get_string(r->result, "instructions"))
        u->instructions = xstrdup(json_get_string(r->result, "instructions"));
    u->initialized = true;
    upstream_notify(u, "notifications/initialized", NULL);
    if (u->ev.ready)
        u->ev.ready(u->userdata);
}

static yajl_val initialize_params(void)
{
    yajl_val p = json_object_new(), info = json_object_new();
    yajl_val caps = json_parse(CLIENT_CAPABILITIES_JSON, NULL);

    json_object_set(info, "name", json_string_new("mcpd"));
    json_object_set(info, "version", json_string_new(MCPD_VERSION));
    json_object_set(p, "protocolVersion", json_string_new(MCP_PROTOCOL_LATEST));
    json_object_set(p, "capabilities", caps);
    json_object_set(p, "clientInfo", info);
    return p;
}

static void send_initialize(Upstream *u)
{
    /*
     * A child that died at once makes this write fail (EPIPE); its exit is reported by the
     * transport like any other, so the failure is handled there, with the exit status.
     */
    int r;

    u->init_sent = true;
    r = upstream_request(u, "initialize", initialize_params(), u->timeout_ms, false, on_initialize,
                         NULL, NULL);
    if (r < 0)
        log_full(LOG_DEBUG, u->name, "connect", "cannot send initialize: %s", strerror(-r));
}

static bool offers_modern(yajl_val versions)
{
    for (size_t i = 0; YAJL_IS_ARRAY(versions) && i < versions->u.array.len; i++)
        if (streq(YAJL_GET_STRING(versions->u.array.values[i]), MCP_PROTOCOL_2026_07_28))
            return true;
    return false;
}

static void listen_start(Upstream *u);

/* A DiscoverResult that offers our version: the session is modern from here on. */
static void become_modern(Upstream *u, yajl_val result)
{
    yajl_val info = json_get_object(result, "serverInfo");
    const char *instructions = json_get_string(result, "instructions");

    if (!info)
        info = json_get_object(json_get_object(result, "_meta"), MCP_META_SERVER_INFO);
    u->era = UPSTREAM_ERA_MODERN;
    era_remember(u, UPSTREAM_ERA_MODERN);
    u->protocol_version = xstrdup(MCP_PROTOCOL_2026_07_28);
    u->server_info = json_copy(info);
    u->capabilities = json_get_object(result, "capabilities")
                          ? json_copy(json_get_object(result, "capabilities"))
                          : json_object_new();
    u->instructions = instructions ? xstrdup(instructions) : NULL;
    u->initialized = true;
    log_full(LOG_INFO, u->name, "connect", "speaking MCP %s (stateless)", MCP_PROTOCOL_2026_07_28);
    listen_start(u);
    if (u->ev.ready)
        u->ev.ready(u->userdata);
}

static void send_discover(Upstream *u);

static void on_listen(Upstream *u, void *ctx, const UpstreamReply *r)
{
    struct timeval tv;

    (void)ctx;
    u->listen_id = 0;
    if (r->outcome == UPSTREAM_CANCELLED || r->outcome == UPSTREAM_CLOSED || u->dead || u->closed)
        return;
    if (r->outcome == UPSTREAM_ERROR && r->code == JSONRPC_METHOD_NOT_FOUND) {
        log_full(LOG_INFO, u->name, "listen",
                 "subscriptions/listen is not served: list changes are not heard");
        return;
    }
    /* The stream ended (it should not): listen again after a growing pause. */
    u->listen_backoff_ms = u->listen_backoff_ms
                               ? MIN(u->listen_backoff_ms * 2, LISTEN_BACKOFF_MAX_MS)
                               : LISTEN_BACKOFF_MIN_MS;
    log_full(LOG_DEBUG, u->name, "listen",
             "subscriptions/listen ended (%s): again in %" PRId64 " ms",
             r->message ? r->message : "a result", u->listen_backoff_ms);
    tv.tv_sec = u->listen_backoff_ms / 1000;
    tv.tv_usec = (u->listen_backoff_ms % 1000) * 1000;
    evtimer_add(u->ev_listen, &tv);
}

/* What the stream listens for changed: the open one ends, a new one starts from the loop. */
static void listen_restart(Upstream *u)
{
    struct timeval now = {0, 0};

    if (u->listen_id)
        upstream_cancel(u, u->listen_id, "the subscriptions changed");
    u->listen_backoff_ms = 0;
    evtimer_add(u->ev_listen, &now); /* several changes in one turn make one listen */
}

static void on_listen_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    listen_start(arg);
}

/*
 * 2026-07-28 has no GET stream: list changes come on one subscriptions/listen request that
 * stays open (a long POST stream over HTTP), for the lists the server says can change.
 */
static void listen_start(Upstream *u)
{
    static const struct {
        const char *cap, *key;
    } kinds[] = {
        {"tools", "toolsListChanged"},
        {"prompts", "promptsListChanged"},
        {"resources", "resourcesListChanged"},
    };
    yajl_val params = json_object_new(), want = json_object_new();
    int r;

    for (size_t i = 0; i < N_ELEMENTS(kinds); i++)
        if (YAJL_IS_TRUE(json_get(json_get_object(u->capabilities, kinds[i].cap), "listChanged")))
            json_object_set(want, kinds[i].key, json_bool_new(true));
    if (json_array_len(u->listen_uris))
        json_object_set(want, "resourceSubscriptions", json_copy(u->listen_uris));
    if (!want->u.object.len || u->closed || u->dead) {
        json_free(want);
        json_free(params);
        return;
    }
    json_object_set(params, "notifications", want);
    r = upstream_request(u, "subscriptions/listen", params, 0, 0, on_listen, NULL, &u->listen_id);
    if (r < 0)
        log_full(LOG_DEBUG, u->name, "listen", "cannot send subscriptions/listen: %s",
                 strerror(-r));
}

/* The probe is over: its ping, if still unanswered, is forgotten (a late answer is dropped). */
static void probe_done(Upstream *u)
{
    UpstreamPending *p = u->probe_ping_id ? idmap_get(&u->pending, u->probe_ping_id) : NULL;

    u->probe_id = 0;
    u->probe_ping_id = 0;
    if (p)
        fail_pending(p, UPSTREAM_CANCELLED, "the era probe is over");
}

/* Why a probe that timed out did (to free): what the server did and did not answer. */
static char *probe_silence(const Upstream *u, const UpstreamReply *r)
{
    if (u->probe_alive)
        return xasprintf("it answered ping but not server/discover within %d ms more (a 2025 "
                         "server that drops unknown methods)",
                         UPSTREAM_DISCOVER_GRACE_MS);
    if (u->stdio && u->pin == PROTOCOL_AUTO)
        return xasprintf("it answered neither server/discover nor ping in %d ms (or half its "
                         "\"timeout\", if shorter)",
                         UPSTREAM_DISCOVER_SILENCE_MS);
    return xasprintf("server/discover failed: %s", r->message);
}

static void on_discover(Upstream *u, void *ctx, const UpstreamReply *r)
{
    _cleanup_free_ char *why = NULL;

    (void)ctx;
    if (r->outcome == UPSTREAM_CANCELLED || u->dead || u->closed)
        return;
    probe_done(u);
    if (r->outcome == UPSTREAM_OK && offers_modern(json_get(r->result, "supportedVersions")))
        return become_modern(u, r->result);
    if (r->outcome == UPSTREAM_ERROR && r->code == MCP_ERROR_UNSUPPORTED_PROTOCOL_VERSION &&
        offers_modern(json_get(r->data, "supported")) &&
        u->discover_tries < UPSTREAM_DISCOVER_TRIES_MAX)
        return send_discover(u); /* a recognised modern error naming our version: once more */
    if (r->outcome == UPSTREAM_OK)
        why = xasprintf("its server/discover result does not offer %s", MCP_PROTOCOL_2026_07_28);
    else if (r->outcome == UPSTREAM_ERROR)
        why = xasprintf("server/discover failed: MCP error %" PRId64 ": %s", r->code, r->message);
    else
        why = probe_silence(u, r);
    if (u->pin == PROTOCOL_MODERN) {
        _cleanup_free_ char *msg =
            xasprintf("%s, and its \"protocol\" is pinned to %s", why, MCP_PROTOCOL_2026_07_28);
        if (u->ev.closed)
            u->ev.closed(u->userdata, msg);
        return;
    }
    log_full(LOG_INFO, u->name, "connect", "%s: speaking the 2025 era (initialize)", why);
    send_initialize(u);
}

/*
 * The ping behind a stdio probe was answered (a result or any error: the server is up and read
 * the probe before it). A probe still waiting gets the grace bound, unless its own ends sooner.
 */
static void on_probe_ping(Upstream *u, void *ctx, const UpstreamReply *r)
{
    UpstreamPending *p;
    uint64_t at;

    (void)ctx;
    if (r->outcome != UPSTREAM_OK && r->outcome != UPSTREAM_ERROR)
        return; /* cancelled (probe_done), closed, or timed out with the probe */
    u->probe_ping_id = 0;
    if (u->dead || u->closed || !u->probe_id || !(p = idmap_get(&u->pending, u->probe_id)))
        return;
    u->probe_alive = true;
    at = turn_now_ms() + UPSTREAM_DISCOVER_GRACE_MS;
    if (!p->deadline.at_ms || at < p->deadline.at_ms) {
        p->timeout_ms = UPSTREAM_DISCOVER_GRACE_MS;
        deadline_set(&u->deadlines, &p->deadline, at);
    }
    log_full(LOG_DEBUG, u->name, "connect",
             "it answers ping: server/discover gets %d ms more before initialize",
             UPSTREAM_DISCOVER_GRACE_MS);
}

static void send_discover(Upstream *u)
{
    int64_t bound = u->timeout_ms > 0 ? u->timeout_ms : UPSTREAM_DISCOVER_SILENCE_MS;
    bool ping = u->pin == PROTOCOL_AUTO && u->stdio && !u->discover_tries;
    int r;

    if (u->pin == PROTOCOL_AUTO && u->stdio)
        bound = MIN(u->timeout_ms > 0 ? u->timeout_ms / 2 : bound, UPSTREAM_DISCOVER_SILENCE_MS);
    u->discover_tries++;
    r = upstream_request(u, "server/discover", json_object_new(), bound, 0, on_discover, NULL,
                         &u->probe_id);
    if (r < 0) {
        log_full(LOG_DEBUG, u->name, "connect", "cannot send server/discover: %s", strerror(-r));
        return;
    }
    /* Bounded by the probe: probe_done drops it when the probe is over. */
    if (ping && upstream_request(u, "ping", NULL, 0, 0, on_probe_ping, NULL, &u->probe_ping_id) < 0)
        u->probe_ping_id = 0;
}

int upstream_start(Upstream **up, struct event_base *base, const ServerConfig *cfg,
                   const char *default_cwd, int64_t max_call_timeout_ms, const UpstreamEvents *ev,
                   void *userdata, char **whyp)
{
    static uint64_t next_upstream_id;
    TransportCallbacks cb = {on_message, on_transport_closed, on_transport_auth};
    Upstream *u = xcalloc(1, sizeof(*u));
    int r;

    u->id = ++next_upstream_id;
    u->name = xstrdup(cfg->name);
    u->base = base;
    u->ev = *ev;
    u->userdata = userdata;
    u->max_call_timeout_ms = max_call_timeout_ms;
    u->ev_listen = evtimer_new(base, on_listen_timer, u);
    loglimit_init(&u->stray_log, base, cfg->name, "protocol", "more such messages", STRAY_LOG_BURST,
                  STRAY_LOG_RATE);
    if (cfg->type == TRANSPORT_STDIO)
        r = transport_stdio_new(&u->transport, base, cfg, default_cwd, &cb, u, whyp);
    else
        r = transport_http_new(&u->transport, base, cfg, max_call_timeout_ms, &cb, u, whyp);
    if (r < 0) {
        event_free(u->ev_listen);
        loglimit_deinit(&u->stray_log);
        free(u->name);
        free(u);
        return r;
    }
    deadline_init(&u->deadlines, base, on_request_timeout, u);
    /* Freed requests kept for the next: a hundred agents' calls in flight, ~14 KiB at most. */
    u->pending_pool = (Pool)POOL_INIT(UpstreamPending, 128);
    u->pin = cfg->protocol;
    u->timeout_ms = cfg->timeout_ms;
    u->stdio = cfg->type == TRANSPORT_STDIO;
    u->era_key = era_key(cfg->hash);
    if (cfg->protocol == PROTOCOL_LEGACY ||
        (cfg->protocol == PROTOCOL_AUTO && era_recall(u->era_key) == UPSTREAM_ERA_LEGACY))
        send_initialize(u);
    else
        send_discover(u);
    *up = u;
    return 0;
}

typedef struct ListCtx {
    UpstreamReplyFn fn;
    void *ctx;
    const char *method; /* tools/list, prompts/list, resources/list, resources/templates/list */
    const char *key;    /* the result's array: tools, prompts, resources, resourceTemplates */
    yajl_val tools;
    char *cursor;
    int64_t timeout_ms;
    UpstreamListLimits lim;
    int64_t pages, bytes;
    IdMap seen;         /* hashes of the cursors already asked for: a repeat is a loop */
    char *note;         /* the bound that cut the list short, or NULL */
    int64_t ttl_ms;     /* modern: the smallest ttlMs of the pages, or -1 for none */
    bool private_scope; /* modern: a page said cacheScope "private" */
} ListCtx;

/* A list's freshness ran out: the owner re-lists it as it would on list_changed. */
static void on_list_ttl(evutil_socket_t fd, short what, void *arg)
{
    UpstreamListTtl *t = arg;
    Upstream *u = t->u;

    (void)fd, (void)what;
    log_full(LOG_DEBUG, u->name, "list", "%s is past its ttlMs: listing it again",
             ttl_lists[t->kind].method);
    if (!u->closed && !u->dead && u->ev.notification)
        u->ev.notification(u->userdata, ttl_lists[t->kind].changed, NULL);
}

/* Note a page's ttlMs and cacheScope (2026-07-28 list results). */
static void list_note_cache(ListCtx *lc, yajl_val result)
{
    yajl_val ttl = json_get(result, "ttlMs");

    if (YAJL_IS_INTEGER(ttl) && ttl->u.number.i >= 0 &&
        (lc->ttl_ms < 0 || ttl->u.number.i < lc->ttl_ms))
        lc->ttl_ms = ttl->u.number.i;
    if (streq(json_get_string(result, "cacheScope"), "private"))
        lc->private_scope = true;
}

/*
 * The whole list is in: a ttlMs above 0 arms its re-list (0 means "do not cache", which the
 * live list, replaced on every change, already honours), and the result says both.
 */
static void list_apply_cache(Upstream *u, ListCtx *lc, yajl_val result)
{
    struct timeval tv;

    if (lc->ttl_ms < 0)
        return;
    json_object_set(result, "ttlMs", json_int_new(lc->ttl_ms));
    json_object_set(result, "cacheScope",
                    json_string_new(lc->private_scope ? "private" : "public"));
    for (unsigned k = 0; k < N_ELEMENTS(ttl_lists); k++) {
        int64_t ms = MAX(lc->ttl_ms, LIST_TTL_MIN_MS);
        if (!streq(ttl_lists[k].method, lc->method) || lc->ttl_ms == 0)
            continue;
        if (!u->ttl[k].ev) {
            u->ttl[k].u = u;
            u->ttl[k].kind = k;
            u->ttl[k].ev = evtimer_new(u->base, on_list_ttl, &u->ttl[k]);
        }
        tv.tv_sec = ms / 1000;
        tv.tv_usec = (ms % 1000) * 1000;
        evtimer_add(u->ttl[k].ev, &tv);
    }
}

static void list_finish(Upstream *u, ListCtx *lc, const UpstreamReply *r)
{
    lc->fn(u, lc->ctx, r);
    json_free(lc->tools);
    free(lc->cursor);
    free(lc->note);
    idmap_deinit(&lc->seen);
    free(lc);
}

static void list_fail(Upstream *u, ListCtx *lc, const char *message)
{
    UpstreamReply bad = {
        .outcome = UPSTREAM_ERROR, .code = JSONRPC_INVALID_REQUEST, .message = message};
    list_finish(u, lc, &bad);
}

static void list_page(Upstream *u, ListCtx *lc);

static void list_note_tools(ListCtx *lc)
{
    lc->note = xasprintf("the server lists more than %" PRId64 " %s; only the first %" PRId64
                         " are served (raise maxToolsPerServer in mcpd.json to see more)",
                         lc->lim.max_tools, lc->key, lc->lim.max_tools);
}

/* Take the named tools of one page, up to the bound; false once the bound cut it short. */
static bool list_take(Upstream *u, ListCtx *lc, yajl_val tools)
{
    for (size_t i = 0; i < tools->u.array.len; i++) {
        yajl_val t = tools->u.array.values[i];
        const char *bad;
        if (upstream_is_modern(u) && streq(lc->key, "tools") && (bad = tool_headers_problem(t))) {
            log_full(LOG_WARNING, u->name, "list", "tool %.100s is not served: it has %s",
                     json_get_string(t, "name") ?: "(no name)", bad);
            continue;
        }
        if (!YAJL_IS_OBJECT(t) ||
            !json_get_string(t, streq(lc->key, "resources")           ? "uri"
                                : streq(lc->key, "resourceTemplates") ? "uriTemplate"
                                                                      : "name"))
            continue;
        if ((int64_t)json_array_len(lc->tools) >= lc->lim.max_tools) {
            list_note_tools(lc);
            return false;
        }
        /* Moved, not copied: the page is the message's own tree, freed after this callback. */
        json_array_push(lc->tools, t);
        tools->u.array.values[i] = NULL;
    }
    return true;
}

/* Whether to fetch another page: false when a bound stops the list (with lc->note). */
static bool list_want_more(ListCtx *lc)
{
    if ((int64_t)json_array_len(lc->tools) >= lc->lim.max_tools)
        list_note_tools(lc);
    else if (lc->pages >= lc->lim.max_pages)
        lc->note = xasprintf("%s stopped after %" PRId64
                             " pages; the rest is not served (raise maxListPages in mcpd.json)",
                             lc->method, lc->pages);
    else if (lc->bytes >= lc->lim.max_bytes)
        lc->note = xasprintf("%s stopped after %" PRId64
                             " bytes; the rest is not served (raise maxListBytes in mcpd.json)",
                             lc->method, lc->bytes);
    return !lc->note;
}

static void on_list_page(Upstream *u, void *ctx, const UpstreamReply *r)
{
    ListCtx *lc = ctx;
    yajl_val tools, result;
    const char *next;

    if (r->outcome != UPSTREAM_OK)
        return list_finish(u, lc, r);
    lc->pages++;
    lc->bytes += (int64_t)u->message_len;
    list_note_cache(lc, r->result);
    tools = json_get_array(r->result, lc->key);
    if (!tools) {
        _cleanup_free_ char *msg = xasprintf("%s result has no \"%s\" array", lc->method, lc->key);
        return list_fail(u, lc, msg);
    }
    next = json_get_string(r->result, "nextCursor");
    if (list_take(u, lc, tools) && next && *next && list_want_more(lc)) {
        /* Never 0, the key idmap may not hold. */
        uint64_t key = hash_fnv1a(next, strlen(next)) | 1;
        if (idmap_get(&lc->seen, key)) {
            _cleanup_free_ char *msg =
                xasprintf("%s paging loops: the server gave cursor \"%.100s\" twice (page %" PRId64
                          "); this is a bug in the server",
                          lc->method, next, lc->pages);
            return list_fail(u, lc, msg);
        }
        idmap_put(&lc->seen, key, lc);
        free(lc->cursor);
        lc->cursor = xstrdup(next);
        return list_page(u, lc);
    }
    result = json_object_new();
    json_object_set(result, lc->key, lc->tools);
    lc->tools = NULL;
    list_apply_cache(u, lc, result);
    UpstreamReply ok = {.outcome = UPSTREAM_OK, .result = result, .message = lc->note};
    list_finish(u, lc, &ok);
    json_free(result);
}

static void list_page(Upstream *u, ListCtx *lc)
{
    yajl_val params = NULL;
    int r;

    if (lc->cursor) {
        params = json_object_new();
        json_object_set(params, "cursor", json_string_new(lc->cursor));
    }
    r = upstream_request(u, lc->method, params, lc->timeout_ms, false, on_list_page, lc, NULL);
    if (r < 0) {
        UpstreamReply closed = {.outcome = UPSTREAM_CLOSED, .message = "Transport not connected"};
        list_finish(u, lc, &closed);
    }
}

void upstream_list_tools(Upstream *u, int64_t timeout_ms, const UpstreamListLimits *lim,
                         UpstreamReplyFn fn, void *ctx)
{
    upstream_list(u, "tools/list", "tools", "tools", timeout_ms, lim, fn, ctx);
}

void upstream_list(Upstream *u, const char *method, const char *key, const char *capability,
                   int64_t timeout_ms, const UpstreamListLimits *lim, UpstreamReplyFn fn, void *ctx)
{
    ListCtx *lc = xcalloc(1, sizeof(*lc));

    lc->fn = fn;
    lc->ctx = ctx;
    lc->method = method;
    lc->key = key;
    lc->tools = json_array_new();
    lc->timeout_ms = timeout_ms;
    lc->lim = *lim;
    lc->ttl_ms = -1;
    if (!json_get(u->capabilities, capability)) {
        /* No such capability: the seed's listTools returns [] without asking. */
        yajl_val result = json_object_new();
        json_object_set(result, key, json_array_new());
        UpstreamReply ok = {.outcome = UPSTREAM_OK, .result = result};
        list_finish(u, lc, &ok);
        json_free(result);
        return;
    }
    list_page(u, lc);
}

static void on_free(evutil_socket_t fd, short what, void *arg)
{
    Upstream *u = arg;

    (void)fd, (void)what;
    event_free(u->ev_free);
    event_free(u->ev_listen);
    json_free(u->listen_uris);
    loglimit_deinit(&u->stray_log);
    for (size_t k = 0; k < N_ELEMENTS(u->ttl); k++)
        if (u->ttl[k].ev)
            event_free(u->ttl[k].ev);
    idmap_deinit(&u->pending);
    deadline_deinit(&u->deadlines);
    pool_drain(&u->pending_pool);
    idmap_deinit(&u->wire_ids);
    json_free(u->server_info);
    json_free(u->capabilities);
    free(u->protocol_version);
    free(u->instructions);
    free(u->name);
    strbuf_deinit(&u->scratch);
    free(u);
}

void upstream_close(Upstream *u)
{
    size_t pos = 0;
    void *v;

    if (!u || u->closed)
        return;
    u->closed = true;
    u->ev = (UpstreamEvents){0};
    evtimer_del(u->ev_listen);
    for (size_t k = 0; k < N_ELEMENTS(u->ttl); k++)
        if (u->ttl[k].ev)
            evtimer_del(u->ttl[k].ev);
    while (idmap_next(&u->pending, &pos, NULL, &v))
        fail_pending(v, UPSTREAM_CLOSED, "Transport closed");
    transport_close(u->transport);
    u->transport = NULL;
    u->ev_free = evtimer_new(u->base, on_free, u);
    event_active(u->ev_free, EV_TIMEOUT, 0);
}
