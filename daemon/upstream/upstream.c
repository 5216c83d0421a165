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
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/upstream.h"

static const char *const accepted_versions[] = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

typedef struct UpstreamPending {
    Upstream *u;
    uint64_t id;
    UpstreamReplyFn fn;
    void *ctx;
    struct event *timer;
    int64_t timeout_ms;
    uint64_t deadline_cap_ms; /* hard cap for progress-extended calls, monotonic */
    bool progress;
    bool raw; /* a plain result may be delivered as text */
} UpstreamPending;

static void pending_free(UpstreamPending *p)
{
    if (p->timer)
        event_free(p->timer);
    free(p);
}

/* Remove p from the table and deliver its one reply. */
static void pending_finish(UpstreamPending *p, const UpstreamReply *reply)
{
    Upstream *u = p->u;

    idmap_remove(&u->pending, p->id);
    if (p->raw)
        u->n_raw_pending--;
    p->fn(u, p->ctx, reply);
    pending_free(p);
}

static void fail_pending(UpstreamPending *p, UpstreamOutcome outcome, const char *message)
{
    UpstreamReply r = {.outcome = outcome, .code = -32000, .message = message};
    pending_finish(p, &r);
}

static int send_line(Upstream *u, StrBuf *sb)
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

static void on_request_timeout(evutil_socket_t fd, short what, void *arg)
{
    UpstreamPending *p = arg;
    Upstream *u = p->u;
    _cleanup_free_ char *msg = xasprintf("Request timed out after %" PRId64 "ms", p->timeout_ms);
    yajl_val params = json_object_new();

    (void)fd, (void)what;
    /* The lifecycle page: on timeout, cancel upstream and stop waiting. */
    json_object_set(params, "requestId", json_int_new((int64_t)p->id));
    json_object_set(params, "reason", json_string_new("timeout"));
    upstream_notify(u, "notifications/cancelled", params);
    fail_pending(p, UPSTREAM_TIMEOUT, msg);
}

static void arm_timer(UpstreamPending *p)
{
    int64_t ms = p->timeout_ms;
    struct timeval tv;

    if (ms <= 0)
        return;
    if (p->deadline_cap_ms) {
        uint64_t now = now_ms();
        int64_t left = p->deadline_cap_ms > now ? (int64_t)(p->deadline_cap_ms - now) : 0;
        ms = MIN(ms, left);
    }
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    if (!p->timer)
        p->timer = evtimer_new(p->u->base, on_request_timeout, p);
    evtimer_add(p->timer, &tv);
}

/* Record a request that has been sent. */
static void pending_add(Upstream *u, uint64_t id, int64_t timeout_ms, unsigned flags,
                        UpstreamReplyFn fn, void *ctx)
{
    UpstreamPending *p = xcalloc(1, sizeof(*p));

    p->u = u;
    p->id = id;
    p->fn = fn;
    p->ctx = ctx;
    p->timeout_ms = timeout_ms;
    p->progress = flags & UPSTREAM_PROGRESS;
    p->raw = flags & UPSTREAM_RAW;
    u->n_raw_pending += p->raw;
    if (p->progress && u->max_call_timeout_ms > 0)
        p->deadline_cap_ms = now_ms() + (uint64_t)u->max_call_timeout_ms;
    arm_timer(p);
    idmap_put(&u->pending, id, p);
}

int upstream_request(Upstream *u, const char *method, yajl_val params, int64_t timeout_ms,
                     unsigned flags, UpstreamReplyFn fn, void *ctx, uint64_t *idp)
{
    uint64_t id = ++u->next_id;
    int r;

    if (flags & UPSTREAM_PROGRESS) {
        yajl_val meta = json_get_object(params, "_meta");
        if (!meta) {
            meta = json_object_new();
            json_object_set(params, "_meta", meta);
        }
        json_object_set(meta, "progressToken", json_int_new((int64_t)id));
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

/* Decimal digits of v, without the printf machinery: two of these run per call. */
static void put_u64(StrBuf *sb, uint64_t v)
{
    char digits[20], *p = digits + sizeof(digits);

    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10));
    strbuf_append(sb, p, (size_t)(digits + sizeof(digits) - p));
}

int upstream_request_text(Upstream *u, const char *method, const char *meta, const char *body,
                          int64_t timeout_ms, unsigned flags, UpstreamReplyFn fn, void *ctx,
                          uint64_t *idp)
{
    uint64_t id = ++u->next_id;
    StrBuf *sb = &u->scratch;
    bool has_meta = meta && *meta;
    int r;

    strbuf_reset(sb);
    strbuf_puts(sb, "{\"jsonrpc\":\"2.0\",\"id\":");
    put_u64(sb, id);
    strbuf_puts(sb, ",\"method\":");
    json_write_string(sb, method, strlen(method));
    strbuf_puts(sb, ",\"params\":{");
    if (flags & UPSTREAM_PROGRESS) {
        strbuf_puts(sb, "\"_meta\":{\"progressToken\":");
        put_u64(sb, id);
        if (has_meta) {
            strbuf_putc(sb, ',');
            strbuf_puts(sb, meta);
        }
        strbuf_putc(sb, '}');
    } else if (has_meta)
        strbuf_printf(sb, "\"_meta\":{%s}", meta);
    if (body && *body) {
        if ((flags & UPSTREAM_PROGRESS) || has_meta)
            strbuf_putc(sb, ',');
        strbuf_puts(sb, body);
    }
    strbuf_puts(sb, "}}\n");
    r = send_line(u, sb);
    if (r < 0)
        return r;
    pending_add(u, id, timeout_ms, flags, fn, ctx);
    if (idp)
        *idp = id;
    return 0;
}

void upstream_cancel(Upstream *u, uint64_t id, const char *reason)
{
    UpstreamPending *p = idmap_get(&u->pending, id);
    yajl_val params;

    if (!p)
        return;
    params = json_object_new();
    json_object_set(params, "requestId", json_int_new((int64_t)id));
    if (reason)
        json_object_set(params, "reason", json_string_new(reason));
    upstream_notify(u, "notifications/cancelled", params);
    fail_pending(p, UPSTREAM_CANCELLED, reason ? reason : "cancelled");
}

static void handle_response(Upstream *u, JsonrpcMsg *m)
{
    UpstreamPending *p;
    UpstreamReply r = {0};

    if (!YAJL_IS_INTEGER(m->id) || m->id->u.number.i <= 0 ||
        !(p = idmap_get(&u->pending, (uint64_t)m->id->u.number.i))) {
        /* Late answers to timed-out or cancelled requests land here: drop them. */
        log_debug("[%s] response for unknown request id dropped", u->name);
        return;
    }
    if (m->kind == JSONRPC_RESPONSE) {
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
        arm_timer(p);
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
        !jsonscan_is_int(v[1], &id) || id <= 0 || !(p = idmap_get(&u->pending, (uint64_t)id)) ||
        !p->raw)
        return false;
    UpstreamReply r = {.outcome = UPSTREAM_OK, .raw = v[2].p, .raw_len = v[2].n};
    pending_finish(p, &r);
    return true;
}

static void on_message(void *userdata, char *line, size_t len)
{
    Upstream *u = userdata;
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;
    int r;

    u->message_len = len;
    if (fast_response(u, line, len))
        return;
    r = jsonrpc_msg_parse(&m, line, len, &err);
    if (r != 0) {
        /* One bad line is the server's bug, not a reason to drop the session (seed bug B9). */
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
        if (u->ev.notification && !u->closed)
            u->ev.notification(u->userdata, m.method, m.params);
        break;
    }
    jsonrpc_msg_deinit(&m);
}

static void on_transport_closed(void *userdata, const char *reason)
{
    Upstream *u = userdata;
    size_t pos = 0;
    void *v;

    if (u->closed || u->dead)
        return;
    u->dead = true;
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

static bool version_accepted(const char *v)
{
    for (size_t i = 0; accepted_versions[i]; i++)
        if (streq(v, accepted_versions[i]))
            return true;
    return false;
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
    else if (!version_accepted(version))
        why = msg = xasprintf("server answered protocol version \"%s\", which mcpd does not speak",
                              version);
    if (why) {
        if (u->ev.closed)
            u->ev.closed(u->userdata, why);
        return;
    }
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
    yajl_val p = json_object_new(), info = json_object_new(), caps = json_object_new();

    json_object_set(info, "name", json_string_new("mcpd"));
    json_object_set(info, "version", json_string_new(MCPD_VERSION));
    /*
     * roots: mcpd answers from the workspace root when no agent does. sampling and elicitation
     * go to the agent whose call caused them; with none that can, the server gets -32601.
     */
    json_object_set(caps, "roots", json_object_new());
    json_object_set(caps, "sampling", json_object_new());
    json_object_set(caps, "elicitation", json_object_new());
    json_object_set(p, "protocolVersion", json_string_new(UPSTREAM_PROTOCOL_VERSION));
    json_object_set(p, "capabilities", caps);
    json_object_set(p, "clientInfo", info);
    return p;
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
    if (cfg->type == TRANSPORT_STDIO)
        r = transport_stdio_new(&u->transport, base, cfg, default_cwd, &cb, u, whyp);
    else
        r = transport_http_new(&u->transport, base, cfg, max_call_timeout_ms, &cb, u, whyp);
    if (r < 0) {
        free(u->name);
        free(u);
        return r;
    }
    /*
     * A child that died at once makes this write fail (EPIPE); its exit is reported by the
     * transport like any other, so the failure is handled there, with the exit status.
     */
    r = upstream_request(u, "initialize", initialize_params(), cfg->timeout_ms, false,
                         on_initialize, NULL, NULL);
    if (r < 0)
        log_full(LOG_DEBUG, u->name, "connect", "cannot send initialize: %s", strerror(-r));
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
    IdMap seen; /* hashes of the cursors already asked for: a repeat is a loop */
    char *note; /* the bound that cut the list short, or NULL */
} ListCtx;

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
static bool list_take(ListCtx *lc, yajl_val tools)
{
    for (size_t i = 0; i < tools->u.array.len; i++) {
        yajl_val t = tools->u.array.values[i];
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
    tools = json_get_array(r->result, lc->key);
    if (!tools) {
        _cleanup_free_ char *msg = xasprintf("%s result has no \"%s\" array", lc->method, lc->key);
        return list_fail(u, lc, msg);
    }
    next = json_get_string(r->result, "nextCursor");
    if (list_take(lc, tools) && next && *next && list_want_more(lc)) {
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
    idmap_deinit(&u->pending);
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
    while (idmap_next(&u->pending, &pos, NULL, &v))
        fail_pending(v, UPSTREAM_CLOSED, "Transport closed");
    transport_close(u->transport);
    u->transport = NULL;
    u->ev_free = evtimer_new(u->base, on_free, u);
    event_active(u->ev_free, EV_TIMEOUT, 0);
}
