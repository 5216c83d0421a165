// SPDX-License-Identifier: MIT
// manager: the core as one piece for the layers above: its registries (servers, workspaces,
// calls, waiters) built and wired to each other's events (a server's, a peer leaving), and
// started, reloaded and shut down.

#include <inttypes.h>
#include <stdio.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/cache.h"
#include "daemon/core/manager.h"
#include "daemon/core/route.h"
#include "daemon/core/waiter.h"
#include "daemon/core/wsprofile.h"
#include "daemon/core/wssearch.h"

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
    waiters_server_settled(&m->waiters, s);
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
    waiters_server_settled(&m->waiters, s);
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
    waiter_registry_init(&m->waiters, base, peers, &m->servers);
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
    waiter_registry_deinit(&m->waiters);
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
