// SPDX-License-Identifier: MIT
// methods-modern: a 2026-07-28 agent's requests in: checked (_meta, the era's methods), its
// connection placed, and handed to the one set of handlers, or resumed by a retry after
// input_required; what goes back to it is modern-writer.c's, its listen streams modern-listen.c's.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/mcp.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/logging.h"
#include "daemon/core/manager.h"
#include "daemon/core/route.h"
#include "daemon/core/surface.h"
#include "daemon/core/wsprofile.h"
#include "daemon/core/wssearch.h"
#include "daemon/methods/methods-capabilities.h"
#include "daemon/methods/methods-modern.h"
#include "daemon/methods/methods.h"
#include "daemon/methods/modern-ask.h"
#include "daemon/methods/modern-listen.h"
#include "daemon/methods/modern-pending.h"
#include "daemon/methods/modern-state.h"
#include "daemon/methods/modern-writer.h"

/* Methods the 2026-07-28 revision removed: a modern agent gets -32601 for them. */
static const char *const removed_methods[] = {
    "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
};

static void error_data(Peer *p, yajl_val id, int code, const char *message, yajl_val data)
{
    agent_write_plain(
        p, &(AgentOut){
               .kind = AGENT_OUT_ERROR, .id = id, .code = code, .message = message, .data = data});
}

static void reply(Peer *p, yajl_val id, yajl_val result)
{
    agent_reply(p->reg, p->id, id, result);
}

static void fail(Peer *p, yajl_val id, int code, const char *message)
{
    agent_reply_error(p->reg, p->id, id, code, message);
}

/* ---- lifetime ---- */

static void modern_free(void *arg);

/* The modern state of p's agent, made (and made p's writer) on first use. */
static ModernAgent *agent_of(Manager *mg, Peer *p)
{
    Agent *a = agent_ensure(&mg->agents, p->id);
    ModernAgent *ma = a->modern;

    if (!ma) {
        ma = xcalloc(1, sizeof(*ma));
        ma->writer.write = modern_writer_write;
        ma->mg = mg;
        ma->peer_id = p->id;
        a->modern = ma;
        a->modern_free = modern_free;
        p->writer = &ma->writer;
    }
    return ma;
}

/* The agent went (Agent.modern_free): its era's state goes with it. */
static void modern_free(void *arg)
{
    ModernAgent *ma = arg;
    Peer *p = peer_get(ma->mg->peers, ma->peer_id);

    if (p)
        p->writer = NULL;
    modern_pending_clear(ma);
    modern_listen_deinit(&ma->listens);
    wrap_table_clear(&ma->wrapped);
    free(ma->cwd);
    free(ma->session);
    free(ma);
}

/* ---- server/discover ---- */

static bool version_known(const char *v)
{
    if (!v)
        return false;
    if (streq(v, MCP_PROTOCOL_2026_07_28))
        return true;
    for (size_t i = 0; mcp_protocol_versions[i]; i++)
        if (streq(v, mcp_protocol_versions[i]))
            return true;
    return false;
}

/* -32022 with the versions a request may carry, and the one it did. */
static void unsupported_version(Peer *p, yajl_val id, yajl_val asked, bool discover)
{
    _cleanup_json_ yajl_val data = json_object_new();
    yajl_val list = json_array_new();
    _cleanup_free_ char *msg = NULL;

    json_array_push(list, json_string_new(MCP_PROTOCOL_2026_07_28));
    for (size_t i = 0; discover && mcp_protocol_versions[i]; i++)
        json_array_push(list, json_string_new(mcp_protocol_versions[i]));
    json_object_set(data, "supported", list);
    json_object_set(data, "requested", asked ? json_copy(asked) : json_null_new());
    msg = xasprintf("Unsupported protocol version: mcpd serves %s without initialize (and the "
                    "2025 revisions after initialize)",
                    MCP_PROTOCOL_2026_07_28);
    error_data(p, id, MCP_ERROR_UNSUPPORTED_PROTOCOL_VERSION, msg, data);
}

static void discover(Manager *mg, Peer *p, JsonrpcMsg *m)
{
    yajl_val meta = json_get_object(m->params, "_meta"),
             asked = json_get(meta, MCP_META_PROTOCOL_VERSION);
    const char *only = json_get_string(meta, MCPD_META_SERVER);
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val versions, rmeta;
    char *instructions;
    Server *s;
    bool trial;

    if (asked && !version_known(YAJL_IS_STRING(asked) ? asked->u.string : NULL)) {
        unsupported_version(p, m->id, asked, true);
        return;
    }
    /* A probe naming one server (mcpctl bridge --server) of a connection not placed yet is
     * answered with that server's capabilities and instructions, which the requests after it
     * will see; the connection itself stays unplaced. */
    trial = only && *only && !surface_passthrough(mg, p, &s) &&
            surface_passthrough_set(mg, p, only, &why) == 0;
    r = json_object_new();
    versions = json_array_new();
    json_array_push(versions, json_string_new(MCP_PROTOCOL_2026_07_28));
    for (size_t i = 0; mcp_protocol_versions[i]; i++)
        json_array_push(versions, json_string_new(mcp_protocol_versions[i]));
    json_object_set(r, "resultType", json_string_new("complete"));
    json_object_set(r, "supportedVersions", versions);
    json_object_set(r, "capabilities", methods_capabilities(mg, p));
    /* Tasks are an extension in 2026-07-28, which mcpd does not relay (docs/protocol.md). */
    json_free(json_object_take(json_get_object(r, "capabilities"), "tasks"));
    instructions = surface_instructions(mg, p);
    if (instructions)
        json_object_set(r, "instructions", json_string_new_take(instructions));
    if (trial)
        surface_passthrough_clear(mg, p);
    json_object_set(r, "ttlMs", json_int_new(MODERN_LIST_TTL_MS));
    json_object_set(r, "cacheScope", json_string_new("private"));
    rmeta = json_object_new();
    json_object_set(rmeta, MCP_META_SERVER_INFO, methods_server_info());
    json_object_set(r, "_meta", rmeta);
    reply(p, m->id, r);
}

/* ---- a request's _meta ---- */

static bool bad_meta(Peer *p, JsonrpcMsg *m, const char *field, const char *want)
{
    _cleanup_free_ char *msg = xasprintf("params._meta[\"%s\"] must be %s", field, want);

    fail(p, m->id, JSONRPC_INVALID_PARAMS, msg);
    return false;
}

/* The workspace from mcpd/cwd and mcpd/session: the first request's, or a change while idle. */
static bool attach(Manager *mg, Peer *p, ModernAgent *ma, JsonrpcMsg *m, const char *cwd,
                   const char *token, const char *only)
{
    const char *want_cwd = cwd ? cwd : "", *want_session = token ? token : "";
    _cleanup_free_ char *why = NULL;
    Agent *a = agent_ensure(&mg->agents, p->id);

    if (a->initialized) {
        if ((!cwd || streq(want_cwd, ma->cwd)) && (!token || streq(want_session, ma->session)))
            return true;
        if (a->calls_in_flight || ma->pending.n || ma->listens.n) {
            fail(p, m->id, JSONRPC_INVALID_PARAMS,
                 "params._meta names another workspace or session than this "
                 "connection's while it has requests or listens open: use another "
                 "connection, or wait for them to end");
            return false;
        }
        manager_peer_unplace(mg, p);
    }
    if (ws_attach(&mg->workspaces, p, *want_cwd ? want_cwd : NULL,
                  *want_session ? want_session : NULL, &why) != 0) {
        log_info("peer %llu (pid %d) refused: %s", (unsigned long long)p->id, (int)p->pid, why);
        fail(p, m->id, JSONRPC_INVALID_PARAMS, why);
        return false;
    }
    if (only && surface_passthrough_set(mg, p, only, &why) < 0) {
        manager_peer_unplace(mg, p); /* undone, so that a corrected request starts clean */
        fail(p, m->id, JSONRPC_INVALID_PARAMS, why);
        return false;
    }
    free(ma->cwd);
    free(ma->session);
    ma->told_session = false;
    ma->cwd = xstrdup(want_cwd);
    ma->session = xstrdup(want_session);
    a = agent_ensure(&mg->agents, p->id); /* made by the attach */
    free(a->cwd);
    a->cwd = *want_cwd ? xstrdup(want_cwd) : NULL;
    if (!a->protocol_version)
        a->protocol_version = xstrdup(MCP_PROTOCOL_2026_07_28);
    a->initialized = true;
    return true;
}

/*
 * The agent's profile (core/wsprofile.c) and tool mode (core/wssearch.c), taken at its first
 * request with its workspace and clientInfo: _meta["mcpd/profile"] and ["mcpd/toolMode"] (the
 * bridge's --profile and $MCPD_TOOL_MODE ride on each request until then).
 */
static bool take_profile(Manager *mg, Peer *p, JsonrpcMsg *m, yajl_val meta)
{
    yajl_val v = json_get(meta, MCPD_META_PROFILE), mode = json_get(meta, MCPD_META_TOOL_MODE);
    _cleanup_free_ char *why = NULL;

    if (v && !YAJL_IS_STRING(v))
        return bad_meta(p, m, MCPD_META_PROFILE, "a string: a profile of mcpd.json");
    if (mode && !wssearch_mode_known(YAJL_IS_STRING(mode) ? mode->u.string : NULL))
        return bad_meta(p, m, MCPD_META_TOOL_MODE, "\"search\" or \"all\"");
    if (wsprofile_chosen(&mg->workspaces, p->id))
        return true;
    if (wssearch_choose_profile(&mg->workspaces, p, v ? v->u.string : NULL, &why) != 0) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS, why);
        return false;
    }
    if (mode) /* asked for by the agent: over its profile's */
        wssearch_set_mode(&mg->workspaces, p, mode->u.string, false);
    return true;
}

/* Check and take what a modern request's _meta says; false when an error was sent. */
static bool take_meta(Manager *mg, Peer *p, ModernAgent *ma, JsonrpcMsg *m)
{
    yajl_val meta = json_get(m->params, "_meta"), v, caps, info;
    const char *cwd, *token, *name, *only;
    Agent *a;
    int level;

    if (meta && !YAJL_IS_OBJECT(meta)) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS, "params._meta must be an object");
        return false;
    }
    /* No version at all is unsupported too: the answer names the one to send. */
    v = json_get(meta, MCP_META_PROTOCOL_VERSION);
    if (!YAJL_IS_STRING(v) || !streq(v->u.string, MCP_PROTOCOL_2026_07_28)) {
        unsupported_version(p, m->id, v, false);
        return false;
    }
    caps = json_get(meta, MCP_META_CLIENT_CAPABILITIES);
    if (caps && !YAJL_IS_OBJECT(caps))
        return bad_meta(p, m, MCP_META_CLIENT_CAPABILITIES, "an object");
    info = json_get(meta, MCP_META_CLIENT_INFO);
    if (info && !YAJL_IS_OBJECT(info))
        return bad_meta(p, m, MCP_META_CLIENT_INFO, "an object");
    v = json_get(meta, MCP_META_LOG_LEVEL);
    level = v && YAJL_IS_STRING(v) ? mcp_level_from_name(v->u.string) : -1;
    if (v && level < 0)
        return bad_meta(p, m, MCP_META_LOG_LEVEL,
                        "a log level: debug, info, notice, warning, error, critical, alert or "
                        "emergency");
    v = json_get(meta, MCPD_META_CWD);
    cwd = json_get_string(meta, MCPD_META_CWD);
    if (v && !cwd)
        return bad_meta(p, m, MCPD_META_CWD, "a string (the agent's working directory)");
    v = json_get(meta, MCPD_META_SESSION);
    token = json_get_string(meta, MCPD_META_SESSION);
    if (v && !token)
        return bad_meta(p, m, MCPD_META_SESSION, "a string (MCPD_SESSION of the parent agent)");
    v = json_get(meta, MCPD_META_SERVER);
    only = json_get_string(meta, MCPD_META_SERVER);
    if (v && (!only || !*only))
        return bad_meta(p, m, MCPD_META_SERVER, "a server's name");
    if (!attach(mg, p, ma, m, cwd, token, only))
        return false;
    a = agent_ensure(&mg->agents, p->id);
    if (caps)
        a->caps = agent_caps_parse(caps);
    name = json_get_string(info, "name");
    if (name && !a->client_name) {
        const char *version = json_get_string(info, "version");
        a->client_name = xstrdup(name);
        a->client_version = version ? xstrdup(version) : NULL;
        if (!p->label)
            p->label = xstrdup(name);
    }
    if (level >= 0 && level != a->log_level)
        logging_set_level(&mg->calls, p, level);
    return take_profile(mg, p, m, meta);
}

/*
 * The request's envelope is this hop's: the era's keys and mcpd's own leave _meta before the
 * request goes on (an upstream gets its own envelope; the rest of _meta passes untouched).
 */
static void strip_envelope(yajl_val params)
{
    static const char *const keys[] = {
        MCP_META_PROTOCOL_VERSION,
        MCP_META_CLIENT_CAPABILITIES,
        MCP_META_CLIENT_INFO,
        MCP_META_LOG_LEVEL,
        MCPD_META_CWD,
        MCPD_META_SESSION,
        MCPD_META_SERVER,
        MCPD_META_PROFILE,
        MCPD_META_TOOL_MODE,
    };
    yajl_val meta = json_get_object(params, "_meta");

    for (size_t i = 0; meta && i < N_ELEMENTS(keys); i++)
        json_free(json_object_take(meta, keys[i]));
}

/* The agent's retry with inputResponses: answers go upstream, the call goes on. */
static void resume(Manager *mg, Peer *p, ModernAgent *ma, Pending *pd, JsonrpcMsg *m,
                   const char *id)
{
    yajl_val answers = json_get(m->params, "inputResponses");

    if (!streq(m->method, pd->method) || !pd->parked) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS,
             !pd->parked ? "params.requestState is being retried already"
                         : "params.requestState belongs to another method");
        return;
    }
    if (pd->shown && pd->shown->u.object.len && !YAJL_IS_OBJECT(answers)) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS,
             "params.inputResponses must be an object with an answer to each of "
             "inputRequests");
        return;
    }
    for (size_t i = 0; pd->shown && i < pd->shown->u.object.len; i++) {
        yajl_val a = json_get(answers, pd->shown->u.object.keys[i]);
        if (!YAJL_IS_OBJECT(a)) {
            _cleanup_free_ char *msg =
                xasprintf("params.inputResponses[\"%s\"] must be the result object for that "
                          "input request",
                          pd->shown->u.object.keys[i]);
            fail(p, m->id, JSONRPC_INVALID_PARAMS, msg);
            return;
        }
    }
    for (size_t i = 0; pd->shown && i < pd->shown->u.object.len; i++) {
        JsonrpcMsg resp = {.kind = JSONRPC_RESPONSE};
        resp.id = pd->shown->u.object.values[i];
        resp.result = json_get(answers, pd->shown->u.object.keys[i]);
        route_peer_response(&mg->calls, p, &resp);
    }
    json_free(pd->shown);
    pd->shown = NULL;
    modern_pending_index_remove(ma, pd, MODERN_BY_DOWN);
    free(pd->down_id);
    pd->down_id = xstrdup(id);
    modern_pending_index_add(ma, pd, MODERN_BY_DOWN);
    pd->parked = false;
    event_del(pd->expiry);
    if (pd->has_held) {
        modern_writer_held_out(ma, p, pd);
    } else if (pd->asks && pd->asks->u.object.len) {
        modern_ask_agent(p, pd);
    }
}

/* ---- dispatch ---- */

static void cancelled(Manager *mg, Peer *p, ModernAgent *ma, JsonrpcMsg *m)
{
    yajl_val rid = json_get(m->params, "requestId");
    _cleanup_free_ char *text = rid ? json_to_string(rid) : NULL;
    Pending *pd = text ? modern_pending_find(ma, text, MODERN_BY_DOWN) : NULL;

    if (text && modern_listen_end(&ma->listens, mg, p, text))
        return;
    if (pd)
        modern_ask_abandon(ma, p, pd, "the agent cancelled the call");
}

/* -32601 for a method the era removed: true when it was one. */
static bool refuse_removed(Peer *p, JsonrpcMsg *m)
{
    for (size_t i = 0; i < N_ELEMENTS(removed_methods); i++) {
        if (!streq(m->method, removed_methods[i]))
            continue;
        _cleanup_free_ char *msg = xasprintf("Method not found: %s (not part of MCP %s, which "
                                             "this connection speaks)",
                                             m->method, MCP_PROTOCOL_2026_07_28);
        fail(p, m->id, JSONRPC_METHOD_NOT_FOUND, msg);
        return true;
    }
    return false;
}

static bool request(Manager *mg, Peer *p, JsonrpcMsg *m)
{
    ModernAgent *ma = agent_of(mg, p);
    _cleanup_free_ char *id = json_to_string(m->id);
    yajl_val rs;
    Pending *pd;

    if (refuse_removed(p, m))
        return true;
    if (m->params && !YAJL_IS_OBJECT(m->params)) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS, "params must be an object");
        return true;
    }
    if (!take_meta(mg, p, ma, m))
        return true;
    if (modern_pending_find(ma, id, MODERN_BY_DOWN) || modern_listen_has(&ma->listens, id)) {
        fail(p, m->id, JSONRPC_INVALID_REQUEST,
             "the id is in use by a request of this connection still in flight");
        return true;
    }
    strip_envelope(m->params);
    if (streq(m->method, "subscriptions/listen")) {
        modern_listen_start(&ma->listens, mg, p, m, id);
        return true;
    }
    rs = json_get(m->params, "requestState");
    if (rs) {
        yajl_val orig = YAJL_IS_STRING(rs) ? wrap_table_take(&ma->wrapped, rs->u.string) : NULL;
        pd = YAJL_IS_STRING(rs) && !orig ? modern_pending_find(ma, rs->u.string, MODERN_BY_TOKEN)
                                         : NULL;
        if (pd) {
            resume(mg, p, ma, pd, m, id);
            return true;
        }
        if (!orig) {
            fail(p, m->id, JSONRPC_INVALID_PARAMS,
                 "params.requestState is unknown here: expired, already used, or from "
                 "another connection; send the request again without it");
            return true;
        }
        json_object_set(m->params, "requestState", orig); /* the server's own, for its retry */
    }
    if (ma->pending.n >= MODERN_MAX_PENDING)
        modern_pending_sweep(ma);
    if (ma->pending.n >= MODERN_MAX_PENDING) {
        _cleanup_free_ char *msg = xasprintf("this connection has %d requests in flight, the most "
                                             "mcpd keeps: wait for some answers",
                                             MODERN_MAX_PENDING);
        fail(p, m->id, MCPD_ERROR_TOO_MANY_CALLS, msg);
        return true;
    }
    modern_pending_add(ma, id, m->method);
    return false;
}

bool methods_modern_dispatch(Manager *mg, Peer *p, JsonrpcMsg *m)
{
    Agent *a = agent_ensure(&mg->agents, p->id);

    if (a->era == AGENT_ERA_LEGACY)
        return false;
    if (m->kind == JSONRPC_REQUEST && streq(m->method, "server/discover")) {
        /* A probe: the era is fixed by what comes next (docs/modern.md). */
        if (m->params && !YAJL_IS_OBJECT(m->params))
            fail(p, m->id, JSONRPC_INVALID_PARAMS, "params must be an object");
        else
            discover(mg, p, m);
        return true;
    }
    if (a->era == AGENT_ERA_UNKNOWN) {
        if (m->kind != JSONRPC_REQUEST)
            return false;
        if (streq(m->method, "initialize") ||
            !json_get(json_get_object(m->params, "_meta"), MCP_META_PROTOCOL_VERSION)) {
            a->era = AGENT_ERA_LEGACY;
            return false;
        }
        a->era = AGENT_ERA_MODERN;
        agent_of(mg, p);
        log_debug("peer %llu speaks MCP %s", (unsigned long long)p->id, MCP_PROTOCOL_2026_07_28);
    }
    switch (m->kind) {
    case JSONRPC_RESPONSE:
    case JSONRPC_ERROR_RESPONSE:
        /* mcpd sends modern agents no requests: nothing to answer. */
        log_debug("peer %llu: a response from a %s agent dropped", (unsigned long long)p->id,
                  MCP_PROTOCOL_2026_07_28);
        return true;
    case JSONRPC_NOTIFICATION:
        if (!streq(m->method, "notifications/cancelled") || !YAJL_IS_OBJECT(m->params))
            return false;
        cancelled(mg, p, agent_of(mg, p), m);
        return true;
    case JSONRPC_REQUEST:
        return request(mg, p, m);
    }
    return false;
}

void methods_modern_shutdown(MethodsCtx *d)
{
    for (Peer *p = d->manager->peers->first; p; p = p->next) {
        Agent *a = agent_get(&d->manager->agents, p->id);
        ModernAgent *ma = a ? a->modern : NULL;
        if (ma)
            modern_listen_close(&ma->listens, p);
    }
}
