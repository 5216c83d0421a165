// SPDX-License-Identifier: MIT
// methods-mcp: the MCP methods agents call (initialize, ping, tools/*, notifications).

#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "common/json.h"
#include "common/jsonscan.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/util.h"
#include "common/version.h"
#include "daemon/methods/methods.h"
#include "daemon/methods/methods-capabilities.h"
#include "daemon/methods/methods-mcp.h"
#include "daemon/core/logging.h"
#include "daemon/core/surface.h"
#include "daemon/core/wsprofile.h"
#include "daemon/core/wssearch.h"

/* The revision served downstream (DESIGN section 3): the one asked for, else the newest. */
static const char *pick_version(const char *asked)
{
    const char *v = mcp_protocol_find(asked);

    return v ? v : MCP_PROTOCOL_LATEST;
}

static void take_client_info(Agent *a, Peer *p, yajl_val params)
{
    yajl_val info = json_get_object(params, "clientInfo");
    const char *name = json_get_string(info, "name"), *version = json_get_string(info, "version");
    yajl_val caps = json_get_object(params, "capabilities");

    if (name) {
        a->client_name = xstrdup(name);
        p->label = xstrdup(name);
    }
    if (version)
        a->client_version = xstrdup(version);
    a->caps = agent_caps_parse(caps);
}

/*
 * Messages an agent may send after an initialize still waiting for its project's discovery,
 * held and handled after the answer, in order. A host that does not wait for the answer sends
 * initialize, initialized and a list or two; one that pipelines sends its whole batch (the
 * bridge's bulk test: 200 calls, 3 MiB), which a synchronous discovery used to take. Bounded by
 * count (what 256 calls in flight and their notifications need, with room) and bytes: one
 * agent's as much as one line may be (16 MiB), all agents' together four of those, so agents
 * waiting at once cannot hold more than that. Beyond: refused, the agent named.
 */
#define INIT_HOLD_MAX             4096
#define INIT_HOLD_BYTES_MAX       (16u * 1024u * 1024u)
#define INIT_HOLD_TOTAL_BYTES_MAX (4u * INIT_HOLD_BYTES_MAX)

/* An initialize whose answer waits for its project's first discovery (a thread reads it). */
typedef struct InitWait {
    struct InitWait *next;
    MethodsCtx *d;
    uint64_t peer_id;
    yajl_val id, params;
    char **held; /* whole messages that came after it, as JSON text */
    size_t n_held, cap_held, held_bytes;
} InitWait;

/* The initializes waiting, all agents together (bounded by the agents mcpd serves). */
static InitWait *init_waits;
/* The bytes all of them hold (INIT_HOLD_TOTAL_BYTES_MAX). */
static size_t init_held_bytes;

static void init_answer(MethodsCtx *d, Peer *p, yajl_val id, yajl_val params);

static InitWait *init_wait_take(uint64_t peer_id)
{
    for (InitWait **w = &init_waits; *w; w = &(*w)->next)
        if ((*w)->peer_id == peer_id) {
            InitWait *found = *w;
            *w = found->next;
            return found;
        }
    return NULL;
}

static void init_wait_free(InitWait *w)
{
    json_free(w->id);
    json_free(w->params);
    for (size_t i = 0; i < w->n_held; i++)
        free(w->held[i]);
    free(w->held);
    init_held_bytes -= w->held_bytes;
    free(w);
}

bool methods_init_hold(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    InitWait *w = init_waits;

    while (w && w->peer_id != p->id)
        w = w->next;
    if (!w)
        return false;
    char *text = json_to_string(m->root);
    size_t n = text ? strlen(text) : 0;
    if (!text || w->n_held == INIT_HOLD_MAX || w->held_bytes + n > INIT_HOLD_BYTES_MAX ||
        init_held_bytes + n > INIT_HOLD_TOTAL_BYTES_MAX) {
        free(text);
        if (m->kind == JSONRPC_REQUEST)
            methods_error(d, p, m->id, JSONRPC_INVALID_REQUEST,
                          "wait for the answer to initialize before sending more");
        return true;
    }
    if (w->n_held == w->cap_held) {
        w->cap_held = w->cap_held ? 2 * w->cap_held : 16;
        w->held = xrealloc(w->held, w->cap_held * sizeof(*w->held));
    }
    w->held[w->n_held++] = text;
    w->held_bytes += n;
    init_held_bytes += n;
    return true;
}

/* The held messages, handled as if they came now (the answer to initialize is out), by the
 * dispatch that delivered them (methods_dispatch, given to the peers by daemon.c). */
static void init_replay(MethodsCtx *d, Peer *p, InitWait *w)
{
    for (size_t i = 0; i < w->n_held; i++) {
        _cleanup_free_ char *err = NULL;
        const char *text = w->held[i];
        JsonrpcMsg m = {0};

        if (jsonrpc_msg_parse(&m, text, strlen(text), &err) == 0)
            d->manager->peers->dispatch(p, &m, d->manager->peers->userdata);
        jsonrpc_msg_deinit(&m);
    }
}

/* The project's servers are known: the capabilities and instructions can be told. */
static void on_init_ready(evutil_socket_t fd, short what, void *arg)
{
    InitWait *w = init_wait_take((uint64_t)(uintptr_t)arg);
    Peer *p;

    (void)fd, (void)what;
    if (!w)
        return; /* the agent left meanwhile */
    p = peer_get(w->d->manager->peers, w->peer_id);
    if (p) { /* an agent that left while it waited gets nothing */
        init_answer(w->d, p, w->id, w->params);
        init_replay(w->d, p, w);
    }
    init_wait_free(w);
}

/*
 * Called where the discovery is applied, which may be inside another agent's request (one that
 * waited for it): the answer and the held messages go from a turn of their own, not from
 * within that request's handler.
 */
static void on_init_discovered(void *ud, uint64_t peer_id)
{
    MethodsCtx *d = ud;
    const struct timeval now = {0, 0};

    if (event_base_once(d->manager->base, -1, EV_TIMEOUT, on_init_ready, (void *)(uintptr_t)peer_id,
                        &now) < 0)
        on_init_ready(-1, EV_TIMEOUT, (void *)(uintptr_t)peer_id);
}

static bool init_waits_has(uint64_t peer_id)
{
    for (InitWait *w = init_waits; w; w = w->next)
        if (w->peer_id == peer_id)
            return true;
    return false;
}

bool methods_takes_batches(Peer *p, void *userdata)
{
    MethodsCtx *d = userdata;
    Agent *a = agent_get(&d->manager->agents, p->id);

    /* Only 2025-03-26 says receivers MUST accept batches (2025-06-18 removed them); a batch may
     * come while its initialize waits for the project's discovery, and is held with it. */
    if (a && a->initialized)
        return a->protocol_version && streq(a->protocol_version, MCP_PROTOCOL_2025_03_26);
    for (InitWait *w = init_waits; w; w = w->next)
        if (w->peer_id == p->id)
            return streq(pick_version(json_get_string(w->params, "protocolVersion")),
                         MCP_PROTOCOL_2025_03_26);
    return false;
}

void methods_peer_gone(uint64_t peer_id)
{
    InitWait *w = init_wait_take(peer_id);

    if (w)
        init_wait_free(w);
}

static void m_initialize(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    yajl_val pmeta = json_get_object(m->params, "_meta");
    const char *cwd = json_get_string(pmeta, MCPD_META_CWD);
    const char *token = json_get_string(pmeta, MCPD_META_SESSION);
    const char *only = json_get_string(pmeta, MCPD_META_SERVER);
    const char *mode = json_get_string(pmeta, MCPD_META_TOOL_MODE); /* search mode, search.md */
    _cleanup_free_ char *why = NULL;
    Agent *a = agent_get(&d->manager->agents, p->id);

    if ((a && a->initialized) || init_waits_has(p->id)) {
        methods_error(d, p, m->id, JSONRPC_INVALID_REQUEST, "already initialized");
        return;
    }
    if ((json_get(pmeta, MCPD_META_CWD) && !cwd) ||
        (json_get(pmeta, MCPD_META_SESSION) && !token)) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS,
                      "_meta[\"mcpd/cwd\"] and _meta[\"mcpd/session\"] must be strings");
        return;
    }
    if (json_get(pmeta, MCPD_META_TOOL_MODE) && !wssearch_mode_known(mode)) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS,
                      "_meta[\"mcpd/toolMode\"] must be \"search\" or \"all\"");
        return;
    }
    if (json_get(pmeta, MCPD_META_PROFILE) && !json_get_string(pmeta, MCPD_META_PROFILE)) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS,
                      "_meta[\"mcpd/profile\"] must be a string: a profile of mcpd.json");
        return;
    }
    if (token && !*token)
        token = NULL; /* MCPD_SESSION set but empty: no parent */
    if (ws_attach(&d->manager->workspaces, p, cwd && *cwd ? cwd : NULL, token, &why) != 0) {
        log_info("peer %llu (pid %d) refused: %s", (unsigned long long)p->id, (int)p->pid, why);
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, why);
        return;
    }
    if ((json_get(pmeta, MCPD_META_SERVER) && (!only || !*only)) ||
        (only && surface_passthrough_set(d->manager, p, only, &why) != 0)) {
        /* Undo the attach (its agent goes), so that a corrected initialize starts clean. */
        manager_peer_gone(d->manager, p);
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS,
                      why ? why : "_meta[\"mcpd/server\"] must be a server's name");
        return;
    }
    a = agent_ensure(&d->manager->agents, p->id); /* made by the attach */
    if (cwd)
        a->cwd = xstrdup(cwd);
    take_client_info(a, p, m->params);
    /* Its profile (core/wsprofile.c): after the attach and clientInfo, which choose it too. */
    if (wssearch_choose_profile(&d->manager->workspaces, p,
                                json_get_string(pmeta, MCPD_META_PROFILE), &why) != 0) {
        manager_peer_gone(d->manager, p);
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, why);
        return;
    }
    /*
     * A new project's files are read on a thread: the answer names the capabilities and
     * instructions of its servers, so it waits for that read, without holding up the loop.
     */
    if (ws_defer_until_discovered(ws_of_peer(&d->manager->workspaces, p), on_init_discovered, d,
                                  p->id)) {
        InitWait *w = xcalloc(1, sizeof(*w));
        w->next = init_waits;
        w->d = d;
        w->peer_id = p->id;
        w->id = json_copy(m->id);
        w->params = json_copy(m->params);
        init_waits = w;
        return;
    }
    init_answer(d, p, m->id, m->params);
}

/* The rest of initialize: the answer, once the agent's servers are known. */
static void init_answer(MethodsCtx *d, Peer *p, yajl_val id, yajl_val params)
{
    yajl_val r, caps, info, meta, pmeta = json_get_object(params, "_meta");
    const char *version, *mode = json_get_string(pmeta, MCPD_META_TOOL_MODE);
    Agent *a = agent_ensure(&d->manager->agents, p->id);

    version = pick_version(json_get_string(params, "protocolVersion"));
    a->protocol_version = xstrdup(version);
    r = json_object_new();
    caps = methods_capabilities(d->manager, p);
    info = methods_server_info();
    meta = json_object_new();
    json_object_set(meta, MCPD_META_SESSION,
                    json_string_new(ws_peer_token(&d->manager->workspaces, p)));
    json_object_set(r, "protocolVersion", json_string_new(version));
    json_object_set(r, "capabilities", caps);
    json_object_set(r, "serverInfo", info);
    json_object_set(r, "_meta", meta);
    char *instructions = surface_instructions(d->manager, p);
    if (instructions)
        json_object_set(r, "instructions", json_string_new_take(instructions));
    a->initialized = true;
    if (json_get(pmeta, MCPD_META_TOOL_MODE)) /* search mode (core/wssearch.c), checked above */
        wssearch_set_mode(&d->manager->workspaces, p, mode, false);
    methods_reply(d, p, id, r);
    json_free(r);
    log_debug("peer %llu initialized: %s %s (protocol %s)", (unsigned long long)p->id,
              a->client_name ? a->client_name : "?", a->client_version ? a->client_version : "",
              version);
}

static void m_ping(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    (void)d;
    methods_reply(d, p, m->id, NULL);
}

static void m_tools_list(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    ws_list_tools(&d->manager->workspaces, p, m->id);
}

static void m_tools_call(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    call_tool(&d->manager->calls, p, m->id, m->params);
}

static void m_prompts_list(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    surface_list_gated(d->manager, p, m->id, SURFACE_PROMPTS, m->params);
}

static void m_resources_list(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    surface_list_gated(d->manager, p, m->id, SURFACE_RESOURCES, m->params);
}

static void m_templates_list(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    surface_list_gated(d->manager, p, m->id, SURFACE_TEMPLATES, m->params);
}

static void m_prompts_get(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    surface_prompt_get(d->manager, p, m->id, m->params);
}

static void m_resources_read(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    surface_read(d->manager, p, m->id, m->params);
}

static void m_subscribe(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    surface_subscribe(d->manager, p, m->id, m->params, true);
}

static void m_unsubscribe(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    surface_subscribe(d->manager, p, m->id, m->params, false);
}

static void m_complete(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    surface_complete(d->manager, p, m->id, m->params);
}

static void m_logging_set_level(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    const char *name = json_get_string(m->params, "level");
    int level = mcp_level_from_name(name);

    if (level < 0) {
        _cleanup_free_ char *msg = xasprintf(
            "unknown log level \"%s\": use debug, info, notice, warning, error, critical, "
            "alert or emergency",
            name);
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    logging_set_level(&d->manager->calls, p, level);
    methods_reply(d, p, m->id, NULL);
}

static void m_tasks(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    tasks_request(&d->manager->calls.tasks, p, m->id, m->method, m->params);
}

static void n_cancelled(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    call_cancel(&d->manager->calls, p, json_get(m->params, "requestId"));
}

static void n_ignore(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
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
    {"tasks/get", m_tasks, METHOD_NEEDS_INIT, NULL},
    {"tasks/result", m_tasks, METHOD_NEEDS_INIT, NULL},
    {"tasks/cancel", m_tasks, METHOD_NEEDS_INIT, NULL},
    {"tasks/list", m_tasks, METHOD_NEEDS_INIT, NULL},
    {"notifications/initialized", n_ignore, METHOD_NOTIFICATION, NULL},
    {"notifications/cancelled", n_cancelled, METHOD_NOTIFICATION, NULL},
    {"notifications/roots/list_changed", n_ignore, METHOD_NOTIFICATION, NULL},
    {NULL, NULL, 0, NULL},
};
