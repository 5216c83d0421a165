// SPDX-License-Identifier: MIT
// manager: the core as one piece for the layers above: its registries (servers, workspaces,
// calls) wired to each other's events, and what is asked of them by server name (connect,
// disconnect, mcpd/wait, status).

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/configset-json.h"
#include "daemon/core/agent.h"
#include "daemon/core/cache.h"
#include "daemon/core/manager.h"
#include "daemon/core/route.h"
#include "daemon/core/toolcost.h"
#include "daemon/core/toolset.h"
#include "daemon/core/wsprofile.h"
#include "daemon/core/view.h"
#include "daemon/core/wssearch.h"
#include "daemon/sys/runlog.h"

/* An mcpd/wait request. */
typedef struct ServerWaiter {
    Manager *m;
    uint64_t peer_id;
    yajl_val id;
    uint64_t server_id;
    struct event *timer;
    struct ServerWaiter *next;
} ServerWaiter;

static void waiters_server_settled(Server *s);

Server *manager_find_server(Manager *m, Peer *p, const char *name)
{
    Workspace *ws = p ? ws_of_peer(&m->workspaces, p) : m->workspaces.user_ws;

    for (size_t i = 0; ws && name && i < ws->n_servers; i++)
        if (streq(ws->servers[i]->cfg->name, name))
            return ws->servers[i];
    for (size_t i = 0; name && i < m->servers.n_order; i++)
        if (streq(m->servers.order[i]->cfg->name, name))
            return m->servers.order[i];
    return NULL;
}

/* ---- replies to agents ---- */

/* What a peer's placing made: calls, surface state, workspace and session. */
static void peer_leave(Manager *m, Peer *p)
{
    calls_peer_gone(&m->calls, p);
    route_peer_gone(&m->calls, p);
    if (m->ext.peer_gone)
        m->ext.peer_gone(m, p);
    ws_peer_left(&m->workspaces, p);
}

void manager_peer_gone(Manager *m, Peer *p)
{
    peer_leave(m, p);
    server_registry_unpin(&m->servers, p->id);
    wssearch_forget(&m->workspaces, p->id);
    wsprofile_forget(&m->workspaces, p->id);
    agent_remove(&m->agents, p->id);
}

void manager_peer_unplace(Manager *m, Peer *p)
{
    Agent *a = agent_get(&m->agents, p->id);

    peer_leave(m, p);
    if (a)
        agent_reset(a);
}

/* ---- what servers report ---- */

static void on_server_created(void *ud, Server *s)
{
    Manager *m = ud;

    if (m->ext.server_created)
        m->ext.server_created(s);
}

static void on_server_state(void *ud, Server *s)
{
    Manager *m = ud;

    (void)s;
    if (m->on_change)
        m->on_change(m->on_change_ud);
}

/* Any change of "connecting": waiting calls, mcpd/wait, the gate, the view. */
static void on_server_settled(void *ud, Server *s)
{
    Manager *m = ud;

    calls_server_settled(&m->calls, s);
    waiters_server_settled(s);
    server_views_changed(&m->workspaces, s);
}

static void on_server_tools_changed(void *ud, Server *s)
{
    Manager *m = ud;

    server_views_changed(&m->workspaces, s);
}

static void on_server_connected(void *ud, Server *s)
{
    Manager *m = ud;

    if (m->ext.server_connected)
        m->ext.server_connected(s);
}

static void on_server_cleared(void *ud, Server *s)
{
    Manager *m = ud;

    if (m->ext.server_cleared)
        m->ext.server_cleared(s);
}

static void on_server_notification(void *ud, Server *s, const char *method, yajl_val params)
{
    Manager *m = ud;

    if (!m->ext.server_notification || !m->ext.server_notification(s, method, params))
        route_notification(&m->calls, s, method, params);
}

static void on_server_request(void *ud, Server *s, yajl_val id, const char *method, yajl_val params)
{
    Manager *m = ud;

    route_request(&m->calls, s, id, method, params);
}

static void on_server_closed(void *ud, Server *s, uint64_t upstream_id)
{
    Manager *m = ud;

    route_upstream_closed(&m->calls, s, upstream_id);
}

static void on_server_signed_out(void *ud, Server *s)
{
    Manager *m = ud;

    if (m->ext.server_signed_out)
        m->ext.server_signed_out(s);
}

/* Disconnected and forgotten: its calls fail, its waiters hear "removed". */
static void on_server_removed(void *ud, Server *s)
{
    Manager *m = ud;

    calls_server_removed(&m->calls, s);
    route_server_removed(&m->calls, s);
    waiters_server_settled(s);
    if (m->ext.server_removed)
        m->ext.server_removed(s);
}

/* Something above needs it running: a task in flight, or what an extension holds (surface). */
static bool on_server_busy(void *ud, Server *s)
{
    Manager *m = ud;

    return tasks_server_busy(&m->calls.tasks, s) || (m->ext.server_busy && m->ext.server_busy(s));
}

static const ServerEvents server_events = {
    .created = on_server_created,
    .state_changed = on_server_state,
    .settled = on_server_settled,
    .tools_changed = on_server_tools_changed,
    .connected = on_server_connected,
    .cleared = on_server_cleared,
    .notification = on_server_notification,
    .request = on_server_request,
    .closed = on_server_closed,
    .signed_out = on_server_signed_out,
    .removed = on_server_removed,
    .busy = on_server_busy,
};

void manager_start(Manager *m)
{
    m->workspaces.user_ws = ws_new(&m->workspaces, NULL);
    ws_load(m->workspaces.user_ws, NULL);
}

static void ws_problems_into(yajl_val arr, const Workspace *ws)
{
    yajl_val probs = config_problems_json(&ws->problems);

    for (size_t i = 0; i < probs->u.array.len; i++) {
        if (ws->root)
            json_object_set(probs->u.array.values[i], "workspace", json_string_new(ws->root));
        json_array_push(arr, json_copy(probs->u.array.values[i]));
    }
    json_free(probs);
}

/* A reload of one or more workspaces, answered once each has been read and applied. */
typedef struct ReloadJob {
    size_t pending; /* workspaces still reading, plus one while manager_reload starts them */
    size_t n;
    yajl_val servers, probs;
    ManagerReloadedFn done;
    void *ud;
} ReloadJob;

static void reload_ws_done(void *ud, Workspace *ws, yajl_val results)
{
    ReloadJob *j = ud;

    /* A server in several workspaces is told as the first of them saw it. */
    for (size_t i = 0; ws && results && i < results->u.object.len; i++)
        if (!json_get(j->servers, results->u.object.keys[i]))
            json_object_set(j->servers, results->u.object.keys[i],
                            json_copy(results->u.object.values[i]));
    if (ws)
        ws_problems_into(j->probs, ws);
    if (--j->pending > 0)
        return;
    yajl_val r = json_object_new();
    json_object_set(r, "servers", j->servers);
    json_object_set(r, "problems", j->probs);
    json_object_set(r, "workspaces", json_int_new((int64_t)j->n));
    if (j->done)
        j->done(r, j->ud);
    json_free(r);
    free(j);
}

void manager_reload(Manager *m, const char *root, ManagerReloadedFn done, void *ud)
{
    ReloadJob *j = xcalloc(1, sizeof(*j));
    _cleanup_free_ Workspace **all = xcalloc(m->workspaces.by_id.n + 1, sizeof(*all));
    size_t pos = 0;
    void *v;

    *j = (ReloadJob){1, 0, json_object_new(), json_array_new(), done, ud};
    /* Collected first: the reads end on later turns of the loop, never within this one. */
    while (idmap_next(&m->workspaces.by_id, &pos, NULL, &v))
        if (!root || (((Workspace *)v)->root && streq(((Workspace *)v)->root, root)))
            all[j->n++] = v;
    j->pending += j->n;
    for (size_t i = 0; i < j->n; i++)
        ws_reload(all[i], reload_ws_done, j);
    reload_ws_done(j, NULL, NULL);
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
    json_object_set(r, "state", json_string_new(s ? server_state_word(s) : "removed"));
    json_object_set(r, "connected", json_bool_new(s && s->state == SERVER_CONNECTED));
    json_object_set(r, "timedOut", json_bool_new(timed_out));
    if (s && s->last_error)
        json_object_set(r, "error", json_string_new(s->last_error));
    agent_reply(w->m->peers, w->peer_id, w->id, r);
    json_free(r);
    event_free(w->timer);
    json_free(w->id);
    free(w);
}

static void on_waiter_timeout(evutil_socket_t fd, short what, void *arg)
{
    ServerWaiter *w = arg;

    (void)fd, (void)what;
    waiter_finish(w, server_get(&w->m->servers, w->server_id), true);
}

static void waiters_server_settled(Server *s)
{
    ServerWaiter *w = server_manager(s)->server_waiters, *next;

    for (; w; w = next) {
        next = w->next;
        if (w->server_id == s->id && (s->state == SERVER_CONNECTED || s->state == SERVER_FAILED ||
                                      s->state == SERVER_STOPPED || s->state == SERVER_DISABLED))
            waiter_finish(w, s->state == SERVER_STOPPED && !s->idle_stopped ? NULL : s, false);
    }
}

void manager_wait(Manager *m, Peer *p, yajl_val id, const char *name, int64_t timeout_ms)
{
    Server *s = manager_find_server(m, p, name);
    ServerWaiter *w;
    struct timeval tv;

    if (!s) {
        _cleanup_free_ char *msg = xasprintf("Unknown server: %s", name);
        agent_reply_error(m->peers, p->id, id, JSONRPC_INVALID_PARAMS, msg);
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

int manager_connect(Manager *m, Peer *p, const char *name, char **whyp)
{
    Server *s = manager_find_server(m, p, name);

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return MANAGER_E_UNKNOWN_SERVER;
    }
    if (!s->cfg->enabled) {
        *whyp = xasprintf("Server %s is disabled in %s", name,
                          s->cfg->source.path ? s->cfg->source.path : "its config");
        return MANAGER_E_DISABLED;
    }
    server_restart(s);
    return 0;
}

int manager_disconnect(Manager *m, Peer *p, const char *name, char **whyp)
{
    Server *s = manager_find_server(m, p, name);

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return MANAGER_E_UNKNOWN_SERVER;
    }
    server_stop(s);
    return 0;
}

int manager_logs(Manager *m, Peer *p, const char *name, uint64_t since, yajl_val *resultp,
                 char **whyp)
{
    Server *s = manager_find_server(m, p, name);
    RunLog *rl = NULL;
    yajl_val res;
    StrBuf sb = STRBUF_INIT;

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return MANAGER_E_UNKNOWN_SERVER;
    }
    /* A stdio server not started yet by this mcpd may have runs a previous one recorded. */
    if (s->cfg->type == TRANSPORT_STDIO)
        rl = runlog_get(s->cfg->name, s->start_dir);
    res = json_object_new();
    json_object_set(res, "server", json_string_new(s->cfg->name));
    if (rl) {
        json_object_set(res, "spawns", json_int_new((int64_t)runlog_spawns(rl)));
        json_object_set(res, "runs", runlog_json(rl, since));
        runlog_tail(rl, runlog_spawns(rl), &sb);
    } else if (s->up && s->up->transport && s->up->transport->ops->logs) {
        s->up->transport->ops->logs(s->up->transport, &sb);
    }
    /* stderr is arbitrary bytes: keep what is valid UTF-8, mark the rest. */
    json_object_set(res, "text", json_string_new_lossy(strbuf_str(&sb), sb.len));
    strbuf_deinit(&sb);
    runlog_unref(rl);
    *resultp = res;
    return 0;
}

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

/*
 * Start-up drops cache entries that expired a day ago or more: an old config's (a changed entry
 * gets a new hash, and a new file), a removed server's. Nothing else ever deletes them.
 */
static void manager_prune_cache(Manager *m)
{
    int64_t max_age = (m->settings.cache_ttl_days + 1) * 86400000LL;
    _cleanup_free_ char *surface = cache_surface_dir(m->cache_dir);
    int n = cache_prune(m->cache_dir, m->started_wall_ms, max_age) +
            cache_prune(surface, m->started_wall_ms, max_age);

    if (n > 0)
        log_info("cache: removed %d entries older than cacheTtlDays (%" PRId64 ") + 1 day", n,
                 m->settings.cache_ttl_days);
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
    m->started_wall_ms = wall_ms();
    manager_prune_cache(m);
    server_registry_init(&m->servers, base, &m->settings, m->cache_dir, &server_events, m);
    ws_registry_init(&m->workspaces, &m->servers, peers, &m->agents, &m->settings, config_file,
                     m->home);
    m->workspaces.views = &wssearch_views;
    call_registry_init(&m->calls, &m->workspaces);
}

void manager_shutdown(Manager *m)
{
    m->servers.shutting_down = true;
    /* Workspaces stay (agents may still ask during the grace period), empty. */
    ws_registry_shutdown(&m->workspaces);
    server_registry_shutdown(&m->servers);
}

void manager_deinit(Manager *m)
{
    manager_shutdown(m);
    while (m->server_waiters)
        waiter_finish(m->server_waiters, NULL, false);
    route_deinit(&m->calls);
    call_registry_deinit(&m->calls);
    wssearch_registry_deinit(&m->workspaces);
    wsprofile_registry_deinit(&m->workspaces);
    ws_registry_deinit(&m->workspaces);
    if (m->ext.deinit)
        m->ext.deinit(m);
    server_registry_deinit(&m->servers);
    agent_registry_deinit(&m->agents);
    free(m->home);
    free(m->cache_dir);
}

/* ---- what agents ask, passed to the module that owns it ---- */
