// SPDX-License-Identifier: MIT
// methods-mcp: the MCP methods agents call (initialize, ping, tools/*, notifications) and dispatch.

#include <stdio.h>

#include "common/json.h"
#include "common/jsonscan.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/daemon.h"
#include "daemon/methods/methods.h"
#include "daemon/methods/methods-modern.h"
#include "daemon/core/surface.h"

/* Revisions served downstream, newest first (DESIGN section 3). */
const char *const methods_served_versions[] = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

void methods_reply(Peer *p, yajl_val id, yajl_val result)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_result(&sb, id, result);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

void methods_error(Peer *p, yajl_val id, int code, const char *message)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_error(&sb, id, code, message, NULL);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

yajl_val methods_capabilities(Manager *mg, Peer *p)
{
    yajl_val caps = json_object_new(), tools = json_object_new(), exp = json_object_new();
    yajl_val mcpd = json_object_new();

    json_object_set(tools, "listChanged", json_bool_new(true));
    json_object_set(caps, "tools", tools);
    json_object_set(caps, "logging", json_object_new());
    surface_capabilities(mg, p, caps);
    json_object_set(mcpd, "protocol", json_int_new(1));
    json_object_set(exp, "mcpd", mcpd);
    json_object_set(caps, "experimental", exp);
    return caps;
}

yajl_val methods_server_info(void)
{
    yajl_val info = json_object_new();

    json_object_set(info, "name", json_string_new("mcpd"));
    json_object_set(info, "version", json_string_new(MCPD_VERSION));
    return info;
}

static const char *pick_version(const char *asked)
{
    for (size_t i = 0; asked && methods_served_versions[i]; i++)
        if (streq(asked, methods_served_versions[i]))
            return methods_served_versions[i];
    return methods_served_versions[0];
}

static void take_client_info(Peer *p, yajl_val params)
{
    yajl_val info = json_get_object(params, "clientInfo");
    const char *name = json_get_string(info, "name"), *version = json_get_string(info, "version");
    yajl_val caps = json_get_object(params, "capabilities");

    if (name)
        p->client_name = xstrdup(name);
    if (version)
        p->client_version = xstrdup(version);
    p->caps = (json_get_object(caps, "sampling") ? PEER_CAP_SAMPLING : 0) |
              (json_get_object(caps, "elicitation") ? PEER_CAP_ELICITATION : 0) |
              (json_get_object(caps, "roots") ? PEER_CAP_ROOTS : 0);
}

static void m_initialize(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    yajl_val r, caps, info, meta, pmeta = json_get_object(m->params, "_meta");
    const char *version, *cwd = json_get_string(pmeta, "mcpd/cwd");
    const char *token = json_get_string(pmeta, "mcpd/session");
    const char *only = json_get_string(pmeta, "mcpd/server");
    _cleanup_free_ char *why = NULL;

    if (p->initialized) {
        methods_error(p, m->id, JSONRPC_INVALID_REQUEST, "already initialized");
        return;
    }
    if ((json_get(pmeta, "mcpd/cwd") && !cwd) || (json_get(pmeta, "mcpd/session") && !token)) {
        methods_error(p, m->id, JSONRPC_INVALID_PARAMS,
                      "_meta[\"mcpd/cwd\"] and _meta[\"mcpd/session\"] must be strings");
        return;
    }
    if (token && !*token)
        token = NULL; /* MCPD_SESSION set but empty: no parent */
    if (manager_attach(&d->manager, p, cwd && *cwd ? cwd : NULL, token, &why) < 0) {
        log_info("peer %llu (pid %d) refused: %s", (unsigned long long)p->id, (int)p->pid, why);
        methods_error(p, m->id, JSONRPC_INVALID_PARAMS, why);
        return;
    }
    if ((json_get(pmeta, "mcpd/server") && (!only || !*only)) ||
        (only && surface_passthrough_set(&d->manager, p, only, &why) < 0)) {
        /* Undo the attach, so that a corrected initialize starts clean. */
        manager_peer_gone(&d->manager, p);
        p->workspace_id = p->session_id = 0;
        p->parent_peer_id = 0;
        methods_error(p, m->id, JSONRPC_INVALID_PARAMS,
                      why ? why : "_meta[\"mcpd/server\"] must be a server's name");
        return;
    }
    if (cwd)
        p->cwd = xstrdup(cwd);
    take_client_info(p, m->params);
    version = pick_version(json_get_string(m->params, "protocolVersion"));
    p->protocol_version = xstrdup(version);
    r = json_object_new();
    caps = methods_capabilities(&d->manager, p);
    info = methods_server_info();
    meta = json_object_new();
    json_object_set(meta, "mcpd/session", json_string_new(manager_peer_token(&d->manager, p)));
    json_object_set(r, "protocolVersion", json_string_new(version));
    json_object_set(r, "capabilities", caps);
    json_object_set(r, "serverInfo", info);
    json_object_set(r, "_meta", meta);
    char *instructions = surface_instructions(&d->manager, p);
    if (instructions)
        json_object_set(r, "instructions", json_string_new_take(instructions));
    p->initialized = true;
    methods_reply(p, m->id, r);
    json_free(r);
    log_debug("peer %llu initialized: %s %s (protocol %s)", (unsigned long long)p->id,
              p->client_name ? p->client_name : "?", p->client_version ? p->client_version : "",
              version);
}

static void m_ping(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    (void)d;
    methods_reply(p, m->id, NULL);
}

static void m_tools_list(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    manager_list_tools(&d->manager, p, m->id);
}

static void m_tools_call(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    manager_call_tool(&d->manager, p, m->id, m->params);
}

static void m_prompts_list(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    surface_list_gated(&d->manager, p, m->id, SURFACE_PROMPTS, m->params);
}

static void m_resources_list(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    surface_list_gated(&d->manager, p, m->id, SURFACE_RESOURCES, m->params);
}

static void m_templates_list(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    surface_list_gated(&d->manager, p, m->id, SURFACE_TEMPLATES, m->params);
}

static void m_prompts_get(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    surface_prompt_get(&d->manager, p, m->id, m->params);
}

static void m_resources_read(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    surface_read(&d->manager, p, m->id, m->params);
}

static void m_subscribe(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    surface_subscribe(&d->manager, p, m->id, m->params, true);
}

static void m_unsubscribe(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    surface_subscribe(&d->manager, p, m->id, m->params, false);
}

static void m_complete(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    surface_complete(&d->manager, p, m->id, m->params);
}

static void m_logging_set_level(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    const char *name = json_get_string(m->params, "level");
    int level = mcp_log_level(name);

    if (level < 0) {
        _cleanup_free_ char *msg = xasprintf(
            "unknown log level \"%s\": use debug, info, notice, warning, error, critical, "
            "alert or emergency",
            name);
        methods_error(p, m->id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    manager_set_log_level(&d->manager, p, level);
    methods_reply(p, m->id, NULL);
}

static void n_cancelled(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    manager_cancel(&d->manager, p, json_get(m->params, "requestId"));
}

static void n_ignore(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    (void)d, (void)p, (void)m;
}

const Method methods_mcp[] = {
    {"initialize", m_initialize, 0, NULL},
    {"ping", m_ping, 0, NULL},
    {"tools/list", m_tools_list, METHOD_NEEDS_INIT, NULL},
    {"tools/call", m_tools_call, METHOD_NEEDS_INIT, "name"},
    {"logging/setLevel", m_logging_set_level, METHOD_NEEDS_INIT, "level"},
    {"prompts/list", m_prompts_list, METHOD_NEEDS_INIT, NULL},
    {"prompts/get", m_prompts_get, METHOD_NEEDS_INIT, "name"},
    {"resources/list", m_resources_list, METHOD_NEEDS_INIT, NULL},
    {"resources/templates/list", m_templates_list, METHOD_NEEDS_INIT, NULL},
    {"resources/read", m_resources_read, METHOD_NEEDS_INIT, "uri"},
    {"resources/subscribe", m_subscribe, METHOD_NEEDS_INIT, "uri"},
    {"resources/unsubscribe", m_unsubscribe, METHOD_NEEDS_INIT, "uri"},
    {"completion/complete", m_complete, METHOD_NEEDS_INIT, NULL},
    {"notifications/initialized", n_ignore, METHOD_NOTIFICATION, NULL},
    {"notifications/cancelled", n_cancelled, METHOD_NOTIFICATION, NULL},
    {"notifications/roots/list_changed", n_ignore, METHOD_NOTIFICATION, NULL},
    {NULL, NULL, 0, NULL},
};

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
static bool check_args(const Method *mt, Peer *p, JsonrpcMsg *m)
{
    if ((mt->flags & METHOD_NEEDS_INIT) && !p->initialized) {
        methods_error(p, m->id, MCPD_ERROR_NOT_INITIALIZED,
                      "send initialize before any other request");
        return false;
    }
    if (m->params && !YAJL_IS_OBJECT(m->params)) {
        methods_error(p, m->id, JSONRPC_INVALID_PARAMS, "params must be an object");
        return false;
    }
    if (mt->string_param) {
        const char *v = json_get_string(m->params, mt->string_param);
        if (!v || !*v) {
            _cleanup_free_ char *msg =
                xasprintf("params.%s must be a non-empty string", mt->string_param);
            methods_error(p, m->id, JSONRPC_INVALID_PARAMS, msg);
            return false;
        }
    }
    return true;
}

bool methods_fast(Peer *p, const char *line, size_t len, void *userdata)
{
    static const char *const top[] = {"jsonrpc", "id", "method", "params"};
    static const char *const inner[] = {"name", "arguments", "_meta"};
    static const char *const meta[] = {"progressToken"};
    JsonSpan v[N_ELEMENTS(top)], pv[N_ELEMENTS(inner)], tok = {NULL, 0};
    Daemon *d = userdata;

    /* Only the common shape of tools/call; everything else takes the general path. */
    if (!p->initialized || p->era == PEER_ERA_MODERN ||
        jsonscan_members(line, len, top, N_ELEMENTS(top), v) != 4 ||
        !jsonscan_span_eq(v[0], "\"2.0\"") || !jsonscan_span_eq(v[2], "\"tools/call\"") ||
        !(jsonscan_is_int(v[1], NULL) || jsonscan_is_plain_string(v[1])) ||
        jsonscan_members(v[3].p, v[3].n, inner, N_ELEMENTS(inner), pv) < 0 ||
        !jsonscan_is_plain_string(pv[0]) || pv[0].n <= 2 || (pv[1].p && pv[1].p[0] != '{'))
        return false;
    if (pv[2].p && (jsonscan_members(pv[2].p, pv[2].n, meta, 1, &tok) != 1 || !tok.p))
        return false;
    p->n_requests++;
    manager_call_tool_fast(&d->manager, p, v[1], pv[0], pv[1], tok);
    return true;
}

void methods_dispatch(Peer *p, JsonrpcMsg *m, void *userdata)
{
    Daemon *d = userdata;
    const Method *mt;

    p->n_requests++;
    if (methods_modern_dispatch(&d->manager, p, m))
        return; /* server/discover, or a 2026-07-28 agent's own method or retry */
    if (m->kind == JSONRPC_RESPONSE || m->kind == JSONRPC_ERROR_RESPONSE) {
        /* An answer to a request mcpd forwarded (sampling, elicitation, roots). */
        manager_peer_response(&d->manager, p, m);
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
        methods_error(p, m->id, JSONRPC_METHOD_NOT_FOUND, msg);
        return;
    }
    if (check_args(mt, p, m))
        mt->handler(d, p, m);
}
