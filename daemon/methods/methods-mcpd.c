// SPDX-License-Identifier: MIT
// methods-mcpd: the daemon's own methods (mcpd/status, reload, connect, disconnect, wait, logs,
// searchTools).

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"
#include "common/version.h"
#include "daemon/config/configset-json.h"
#include "daemon/methods/methods-mcpd.h"
#include "daemon/methods/methods.h"
#include "daemon/methods/methods-trust.h"
#include "daemon/core/manager-control.h"
#include "daemon/core/manager-status.h"
#include "daemon/core/oauth-login.h"
#include "daemon/core/toolsearch.h"
#include "daemon/core/wake.h"
#include "daemon/core/wssearch.h"
#include "daemon/sys/systemd.h"

/* mcpd/wait never holds a request longer than this. */
#define WAIT_MAX_MS 600000

/* Problems in mcpd.json belong wherever config problems are shown. */
static void append_settings_problems(MethodsCtx *d, yajl_val problems)
{
    yajl_val sp = config_problems_json(d->settings_problems);

    for (size_t i = 0; problems && i < sp->u.array.len; i++) {
        json_array_push(problems, sp->u.array.values[i]);
        sp->u.array.values[i] = NULL;
    }
    json_free(sp);
}

static void m_status(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    yajl_val r = manager_status(d->manager), dm = json_object_new();

    json_object_set(dm, "pid", json_int_new(getpid()));
    json_object_set(dm, "version", json_string_new(mcpd_version));
    json_object_set(dm, "startedAt", json_int_new(d->started_wall_ms));
    json_object_set(dm, "socket", json_string_new(d->listener->path));
    json_object_set(dm, "refusedConnections", json_int_new((int64_t)d->listener->n_refused));
    if (d->config_file)
        json_object_set(dm, "configFile", json_string_new(d->config_file));
    json_object_set(dm, "systemd", systemd_describe());
    json_object_set(dm, "resume", wake_describe(d->wake));
    json_object_set(r, "daemon", dm);
    append_settings_problems(d, json_get_array(r, "problems"));
    methods_reply(d, p, m->id, r);
    json_free(r);
}

static void m_reload(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    const char *cwd = json_get_string(m->params, "cwd");
    char real[PATH_MAX];

    if (json_get(m->params, "cwd") && (!cwd || !realpath(cwd, real))) {
        _cleanup_free_ char *msg =
            xasprintf("params.cwd: %s", cwd ? strerror(errno) : "must be a string");
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    /* Answered once the files are read (off the loop) and the change applied. */
    d->reload(d->ud, cwd ? real : NULL, methods_reload_answer,
              methods_reload_answer_new(d, p, m->id, NULL));
}

static void reply_outcome(MethodsCtx *d, Peer *p, yajl_val id, int r, char *why)
{
    if (r != 0)
        methods_error(d, p, id, JSONRPC_INVALID_PARAMS, why);
    else
        methods_reply(d, p, id, NULL);
    free(why);
}

static void m_connect(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    char *why = NULL;
    int r = manager_connect(d->manager, p, json_get_string(m->params, "server"), &why);

    reply_outcome(d, p, m->id, r, why);
}

static void m_disconnect(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    char *why = NULL;
    int r = manager_disconnect(d->manager, p, json_get_string(m->params, "server"), &why);

    reply_outcome(d, p, m->id, r, why);
}

/* mcpd/pin {server, pinned?}: the server stays up (no idle stop) while this agent is connected. */
static void m_pin(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    const char *name = json_get_string(m->params, "server");
    Server *s = manager_find_server(d->manager, p, name);
    bool on = true;
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val r = NULL;

    if (json_get_bool(m->params, "pinned", &on) == -EINVAL) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, "pinned must be true or false");
        return;
    }
    if (!s) {
        why = xasprintf("Unknown server: %s", name);
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, why);
        return;
    }
    server_pin(s, p->id, on);
    r = json_object_new();
    json_object_set(r, "server", json_string_new(s->cfg->name));
    json_object_set(r, "pinned", json_bool_new(on));
    json_object_set(r, "state", json_string_new(server_state_word(s)));
    methods_reply(d, p, m->id, r);
}

static void m_wait(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    int64_t timeout = CONFIG_DEFAULT_TIMEOUT_MS;
    int r = json_get_int(m->params, "timeoutMs", &timeout);

    if (r == -EINVAL || timeout < 0) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS,
                      "timeoutMs must be a non-negative integer");
        return;
    }
    manager_wait(d->manager, p, m->id, json_get_string(m->params, "server"),
                 MIN(timeout, WAIT_MAX_MS));
}

/* mcpd/logs {server, since?}: the server's recorded runs (see manager_logs). */
static void m_logs(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    int64_t since = 0;
    yajl_val res = NULL;
    char *why = NULL;
    int r;

    if (json_get_int(m->params, "since", &since) == -EINVAL || since < 0) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS,
                      "since must be a run number (1, 2, ...)");
        return;
    }
    r = manager_logs(d->manager, p, json_get_string(m->params, "server"), (uint64_t)since, &res,
                     &why);
    if (r != 0) {
        reply_outcome(d, p, m->id, r, why);
        return;
    }
    methods_reply(d, p, m->id, res);
    json_free(res);
}

/*
 * mcpd/discover {cwd?}: what discovery finds for that project (or the user workspace),
 * without connecting: the winners with their source, every entry not used and why, problems.
 */
static void m_discover(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    yajl_val cwd = json_get(m->params, "cwd"), r;
    _cleanup_free_ char *root = NULL;
    DiscoverOptions opt = {d->config_file, NULL};
    ConfigSet set;

    if (cwd && !YAJL_IS_NULL(cwd)) {
        if (!YAJL_IS_STRING(cwd) || cwd->u.string[0] != '/') {
            methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, "cwd must be an absolute path");
            return;
        }
        if (!(root = realpath(cwd->u.string, NULL))) {
            _cleanup_free_ char *msg = xasprintf("cwd \"%s\": %s", cwd->u.string, strerror(errno));
            methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, msg);
            return;
        }
    }
    opt.root = root;
    config_discover_quiet(&set, &opt, d->settings);
    r = config_describe(&set);
    config_set_deinit(&set);
    json_object_set(r, "root", root ? json_string_new(root) : json_null_new());
    json_object_set(r, "settingsFile", json_string_new(d->settings_path));
    if (d->config_file)
        json_object_set(r, "configFile", json_string_new(d->config_file));
    append_settings_problems(d, json_get_array(r, "problems"));
    methods_reply(d, p, m->id, r);
    json_free(r);
}

/* mcpd/login, mcpd/loginWait, mcpd/logout: sign-in orchestration (core/oauth-login.c). */
static void m_login(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    oauth_m_login(d->manager, p, m);
}

static void m_login_wait(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    oauth_m_login_wait(d->manager, p, m);
}

static void m_logout(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    oauth_m_logout(d->manager, p, m);
}

/* mcpd/searchTools {query, limit?}: the agent's tools that best fit query (docs/search.md). */
static void m_search_tools(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    yajl_val q = json_get(m->params, "query"), lim = json_get(m->params, "limit"), r;
    int64_t limit = WSSEARCH_LIMIT_DEFAULT;
    size_t len = q && YAJL_IS_STRING(q) ? strlen(q->u.string) : 0;
    _cleanup_free_ char *msg = NULL;

    if (!len)
        msg = xstrdup("query must be a non-empty string: the capability wanted, in a few words");
    else if (len > TS_QUERY_BYTES_MAX)
        msg = xasprintf("query is %zu bytes, at most %d: say in a few words what the tool should "
                        "do",
                        len, TS_QUERY_BYTES_MAX);
    else if (lim && (json_get_int(m->params, "limit", &limit) != 0 || limit < 1))
        msg = xasprintf("limit must be an integer of 1 or more (at most %d tools are returned)",
                        WSSEARCH_LIMIT_MAX);
    if (msg) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    r = wssearch_tools(ws_of_peer(&d->manager->workspaces, p), p->id, q->u.string, len,
                       (size_t)MIN(limit, (int64_t)WSSEARCH_LIMIT_MAX));
    methods_reply(d, p, m->id, r);
    json_free(r);
}

/* mcpd/toolMode {mode}: "search" (mcpd's search tools and what they found) or "all". */
static void m_tool_mode(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    if (wssearch_set_mode(&d->manager->workspaces, p, json_get_string(m->params, "mode"), true) <
        0) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, "mode must be \"search\" or \"all\"");
        return;
    }
    methods_reply(d, p, m->id, NULL);
}

const Method methods_mcpd[] = {
    {MCPD_METHOD_STATUS, m_status, METHOD_NEEDS_INIT, NULL},
    {MCPD_METHOD_RELOAD, m_reload, METHOD_NEEDS_INIT, NULL},
    {MCPD_METHOD_CONNECT, m_connect, METHOD_NEEDS_INIT, "server"},
    {MCPD_METHOD_DISCONNECT, m_disconnect, METHOD_NEEDS_INIT, "server"},
    {MCPD_METHOD_WAIT, m_wait, METHOD_NEEDS_INIT, "server"},
    {MCPD_METHOD_PIN, m_pin, METHOD_NEEDS_INIT, "server"},
    {MCPD_METHOD_LOGS, m_logs, METHOD_NEEDS_INIT, "server"},
    {MCPD_METHOD_DISCOVER, m_discover, METHOD_NEEDS_INIT, NULL},
    {MCPD_METHOD_TRUST, methods_trust, METHOD_NEEDS_INIT, "cwd"},
    {MCPD_METHOD_LOGIN, m_login, METHOD_NEEDS_INIT, "server"},
    {MCPD_METHOD_LOGIN_WAIT, m_login_wait, METHOD_NEEDS_INIT, "server"},
    {MCPD_METHOD_LOGOUT, m_logout, METHOD_NEEDS_INIT, "server"},
    {MCPD_METHOD_SEARCH, m_search_tools, METHOD_NEEDS_INIT, NULL},
    {MCPD_METHOD_TOOL_MODE, m_tool_mode, METHOD_NEEDS_INIT, "mode"},
    {NULL, NULL, 0, NULL},
};
