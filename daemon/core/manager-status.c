// SPDX-License-Identifier: MIT
// manager-status: what the core reports of its state: mcpd/status (every server, workspace and
// agent) and the counts sd_notify shows.

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/manager-status.h"
#include "daemon/core/toolcost.h"
#include "daemon/core/toolset.h"
#include "daemon/core/view.h"
#include "daemon/core/workspace.h"
#include "daemon/core/wsprofile.h"
#include "daemon/core/wssearch.h"
#include "daemon/sys/runlog.h"

void manager_counts(Manager *m, unsigned *connectedp, unsigned *totalp, unsigned *toolsp)
{
    unsigned c = 0, t = 0, tools = 0;

    for (size_t i = 0; i < m->servers.n_order; i++) {
        Server *s = m->servers.order[i];
        if (s->state == SERVER_DISABLED)
            continue;
        t++;
        if (s->state == SERVER_CONNECTED)
            c++;
        tools += (unsigned)toolset_len(s->tools);
    }
    *connectedp = c;
    *totalp = t;
    *toolsp = tools;
}

/* Words in an option or variable name that say its value is a secret. */
static bool name_is_secret(const char *name, size_t n)
{
    static const char *const words[] = {"token", "secret",     "password", "passwd", "key",
                                        "auth",  "credential", "bearer",   "pat"};
    _cleanup_free_ char *low = xstrndup(name, n);

    for (char *c = low; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    for (size_t i = 0; i < N_ELEMENTS(words); i++)
        if (strstr(low, words[i]))
            return true;
    return false;
}

/* One argument as shown: "--api-key=***", "TOKEN=***", a URL with its user:password as ***. */
static void put_arg(StrBuf *sb, const char *arg, bool after_secret_flag)
{
    const char *eq = strchr(arg, '='), *at = strchr(arg, '@'), *scheme = strstr(arg, "://");

    if (after_secret_flag) {
        strbuf_puts(sb, "***");
    } else if (eq && name_is_secret(arg, (size_t)(eq - arg))) {
        strbuf_append(sb, arg, (size_t)(eq - arg + 1));
        strbuf_puts(sb, "***");
    } else if (scheme && at && at > scheme && !memchr(scheme + 3, '/', (size_t)(at - scheme - 3))) {
        strbuf_append(sb, arg, (size_t)(scheme + 3 - arg));
        strbuf_puts(sb, "***");
        strbuf_puts(sb, at);
    } else {
        strbuf_puts(sb, arg);
    }
}

/*
 * The command line as status shows it. Values the config wrote literally after an option that
 * names a secret (--token X, --api-key=X, KEY=X, user:pass@ in a URL) become ***; ${VAR}
 * references stay, since they are not the secret itself.
 */
static char *command_line(const ServerConfig *c)
{
    StrBuf sb = STRBUF_INIT;
    bool secret_next = false;

    strbuf_puts(&sb, c->command);
    for (size_t i = 0; i < c->n_args; i++) {
        const char *a = c->args[i];
        strbuf_putc(&sb, ' ');
        put_arg(&sb, a, secret_next && !strstr(a, "${"));
        secret_next = a[0] == '-' && !strchr(a, '=') && name_is_secret(a, strlen(a));
    }
    return strbuf_detach(&sb, NULL);
}

/* Spawns, the last exit and the command line of a stdio server. */
static void server_status_process(Server *s, yajl_val o)
{
    RunLog *rl = runlog_find(s->cfg->name, s->start_dir);
    const Run *last = runlog_last_ended(rl);

    _cleanup_free_ char *cmd = NULL, *how = NULL;

    if (s->cfg->type != TRANSPORT_STDIO || !s->cfg->command)
        return;
    cmd = command_line(s->cfg);
    json_object_set(o, "commandLine", json_string_new(cmd));
    json_object_set(o, "spawns", json_int_new((int64_t)runlog_spawns(rl)));
    if (last) {
        how = runlog_describe(last);
        json_object_set(o, "lastExit", json_string_new(how));
        json_object_set(o, "lastExitAt", json_int_new(last->ended_wall_ms));
        json_object_set(o, "lastRun", json_int_new((int64_t)last->serial));
    }
}

static yajl_val server_status(Server *s)
{
    yajl_val o = json_object_new(), src = json_object_new();

    json_object_set(o, "name", json_string_new(s->cfg->name));
    json_object_set(o, "state", json_string_new(server_state_word(s)));
    json_object_set(o, "since", json_int_new(s->since_wall_ms));
    json_object_set(o, "transport",
                    json_string_new(s->up && s->up->transport ? s->up->transport->ops->kind
                                                              : transport_type_name(s->cfg->type)));
    json_object_set(o, "tools", json_int_new((int64_t)toolset_len(s->tools)));
    json_object_set(o, "toolsDeferred", json_bool_new(s->tools_deferred));
    TokenCost cost;
    toolcost_server(s, &cost);
    toolcost_status(o, &cost);
    if (server_manager(s)->ext.server_status)
        server_manager(s)->ext.server_status(s, o);
    if (s->n_tools_filtered)
        json_object_set(o, "toolsFiltered", json_int_new((int64_t)s->n_tools_filtered));
    server_ondemand_status(s, o);
    json_object_set(o, "restarts", json_int_new(s->restarts));
    json_object_set(o, "callsInFlight", json_int_new(s->calls_in_flight));
    json_object_set(o, "callsTotal", json_int_new((int64_t)s->calls_total));
    json_object_set(o, "toolStats", toolstats_json(&s->tool_stats));
    if (s->last_error) {
        json_object_set(o, "lastError", json_string_new(s->last_error));
        json_object_set(o, "lastErrorAt", json_int_new(s->last_error_wall_ms));
    }
    server_status_process(s, o);
    if (s->needs_auth) {
        json_object_set(o, "needsAuthorization", json_bool_new(true));
        json_object_set(o, "wwwAuthenticate", json_string_new(s->auth_challenge));
    }
    if (s->state == SERVER_BACKOFF)
        json_object_set(o, "nextAttempt", json_int_new(s->next_attempt_wall_ms));
    if (s->cache_saved_wall_ms)
        json_object_set(o, "cacheSavedAt", json_int_new(s->cache_saved_wall_ms));
    json_object_set(o, "cacheWrites", json_int_new((int64_t)s->cache_writes));
    json_object_set(o, "toolLists", json_int_new((int64_t)s->lists_total));
    if (s->list_note)
        json_object_set(o, "toolsLimit", json_string_new(s->list_note));
    if (s->cache_problem)
        json_object_set(o, "cacheProblem", json_string_new(s->cache_problem));
    if (s->up && s->up->transport)
        s->up->transport->ops->status(s->up->transport, o);
    if (s->up && s->up->server_info)
        json_object_set(o, "serverInfo", json_copy(s->up->server_info));
    if (s->up && s->up->protocol_version)
        json_object_set(o, "protocolVersion", json_string_new(s->up->protocol_version));
    json_object_set(o, "startDir", json_string_new(s->start_dir));
    if (s->cfg->sandbox) /* how it runs contained (docs/sandbox.md); absent: unconfined */
        json_object_set(o, "sandbox", json_copy(s->cfg->sandbox));
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

static yajl_val workspace_status(Workspace *ws)
{
    yajl_val o = json_object_new(), names = json_array_new();

    ws_view_ensure(ws);
    json_object_set(o, "id", json_int_new((int64_t)ws->id));
    json_object_set(o, "root", ws->root ? json_string_new(ws->root) : json_null_new());
    json_object_set(o, "agents", json_int_new(ws->n_agents));
    for (size_t i = 0; i < ws->n_servers; i++)
        json_array_push(names, json_int_new((int64_t)ws->servers[i]->id));
    json_object_set(o, "servers", names);
    json_object_set(o, "tools", json_int_new((int64_t)ws->n_view));
    toolcost_status(o, toolcost_view(ws));
    json_object_set(o, "nameCollisions", json_int_new(ws->n_collisions));
    /* Views built and tools/list answers that shared one by reference. */
    json_object_set(o, "viewBuilds", json_int_new((int64_t)ws->n_view_builds));
    json_object_set(o, "viewSends", json_int_new((int64_t)ws->n_view_sends));
    if (!ws->n_agents && ws->root && evtimer_pending(ws->ev_linger, NULL))
        json_object_set(o, "lingering", json_bool_new(true));
    return o;
}

static yajl_val agent_status(Manager *m, Peer *p)
{
    static const Agent fresh = {.log_level = -1}; /* one that has said nothing yet */
    yajl_val o = json_object_new();
    const Agent *a = agent_get(&m->agents, p->id);
    Workspace *ws;
    Peer *parent;

    if (!a)
        a = &fresh;
    ws = a->workspace_id ? idmap_get(&m->workspaces.by_id, a->workspace_id) : NULL;
    parent = a->parent_id ? peer_get(m->peers, a->parent_id) : NULL;
    json_object_set(o, "id", json_int_new((int64_t)p->id));
    json_object_set(o, "pid", json_int_new(p->pid));
    if (a->client_name)
        json_object_set(o, "name", json_string_new(a->client_name));
    if (a->client_version)
        json_object_set(o, "version", json_string_new(a->client_version));
    json_object_set(o, "initialized", json_bool_new(a->initialized));
    if (a->protocol_version)
        json_object_set(o, "protocolVersion", json_string_new(a->protocol_version));
    if (ws) {
        json_object_set(o, "workspace", json_int_new((int64_t)ws->id));
        json_object_set(o, "root", ws->root ? json_string_new(ws->root) : json_null_new());
        TokenCost shown;
        const char *mode;
        const Profile *prof = wsprofile_of(&m->workspaces, p->id);
        bool own = wssearch_agent_cost(ws, p->id, &shown);
        mode = "search";
        if (!own)
            own = wsprofile_agent_cost(ws, p->id, &shown, &mode);
        /* what this agent is shown: its search-mode or profile's list, or the workspace's */
        toolcost_status(o, own ? &shown : toolcost_view(ws));
        json_object_set(o, "toolMode", json_string_new(mode));
        if (prof)
            json_object_set(o, "profile", json_string_new(prof->name));
    }
    if (a->session_id)
        json_object_set(o, "session", json_int_new((int64_t)a->session_id));
    if (a->parent_id) {
        json_object_set(o, "parent", json_int_new((int64_t)a->parent_id));
        if (parent)
            json_object_set(o, "parentPid", json_int_new(parent->pid));
    }
    if (a->log_level >= 0)
        json_object_set(o, "logLevel", json_int_new(a->log_level));
    json_object_set(o, "callsInFlight", json_int_new(a->calls_in_flight));
    json_object_set(o, "callsTotal", json_int_new((int64_t)a->calls_total));
    json_object_set(o, "bytesQueued", json_int_new((int64_t)peer_queued(p)));
    json_object_set(o, "connectedAt", json_int_new(p->connected_wall_ms));
    return o;
}

yajl_val manager_status(Manager *m)
{
    yajl_val o = json_object_new(), servers = json_array_new(), agents = json_array_new();
    yajl_val wss = json_array_new(), probs = json_array_new();
    size_t pos = 0;
    void *v;

    for (size_t i = 0; i < m->servers.n_order; i++) {
        yajl_val so = server_status(m->servers.order[i]);
        json_object_set(so, "id", json_int_new((int64_t)m->servers.order[i]->id));
        json_array_push(servers, so);
    }
    for (Peer *p = m->peers->first; p; p = p->next)
        json_array_push(agents, agent_status(m, p));
    while (idmap_next(&m->workspaces.by_id, &pos, NULL, &v)) {
        json_array_push(wss, workspace_status(v));
        ws_problems_into(probs, v);
    }
    json_object_set(o, "servers", servers);
    json_object_set(o, "agents", agents);
    json_object_set(o, "workspaces", wss);
    if (m->workspaces.user_ws) {
        Workspace *uws = m->workspaces.user_ws;
        ws_view_ensure(uws);
        json_object_set(o, "tools", json_int_new((int64_t)uws->n_view));
        toolcost_status(o, toolcost_view(uws));
        json_object_set(o, "nameCollisions", json_int_new(uws->n_collisions));
    }
    for (size_t i = 0; i < m->servers.n_order; i++)
        if (m->servers.order[i]->cache_problem) {
            yajl_val cp = json_object_new();
            json_object_set(cp, "server", json_string_new(m->servers.order[i]->cfg->name));
            json_object_set(cp, "path", json_string_new(m->cache_dir));
            json_object_set(cp, "error", json_string_new(m->servers.order[i]->cache_problem));
            json_array_push(probs, cp);
        }
    json_object_set(o, "problems", probs);
    return o;
}
