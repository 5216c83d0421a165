// SPDX-License-Identifier: MIT
// dispatch: every line from an agent to its method (the hot path for tools/call first), with the
// checks every handler relies on.

#include <stdio.h>

#include "common/json.h"
#include "common/jsonscan.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/route.h"
#include "daemon/methods/dispatch.h"
#include "daemon/methods/methods-mcp.h"
#include "daemon/methods/methods-mcpd.h"
#include "daemon/methods/methods-modern.h"
#include "daemon/methods/methods.h"

typedef struct ReloadAnswer {
    PeerRegistry *peers;
    uint64_t peer_id; /* by id: the peer may be gone by the time the reload is over */
    yajl_val id, result;
} ReloadAnswer;

void *methods_reload_answer_new(MethodsCtx *d, Peer *p, yajl_val id, yajl_val result)
{
    ReloadAnswer *x = xcalloc(1, sizeof(*x));

    *x = (ReloadAnswer){d->manager->peers, p->id, json_copy(id), result};
    return x;
}

void methods_reload_answer(yajl_val r, void *ud)
{
    ReloadAnswer *x = ud;

    if (x->result) {
        json_object_set(x->result, "reload", json_copy(r));
        agent_reply(x->peers, x->peer_id, x->id, x->result);
    } else {
        agent_reply(x->peers, x->peer_id, x->id, r);
    }
    json_free(x->result);
    json_free(x->id);
    free(x);
}

static const Method *find_method(const char *name)
{
    const Method *tables[] = {methods_mcp, methods_mcpd};

    for (size_t t = 0; t < N_ELEMENTS(tables); t++)
        for (const Method *mt = tables[t]; mt->name; mt++)
            if (streq(mt->name, name))
                return mt;
    return NULL;
}

/* Checks every handler relies on, so handlers only do their own work. */
static bool check_args(MethodsCtx *d, const Method *mt, Peer *p, JsonrpcMsg *m)
{
    Agent *a = agent_get(&d->manager->agents, p->id);

    if ((mt->flags & METHOD_NEEDS_INIT) && !(a && a->initialized)) {
        methods_error(d, p, m->id, MCPD_ERROR_NOT_INITIALIZED,
                      "send initialize before any other request");
        return false;
    }
    if (m->params && !YAJL_IS_OBJECT(m->params)) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, "params must be an object");
        return false;
    }
    if (mt->string_param) {
        const char *v = json_get_string(m->params, mt->string_param);
        if (!v || !*v) {
            _cleanup_free_ char *msg =
                xasprintf("params.%s must be a non-empty string", mt->string_param);
            methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, msg);
            return false;
        }
    }
    return true;
}

bool methods_fast(Peer *p, const char *line, size_t len, void *userdata)
{
    static const char *const top[] = {"jsonrpc", "id", "method", "params"};
    /* "task" is looked for only to leave a task's call to the general path (tasks.c). */
    static const char *const inner[] = {"name", "arguments", "_meta", "task"};
    static const char *const meta[] = {MCP_META_PROGRESS_TOKEN};
    JsonSpan v[N_ELEMENTS(top)], pv[N_ELEMENTS(inner)], tok = {NULL, 0};
    JsonscanLevel t = {top, N_ELEMENTS(top), v, 0, 0}, in = {inner, N_ELEMENTS(inner), pv, 0, 0};
    MethodsCtx *d = userdata;
    Agent *a = agent_get(&d->manager->agents, p->id);

    /* Only the common shape of tools/call; everything else takes the general path. The message
     * and its params are scanned in one pass, which also says which strings need no escaping
     * (bit i of .plain: value i), so the id and the name are not scanned again. */
    if (!a || !a->initialized || a->era == AGENT_ERA_MODERN ||
        jsonscan_object(line, len, &t, 3, &in) != 4 || !jsonscan_span_eq(v[0], "\"2.0\"") ||
        !jsonscan_span_eq(v[2], "\"tools/call\"") ||
        !(jsonscan_is_int(v[1], NULL) || (t.plain & 2u)) || in.count < 0 || !(in.plain & 1u) ||
        pv[0].n <= 2 || (pv[1].p && pv[1].p[0] != '{') || pv[3].p)
        return false;
    if (pv[2].p && (jsonscan_members(pv[2].p, pv[2].n, meta, 1, &tok) != 1 || !tok.p))
        return false;
    a->n_requests++;
    call_tool_fast(&d->manager->calls, p, a, v[1], pv[0], pv[1], tok);
    return true;
}

void methods_dispatch(Peer *p, JsonrpcMsg *m, void *userdata)
{
    MethodsCtx *d = userdata;
    const Method *mt;

    if (methods_init_hold(d, p, m))
        return; /* after an initialize still waiting for its project's files */
    agent_ensure(&d->manager->agents, p->id)->n_requests++;
    if (methods_modern_dispatch(d->manager, p, m))
        return; /* server/discover, or a 2026-07-28 agent's own method or retry */
    if (m->kind == JSONRPC_RESPONSE || m->kind == JSONRPC_ERROR_RESPONSE) {
        /* An answer to a request mcpd forwarded (sampling, elicitation, roots). */
        route_peer_response(&d->manager->calls, p, m);
        return;
    }
    mt = find_method(m->method);
    if (m->kind == JSONRPC_NOTIFICATION) {
        /* Notifications are never answered, known or not. */
        if (mt && (mt->flags & METHOD_NOTIFICATION) && (!m->params || YAJL_IS_OBJECT(m->params)))
            mt->handler(d, p, m);
        return;
    }
    if (!mt || (mt->flags & METHOD_NOTIFICATION)) {
        _cleanup_free_ char *msg = xasprintf("Method not found: %s", m->method);
        methods_error(d, p, m->id, JSONRPC_METHOD_NOT_FOUND, msg);
        return;
    }
    if (check_args(d, mt, p, m))
        mt->handler(d, p, m);
}
