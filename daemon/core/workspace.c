// SPDX-License-Identifier: MIT
// workspace: a project root (or the user's) and what its agents see: its server set from discovery,
// the start-up gate of its tools/list, and the agents attached to it (its tool view is view.c).

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/config/configset-json.h"
#include "daemon/core/agent.h"
#include "daemon/core/naming.h"
#include "daemon/core/toolset.h"
#include "daemon/core/workspace.h"
#include "daemon/upstream/upstream.h"

static void ws_check_gate(Workspace *ws);

bool ws_has_server(const Workspace *ws, const Server *s)
{
    for (size_t i = 0; i < ws->n_servers; i++)
        if (ws->servers[i] == s)
            return true;
    return false;
}

void ws_problems_into(yajl_val arr, const Workspace *ws)
{
    yajl_val probs = config_problems_json(&ws->problems);

    for (size_t i = 0; i < probs->u.array.len; i++) {
        if (ws->root)
            json_object_set(probs->u.array.values[i], "workspace", json_string_new(ws->root));
        json_array_push(arr, json_copy(probs->u.array.values[i]));
    }
    json_free(probs);
}

Workspace *ws_of_peer(WorkspaceRegistry *m, const Peer *p)
{
    return ws_of_agent(m, agent_get(m->agents, p->id));
}

Workspace *ws_of_agent(WorkspaceRegistry *m, const Agent *a)
{
    Workspace *ws = a && a->workspace_id ? idmap_get(&m->by_id, a->workspace_id) : NULL;

    return ws ? ws : m->user_ws;
}

bool ws_agent_attached(const Agent *a, void *ws)
{
    return a->workspace_id == ((Workspace *)ws)->id;
}

/* An agent of ws whose tools differ from the view just announced (one that never listed them
 * is told too: it may hold a list from elsewhere, such as its parent's session). */
static bool ws_agent_stale(const Agent *a, void *ws)
{
    return ws_agent_attached(a, ws) && !streq(a->tools_hash, ((Workspace *)ws)->notified_hash);
}

/* The coalesced list_changed: only when the view's bytes really changed, only to its agents
 * that were sent other bytes (one that listed after the change already has them). */
static void on_notify(evutil_socket_t fd, short what, void *arg)
{
    Workspace *ws = arg;
    const char *hash;

    (void)fd, (void)what;
    hash = ws->reg->views->hash(ws);
    if (streq(hash, ws->notified_hash))
        return;
    memcpy(ws->notified_hash, hash, sizeof(ws->notified_hash));
    agent_broadcast(ws->reg->peers, ws->reg->agents, "notifications/tools/list_changed", NULL,
                    ws_agent_stale, ws);
    log_debug("tool view of %s changed: %zu tools; agents notified",
              ws->root ? ws->root : "the user workspace", ws->n_view);
}

static void ws_changed(Workspace *ws)
{
    struct timeval tv;

    ws->dirty = true;
    if (ws->reg->servers->shutting_down || evtimer_pending(ws->ev_notify, NULL))
        return;
    tv_ms(&tv, LIST_CHANGED_COALESCE_MS);
    evtimer_add(ws->ev_notify, &tv);
}

void server_views_changed(WorkspaceRegistry *wr, Server *s)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&wr->by_id, &pos, NULL, &v)) {
        Workspace *ws = v;
        if (!ws_has_server(ws, s))
            continue;
        ws_changed(ws);
        ws_check_gate(ws);
    }
}

/* ---- the start-up gate ---- */

/*
 * The gate is judged on one clock only: now_ms() (CLOCK_MONOTONIC, read fresh). libevent
 * measures its timers on its own, possibly coarse and cached, clock, so ev_gate may fire a
 * little before the deadline as now_ms() sees it; the timer is then only a wake-up, and a gate
 * still short of its deadline re-arms for the time left.
 */
static uint64_t ws_gate_left_ms(const Workspace *ws)
{
    uint64_t deadline = ws->connect_started_ms + (uint64_t)ws->reg->settings->startup_timeout_ms;
    uint64_t now = now_ms();

    return now >= deadline ? 0 : deadline - now;
}

/* Wake the gate when the start-up timeout passes (not needed once it has). */
static void ws_gate_arm(Workspace *ws)
{
    uint64_t left = ws_gate_left_ms(ws);
    struct timeval tv;

    if (!left)
        return;
    tv_ms(&tv, (int64_t)left);
    evtimer_add(ws->ev_gate, &tv);
}

/*
 * A tools/list may be answered when no server is connecting, or once startupTimeoutMs has
 * passed and every server still connecting has stand-in tools to show (deferred). Servers
 * with nothing to show are waited for, each bounded by its own timeout.
 */
static bool ws_gate_open(Workspace *ws)
{
    bool past = ws_gate_left_ms(ws) == 0;

    if (ws->discovering)
        return false; /* its servers are not known yet: ws_apply checks the gate again */
    for (size_t i = 0; i < ws->n_servers; i++) {
        Server *s = ws->servers[i];
        if (s->state != SERVER_CONNECTING)
            continue;
        if (!past || !s->tools)
            return false;
    }
    return true;
}

static void send_view(Workspace *ws, Peer *p, yajl_val id)
{
    Server *only;

    if (ws->reg->ext->passthrough(ws->reg->ext_ud, p, &only)) {
        /* The one server's tools as it lists them, as if the agent spoke to it directly. */
        StrBuf r = STRBUF_INIT;
        _cleanup_free_ char *tools = toolset_json(only ? only->tools : NULL, NULL);
        strbuf_puts(&r, "{\"tools\":");
        strbuf_puts(&r, tools);
        strbuf_putc(&r, '}');
        agent_reply_raw(ws->reg->peers, p->id, id, r.data, r.len);
        strbuf_deinit(&r);
        return;
    }
    ws->reg->views->send(ws, p, id);
}

static void ws_check_gate(Workspace *ws)
{
    ListWaiter *w;

    if (!ws->waiters)
        return;
    if (!ws_gate_open(ws)) {
        ws_gate_arm(ws);
        return;
    }
    while ((w = ws->waiters)) {
        Peer *p = peer_get(ws->reg->peers, w->peer_id);
        ws->waiters = w->next;
        if (p && w->kind < 0)
            send_view(ws, p, w->id);
        else if (p)
            ws->reg->ext->list(ws->reg->ext_ud, p, w->id, w->kind, w->params);
        json_free(w->id);
        json_free(w->params);
        free(w);
    }
}

static void on_gate(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    ws_check_gate(arg);
}

/* A list (kind -1: tools) answered now, or queued until the start-up gate opens. */
static void list_or_wait(WorkspaceRegistry *m, Peer *p, yajl_val id, int kind, yajl_val params)
{
    Workspace *ws = ws_of_peer(m, p);
    ListWaiter *w, **tail;

    if (ws_gate_open(ws)) {
        if (kind < 0)
            send_view(ws, p, id);
        else
            m->ext->list(m->ext_ud, p, id, kind, params);
        return;
    }
    w = xcalloc(1, sizeof(*w));
    w->peer_id = p->id;
    w->id = json_copy(id);
    w->kind = kind;
    w->params = json_copy(params);
    for (tail = &ws->waiters; *tail; tail = &(*tail)->next)
        ;
    *tail = w;
    ws_gate_arm(ws);
}

void ws_list_tools(WorkspaceRegistry *wr, Peer *p, yajl_val id)
{
    list_or_wait(wr, p, id, -1, NULL);
}

void ws_list_gated(WorkspaceRegistry *wr, Peer *p, yajl_val id, int kind, yajl_val params)
{
    list_or_wait(wr, p, id, kind, params);
}

/* ---- workspaces ---- */

static void on_linger(evutil_socket_t fd, short what, void *arg)
{
    Workspace *ws = arg;

    (void)fd, (void)what;
    log_info("workspace %s: no agent for %" PRId64 " ms: releasing its servers", ws->root,
             ws->reg->settings->workspace_linger_ms);
    ws_free(ws);
}

Workspace *ws_new(WorkspaceRegistry *m, const char *root)
{
    Workspace *ws = xcalloc(1, sizeof(*ws));

    ws->id = ++m->next_id;
    ws->reg = m;
    ws->root = root ? xstrdup(root) : NULL;
    ws->ev_gate = evtimer_new(m->base, on_gate, ws);
    ws->ev_notify = evtimer_new(m->base, on_notify, ws);
    ws->ev_linger = evtimer_new(m->base, on_linger, ws);
    ws->dirty = true;
    idmap_put(&m->by_id, ws->id, ws);
    return ws;
}

static void result_set(yajl_val results, const char *name, const char *what)
{
    if (results && !json_get(results, name))
        json_object_set(results, name, json_string_new(what));
}

/* Take what discovery found for ws: servers acquired, released, connected; set is taken. */
static void ws_apply(Workspace *ws, ConfigSet *set_in, yajl_val results)
{
    WorkspaceRegistry *m = ws->reg;
    Server **old = ws->servers;
    size_t n_old = ws->n_servers;
    ConfigSet set = *set_in;

    memset(set_in, 0, sizeof(*set_in));
    ws->servers = xcalloc(set.n_servers ? set.n_servers : 1, sizeof(*ws->servers));
    ws->n_servers = 0;
    ws->connect_started_ms = now_ms();
    /* New references first, so servers that stay are never released in between. */
    for (size_t i = 0; i < set.n_servers; i++) {
        ServerConfig *c = set.servers[i];
        const char *start =
            c->source.level == CONFIG_LEVEL_PROJECT && ws->root ? ws->root : m->home;
        bool created;
        Server *s = server_acquire(m->servers, c, start, &created);
        bool kept = false;
        /* The same server, maybe written elsewhere or otherwise now: shown as it wins now. */
        if (!created)
            server_config_take_origin(s->cfg, c);
        for (size_t j = 0; j < n_old; j++)
            kept |= old[j] == s;
        ws->servers[ws->n_servers++] = s;
        if (created || !kept) {
            bool was = false;
            for (size_t j = 0; j < n_old; j++)
                was |= streq(old[j]->cfg->name, c->name);
            result_set(results, c->name, was ? "changed" : "added");
        } else {
            result_set(results, c->name, "kept");
        }
        if (s->state == SERVER_FAILED || s->state == SERVER_STOPPED) {
            s->n_failures = 0;
            s->backoff_ms = 0;
        }
        if (s->cfg->enabled && !s->up && s->state != SERVER_CONNECTED)
            server_activate(s); /* a lazy one with cached tools waits for its first call */
    }
    for (size_t j = 0; j < n_old; j++) {
        if (!ws_has_server(ws, old[j])) {
            result_set(results, old[j]->cfg->name, "removed");
            log_full(LOG_INFO, old[j]->cfg->name, "reload", "%s",
                     config_set_find(&set, old[j]->cfg->name) ? "config changed" : "removed");
        }
    }
    for (size_t j = 0; j < n_old; j++)
        server_release(old[j]);
    free(old);
    config_set_deinit(&ws->problems);
    ws->problems = (ConfigSet){.problems = set.problems, .n_problems = set.n_problems};
    set.problems = NULL;
    set.n_problems = 0;
    config_set_deinit(&set);
    ws_gate_arm(ws);
    if (ws->loaded) {
        ws_changed(ws);
    } else {
        /* A new workspace has announced nothing and its agents have seen nothing: its first
         * view is where they start, and only a change from it is news (servers that connect
         * later, a reload). */
        ws->dirty = true;
        memcpy(ws->notified_hash, ws->reg->views->hash(ws), sizeof(ws->notified_hash));
    }
    ws->reg->ext->changed(ws, !ws->loaded);
    ws->loaded = true;
    ws_check_gate(ws);
}

typedef struct WsReloadWaiter {
    struct WsReloadWaiter *next;
    WsReloadedFn fn;
    void *ud;
} WsReloadWaiter;

/* Tell every asker of a reload (ws NULL: the workspace is going) and forget them. */
static void reload_waiters_tell(WsReloadWaiter *w, Workspace *ws, yajl_val results)
{
    while (w) {
        WsReloadWaiter *next = w->next;
        w->fn(w->ud, ws, results);
        free(w);
        w = next;
    }
}

void ws_load(Workspace *ws, yajl_val results)
{
    DiscoverOptions opt = {ws->reg->config_file, ws->root};
    ConfigSet set;

    /* A load now replaces a discovery still running: this one is newer, and answers its askers. */
    WsReloadWaiter *reloads = ws->reload_waiters;
    _cleanup_json_ yajl_val own = reloads && !results ? json_object_new() : NULL;

    ws->discovering = discover_async_cancel(ws->discovering);
    ws->reload_waiters = NULL;
    config_discover(&set, &opt, ws->reg->settings);
    ws_apply(ws, &set, results ? results : own);
    reload_waiters_tell(reloads, ws, results ? results : own);
}

static void ws_roots_changed(WorkspaceRegistry *m, Workspace *ws);
static void on_discovered(ConfigSet *set, void *userdata);

/* Off the loop: a project's files may take a few hundred ms to read (issue 39 item 7). */
static void ws_discover_async(Workspace *ws)
{
    DiscoverOptions opt = {ws->reg->config_file, ws->root};

    ws->discovering = discover_async(ws->reg->base, &opt, ws->reg->settings, on_discovered, ws);
}

typedef struct WsDiscoveredHook {
    struct WsDiscoveredHook *next;
    WsDiscoveredFn fn;
    void *ud;
    uint64_t peer_id;
} WsDiscoveredHook;

bool ws_defer_until_discovered(Workspace *ws, WsDiscoveredFn fn, void *ud, uint64_t peer_id)
{
    WsDiscoveredHook *h, **tail;

    /* A reload's read (ws loaded already) holds nobody back: the servers known serve till then. */
    if (!ws || !ws->discovering || ws->loaded)
        return false;
    tail = &ws->on_discovered;
    while (*tail)
        tail = &(*tail)->next; /* in the order asked: agents are answered as they came */
    h = xcalloc(1, sizeof(*h));
    *h = (WsDiscoveredHook){NULL, fn, ud, peer_id};
    *tail = h;
    return true;
}

static void hooks_free(WsDiscoveredHook *h)
{
    while (h) {
        WsDiscoveredHook *next = h->next;
        free(h);
        h = next;
    }
}

void ws_wait_discovered(Workspace *ws)
{
    if (ws && ws->discovering && !ws->loaded)
        discover_async_finish(ws->discovering); /* on_discovered clears it */
}

void ws_reload(Workspace *ws, WsReloadedFn fn, void *ud)
{
    WsReloadWaiter *w = xcalloc(1, sizeof(*w)), **tail = &ws->reload_waiters;

    while (*tail)
        tail = &(*tail)->next;
    *w = (WsReloadWaiter){NULL, fn, ud};
    *tail = w;
    ws->discovering = discover_async_cancel(ws->discovering);
    ws_discover_async(ws);
}

static void on_discovered(ConfigSet *set, void *userdata)
{
    Workspace *ws = userdata;
    bool stale = config_set_stale(set);
    WsReloadWaiter *reloads = ws->reload_waiters;
    yajl_val results = reloads ? json_object_new() : NULL;

    ws->discovering = NULL;
    ws->reload_waiters = NULL;
    ws_apply(ws, set, results);
    ws_roots_changed(ws->reg, ws);
    reload_waiters_tell(reloads, ws, results);
    json_free(results);
    /* Taken off first: a hook may attach another agent, or the workspace may go. */
    WsDiscoveredHook *hooks = ws->on_discovered;
    uint64_t ws_id = ws->id;
    WorkspaceRegistry *reg = ws->reg;
    ws->on_discovered = NULL;
    for (WsDiscoveredHook *h = hooks; h; h = h->next)
        h->fn(h->ud, h->peer_id);
    hooks_free(hooks);
    if (!idmap_get(&reg->by_id, ws_id))
        return; /* freed by a hook */
    /* A file written while the thread read, before the watcher knew of it: read again. */
    if (stale) {
        log_info("workspace %s: a file changed while it was read; reading again", ws->root);
        ws_discover_async(ws);
    }
}

void ws_free(Workspace *ws)
{
    WorkspaceRegistry *m = ws->reg;
    ListWaiter *w;

    ws->discovering = discover_async_cancel(ws->discovering);
    hooks_free(ws->on_discovered);
    reload_waiters_tell(ws->reload_waiters, NULL, NULL);
    ws->reload_waiters = NULL;
    idmap_remove(&m->by_id, ws->id);
    if (m->user_ws == ws)
        m->user_ws = NULL;
    while ((w = ws->waiters)) {
        ws->waiters = w->next;
        json_free(w->id);
        json_free(w->params);
        free(w);
    }
    for (size_t i = 0; i < ws->n_servers; i++)
        server_release(ws->servers[i]);
    free(ws->servers);
    config_set_deinit(&ws->problems);
    m->views->deinit(ws);
    m->ext->freed(ws);
    event_free(ws->ev_gate);
    event_free(ws->ev_notify);
    event_free(ws->ev_linger);
    free(ws->root);
    free(ws);
}

/*
 * A new project workspace gives its servers a root where they had none: mcpd answers a server's
 * roots/list with the root of the first project workspace that uses it (call.c), so a server
 * of no project workspace until now was told no roots. Each one already connected (a 2025
 * server; 2026-07-28 has no roots/list_changed) hears notifications/roots/list_changed and asks
 * again, as it would when a host's roots change.
 */
static void ws_roots_changed(WorkspaceRegistry *m, Workspace *ws)
{
    for (size_t i = 0; i < ws->n_servers; i++) {
        Server *s = ws->servers[i];
        bool had_root = false;
        size_t pos = 0;
        void *v;

        if (s->state != SERVER_CONNECTED || !s->up || upstream_is_modern(s->up))
            continue;
        while (!had_root && idmap_next(&m->by_id, &pos, NULL, &v))
            had_root = v != ws && ((Workspace *)v)->root && ws_has_server(v, s);
        if (!had_root)
            upstream_notify(s->up, "notifications/roots/list_changed", NULL);
    }
}

/* The workspace of a project root: found, or created and connecting. */
static Workspace *ws_for_cwd(WorkspaceRegistry *m, const char *cwd, char **whyp)
{
    char real[PATH_MAX];
    struct stat st;
    size_t pos = 0;
    void *v;
    Workspace *ws;

    if (cwd[0] != '/') {
        *whyp = xasprintf("_meta[\"mcpd/cwd\"] must be an absolute path, not \"%s\"", cwd);
        return NULL;
    }
    if (!realpath(cwd, real) || stat(real, &st) < 0) {
        *whyp = xasprintf("_meta[\"mcpd/cwd\"]: %s: %s", cwd, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        *whyp = xasprintf("_meta[\"mcpd/cwd\"]: %s is not a directory", cwd);
        return NULL;
    }
    while (idmap_next(&m->by_id, &pos, NULL, &v))
        if (((Workspace *)v)->root && streq(((Workspace *)v)->root, real))
            return v;
    ws = ws_new(m, real);
    log_info("workspace %s: discovering its servers", real);
    ws_discover_async(ws);
    return ws;
}

/* ---- agents: their workspace and session ---- */

int ws_attach(WorkspaceRegistry *m, Peer *p, const char *cwd, const char *token, char **whyp)
{
    Agent *a = agent_ensure(m->agents, p->id);
    Workspace *ws;
    Session *se;
    int r;

    if (token) {
        se = session_find_token(&m->sessions, token, p->uid);
        if (!se) {
            *whyp = xstrdup("_meta[\"mcpd/session\"] names no live session: the parent agent "
                            "has gone, or MCPD_SESSION is wrong");
            return WS_E_NO_SESSION;
        }
        ws = idmap_get(&m->by_id, se->workspace_id);
        if (!ws) {
            *whyp = xstrdup("the session's workspace has gone");
            return WS_E_GONE;
        }
        se->n_members++;
        a->parent_id = se->owner_peer_id;
    } else {
        ws = cwd ? ws_for_cwd(m, cwd, whyp) : m->user_ws;
        if (!ws)
            return WS_E_BAD_CWD;
        if ((r = session_open(&m->sessions, p, ws->id, &se, whyp)) < 0)
            return r;
    }
    a->session_id = se->id;
    a->workspace_id = ws->id;
    ws->n_agents++;
    event_del(ws->ev_linger);
    return 0;
}

const char *ws_peer_token(WorkspaceRegistry *m, Peer *p)
{
    Agent *a = agent_get(m->agents, p->id);
    Session *se = a ? session_get(&m->sessions, a->session_id) : NULL;

    return se ? se->token : NULL;
}

void ws_peer_left(WorkspaceRegistry *m, Peer *p)
{
    Agent *a = agent_get(m->agents, p->id);
    Workspace *ws = a && a->workspace_id ? idmap_get(&m->by_id, a->workspace_id) : NULL;

    if (a)
        session_leave(&m->sessions, a->session_id, p);
    if (!ws || !ws->n_agents)
        return;
    if (--ws->n_agents == 0 && ws != m->user_ws && !m->servers->shutting_down) {
        struct timeval tv;
        tv_ms(&tv, m->settings->workspace_linger_ms);
        evtimer_add(ws->ev_linger, &tv);
    }
}

void ws_registry_init(WorkspaceRegistry *wr, ServerRegistry *servers, PeerRegistry *peers,
                      AgentRegistry *agents, const Settings *settings, const char *config_file,
                      const char *home)
{
    memset(wr, 0, sizeof(*wr));
    wr->base = servers->base;
    wr->servers = servers;
    wr->peers = peers;
    wr->agents = agents;
    wr->settings = settings;
    wr->config_file = config_file;
    wr->home = home;
}

void ws_registry_shutdown(WorkspaceRegistry *wr)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&wr->by_id, &pos, NULL, &v)) {
        Workspace *ws = v;
        Server **servers = ws->servers;
        size_t n = ws->n_servers;
        ws->servers = NULL;
        ws->n_servers = 0;
        ws->dirty = true;
        for (size_t i = 0; i < n; i++)
            server_release(servers[i]);
        free(servers);
    }
}

void ws_registry_deinit(WorkspaceRegistry *wr)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&wr->by_id, &pos, NULL, &v))
        ws_free(v);
    idmap_deinit(&wr->by_id);
    session_registry_deinit(&wr->sessions);
}
