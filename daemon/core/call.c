// SPDX-License-Identifier: MIT
// call: agent requests routed to one upstream (tools/call, prompts/get, resources/read,
// completion/complete), and everything routed back to exactly the agent it belongs to (results,
// progress, log messages, server-to-client requests).

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/jsonscan.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/manager-private.h"
#include "daemon/core/surface.h"

/* A request from an agent routed to one upstream, from arrival to its one reply. */
typedef struct Call {
    uint64_t id;
    Manager *m;
    const char *method; /* static: tools/call, prompts/get, resources/read, completion/complete */
    bool tool;          /* tools/call: every failure becomes a tool result (DESIGN section 3) */
    uint64_t peer_id;
    char *orig_id;        /* the agent's id as JSON text, so its type is kept */
    char *progress_token; /* the agent's progress token as JSON text, or NULL */
    uint64_t server_id;
    char *meta;           /* members of _meta passed on (not progressToken), or NULL */
    char *body;           /* the other members of params: "name":...,"arguments":... */
    uint64_t upstream_id; /* the Upstream it went to, and its request id there */
    uint64_t request_id;
    bool waiting; /* for its server to connect */
    struct event *ev_wait;
} Call;

/* A request from an upstream (sampling, elicitation, roots) forwarded to one agent. */
typedef struct ServerRequest {
    uint64_t id; /* the id the agent sees */
    Manager *m;
    uint64_t peer_id;
    uint64_t server_id;
    uint64_t upstream_id;
    yajl_val up_id; /* the upstream's id, with its JSON type */
    char *method;
    yajl_val schema; /* elicitation/create: requestedSchema, for defaults */
    struct event *timer;
} ServerRequest;

/* Log levels of MCP (RFC 5424 names), least severe first. */
static const char *const log_levels[] = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
};
/* An agent that never sent logging/setLevel hears messages from this level up. */
#define LOG_LEVEL_DEFAULT 1

int mcp_log_level(const char *name)
{
    for (size_t i = 0; name && i < N_ELEMENTS(log_levels); i++)
        if (streq(name, log_levels[i]))
            return (int)i;
    return -1;
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
    if (s) {
        if (s->calls_in_flight)
            s->calls_in_flight--;
        s->last_used_ms = now_ms();
        if (c->request_id && idmap_get(&s->live_calls, c->request_id) == c)
            idmap_remove(&s->live_calls, c->request_id);
    }
    if (c->ev_wait)
        event_free(c->ev_wait);
    free(c->orig_id);
    free(c->progress_token);
    free(c->meta);
    free(c->body);
    free(c);
}

/* {"jsonrpc":"2.0","id":<id>,"result":<raw>} to a peer, ids and results as JSON text. */
static void reply_result_text(Manager *m, uint64_t peer_id, const char *id, const char *raw,
                              size_t n)
{
    Peer *p = peer_get(m->peers, peer_id);
    StrBuf *sb = &m->scratch;

    if (!p)
        return;
    strbuf_reset(sb);
    strbuf_puts(sb, "{\"jsonrpc\":\"2.0\",\"id\":");
    strbuf_puts(sb, id);
    strbuf_puts(sb, ",\"result\":");
    strbuf_append(sb, raw, n);
    strbuf_puts(sb, "}\n");
    peer_send_sb(p, sb);
}

static void reply_result_tree(Manager *m, uint64_t peer_id, const char *id, yajl_val result)
{
    StrBuf body = STRBUF_INIT;

    json_write(&body, result);
    reply_result_text(m, peer_id, id, body.data, body.len);
    strbuf_deinit(&body);
}

static void reply_error_text(Manager *m, uint64_t peer_id, const char *id, int code,
                             const char *message)
{
    Peer *p = peer_get(m->peers, peer_id);
    StrBuf *sb = &m->scratch;

    if (!p)
        return;
    strbuf_reset(sb);
    strbuf_printf(sb, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":", id,
                  code);
    json_write_string(sb, message, strlen(message));
    strbuf_puts(sb, "}}\n");
    peer_send_sb(p, sb);
}

static void call_fail(Call *c, int64_t code, const char *message, yajl_val data)
{
    if (c->tool) {
        _cleanup_json_ yajl_val r = error_result(code, message, data);
        reply_result_tree(c->m, c->peer_id, c->orig_id, r);
    } else {
        /* Other methods have no result form for failures: the agent gets the error itself. */
        reply_error_text(c->m, c->peer_id, c->orig_id, (int)code, message);
    }
    call_free(c);
}

/* A successful result: URIs are rewritten into the agent's view where they appear. */
static void call_reply_ok(Call *c, Server *s, const UpstreamReply *r)
{
    Peer *p = peer_get(c->m->peers, c->peer_id);
    _cleanup_json_ yajl_val tree = NULL;
    Server *only;

    if (p && surface_passthrough(c->m, p, &only))
        p = NULL; /* the agent sees the server as itself: its URIs stay as they are */

    if (r->raw && (!s || !p || (c->tool && !surface_raw_has_uris(r->raw, r->raw_len)))) {
        /* The hot path: nothing to rewrite, the bytes go through. */
        reply_result_text(c->m, c->peer_id, c->orig_id, r->raw, r->raw_len);
        return;
    }
    if (!r->raw)
        tree = json_copy(r->result);
    else if (json_parse_full(&tree, r->raw, r->raw_len, JSON_UTF8_REPAIR, NULL) != 0)
        tree = NULL;
    if (!tree) {
        reply_result_text(c->m, c->peer_id, c->orig_id, r->raw, r->raw_len);
        return;
    }
    if (s && p)
        surface_rewrite_result(ws_of_peer(c->m, p), s, tree);
    reply_result_tree(c->m, c->peer_id, c->orig_id, tree);
}

static void on_call_reply(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Call *c = ctx;
    Server *s = idmap_get(&c->m->servers, c->server_id);
    const char *name = s ? s->cfg->name : u->name;
    _cleanup_free_ char *msg = NULL;

    switch (r->outcome) {
    case UPSTREAM_OK:
        call_reply_ok(c, s, r);
        call_free(c);
        return;
    case UPSTREAM_ERROR:
        if (!c->tool) {
            /* The upstream's own error, unchanged: its code means something to the agent. */
            call_fail(c, r->code, r->message, r->data);
            return;
        }
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
    int r;

    c->waiting = false;
    c->upstream_id = s->up->id;
    s->calls_total++;
    r = upstream_request_text(s->up, c->method, c->meta, c->body, s->cfg->call_timeout_ms,
                              UPSTREAM_PROGRESS | UPSTREAM_RAW, on_call_reply, c, &c->request_id);
    if (r < 0) {
        _cleanup_free_ char *msg =
            xasprintf("MCP server %s: cannot send the call: %s", s->cfg->name, strerror(-r));
        c->request_id = 0;
        call_fail(c, -32000, msg, NULL);
        return;
    }
    idmap_put(&s->live_calls, c->request_id, c);
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

void calls_server_settled(Server *s)
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

/*
 * Start a call of method on server s. Takes id (the agent's id as JSON text), meta, body and
 * token (owned, may be NULL); body is the members of params other than _meta, as JSON text.
 */
static void call_new(Manager *m, Peer *p, Server *s, const char *method, char *id, char *body,
                     char *meta, char *token)
{
    Call *c;

    if (p->calls_in_flight >= AGENT_MAX_CALLS_IN_FLIGHT) {
        _cleanup_free_ char *msg =
            xasprintf("too many calls in flight: %d is the limit per agent; wait for answers first",
                      AGENT_MAX_CALLS_IN_FLIGHT);
        reply_error_text(m, p->id, id, MCPD_ERROR_TOO_MANY_CALLS, msg);
        free(id);
        free(body);
        free(meta);
        free(token);
        return;
    }
    c = xcalloc(1, sizeof(*c));
    c->id = ++m->next_call_id;
    c->m = m;
    c->method = method;
    c->tool = streq(method, "tools/call");
    c->peer_id = p->id;
    c->orig_id = id;
    c->progress_token = token;
    c->meta = meta;
    c->body = body;
    c->server_id = s->id;
    idmap_put(&m->calls, c->id, c);
    p->calls_in_flight++;
    s->calls_in_flight++;
    call_dispatch(c, s);
}

/*
 * Start a tools/call. Takes id (the agent's id as JSON text), meta and token (owned, may be
 * NULL); args is the arguments object as JSON text (NULL: {}).
 */
static void call_start(Manager *m, Peer *p, char *id, const char *name, const char *args,
                       size_t args_len, char *meta, char *token)
{
    const ViewTool *vt = NULL;
    StrBuf body = STRBUF_INIT;
    const char *tool = NULL;
    Server *s = NULL;

    if (surface_passthrough(m, p, &s)) {
        /* The agent sees one server as itself: the name is the server's own. */
        for (size_t i = 0; s && i < json_array_len(s->tools) && !tool; i++)
            if (streq(json_get_string(json_array_at(s->tools, i), "name"), name))
                tool = name;
    } else if ((vt = ws_view_find(ws_of_peer(m, p), name)) &&
               (s = idmap_get(&m->servers, vt->server_id))) {
        tool = vt->tool;
    }
    if (!tool) {
        _cleanup_free_ char *msg = xasprintf("Unknown tool: %s", name);
        reply_error_text(m, p->id, id, JSONRPC_INVALID_PARAMS, msg);
        free(id);
        free(meta);
        free(token);
        return;
    }
    strbuf_puts(&body, "\"name\":");
    json_write_string(&body, tool, strlen(tool));
    strbuf_puts(&body, ",\"arguments\":");
    if (args)
        strbuf_append(&body, args, args_len);
    else
        strbuf_puts(&body, "{}");
    call_new(m, p, s, "tools/call", id, strbuf_detach(&body, NULL), meta, token);
}

/* params._meta split into its members as text (without progressToken) and the token. */
static void split_meta(yajl_val meta, char **meta_textp, char **tokenp)
{
    _cleanup_json_ yajl_val mc = NULL;
    _cleanup_json_ yajl_val tok = NULL;

    *meta_textp = *tokenp = NULL;
    if (!meta)
        return;
    /* _meta passes through; the progress token is mcpd's own upstream (rewritten). */
    mc = json_copy(meta);
    tok = json_object_take(mc, "progressToken");
    if (tok)
        *tokenp = json_to_string(tok);
    if (mc->u.object.len) {
        StrBuf sb = STRBUF_INIT;
        json_write(&sb, mc);
        /* the members, without the braces */
        *meta_textp = xstrndup(sb.data + 1, sb.len - 2);
        strbuf_deinit(&sb);
    }
}

void call_route(Manager *m, Peer *p, yajl_val id, Server *s, const char *method, yajl_val params)
{
    _cleanup_json_ yajl_val body = params ? json_copy(params) : json_object_new();
    _cleanup_json_ yajl_val meta = json_object_take(body, "_meta");
    StrBuf sb = STRBUF_INIT;
    char *meta_text, *token;

    split_meta(YAJL_IS_OBJECT(meta) ? meta : NULL, &meta_text, &token);
    json_write(&sb, body);
    call_new(m, p, s, method, json_to_string(id), xstrndup(sb.data + 1, sb.len - 2), meta_text,
             token);
    strbuf_deinit(&sb);
}

void manager_call_tool(Manager *m, Peer *p, yajl_val id, yajl_val params)
{
    const char *name = json_get_string(params, "name");
    yajl_val args = json_get(params, "arguments"), meta = json_get_object(params, "_meta");
    _cleanup_free_ char *args_text = NULL;
    char *meta_text = NULL, *token = NULL;

    if (args && !YAJL_IS_OBJECT(args)) {
        manager_reply_error(m, p->id, id, JSONRPC_INVALID_PARAMS,
                            "\"arguments\" must be an object");
        return;
    }
    split_meta(meta, &meta_text, &token);
    if (args)
        args_text = json_to_string(args);
    if (json_get(params, "inputResponses") || json_get(params, "requestState")) {
        /* A 2026-07-28 retry (MRTR): its answers and state follow the arguments upstream. */
        StrBuf sb = STRBUF_INIT;
        strbuf_puts(&sb, args_text ? args_text : "{}");
        for (size_t i = 0; i < params->u.object.len; i++)
            if (streq(params->u.object.keys[i], "inputResponses") ||
                streq(params->u.object.keys[i], "requestState")) {
                strbuf_printf(&sb, ",\"%s\":", params->u.object.keys[i]);
                json_write(&sb, params->u.object.values[i]);
            }
        free(args_text);
        args_text = strbuf_detach(&sb, NULL);
    }
    call_start(m, p, json_to_string(id), name, args_text, args_text ? strlen(args_text) : 0,
               meta_text, token);
}

void manager_call_tool_fast(Manager *m, Peer *p, JsonSpan id, JsonSpan name, JsonSpan args,
                            JsonSpan token)
{
    char buf[256];
    size_t n = name.n - 2;
    char *tool = n < sizeof(buf) ? buf : xmalloc(n + 1);

    memcpy(tool, name.p + 1, n);
    tool[n] = '\0';
    call_start(m, p, xstrndup(id.p, id.n), tool, args.p, args.n, NULL,
               token.p ? xstrndup(token.p, token.n) : NULL);
    if (tool != buf)
        free(tool);
}

static Call *call_find(Manager *m, uint64_t peer_id, yajl_val orig_id)
{
    _cleanup_free_ char *id = json_to_string(orig_id);
    size_t pos = 0;
    void *v;

    while (idmap_next(&m->calls, &pos, NULL, &v)) {
        Call *c = v;
        if (c->peer_id == peer_id && streq(c->orig_id, id))
            return c;
    }
    return NULL;
}

/* Stop a call without replying: cancelled upstream if it got there. */
static void call_abort(Call *c, const char *reason)
{
    Server *s = idmap_get(&c->m->servers, c->server_id);

    if (!c->waiting && s && s->up && s->up->id == c->upstream_id && c->request_id) {
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
    else
        log_debug("peer %llu cancelled a request mcpd does not know (already answered?)",
                  (unsigned long long)p->id);
}

/* ---- requests from upstreams to agents ---- */

static void sreq_free(ServerRequest *sr)
{
    idmap_remove(&sr->m->server_requests, sr->id);
    event_free(sr->timer);
    json_free(sr->up_id);
    json_free(sr->schema);
    free(sr->method);
    free(sr);
}

/* The upstream gets an error for a request no agent answered. */
static void sreq_fail(ServerRequest *sr, int code, const char *message)
{
    Server *s = idmap_get(&sr->m->servers, sr->server_id);

    if (s && s->up && s->up->id == sr->upstream_id)
        upstream_respond_error(s->up, sr->up_id, code, message);
    sreq_free(sr);
}

/* The agent hears that a request it was asked is void. */
static void sreq_withdraw(ServerRequest *sr, const char *reason)
{
    yajl_val params = json_object_new();

    json_object_set(params, "requestId", json_int_new((int64_t)sr->id));
    json_object_set(params, "reason", json_string_new(reason));
    manager_notify_peer(sr->m, sr->peer_id, "notifications/cancelled", params);
    json_free(params);
}

static void on_sreq_timeout(evutil_socket_t fd, short what, void *arg)
{
    ServerRequest *sr = arg;
    _cleanup_free_ char *msg = xasprintf("the agent did not answer %s in time", sr->method);

    (void)fd, (void)what;
    sreq_withdraw(sr, "timeout");
    sreq_fail(sr, -32001, msg);
}

/* The capability an agent must have declared to be asked a method, or 0 for none known. */
static unsigned method_cap(const char *method)
{
    if (streq(method, "sampling/createMessage"))
        return PEER_CAP_SAMPLING;
    if (streq(method, "elicitation/create"))
        return PEER_CAP_ELICITATION;
    if (streq(method, "roots/list"))
        return PEER_CAP_ROOTS;
    return 0;
}

/*
 * The agent whose call caused a request: over stdio nothing names the call, so it is the
 * agent with the most recent call in flight on that server (among those that can answer).
 */
static Peer *causing_peer(Server *s, unsigned cap, Peer **anyp)
{
    Peer *best = NULL;
    uint64_t best_call = 0, any_call = 0;
    size_t pos = 0;
    void *v;

    *anyp = NULL;
    while (idmap_next(&s->live_calls, &pos, NULL, &v)) {
        Call *c = v;
        Peer *p = peer_get(s->m->peers, c->peer_id);
        if (!p)
            continue;
        if (c->id > any_call) {
            any_call = c->id;
            *anyp = p;
        }
        if ((p->caps & cap) && c->id > best_call) {
            best_call = c->id;
            best = p;
        }
    }
    return best;
}

/* roots/list answered by mcpd: the root of the workspace in question. */
static void answer_roots(Server *s, yajl_val id, Workspace *ws)
{
    yajl_val r = json_object_new(), roots = json_array_new();
    size_t pos = 0;
    void *v;

    if (!ws || !ws->root) {
        /* No agent to ask: the first project workspace that uses the server. */
        while (idmap_next(&s->m->workspaces, &pos, NULL, &v))
            if (((Workspace *)v)->root && ws_has_server(v, s)) {
                ws = v;
                break;
            }
    }
    if (ws && ws->root) {
        yajl_val root = json_object_new();
        _cleanup_free_ char *uri = xasprintf("file://%s", ws->root);
        const char *base = strrchr(ws->root, '/');
        json_object_set(root, "uri", json_string_new(uri));
        json_object_set(root, "name", json_string_new(base && base[1] ? base + 1 : ws->root));
        json_array_push(roots, root);
    }
    json_object_set(r, "roots", roots);
    upstream_respond(s->up, id, r);
    json_free(r);
}

void route_request(Server *s, yajl_val id, const char *method, yajl_val params)
{
    Manager *m = s->m;
    unsigned cap = method_cap(method);
    Peer *any = NULL, *p = cap ? causing_peer(s, cap, &any) : NULL;
    ServerRequest *sr;
    struct timeval tv;
    StrBuf sb = STRBUF_INIT;

    if (!p && streq(method, "roots/list")) {
        answer_roots(s, id, any ? ws_of_peer(m, any) : NULL);
        return;
    }
    if (!p) {
        _cleanup_free_ char *msg =
            cap ? xasprintf("no agent with a call in flight on %s can answer %s", s->cfg->name,
                            method)
                : xasprintf("Method not found: %s", method);
        log_full(LOG_INFO, s->cfg->name, "request", "%s", msg);
        upstream_respond_error(s->up, id, JSONRPC_METHOD_NOT_FOUND, msg);
        return;
    }
    sr = xcalloc(1, sizeof(*sr));
    sr->id = ++m->next_request_id;
    sr->m = m;
    sr->peer_id = p->id;
    sr->server_id = s->id;
    sr->upstream_id = s->up->id;
    sr->up_id = json_copy(id);
    sr->method = xstrdup(method);
    if (streq(method, "elicitation/create"))
        sr->schema = json_copy(json_get_object(params, "requestedSchema"));
    sr->timer = evtimer_new(m->base, on_sreq_timeout, sr);
    tv_ms(&tv,
          s->cfg->call_timeout_ms > 0 ? s->cfg->call_timeout_ms : CONFIG_DEFAULT_CALL_TIMEOUT_MS);
    evtimer_add(sr->timer, &tv);
    idmap_put(&m->server_requests, sr->id, sr);
    jsonrpc_write_request(&sb, sr->id, method, params);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

/* An agent accepted a form without some fields that have defaults: mcpd fills them in. */
static void fill_defaults(yajl_val result, yajl_val schema)
{
    yajl_val props = json_get_object(schema, "properties"), content;

    if (!props || !streq(json_get_string(result, "action"), "accept"))
        return;
    content = json_get_object(result, "content");
    if (!content) {
        content = json_object_new();
        json_object_set(result, "content", content);
    }
    for (size_t i = 0; i < props->u.object.len; i++) {
        yajl_val def = json_get(props->u.object.values[i], "default");
        const char *key = props->u.object.keys[i];
        if (def && !json_get(content, key))
            json_object_set(content, key, json_copy(def));
    }
}

void manager_peer_response(Manager *m, Peer *p, JsonrpcMsg *msg)
{
    ServerRequest *sr = NULL;
    Server *s;

    if (YAJL_IS_INTEGER(msg->id) && msg->id->u.number.i > 0)
        sr = idmap_get(&m->server_requests, (uint64_t)msg->id->u.number.i);
    if (!sr || sr->peer_id != p->id) {
        /* Twice, late, or never asked: nothing to do. */
        log_debug("peer %llu: response to an unknown request dropped", (unsigned long long)p->id);
        return;
    }
    s = idmap_get(&m->servers, sr->server_id);
    if (s && s->up && s->up->id == sr->upstream_id) {
        if (msg->kind == JSONRPC_RESPONSE) {
            _cleanup_json_ yajl_val r = json_copy(msg->result);
            if (!r || !YAJL_IS_OBJECT(r)) {
                json_free(r);
                r = json_object_new();
            }
            if (sr->schema)
                fill_defaults(r, sr->schema);
            upstream_respond(s->up, sr->up_id, r);
        } else {
            yajl_val code = json_get(msg->error, "code");
            const char *text = json_get_string(msg->error, "message");
            upstream_respond_error(s->up, sr->up_id,
                                   YAJL_IS_INTEGER(code) ? (int)code->u.number.i
                                                         : JSONRPC_INTERNAL_ERROR,
                                   text ? text : "(no message)");
        }
    }
    sreq_free(sr);
}

/* The upstream cancelled one of its requests: the agent is told, the entry goes. */
static void sreq_cancelled_upstream(Server *s, yajl_val params)
{
    yajl_val rid = json_get(params, "requestId");
    size_t pos = 0;
    void *v;

    while (idmap_next(&s->m->server_requests, &pos, NULL, &v)) {
        ServerRequest *sr = v;
        if (sr->server_id == s->id && s->up && sr->upstream_id == s->up->id &&
            json_equal(sr->up_id, rid)) {
            sreq_withdraw(sr, "cancelled by the server");
            sreq_free(sr);
            return;
        }
    }
}

void calls_upstream_closed(Server *s, uint64_t upstream_id)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&s->m->server_requests, &pos, NULL, &v)) {
        ServerRequest *sr = v;
        if (sr->server_id == s->id && sr->upstream_id == upstream_id) {
            sreq_withdraw(sr, "the server's session ended");
            sreq_free(sr);
        }
    }
}

void calls_server_removed(Server *s)
{
    Manager *m = s->m;
    size_t pos = 0;
    void *v;

    while (idmap_next(&m->calls, &pos, NULL, &v)) {
        Call *c = v;
        if (c->server_id == s->id) {
            _cleanup_free_ char *msg = xasprintf("MCP server %s was disconnected", s->cfg->name);
            call_fail(c, MCPD_ERROR_UNAVAILABLE, msg, NULL);
        }
    }
    pos = 0;
    while (idmap_next(&m->server_requests, &pos, NULL, &v)) {
        ServerRequest *sr = v;
        if (sr->server_id == s->id) {
            sreq_withdraw(sr, "the server was disconnected");
            sreq_free(sr);
        }
    }
}

void calls_peer_gone(Manager *m, Peer *p)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&m->calls, &pos, NULL, &v)) {
        Call *c = v;
        if (c->peer_id == p->id)
            call_abort(c, "client disconnected");
    }
    pos = 0;
    while (idmap_next(&m->server_requests, &pos, NULL, &v)) {
        ServerRequest *sr = v;
        if (sr->peer_id == p->id)
            sreq_fail(sr, JSONRPC_INTERNAL_ERROR, "the agent that was asked disconnected");
    }
}

void calls_deinit(Manager *m)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&m->server_requests, &pos, NULL, &v))
        sreq_free(v);
    pos = 0;
    while (idmap_next(&m->calls, &pos, NULL, &v))
        call_free(v);
    idmap_deinit(&m->server_requests);
    idmap_deinit(&m->calls);
}

/* ---- notifications for agents ---- */

/* Progress goes to the one agent whose call it is, under that agent's own token. */
static void route_progress(Server *s, yajl_val params)
{
    yajl_val tok = json_get(params, "progressToken"), out;
    Call *c = NULL;

    if (YAJL_IS_INTEGER(tok) && tok->u.number.i > 0)
        c = idmap_get(&s->live_calls, (uint64_t)tok->u.number.i);
    if (!c || !c->progress_token)
        return; /* finished, cancelled, or the agent asked for no progress */
    out = json_copy(params);
    json_object_set(out, "progressToken", json_parse(c->progress_token, NULL));
    manager_notify_peer(s->m, c->peer_id, "notifications/progress", out);
    json_free(out);
}

/* Log messages go to every agent that sees the server, filtered by its own level. */
static void route_log_message(Server *s, yajl_val params)
{
    int level = mcp_log_level(json_get_string(params, "level"));
    StrBuf sb = STRBUF_INIT;
    yajl_val out;

    if (level < 0)
        return;
    out = json_copy(params);
    if (!json_get(out, "logger"))
        json_object_set(out, "logger", json_string_new(s->cfg->name));
    jsonrpc_write_notification(&sb, "notifications/message", out);
    json_free(out);
    for (Peer *p = s->m->peers->first; p; p = p->next) {
        int want = p->log_level >= 0 ? p->log_level : LOG_LEVEL_DEFAULT;
        if (p->initialized && level >= want && ws_has_server(ws_of_peer(s->m, p), s))
            peer_send_sb(p, &sb);
    }
    strbuf_deinit(&sb);
}

void route_notification(Server *s, const char *method, yajl_val params)
{
    if (streq(method, "notifications/progress"))
        route_progress(s, params);
    else if (streq(method, "notifications/message"))
        route_log_message(s, params);
    else if (streq(method, "notifications/cancelled"))
        sreq_cancelled_upstream(s, params);
}

/* ---- logging levels ---- */

static void on_set_level(Upstream *u, void *ctx, const UpstreamReply *r)
{
    (void)ctx;
    if (r->outcome == UPSTREAM_ERROR || r->outcome == UPSTREAM_TIMEOUT)
        log_full(LOG_INFO, u->name, "logging", "logging/setLevel failed: %s", r->message);
}

void logging_update(Server *s)
{
    int want = -1;

    for (Peer *p = s->m->peers->first; p; p = p->next)
        if (p->initialized && p->log_level >= 0 && (want < 0 || p->log_level < want) &&
            ws_has_server(ws_of_peer(s->m, p), s))
            want = p->log_level;
    if (want < 0 || want == s->log_level || s->state != SERVER_CONNECTED || !s->up ||
        !json_get(s->up->capabilities, "logging"))
        return;
    yajl_val params = json_object_new();
    json_object_set(params, "level", json_string_new(log_levels[want]));
    if (upstream_request(s->up, "logging/setLevel", params, s->cfg->timeout_ms, false, on_set_level,
                         NULL, NULL) == 0)
        s->log_level = want;
}

void manager_set_log_level(Manager *m, Peer *p, int level)
{
    Workspace *ws = ws_of_peer(m, p);

    p->log_level = level;
    for (size_t i = 0; i < ws->n_servers; i++)
        logging_update(ws->servers[i]);
}

char *call_cause_of_request(Manager *m, uint64_t request_id)
{
    ServerRequest *sr = idmap_get(&m->server_requests, request_id);
    Server *s = sr ? idmap_get(&m->servers, sr->server_id) : NULL;
    Call *best = NULL;
    size_t pos = 0;
    void *v;

    while (s && idmap_next(&s->live_calls, &pos, NULL, &v)) {
        Call *c = v;
        if (c->peer_id == sr->peer_id && (!best || c->id > best->id))
            best = c;
    }
    return best ? xstrdup(best->orig_id) : NULL;
}
