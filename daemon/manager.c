// SPDX-License-Identifier: MIT
// manager: upstream servers and their lifecycle (connect pipeline, start-up gate, tools, calls).

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/cache.h"
#include "daemon/manager.h"
#include "daemon/naming.h"

/* A tools/list waiting for the start-up gate. */
typedef struct ListWaiter {
    uint64_t peer_id;
    yajl_val id;
    struct ListWaiter *next;
} ListWaiter;

/* An mcpd/wait request. */
typedef struct ServerWaiter {
    Manager *m;
    uint64_t peer_id;
    yajl_val id;
    uint64_t server_id;
    struct event *timer;
    struct ServerWaiter *next;
} ServerWaiter;

/* A tools/call from an agent, from arrival to its one reply. */
typedef struct Call {
    uint64_t id;
    Manager *m;
    uint64_t peer_id;
    yajl_val orig_id;
    uint64_t server_id;
    char *tool;           /* the upstream's name */
    yajl_val params;      /* what goes upstream: name, arguments, _meta */
    uint64_t upstream_id; /* the Upstream it went to, and its request id there */
    uint64_t request_id;
    bool waiting; /* for its server to connect */
    struct event *ev_wait;
    yajl_val progress_token; /* the agent's own, or NULL: progress goes back under it */
} Call;

const char *server_state_name(ServerState s)
{
    static const char *const names[] = {
        [SERVER_DISABLED] = "disabled",   [SERVER_CONNECTING] = "connecting",
        [SERVER_CONNECTED] = "connected", [SERVER_FAILED] = "failed",
        [SERVER_BACKOFF] = "backoff",     [SERVER_STOPPED] = "stopped",
    };
    return names[s];
}

static void tv_ms(struct timeval *tv, int64_t ms)
{
    tv->tv_sec = ms / 1000;
    tv->tv_usec = (ms % 1000) * 1000;
}

static void ws_changed(Manager *m);
static void ws_check_gate(Manager *m);
static void server_connect(Server *s);
static void calls_server_settled(Server *s);
static void waiters_server_settled(Server *s);

static void server_set_state(Server *s, ServerState st, const char *error)
{
    if (s->state != st)
        log_full(st == SERVER_FAILED ? LOG_WARNING : LOG_INFO, s->cfg->name, "state",
                 "%s -> %s%s%s", server_state_name(s->state), server_state_name(st),
                 error ? ": " : "", error ? error : "");
    s->state = st;
    s->since_wall_ms = wall_ms();
    if (s->m->on_change)
        s->m->on_change(s->m->on_change_ud);
    if (error) {
        free(s->last_error);
        s->last_error = xstrdup(error);
    }
}

static Server *server_by_name(Manager *m, const char *name)
{
    for (size_t i = 0; i < m->n_order; i++)
        if (streq(m->order[i]->cfg->name, name))
            return m->order[i];
    return NULL;
}

/* ---- replies to agents ---- */

static void reply_result(Manager *m, uint64_t peer_id, yajl_val id, yajl_val result)
{
    Peer *p = peer_get(m->peers, peer_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return;
    jsonrpc_write_result(&sb, id, result);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

static void reply_error(Manager *m, uint64_t peer_id, yajl_val id, int code, const char *msg)
{
    Peer *p = peer_get(m->peers, peer_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return;
    jsonrpc_write_error(&sb, id, code, msg, NULL);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

/*
 * Everything that is not a tool result becomes one, as the seed's tool bridge does: the text
 * the model reads, and the original error for programs under _meta["mcpd/error"].
 */
static yajl_val error_result(int64_t code, const char *message, yajl_val data)
{
    yajl_val r = json_object_new(), content = json_array_new(), text = json_object_new();
    yajl_val meta = json_object_new(), err = json_object_new();
    _cleanup_free_ char *t = xasprintf("MCP error: %s", message);

    json_object_set(text, "type", json_string_new("text"));
    json_object_set(text, "text", json_string_new(t));
    json_array_push(content, text);
    json_object_set(r, "content", content);
    json_object_set(r, "isError", json_bool_new(true));
    json_object_set(err, "code", json_int_new(code));
    json_object_set(err, "message", json_string_new(message));
    if (data)
        json_object_set(err, "data", json_copy(data));
    json_object_set(meta, "mcpd/error", err);
    json_object_set(r, "_meta", meta);
    return r;
}

/* ---- calls ---- */

static void call_free(Call *c)
{
    Peer *p = peer_get(c->m->peers, c->peer_id);
    Server *s = idmap_get(&c->m->servers, c->server_id);

    idmap_remove(&c->m->calls, c->id);
    if (p && p->calls_in_flight)
        p->calls_in_flight--;
    if (s && s->calls_in_flight)
        s->calls_in_flight--;
    if (s)
        s->last_used_ms = now_ms();
    if (c->ev_wait)
        event_free(c->ev_wait);
    json_free(c->orig_id);
    json_free(c->params);
    json_free(c->progress_token);
    free(c->tool);
    free(c);
}

static void call_fail(Call *c, int64_t code, const char *message, yajl_val data)
{
    _cleanup_json_ yajl_val r = error_result(code, message, data);

    reply_result(c->m, c->peer_id, c->orig_id, r);
    call_free(c);
}

static void on_call_reply(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Call *c = ctx;
    Server *s = idmap_get(&c->m->servers, c->server_id);
    const char *name = s ? s->cfg->name : u->name;
    _cleanup_free_ char *msg = NULL;

    switch (r->outcome) {
    case UPSTREAM_OK:
        reply_result(c->m, c->peer_id, c->orig_id, r->result);
        call_free(c);
        return;
    case UPSTREAM_ERROR:
        msg = xasprintf("MCP error %" PRId64 ": %s", r->code, r->message);
        call_fail(c, r->code, msg, r->data);
        return;
    case UPSTREAM_TIMEOUT:
        call_fail(c, -32001, r->message, NULL);
        return;
    case UPSTREAM_CLOSED:
        msg =
            xasprintf("MCP server %s closed the connection during the call: %s", name, r->message);
        call_fail(c, -32000, msg, NULL);
        return;
    case UPSTREAM_CANCELLED:
        /* An abort stays an abort: the agent gets no response. */
        call_free(c);
        return;
    }
}

static void call_send(Call *c, Server *s)
{
    yajl_val params = c->params;
    int r;

    c->params = NULL;
    c->waiting = false;
    c->upstream_id = s->up->id;
    s->calls_total++;
    r = upstream_request(s->up, "tools/call", params, s->cfg->call_timeout_ms, true, on_call_reply,
                         c, &c->request_id);
    if (r < 0) {
        _cleanup_free_ char *msg =
            xasprintf("MCP server %s: cannot send the call: %s", s->cfg->name, strerror(-r));
        call_fail(c, -32000, msg, NULL);
    }
}

static void on_call_wait_timeout(evutil_socket_t fd, short what, void *arg)
{
    Call *c = arg;
    Server *s = idmap_get(&c->m->servers, c->server_id);
    _cleanup_free_ char *msg =
        xasprintf("MCP server %s did not connect in time%s%s", s ? s->cfg->name : "?",
                  s && s->last_error ? ": " : "", s && s->last_error ? s->last_error : "");

    (void)fd, (void)what;
    call_fail(c, -32001, msg, NULL);
}

/* Route a call by the server's state: run it, wait for the connection, or fail it. */
static void call_dispatch(Call *c, Server *s)
{
    _cleanup_free_ char *msg = NULL;

    if (s->state == SERVER_CONNECTED && s->up) {
        call_send(c, s);
        return;
    }
    if (s->state == SERVER_STOPPED && s->idle_stopped)
        server_connect(s); /* stopped for idleness: the next call brings it back */
    if (s->state == SERVER_CONNECTING || s->state == SERVER_BACKOFF) {
        /* A deferred tool: waitForConnection, bounded by the server's own timeout. */
        struct timeval tv;
        c->waiting = true;
        if (!c->ev_wait) {
            c->ev_wait = evtimer_new(c->m->base, on_call_wait_timeout, c);
            tv_ms(&tv, s->cfg->timeout_ms > 0 ? s->cfg->timeout_ms : CONFIG_DEFAULT_TIMEOUT_MS);
            evtimer_add(c->ev_wait, &tv);
        }
        return;
    }
    msg = xasprintf("MCP server not connected: %s (%s%s%s)", s->cfg->name,
                    server_state_name(s->state), s->last_error ? ": " : "",
                    s->last_error ? s->last_error : "");
    call_fail(c, MCPD_ERROR_UNAVAILABLE, msg, NULL);
}

/* A server left "connecting": run or fail the calls that waited for it. */
static void calls_server_settled(Server *s)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&s->m->calls, &pos, NULL, &v)) {
        Call *c = v;
        if (!c->waiting || c->server_id != s->id || s->state == SERVER_CONNECTING ||
            s->state == SERVER_BACKOFF)
            continue;
        event_del(c->ev_wait);
        call_dispatch(c, s);
    }
}

static const ViewTool *view_find(Manager *m, const char *name);

void manager_call_tool(Manager *m, Peer *p, yajl_val id, yajl_val params)
{
    const char *name = json_get_string(params, "name");
    yajl_val args = json_get(params, "arguments"), meta = json_get_object(params, "_meta");
    const ViewTool *vt = view_find(m, name);
    Server *s;
    Call *c;

    if (!vt || !(s = idmap_get(&m->servers, vt->server_id))) {
        _cleanup_free_ char *msg = xasprintf("Unknown tool: %s", name);
        reply_error(m, p->id, id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    if (args && !YAJL_IS_OBJECT(args)) {
        reply_error(m, p->id, id, JSONRPC_INVALID_PARAMS, "\"arguments\" must be an object");
        return;
    }
    c = xcalloc(1, sizeof(*c));
    c->id = ++m->next_call_id;
    c->m = m;
    c->peer_id = p->id;
    c->orig_id = json_copy(id);
    c->server_id = s->id;
    c->tool = xstrdup(vt->tool);
    c->params = json_object_new();
    json_object_set(c->params, "name", json_string_new(c->tool));
    json_object_set(c->params, "arguments", args ? json_copy(args) : json_object_new());
    if (meta) {
        /* _meta passes through; the progress token is mcpd's own upstream (rewritten). */
        yajl_val mc = json_copy(meta);
        c->progress_token = json_object_take(mc, "progressToken");
        json_object_set(c->params, "_meta", mc);
    }
    idmap_put(&m->calls, c->id, c);
    p->calls_in_flight++;
    s->calls_in_flight++;
    call_dispatch(c, s);
}

static Call *call_find(Manager *m, uint64_t peer_id, yajl_val orig_id)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&m->calls, &pos, NULL, &v)) {
        Call *c = v;
        if (c->peer_id == peer_id && json_equal(c->orig_id, orig_id))
            return c;
    }
    return NULL;
}

/* Stop a call without replying: cancelled upstream if it got there. */
static void call_abort(Call *c, const char *reason)
{
    Server *s = idmap_get(&c->m->servers, c->server_id);

    if (!c->waiting && s && s->up && s->up->id == c->upstream_id) {
        upstream_cancel(s->up, c->request_id, reason); /* frees c through on_call_reply */
        return;
    }
    call_free(c);
}

void manager_cancel(Manager *m, Peer *p, yajl_val request_id)
{
    Call *c = request_id ? call_find(m, p->id, request_id) : NULL;

    if (c)
        call_abort(c, "cancelled by the client");
}

void manager_peer_gone(Manager *m, Peer *p)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&m->calls, &pos, NULL, &v)) {
        Call *c = v;
        if (c->peer_id == p->id)
            call_abort(c, "client disconnected");
    }
}

/* ---- the tool view ---- */

static void view_clear(Workspace *ws)
{
    for (size_t i = 0; i < ws->n_view; i++)
        free(ws->view[i].name);
    free(ws->view);
    ws->view = NULL;
    ws->n_view = 0;
}

/* The tool as agents see it (DESIGN section 3). */
static yajl_val exposed_tool(const char *name, Server *s, yajl_val t)
{
    static const char *const copied[] = {"title", "outputSchema", "annotations", "icons"};
    const char *tool = json_get_string(t, "name"), *desc = json_get_string(t, "description");
    yajl_val o = json_object_new(), schema = json_get_object(t, "inputSchema"), meta;
    const char *prov = s->cfg->source.provider_name;

    json_object_set(o, "name", json_string_new(name));
    for (size_t i = 0; i < N_ELEMENTS(copied); i++)
        if (json_get(t, copied[i]))
            json_object_set(o, copied[i], json_copy(json_get(t, copied[i])));
    if (desc)
        json_object_set(o, "description", json_string_new(desc));
    else {
        _cleanup_free_ char *d = xasprintf("MCP tool from %s", s->cfg->name);
        json_object_set(o, "description", json_string_new(d));
    }
    schema = schema ? json_copy(schema) : json_object_new();
    if (!json_get(schema, "type"))
        json_object_set(schema, "type", json_string_new("object"));
    if (streq(json_get_string(schema, "type"), "object") && !json_get(schema, "properties"))
        json_object_set(schema, "properties", json_object_new());
    json_object_set(o, "inputSchema", schema);
    meta = json_copy(json_get_object(t, "_meta"));
    if (!meta)
        meta = json_object_new();
    _cleanup_free_ char *label = xasprintf("%s/%s", s->cfg->name, tool);
    _cleanup_free_ char *path =
        prov ? xasprintf("mcp:%s via %s", s->cfg->name, prov) : xasprintf("mcp:%s", s->cfg->name);
    json_object_set(meta, "mcpd/server", json_string_new(s->cfg->name));
    json_object_set(meta, "mcpd/tool", json_string_new(tool));
    json_object_set(meta, "mcpd/label", json_string_new(label));
    json_object_set(meta, "mcpd/path", json_string_new(path));
    json_object_set(meta, "mcpd/deferred", json_bool_new(s->tools_deferred));
    json_object_set(o, "_meta", meta);
    return o;
}

typedef struct Named {
    Server *s;
    yajl_val def;
} Named;

static void view_rebuild(Manager *m)
{
    Workspace *ws = &m->ws;
    size_t n = 0, k = 0;
    _cleanup_free_ Named *all = NULL;
    _cleanup_free_ NamingEntry *entries = NULL;

    view_clear(ws);
    strbuf_reset(&ws->view_json);
    for (size_t i = 0; i < m->n_order; i++)
        n += json_array_len(m->order[i]->tools);
    all = xcalloc(n ? n : 1, sizeof(*all));
    entries = xcalloc(n ? n : 1, sizeof(*entries));
    for (size_t i = 0; i < m->n_order; i++) {
        Server *s = m->order[i];
        for (size_t j = 0; j < json_array_len(s->tools); j++, k++) {
            all[k].s = s;
            all[k].def = json_array_at(s->tools, j);
            entries[k].server = s->cfg->name;
            entries[k].tool = json_get_string(all[k].def, "name");
            entries[k].data = &all[k];
        }
    }
    naming_assign(entries, n); /* sorted by name on return */
    ws->n_collisions = 0;
    ws->view = xcalloc(n ? n : 1, sizeof(*ws->view));
    strbuf_puts(&ws->view_json, "{\"tools\":[");
    for (size_t i = 0; i < n; i++) {
        Named *nm = entries[i].data;
        yajl_val o = exposed_tool(entries[i].name, nm->s, nm->def);
        if (i)
            strbuf_putc(&ws->view_json, ',');
        json_write(&ws->view_json, o);
        json_free(o);
        ws->view[i].name = entries[i].name;
        ws->view[i].server_id = nm->s->id;
        ws->view[i].tool = entries[i].tool;
        ws->n_collisions += entries[i].collided != 0;
    }
    ws->n_view = n;
    strbuf_puts(&ws->view_json, "]}");
    ws->dirty = false;
}

static void view_ensure(Manager *m)
{
    if (m->ws.dirty || !m->ws.view_json.data)
        view_rebuild(m);
}

static int cmp_view_name(const void *key, const void *elem)
{
    return strcmp(key, ((const ViewTool *)elem)->name);
}

static const ViewTool *view_find(Manager *m, const char *name)
{
    view_ensure(m);
    if (!name || !m->ws.n_view)
        return NULL;
    return bsearch(name, m->ws.view, m->ws.n_view, sizeof(ViewTool), cmp_view_name);
}

static void on_notify(evutil_socket_t fd, short what, void *arg)
{
    Manager *m = arg;
    char hash[2 * SHA256_DIGEST_SIZE + 1];
    StrBuf sb = STRBUF_INIT;

    (void)fd, (void)what;
    view_ensure(m);
    sha256_hex(hash, m->ws.view_json.data, m->ws.view_json.len);
    if (streq(hash, m->ws.notified_hash))
        return;
    memcpy(m->ws.notified_hash, hash, sizeof(hash));
    jsonrpc_write_notification(&sb, "notifications/tools/list_changed", NULL);
    for (Peer *p = m->peers->first; p; p = p->next)
        if (p->initialized)
            peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
    log_debug("tool view changed: %zu tools; agents notified", m->ws.n_view);
}

/* Some server's tool slice changed: rebuild lazily, tell agents once per burst. */
static void ws_changed(Manager *m)
{
    struct timeval tv;

    m->ws.dirty = true;
    if (m->shutting_down || evtimer_pending(m->ev_notify, NULL))
        return;
    tv_ms(&tv, LIST_CHANGED_COALESCE_MS);
    evtimer_add(m->ev_notify, &tv);
}

/* ---- the start-up gate ---- */

/*
 * A tools/list may be answered when no server is connecting, or once startupTimeoutMs has
 * passed and every server still connecting has stand-in tools to show (deferred). Servers
 * with nothing to show are waited for, each bounded by its own timeout.
 */
static bool ws_gate_open(Manager *m)
{
    bool past = now_ms() >= m->ws.connect_started_ms + (uint64_t)m->settings.startup_timeout_ms;

    for (size_t i = 0; i < m->n_order; i++) {
        Server *s = m->order[i];
        if (s->state != SERVER_CONNECTING)
            continue;
        if (!past || !s->tools)
            return false;
    }
    return true;
}

static void ws_check_gate(Manager *m)
{
    ListWaiter *w;

    if (!m->ws.waiters || !ws_gate_open(m))
        return;
    view_ensure(m);
    while ((w = m->ws.waiters)) {
        Peer *p = peer_get(m->peers, w->peer_id);
        m->ws.waiters = w->next;
        if (p) {
            StrBuf sb = STRBUF_INIT;
            jsonrpc_write_result_raw(&sb, w->id, m->ws.view_json.data, m->ws.view_json.len);
            peer_send_sb(p, &sb);
            strbuf_deinit(&sb);
        }
        json_free(w->id);
        free(w);
    }
}

static void on_gate(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    ws_check_gate(arg);
}

void manager_list_tools(Manager *m, Peer *p, yajl_val id)
{
    ListWaiter *w, **tail;

    if (ws_gate_open(m)) {
        StrBuf sb = STRBUF_INIT;
        view_ensure(m);
        jsonrpc_write_result_raw(&sb, id, m->ws.view_json.data, m->ws.view_json.len);
        peer_send_sb(p, &sb);
        strbuf_deinit(&sb);
        return;
    }
    w = xcalloc(1, sizeof(*w));
    w->peer_id = p->id;
    w->id = json_copy(id);
    for (tail = &m->ws.waiters; *tail; tail = &(*tail)->next)
        ;
    *tail = w;
}

/* ---- server lifecycle ---- */

static void server_clear_timers(Server *s)
{
    event_del(s->ev_connect_timeout);
    event_del(s->ev_retry);
    event_del(s->ev_health);
    s->ping_in_flight = false;
}

/* The health tick runs at the ping interval, or the idle timeout, whichever is shorter. */
static void server_arm_health(Server *s)
{
    int64_t ping = s->cfg->ping_interval_ms,
            idle = s->cfg->type == TRANSPORT_STDIO ? s->cfg->idle_timeout_ms : 0;
    int64_t ms = ping && idle ? MIN(ping, idle) : ping ? ping : idle;
    struct timeval tv;

    if (ms <= 0 || s->state != SERVER_CONNECTED)
        return;
    tv_ms(&tv, ms);
    evtimer_add(s->ev_health, &tv);
}

/* Close the session, if any; the transport finishes shutting down in the background. */
static void server_close_upstream(Server *s)
{
    Upstream *u = s->up;

    s->up = NULL;
    upstream_close(u);
}

/* Any change of "connecting": waiting calls, mcpd/wait, the gate, the view. */
static void server_settled(Server *s)
{
    calls_server_settled(s);
    waiters_server_settled(s);
    ws_changed(s->m);
    ws_check_gate(s->m);
}

static bool breaker_tripped(Server *s)
{
    uint64_t now = now_ms();

    s->failures[s->n_failures++ % BREAKER_FAILURES] = now;
    if (s->n_failures < BREAKER_FAILURES)
        return false;
    /* The oldest of the last five is the slot we write next. */
    return now - s->failures[s->n_failures % BREAKER_FAILURES] <= BREAKER_WINDOW_MS;
}

/*
 * A connect attempt failed or a live session died. Retry with backoff unless reconnect is
 * off, the failure is one a retry cannot fix, or the server keeps failing (breaker).
 */
static void server_fail(Server *s, const char *why, bool retryable)
{
    struct timeval tv;

    server_clear_timers(s);
    server_close_upstream(s);
    if (retryable && s->cfg->reconnect && !s->m->shutting_down) {
        if (breaker_tripped(s)) {
            _cleanup_free_ char *msg = xasprintf(
                "%s (failed %d times within %d s; not retrying: run `mcpctl connect %s` or "
                "reload once it is fixed)",
                why, BREAKER_FAILURES, BREAKER_WINDOW_MS / 1000, s->cfg->name);
            server_set_state(s, SERVER_FAILED, msg);
        } else {
            s->backoff_ms =
                s->backoff_ms ? MIN(s->backoff_ms * 2, BACKOFF_MAX_MS) : BACKOFF_FIRST_MS;
            s->next_attempt_wall_ms = wall_ms() + s->backoff_ms;
            server_set_state(s, SERVER_BACKOFF, why);
            tv_ms(&tv, s->backoff_ms);
            evtimer_add(s->ev_retry, &tv);
        }
    } else {
        server_set_state(s, SERVER_FAILED, why);
    }
    if (s->state == SERVER_FAILED) {
        /* Nothing will come back by itself: its tools leave the view. */
        s->tools = json_free(s->tools);
        s->tools_deferred = false;
    } else if (s->tools) {
        s->tools_deferred = true;
    }
    server_settled(s);
}

/* Best effort, like the seed's MCPToolCache.set: a failure is logged, never fatal. */
static void server_store_cache(Server *s)
{
    _cleanup_free_ char *why = NULL;
    int64_t now = wall_ms();

    if (cache_store(s->m->cache_dir, s->cfg, s->up ? s->up->server_info : NULL, s->tools, now,
                    s->m->settings.cache_ttl_days * 86400000LL, &why) < 0)
        log_full(LOG_WARNING, s->cfg->name, "cache", "tool cache not written: %s", why);
    else
        s->cache_saved_wall_ms = now;
}

static void server_load_cache(Server *s)
{
    _cleanup_free_ char *why = NULL;
    yajl_val tools = NULL;
    int64_t saved = 0;
    int r = cache_load(s->m->cache_dir, s->cfg, wall_ms(), &tools, &saved, &why);

    if (r == CACHE_E_STALE)
        log_full(LOG_NOTICE, s->cfg->name, "cache", "cache miss: %s", why);
    if (r != 0)
        return;
    s->tools = tools;
    s->tools_deferred = true;
    s->cache_saved_wall_ms = saved;
    log_full(LOG_DEBUG, s->cfg->name, "cache", "%zu tools from the cache", json_array_len(tools));
}

static void on_list_done(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Server *s = ctx;
    _cleanup_free_ char *msg = NULL;

    if (r->outcome == UPSTREAM_CANCELLED || s->up != u)
        return;
    if (r->outcome != UPSTREAM_OK) {
        /* A failed first tools/list is a failed server, not a connected one (B5). */
        msg = r->outcome == UPSTREAM_ERROR
                  ? xasprintf("tools/list failed: MCP error %" PRId64 ": %s", r->code, r->message)
                  : xasprintf("tools/list failed: %s", r->message);
        server_fail(s, msg, true);
        return;
    }
    server_clear_timers(s);
    json_free(s->tools);
    s->tools = json_copy(json_get_array(r->result, "tools"));
    s->tools_deferred = false;
    s->backoff_ms = 0;
    free(s->last_error);
    s->last_error = NULL;
    server_set_state(s, SERVER_CONNECTED, NULL);
    s->last_used_ms = now_ms();
    s->idle_stopped = false;
    server_arm_health(s);
    server_store_cache(s);
    log_full(LOG_INFO, s->cfg->name, "connected", "connected in %" PRIu64 " ms with %zu tools",
             now_ms() - s->connect_started_ms, json_array_len(s->tools));
    server_settled(s);
}

static void on_upstream_ready(void *userdata)
{
    Server *s = userdata;

    upstream_list_tools(s->up, s->cfg->timeout_ms, on_list_done, s);
}

static void on_relist_done(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Server *s = ctx;

    if (r->outcome == UPSTREAM_CANCELLED || s->up != u || s->state != SERVER_CONNECTED)
        return;
    if (r->outcome != UPSTREAM_OK) {
        log_full(LOG_WARNING, s->cfg->name, "tools", "re-listing tools failed: %s", r->message);
        return;
    }
    json_free(s->tools);
    s->tools = json_copy(json_get_array(r->result, "tools"));
    server_store_cache(s);
    ws_changed(s->m);
}

/* Progress for a call goes to the agent that made it, under the agent's own token. */
static void forward_progress(Server *s, yajl_val params)
{
    yajl_val tok = json_get(params, "progressToken"), out;
    StrBuf sb = STRBUF_INIT;
    size_t pos = 0;
    void *v;
    Peer *p;

    if (!YAJL_IS_INTEGER(tok) || !s->up)
        return;
    while (idmap_next(&s->m->calls, &pos, NULL, &v)) {
        Call *c = v;
        if (c->waiting || c->upstream_id != s->up->id || c->request_id != (uint64_t)tok->u.number.i)
            continue;
        if (!c->progress_token || !(p = peer_get(s->m->peers, c->peer_id)))
            return;
        out = json_copy(params);
        json_object_set(out, "progressToken", json_copy(c->progress_token));
        jsonrpc_write_notification(&sb, "notifications/progress", out);
        json_free(out);
        peer_send_sb(p, &sb);
        strbuf_deinit(&sb);
        return;
    }
}

static void on_upstream_notification(void *userdata, const char *method, yajl_val params)
{
    Server *s = userdata;

    if (streq(method, "notifications/tools/list_changed") && s->state == SERVER_CONNECTED)
        upstream_list_tools(s->up, s->cfg->timeout_ms, on_relist_done, s);
    else if (streq(method, "notifications/progress"))
        forward_progress(s, params);
}

static void on_upstream_auth(void *userdata, const char *challenge)
{
    Server *s = userdata;

    s->needs_auth = true;
    free(s->auth_challenge);
    s->auth_challenge = xstrdup(challenge);
}

static void on_upstream_closed(void *userdata, const char *reason)
{
    Server *s = userdata;
    _cleanup_free_ char *msg = NULL;

    if (s->needs_auth) {
        /* Retrying cannot fix missing credentials: wait for a reload or mcpd/connect. */
        server_fail(s, reason, false);
        return;
    }
    if (s->state == SERVER_CONNECTED) {
        msg = xasprintf("connection lost: %s", reason);
        s->restarts++;
        server_fail(s, msg, true);
    } else {
        server_fail(s, reason, true);
    }
}

static void on_connect_timeout(evutil_socket_t fd, short what, void *arg)
{
    Server *s = arg;
    _cleanup_free_ char *msg =
        xasprintf("Connection to MCP server \"%s\" timed out after %" PRId64 "ms", s->cfg->name,
                  s->cfg->timeout_ms);

    (void)fd, (void)what;
    /* The late session is closed here, never leaked (B4). */
    server_fail(s, msg, true);
}

static void on_ping_reply(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Server *s = ctx;
    _cleanup_free_ char *msg = NULL;

    if (r->outcome == UPSTREAM_CANCELLED || s->up != u)
        return;
    s->ping_in_flight = false;
    if (r->outcome == UPSTREAM_OK || r->outcome == UPSTREAM_ERROR)
        return; /* any answer, even -32601, shows the server is alive */
    msg = xasprintf("health ping failed: %s", r->message);
    s->restarts++;
    server_fail(s, msg, true);
}

static void idle_stop(Server *s)
{
    log_full(LOG_INFO, s->cfg->name, "idle", "unused for %" PRId64 " ms: stopping it",
             s->cfg->idle_timeout_ms);
    server_clear_timers(s);
    server_close_upstream(s);
    if (s->tools)
        s->tools_deferred = true;
    s->idle_stopped = true;
    server_set_state(s, SERVER_STOPPED, NULL);
    server_settled(s);
}

static void on_health(evutil_socket_t fd, short what, void *arg)
{
    Server *s = arg;
    int64_t idle = s->cfg->type == TRANSPORT_STDIO ? s->cfg->idle_timeout_ms : 0;

    (void)fd, (void)what;
    if (s->state != SERVER_CONNECTED || !s->up)
        return;
    if (idle > 0 && !s->calls_in_flight && now_ms() - s->last_used_ms >= (uint64_t)idle) {
        idle_stop(s);
        return;
    }
    if (s->cfg->ping_interval_ms > 0 && !s->ping_in_flight) {
        /* A pong must come within the interval; a missed one marks the connection dead. */
        s->ping_in_flight = upstream_request(s->up, "ping", NULL, s->cfg->ping_interval_ms, false,
                                             on_ping_reply, s, NULL) == 0;
    }
    server_arm_health(s);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    server_connect(arg);
}

static void server_connect(Server *s)
{
    static const UpstreamEvents ev = {on_upstream_ready, on_upstream_closed,
                                      on_upstream_notification, on_upstream_auth};
    Manager *m = s->m;
    _cleanup_free_ char *why = NULL;
    const char *cwd =
        s->cfg->source.level == CONFIG_LEVEL_PROJECT && m->ws.root ? m->ws.root : m->home;
    struct timeval tv;
    int r;

    if (s->up || !s->cfg->enabled || m->shutting_down)
        return;
    server_clear_timers(s);
    s->connect_started_ms = now_ms();
    s->needs_auth = false;
    server_set_state(s, SERVER_CONNECTING, NULL);
    if (s->tools)
        s->tools_deferred = true;
    r = upstream_start(&s->up, m->base, s->cfg, cwd, m->settings.max_call_timeout_ms, &ev, s, &why);
    if (r < 0) {
        /* No such command, bad cwd: the config must change first; do not retry. */
        server_fail(s, why, false);
        return;
    }
    if (s->cfg->timeout_ms > 0) {
        tv_ms(&tv, s->cfg->timeout_ms);
        evtimer_add(s->ev_connect_timeout, &tv);
    }
}

static Server *server_new(Manager *m, const ServerConfig *cfg)
{
    Server *s = xcalloc(1, sizeof(*s));

    s->id = ++m->next_server_id;
    s->m = m;
    s->cfg = server_config_copy(cfg);
    s->state = cfg->enabled ? SERVER_STOPPED : SERVER_DISABLED;
    s->since_wall_ms = wall_ms();
    s->ev_connect_timeout = evtimer_new(m->base, on_connect_timeout, s);
    s->ev_retry = evtimer_new(m->base, on_retry, s);
    s->ev_health = evtimer_new(m->base, on_health, s);
    if (cfg->enabled)
        server_load_cache(s);
    idmap_put(&m->servers, s->id, s);
    m->order = xrealloc(m->order, (m->n_order + 1) * sizeof(*m->order));
    m->order[m->n_order++] = s;
    return s;
}

/* Disconnect and forget a server: exactly its own tools leave the view (B2, B3). */
static void server_remove(Server *s)
{
    Manager *m = s->m;
    size_t pos = 0;
    void *v;

    server_clear_timers(s);
    server_close_upstream(s);
    s->state = SERVER_STOPPED;
    while (idmap_next(&m->calls, &pos, NULL, &v)) {
        Call *c = v;
        if (c->server_id == s->id) {
            _cleanup_free_ char *msg = xasprintf("MCP server %s was disconnected", s->cfg->name);
            call_fail(c, MCPD_ERROR_UNAVAILABLE, msg, NULL);
        }
    }
    waiters_server_settled(s);
    idmap_remove(&m->servers, s->id);
    for (size_t i = 0; i < m->n_order; i++)
        if (m->order[i] == s) {
            memmove(m->order + i, m->order + i + 1, (m->n_order - i - 1) * sizeof(*m->order));
            m->n_order--;
            break;
        }
    event_free(s->ev_connect_timeout);
    event_free(s->ev_retry);
    event_free(s->ev_health);
    json_free(s->tools);
    free(s->last_error);
    free(s->auth_challenge);
    server_config_free(s->cfg);
    free(s);
    ws_changed(m);
}

static yajl_val problems_json(const ConfigSet *set)
{
    yajl_val arr = json_array_new();

    for (size_t i = 0; i < set->n_problems; i++) {
        yajl_val o = json_object_new();
        if (set->problems[i].path)
            json_object_set(o, "path", json_string_new(set->problems[i].path));
        if (set->problems[i].server)
            json_object_set(o, "server", json_string_new(set->problems[i].server));
        json_object_set(o, "error", json_string_new(set->problems[i].message));
        json_array_push(arr, o);
    }
    return arr;
}

yajl_val manager_load(Manager *m)
{
    DiscoverOptions opt = {m->config_file, m->ws.root};
    ConfigSet set;
    yajl_val result = json_object_new(), servers = json_object_new();
    struct timeval tv;

    config_discover(&set, &opt, &m->settings);
    /* Servers gone or changed are disconnected; unchanged ones stay connected. */
    for (size_t i = m->n_order; i-- > 0;) {
        Server *s = m->order[i];
        ServerConfig *c = config_set_find(&set, s->cfg->name);
        if (c && server_config_same(c, s->cfg) && c->enabled == s->cfg->enabled)
            continue;
        json_object_set(servers, s->cfg->name, json_string_new(c ? "changed" : "removed"));
        log_full(LOG_INFO, s->cfg->name, "reload", "%s", c ? "config changed" : "removed");
        server_remove(s);
    }
    m->ws.connect_started_ms = now_ms();
    for (size_t i = 0; i < set.n_servers; i++) {
        ServerConfig *c = set.servers[i];
        Server *s = server_by_name(m, c->name);
        if (!s) {
            if (!json_get(servers, c->name))
                json_object_set(servers, c->name, json_string_new("added"));
            s = server_new(m, c);
        } else {
            json_object_set(servers, c->name, json_string_new("kept"));
        }
        if (s->state == SERVER_FAILED || s->state == SERVER_STOPPED) {
            s->n_failures = 0;
            s->backoff_ms = 0;
        }
        if (c->enabled && !s->up && s->state != SERVER_CONNECTED)
            server_connect(s);
    }
    config_set_deinit(&m->problems);
    m->problems = (ConfigSet){.problems = set.problems, .n_problems = set.n_problems};
    set.problems = NULL;
    set.n_problems = 0;
    config_set_deinit(&set);
    json_object_set(result, "servers", servers);
    json_object_set(result, "problems", problems_json(&m->problems));
    tv_ms(&tv, m->settings.startup_timeout_ms);
    evtimer_add(m->ws.ev_gate, &tv);
    ws_changed(m);
    return result;
}

/* ---- mcpd/wait ---- */

static void waiter_finish(ServerWaiter *w, Server *s, bool timed_out)
{
    ServerWaiter **pp;
    yajl_val r = json_object_new();

    for (pp = &w->m->server_waiters; *pp && *pp != w; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = w->next;
    json_object_set(r, "state", json_string_new(s ? server_state_name(s->state) : "removed"));
    json_object_set(r, "connected", json_bool_new(s && s->state == SERVER_CONNECTED));
    json_object_set(r, "timedOut", json_bool_new(timed_out));
    if (s && s->last_error)
        json_object_set(r, "error", json_string_new(s->last_error));
    reply_result(w->m, w->peer_id, w->id, r);
    json_free(r);
    event_free(w->timer);
    json_free(w->id);
    free(w);
}

static void on_waiter_timeout(evutil_socket_t fd, short what, void *arg)
{
    ServerWaiter *w = arg;

    (void)fd, (void)what;
    waiter_finish(w, idmap_get(&w->m->servers, w->server_id), true);
}

static void waiters_server_settled(Server *s)
{
    ServerWaiter *w = s->m->server_waiters, *next;

    for (; w; w = next) {
        next = w->next;
        if (w->server_id == s->id && (s->state == SERVER_CONNECTED || s->state == SERVER_FAILED ||
                                      s->state == SERVER_STOPPED || s->state == SERVER_DISABLED))
            waiter_finish(w, s->state == SERVER_STOPPED ? NULL : s, false);
    }
}

void manager_wait(Manager *m, Peer *p, yajl_val id, const char *name, int64_t timeout_ms)
{
    Server *s = server_by_name(m, name);
    ServerWaiter *w;
    struct timeval tv;

    if (!s) {
        _cleanup_free_ char *msg = xasprintf("Unknown server: %s", name);
        reply_error(m, p->id, id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    w = xcalloc(1, sizeof(*w));
    w->m = m;
    w->peer_id = p->id;
    w->id = json_copy(id);
    w->server_id = s->id;
    w->timer = evtimer_new(m->base, on_waiter_timeout, w);
    w->next = m->server_waiters;
    m->server_waiters = w;
    if (s->state != SERVER_CONNECTING && s->state != SERVER_BACKOFF) {
        waiter_finish(w, s, false);
        return;
    }
    tv_ms(&tv, timeout_ms);
    evtimer_add(w->timer, &tv);
}

/* ---- control ---- */

int manager_connect(Manager *m, const char *name, char **whyp)
{
    Server *s = server_by_name(m, name);

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return -ENOENT;
    }
    if (!s->cfg->enabled) {
        *whyp = xasprintf("Server %s is disabled in %s", name,
                          s->cfg->source.path ? s->cfg->source.path : "its config");
        return -EPERM;
    }
    s->n_failures = 0;
    s->backoff_ms = 0;
    if (s->state != SERVER_CONNECTED && s->state != SERVER_CONNECTING) {
        server_close_upstream(s);
        server_connect(s);
    }
    return 0;
}

int manager_disconnect(Manager *m, const char *name, char **whyp)
{
    Server *s = server_by_name(m, name);

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return -ENOENT;
    }
    server_clear_timers(s);
    server_close_upstream(s);
    s->tools = json_free(s->tools);
    s->tools_deferred = false;
    s->idle_stopped = false;
    server_set_state(s, SERVER_STOPPED, NULL);
    free(s->last_error);
    s->last_error = NULL;
    server_settled(s);
    return 0;
}

int manager_logs(Manager *m, const char *name, StrBuf *out, char **whyp)
{
    Server *s = server_by_name(m, name);

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return -ENOENT;
    }
    if (s->up && s->up->transport && s->up->transport->ops->logs)
        s->up->transport->ops->logs(s->up->transport, out);
    return 0;
}

void manager_counts(Manager *m, unsigned *connectedp, unsigned *totalp, unsigned *toolsp)
{
    unsigned c = 0, t = 0, tools = 0;

    for (size_t i = 0; i < m->n_order; i++) {
        Server *s = m->order[i];
        if (s->state == SERVER_DISABLED)
            continue;
        t++;
        if (s->state == SERVER_CONNECTED)
            c++;
        tools += (unsigned)json_array_len(s->tools);
    }
    *connectedp = c;
    *totalp = t;
    *toolsp = tools;
}

static yajl_val server_status(Server *s)
{
    yajl_val o = json_object_new(), src = json_object_new();

    json_object_set(o, "name", json_string_new(s->cfg->name));
    json_object_set(o, "state", json_string_new(server_state_name(s->state)));
    json_object_set(o, "since", json_int_new(s->since_wall_ms));
    json_object_set(o, "transport",
                    json_string_new(s->up && s->up->transport ? s->up->transport->ops->kind
                                                              : transport_type_name(s->cfg->type)));
    json_object_set(o, "tools", json_int_new((int64_t)json_array_len(s->tools)));
    json_object_set(o, "toolsDeferred", json_bool_new(s->tools_deferred));
    if (s->idle_stopped)
        json_object_set(o, "idle", json_bool_new(true));
    json_object_set(o, "restarts", json_int_new(s->restarts));
    json_object_set(o, "callsInFlight", json_int_new(s->calls_in_flight));
    json_object_set(o, "callsTotal", json_int_new((int64_t)s->calls_total));
    if (s->last_error)
        json_object_set(o, "lastError", json_string_new(s->last_error));
    if (s->state == SERVER_BACKOFF)
        json_object_set(o, "nextAttempt", json_int_new(s->next_attempt_wall_ms));
    if (s->needs_auth) {
        json_object_set(o, "needsAuthorization", json_bool_new(true));
        json_object_set(o, "wwwAuthenticate", json_string_new(s->auth_challenge));
    }
    if (s->cache_saved_wall_ms)
        json_object_set(o, "cacheSavedAt", json_int_new(s->cache_saved_wall_ms));
    if (s->up && s->up->transport)
        s->up->transport->ops->status(s->up->transport, o);
    if (s->up && s->up->server_info)
        json_object_set(o, "serverInfo", json_copy(s->up->server_info));
    if (s->up && s->up->protocol_version)
        json_object_set(o, "protocolVersion", json_string_new(s->up->protocol_version));
    json_object_set(src, "provider", json_string_new(s->cfg->source.provider));
    json_object_set(src, "name", json_string_new(s->cfg->source.provider_name));
    if (s->cfg->source.path)
        json_object_set(src, "path", json_string_new(s->cfg->source.path));
    json_object_set(
        src, "level",
        json_string_new(s->cfg->source.level == CONFIG_LEVEL_PROJECT ? "project" : "user"));
    json_object_set(o, "source", src);
    return o;
}

yajl_val manager_status(Manager *m)
{
    yajl_val o = json_object_new(), servers = json_array_new(), agents = json_array_new();

    for (size_t i = 0; i < m->n_order; i++)
        json_array_push(servers, server_status(m->order[i]));
    for (Peer *p = m->peers->first; p; p = p->next) {
        yajl_val a = json_object_new();
        json_object_set(a, "id", json_int_new((int64_t)p->id));
        json_object_set(a, "pid", json_int_new(p->pid));
        if (p->client_name)
            json_object_set(a, "name", json_string_new(p->client_name));
        json_object_set(a, "callsInFlight", json_int_new(p->calls_in_flight));
        json_object_set(a, "bytesQueued", json_int_new((int64_t)peer_queued(p)));
        json_object_set(a, "connectedAt", json_int_new(p->connected_wall_ms));
        json_array_push(agents, a);
    }
    view_ensure(m);
    json_object_set(o, "servers", servers);
    json_object_set(o, "agents", agents);
    json_object_set(o, "tools", json_int_new((int64_t)m->ws.n_view));
    json_object_set(o, "nameCollisions", json_int_new(m->ws.n_collisions));
    json_object_set(o, "problems", problems_json(&m->problems));
    return o;
}

void manager_init(Manager *m, struct event_base *base, PeerRegistry *peers, const Settings *s,
                  const char *config_file)
{
    memset(m, 0, sizeof(*m));
    m->base = base;
    m->peers = peers;
    m->settings = *s;
    m->config_file = config_file;
    m->home = paths_home();
    m->cache_dir = cache_dir();
    m->ev_notify = evtimer_new(base, on_notify, m);
    m->ws.ev_gate = evtimer_new(base, on_gate, m);
    m->ws.dirty = true;
    m->started_wall_ms = wall_ms();
}

void manager_shutdown(Manager *m)
{
    m->shutting_down = true;
    while (m->n_order)
        server_remove(m->order[m->n_order - 1]);
}

void manager_deinit(Manager *m)
{
    ListWaiter *w;

    manager_shutdown(m);
    while ((w = m->ws.waiters)) {
        m->ws.waiters = w->next;
        json_free(w->id);
        free(w);
    }
    while (m->server_waiters)
        waiter_finish(m->server_waiters, NULL, false);
    view_clear(&m->ws);
    strbuf_deinit(&m->ws.view_json);
    event_free(m->ws.ev_gate);
    event_free(m->ev_notify);
    idmap_deinit(&m->servers);
    idmap_deinit(&m->calls);
    config_set_deinit(&m->problems);
    free(m->order);
    free(m->home);
    free(m->cache_dir);
}
