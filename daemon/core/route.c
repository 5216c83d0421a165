// SPDX-License-Identifier: MIT
// route: what an upstream sends that concerns agents, routed to exactly the agent it belongs to:
// its requests (sampling, elicitation, roots) forwarded to one agent and the answer brought back,
// and its notifications (progress, cancellations, elicitation completions, task status).

#include <stdio.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/mcp.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/elicit.h"
#include "daemon/core/logging.h"
#include "daemon/core/mrtr.h"
#include "daemon/core/route.h"
#include "daemon/sys/turn.h"

/* A request from an upstream (sampling, elicitation, roots) forwarded to one agent. */
typedef struct ServerRequest {
    uint64_t id; /* the id the agent sees */
    CallRegistry *reg;
    uint64_t peer_id;
    uint64_t server_id;
    uint64_t upstream_id;
    yajl_val up_id; /* the upstream's id, with its JSON type */
    char *method;
    yajl_val schema;  /* elicitation/create: requestedSchema, for defaults */
    char *url_eid;    /* a url-mode elicitation's elicitationId (forgotten unless accepted) */
    bool url_as_form; /* a url-mode elicitation put to a form-only agent (answer: action only) */
    struct event *timer;
} ServerRequest;

/* Log lines for a server's requests that no agent can answer: a burst, then this many a second
 * (a server may send them without end; the first say what happens). */
#define UNANSWERED_LOG_BURST 20
#define UNANSWERED_LOG_RATE  2

static void sreq_free(ServerRequest *sr)
{
    Server *s = server_get(sr->reg->servers, sr->server_id);
    Agent *a = agent_get(sr->reg->agents, sr->peer_id);

    idmap_remove(&sr->reg->server_requests, sr->id);
    if (s)
        idmap_remove(&s->requests, sr->id);
    if (a)
        idmap_remove(&a->requests, sr->id);
    event_free(sr->timer);
    json_free(sr->up_id);
    json_free(sr->schema);
    free(sr->url_eid);
    free(sr->method);
    free(sr);
}

/* The upstream gets an error for a request no agent answered. */
static void sreq_fail(ServerRequest *sr, int code, const char *message)
{
    Server *s = server_get(sr->reg->servers, sr->server_id);

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
    agent_notify(sr->reg->peers, sr->peer_id, "notifications/cancelled", params);
    json_free(params);
}

static void on_sreq_timeout(evutil_socket_t fd, short what, void *arg)
{
    ServerRequest *sr = arg;
    _cleanup_free_ char *msg = xasprintf("the agent did not answer %s in time", sr->method);

    (void)fd, (void)what;
    sreq_withdraw(sr, "timeout");
    sreq_fail(sr, MCP_ERROR_REQUEST_TIMEOUT, msg);
}

/* roots/list answered by mcpd: the root of the workspace in question. */
static void answer_roots(CallRegistry *cr, Server *s, yajl_val id, Workspace *ws)
{
    yajl_val r = json_object_new(), roots = json_array_new();
    size_t pos = 0;
    void *v;

    if (!ws || !ws->root) {
        /* No agent to ask: the first project workspace that uses the server. */
        while (idmap_next(&cr->workspaces->by_id, &pos, NULL, &v))
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

void route_request(CallRegistry *m, Server *s, yajl_val id, const char *method, yajl_val params)
{
    unsigned cap = mrtr_request_cap(method, params);
    Peer *any = NULL, *p = NULL;
    bool url_form = false;
    /* A task's own request goes to an agent of its session, its tools/call long answered. */
    bool task = tasks_request_peer(&m->tasks, s, params, cap, &p, &any, &url_form);
    _cleanup_json_ yajl_val as_form = NULL;
    ServerRequest *sr;
    struct timeval tv;

    if (!task && cap)
        p = call_causing_peer(m, s, cap, &any);
    /* mcpd declares url mode upstream for the agents that have it; one that has only forms is
     * shown the link in a form instead of failing the server's flow. */
    if (!task && !p && cap == AGENT_CAP_ELICITATION_URL &&
        (p = call_causing_peer(m, s, AGENT_CAP_ELICITATION, &any)))
        url_form = true;
    if (url_form)
        as_form = elicit_url_as_form(params);

    if (!p && streq(method, "roots/list")) {
        answer_roots(m, s, id, any ? ws_of_peer(m->workspaces, any) : NULL);
        return;
    }
    if (!p) {
        _cleanup_free_ char *msg =
            cap ? xasprintf("no agent %s%s can answer %s (none declared the %s capability)",
                            task ? "of the task's session on " : "with a call in flight on ",
                            s->cfg->name, method, mrtr_cap_name(cap))
                : xasprintf("Method not found: %s", method);
        if (!s->request_log.what) /* made on the first such request */
            loglimit_init(&s->request_log, m->base, s->cfg->name, "request",
                          "requests nobody could answer", UNANSWERED_LOG_BURST,
                          UNANSWERED_LOG_RATE);
        if (loglimit_take(&s->request_log))
            log_full(LOG_INFO, s->cfg->name, "request", "%.300s", msg);
        upstream_respond_error(s->up, id, JSONRPC_METHOD_NOT_FOUND, msg);
        return;
    }
    sr = xcalloc(1, sizeof(*sr));
    sr->id = ++m->next_request_id;
    sr->reg = m;
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
    idmap_put(&s->requests, sr->id, sr);
    idmap_put(&agent_ensure(m->agents, p->id)->requests, sr->id, sr);
    if (as_form)
        sr->url_as_form = true;
    else if (cap == AGENT_CAP_ELICITATION_URL) {
        const char *eid = json_get_string(params, "elicitationId");
        elicit_url_note(s, eid, p->id);
        sr->url_eid = eid ? xstrdup(eid) : NULL;
    }
    agent_request(m->peers, p->id, sr->id, method, as_form ? as_form : params);
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

void route_peer_response(CallRegistry *m, Peer *p, JsonrpcMsg *msg)
{
    ServerRequest *sr = NULL;
    Server *s;

    if (mrtr_peer_response(m, p, msg))
        return;
    if (YAJL_IS_INTEGER(msg->id) && msg->id->u.number.i > 0)
        sr = idmap_get(&m->server_requests, (uint64_t)msg->id->u.number.i);
    if (!sr || sr->peer_id != p->id) {
        /* Twice, late, or never asked: nothing to do. */
        log_debug("peer %llu: response to an unknown request dropped", (unsigned long long)p->id);
        return;
    }
    s = server_get(m->servers, sr->server_id);
    if (s && s->up && s->up->id == sr->upstream_id) {
        if (msg->kind == JSONRPC_RESPONSE && !YAJL_IS_OBJECT(msg->result)) {
            /* Every result of sampling, elicitation and roots is an object: the server is told
             * the agent's answer was not one, rather than handed an empty one. */
            _cleanup_free_ char *text =
                xasprintf("the agent's answer to %s was not an object", sr->method);
            upstream_respond_error(s->up, sr->up_id, JSONRPC_INTERNAL_ERROR, text);
        } else if (msg->kind == JSONRPC_RESPONSE) {
            const char *action = json_get_string(msg->result, "action");
            _cleanup_json_ yajl_val r =
                sr->url_as_form ? json_object_new() : json_copy(msg->result);
            if (sr->url_as_form) /* url mode's answer is the action alone: no content goes back */
                json_object_set(r, "action", json_string_new(action ? action : "cancel"));
            else if (sr->schema)
                fill_defaults(r, sr->schema);
            if (sr->url_eid && !streq(action, "accept"))
                elicit_url_forget(s, sr->url_eid); /* no completion will follow */
            upstream_respond(s->up, sr->up_id, r);
        } else {
            yajl_val code = json_get(msg->error, "code");
            const char *text = json_get_string(msg->error, "message");
            if (sr->url_eid)
                elicit_url_forget(s, sr->url_eid);
            upstream_respond_error(s->up, sr->up_id,
                                   YAJL_IS_INTEGER(code) ? (int)code->u.number.i
                                                         : JSONRPC_INTERNAL_ERROR,
                                   text ? text : "(no message)");
        }
    }
    sreq_free(sr);
}

/* The upstream cancelled one of its requests: the agent is told, the entry goes. */
static void sreq_cancelled_upstream(CallRegistry *cr, Server *s, yajl_val params)
{
    yajl_val rid = json_get(params, "requestId");
    size_t pos = 0;
    void *v;

    while (idmap_next(&s->requests, &pos, NULL, &v)) {
        ServerRequest *sr = v;
        if (s->up && sr->upstream_id == s->up->id && json_equal(sr->up_id, rid)) {
            sreq_withdraw(sr, "cancelled by the server");
            sreq_free(sr);
            return;
        }
    }
}

void route_upstream_closed(CallRegistry *cr, Server *s, uint64_t upstream_id)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&s->requests, &pos, NULL, &v)) {
        ServerRequest *sr = v;
        if (sr->upstream_id == upstream_id) {
            sreq_withdraw(sr, "the server's session ended");
            sreq_free(sr);
        }
    }
    tasks_server_gone(&cr->tasks, s, upstream_id);
}

void route_server_removed(CallRegistry *cr, Server *s)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&s->requests, &pos, NULL, &v)) {
        sreq_withdraw(v, "the server was disconnected");
        sreq_free(v);
    }
    tasks_server_gone(&cr->tasks, s, 0);
}

void route_peer_gone(CallRegistry *cr, Peer *p)
{
    Agent *a = agent_get(cr->agents, p->id);
    size_t pos = 0;
    void *v;

    while (a && idmap_next(&a->requests, &pos, NULL, &v))
        sreq_fail(v, JSONRPC_INTERNAL_ERROR, "the agent that was asked disconnected");
    mrtr_peer_gone(cr, p);
    tasks_peer_gone(&cr->tasks, p->id);
}

void route_deinit(CallRegistry *cr)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&cr->server_requests, &pos, NULL, &v))
        sreq_free(v);
    idmap_deinit(&cr->server_requests);
}

char *route_cause_of_request(CallRegistry *cr, uint64_t request_id)
{
    ServerRequest *sr = idmap_get(&cr->server_requests, request_id);
    Server *s = sr ? server_get(cr->servers, sr->server_id) : NULL;

    /* The agent's latest call still at that server is the one the server is serving. */
    return s ? call_latest_at(s, sr->peer_id) : NULL;
}

void route_notification(CallRegistry *cr, Server *s, const char *method, yajl_val params)
{
    if (streq(method, "notifications/progress"))
        call_progress(cr, s, params);
    else if (streq(method, "notifications/message"))
        logging_message(cr, s, params);
    else if (streq(method, "notifications/cancelled"))
        sreq_cancelled_upstream(cr, s, params);
    else if (streq(method, "notifications/elicitation/complete"))
        elicit_url_complete(cr->peers, s, params);
    else
        tasks_route_notification(&cr->tasks, s, method, params);
}
