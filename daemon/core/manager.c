// SPDX-License-Identifier: MIT
// manager: upstream servers and their lifecycle (connect pipeline, start-up gate, tools, calls).

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
#include "daemon/core/cache.h"
#include "daemon/core/manager-private.h"
#include "daemon/core/surface.h"
#include "daemon/upstream/oauth-login.h"
#include "daemon/config/resolve.h"
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

const char *server_state_name(ServerState s)
{
    static const char *const names[] = {
        [SERVER_DISABLED] = "disabled",   [SERVER_CONNECTING] = "connecting",
        [SERVER_CONNECTED] = "connected", [SERVER_FAILED] = "failed",
        [SERVER_BACKOFF] = "backoff",     [SERVER_STOPPED] = "stopped",
    };
    return names[s];
}

static void waiters_server_settled(Server *s);

static void server_set_state(Server *s, ServerState st, const char *error)
{
    if (s->state != st)
        log_full(st == SERVER_FAILED ? LOG_WARNING : LOG_INFO, s->cfg->name, "state",
                 "%s -> %s%s%s", server_state_name(s->state), server_state_name(st),
                 error ? ": " : "", error ? error : "");
    s->state = st;
    s->since_wall_ms = wall_ms();
    if (s->m->on_change)
        s->m->on_change(s->m->on_change_ud);
    if (error) {
        free(s->last_error);
        s->last_error = xstrdup(error);
        s->last_error_wall_ms = wall_ms();
    }
}

Server *manager_find_server(Manager *m, Peer *p, const char *name)
{
    Workspace *ws = p ? ws_of_peer(m, p) : m->user_ws;

    for (size_t i = 0; ws && name && i < ws->n_servers; i++)
        if (streq(ws->servers[i]->cfg->name, name))
            return ws->servers[i];
    for (size_t i = 0; name && i < m->n_order; i++)
        if (streq(m->order[i]->cfg->name, name))
            return m->order[i];
    return NULL;
}

/* ---- replies to agents ---- */

void manager_reply_result(Manager *m, uint64_t peer_id, yajl_val id, yajl_val result)
{
    Peer *p = peer_get(m->peers, peer_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return;
    jsonrpc_write_result(&sb, id, result);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

void manager_reply_error(Manager *m, uint64_t peer_id, yajl_val id, int code, const char *msg)
{
    Peer *p = peer_get(m->peers, peer_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return;
    jsonrpc_write_error(&sb, id, code, msg, NULL);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

void manager_notify_peer(Manager *m, uint64_t peer_id, const char *method, yajl_val params)
{
    Peer *p = peer_get(m->peers, peer_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return;
    jsonrpc_write_notification(&sb, method, params);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

void manager_peer_gone(Manager *m, Peer *p)
{
    calls_peer_gone(m, p);
    surface_peer_gone(m, p);
    ws_peer_left(m, p);
}

/* ---- server lifecycle ---- */

static void server_clear_timers(Server *s)
{
    event_del(s->ev_connect_timeout);
    event_del(s->ev_retry);
    event_del(s->ev_health);
    s->ping_in_flight = false;
}

/* The health tick runs at the ping interval, or the idle timeout, whichever is shorter. */
static void server_arm_health(Server *s)
{
    int64_t ping = s->cfg->ping_interval_ms,
            idle = s->cfg->type == TRANSPORT_STDIO ? s->cfg->idle_timeout_ms : 0;
    int64_t ms = ping && idle ? MIN(ping, idle) : ping ? ping : idle;
    struct timeval tv;

    if (ms <= 0 || s->state != SERVER_CONNECTED)
        return;
    tv_ms(&tv, ms);
    evtimer_add(s->ev_health, &tv);
}

/* Close the session, if any; the transport finishes shutting down in the background. */
static void server_store_cache(Server *s);

static void server_close_upstream(Server *s)
{
    Upstream *u = s->up;

    /* A re-list's write still waiting is done now, while the session's serverInfo is known. */
    if (u && evtimer_pending(s->ev_cache, NULL))
        server_store_cache(s);

    resolve_cancel(s->resolving); /* a resolution in flight: its commands are killed */
    s->resolving = NULL;
    s->up = NULL;
    s->log_level = -1;
    s->listing = s->relist_pending = false; /* its list, if any, dies with it */
    if (u)
        calls_upstream_closed(s, u->id);
    upstream_close(u);
}

/* Any change of "connecting": waiting calls, mcpd/wait, the gate, the view. */
static void server_settled(Server *s)
{
    calls_server_settled(s);
    waiters_server_settled(s);
    server_views_changed(s);
}

static bool breaker_tripped(Server *s)
{
    uint64_t now = now_ms();

    s->failures[s->n_failures++ % BREAKER_FAILURES] = now;
    if (s->n_failures < BREAKER_FAILURES)
        return false;
    /* The oldest of the last five is the slot we write next. */
    return now - s->failures[s->n_failures % BREAKER_FAILURES] <= BREAKER_WINDOW_MS;
}

/* server_fail's retryable may also be this: the system was short of fds or processes. */
#define FAIL_TRANSIENT 2

/*
 * A connect attempt failed or a live session died. Retry with backoff unless reconnect is
 * off, the failure is one a retry cannot fix, or the server keeps failing (breaker). A
 * FAIL_TRANSIENT failure is no fault of the server's: always retried, never counted.
 */
static void server_fail(Server *s, const char *why, int retryable)
{
    struct timeval tv;
    bool transient = retryable == FAIL_TRANSIENT;

    server_clear_timers(s);
    server_close_upstream(s);
    if (retryable && (s->cfg->reconnect || transient) && !s->m->shutting_down) {
        if (!transient && breaker_tripped(s)) {
            _cleanup_free_ char *msg = xasprintf(
                "%s (failed %d times within %d s; not retrying: run `mcpctl connect %s` or "
                "reload once it is fixed)",
                why, BREAKER_FAILURES, BREAKER_WINDOW_MS / 1000, s->cfg->name);
            server_set_state(s, SERVER_FAILED, msg);
        } else {
            s->backoff_ms =
                s->backoff_ms ? MIN(s->backoff_ms * 2, BACKOFF_MAX_MS) : BACKOFF_FIRST_MS;
            s->next_attempt_wall_ms = wall_ms() + s->backoff_ms;
            server_set_state(s, SERVER_BACKOFF, why);
            tv_ms(&tv, s->backoff_ms);
            evtimer_add(s->ev_retry, &tv);
        }
    } else {
        server_set_state(s, SERVER_FAILED, why);
    }
    if (s->state == SERVER_FAILED && s->needs_auth && s->tools) {
        /*
         * Signed out: a sign-in brings it back, so agents keep its last known tools (deferred),
         * and a call gets the way out ("run: mcpctl login NAME") instead of "Unknown tool".
         */
        s->tools_deferred = true;
    } else if (s->state == SERVER_FAILED) {
        /* Nothing will come back by itself: its tools leave the view. */
        s->tools = json_free(s->tools);
        s->tools_deferred = false;
        surface_server_clear(s);
    } else if (s->tools) {
        s->tools_deferred = true;
    }
    server_settled(s);
}

/* Why this server's cache is not used (not private), for status; NULL once it works again. */
static void server_cache_problem(Server *s, const char *why)
{
    if (why && (!s->cache_problem || !streq(s->cache_problem, why)))
        log_full(LOG_WARNING, s->cfg->name, "cache", "tool cache not used: %s", why);
    free(s->cache_problem);
    s->cache_problem = why ? xstrdup(why) : NULL;
}

/* Best effort, like the seed's MCPToolCache.set: a failure is logged, never fatal. */
static void server_store_cache(Server *s)
{
    _cleanup_free_ char *why = NULL;
    int64_t now = wall_ms();

    event_del(s->ev_cache);
    if (cache_check_dir(s->m->cache_dir, &why) != 0) {
        server_cache_problem(s, why);
        return;
    }
    if (cache_store(s->m->cache_dir, s->cfg, s->up ? s->up->server_info : NULL, s->tools, now,
                    s->m->settings.cache_ttl_days * 86400000LL, &why) < 0) {
        log_full(LOG_WARNING, s->cfg->name, "cache", "tool cache not written: %s", why);
        return;
    }
    s->cache_saved_wall_ms = now;
    s->cache_writes++;
    server_cache_problem(s, NULL);
}

static void on_cache_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    server_store_cache(arg);
}

/* Re-lists write the cache at most once per CACHE_WRITE_DEBOUNCE_MS: a burst makes one write. */
static void server_schedule_cache(Server *s)
{
    struct timeval tv;

    if (evtimer_pending(s->ev_cache, NULL))
        return;
    tv_ms(&tv, CACHE_WRITE_DEBOUNCE_MS);
    evtimer_add(s->ev_cache, &tv);
}

static void server_load_cache(Server *s)
{
    _cleanup_free_ char *why = NULL;
    yajl_val tools = NULL;
    int64_t saved = 0;
    int r = cache_load(s->m->cache_dir, s->cfg, wall_ms(), &tools, &saved, &why);

    if (r == CACHE_E_UNSAFE)
        server_cache_problem(s, why);
    if (r == CACHE_E_STALE)
        log_full(LOG_NOTICE, s->cfg->name, "cache", "cache miss: %s", why);
    if (r != 0)
        return;
    s->tools = tools;
    s->n_tools_filtered = config_filter_tools(s->cfg, s->tools);
    s->tools_deferred = true;
    s->cache_saved_wall_ms = saved;
    log_full(LOG_DEBUG, s->cfg->name, "cache", "%zu tools from the cache", json_array_len(tools));
}

/* Fingerprint of a tool list, to skip the work a re-list that changed nothing would cause. */
static void tools_fingerprint(char out[2 * SHA256_DIGEST_SIZE + 1], yajl_val tools)
{
    StrBuf sb = STRBUF_INIT;

    json_write(&sb, tools);
    sha256_hex(out, sb.data ? sb.data : "", sb.len);
    strbuf_deinit(&sb);
}

/* Take a successful list's tools; false when they are the ones already held. */
static bool server_take_tools(Server *s, const UpstreamReply *r)
{
    char fp[2 * SHA256_DIGEST_SIZE + 1];
    /* Taken, not copied (upstream_list_tools allows it): lists may hold 10 000 tools. */
    yajl_val tools = json_object_take(r->result, "tools");

    free(s->list_note);
    s->list_note = r->message ? xstrdup(r->message) : NULL;
    if (s->list_note)
        log_full(LOG_WARNING, s->cfg->name, "tools", "%s", s->list_note);
    if (!YAJL_IS_ARRAY(tools)) {
        json_free(tools);
        tools = json_array_new();
    }
    /* The user's filters (enabledTools, disabledTools): hidden tools never reach agents. */
    s->n_tools_filtered = config_filter_tools(s->cfg, tools);
    tools_fingerprint(fp, tools);
    if (s->tools && streq(fp, s->tools_fp)) {
        json_free(tools);
        return false;
    }
    memcpy(s->tools_fp, fp, sizeof(fp));
    json_free(s->tools);
    s->tools = tools;
    return true;
}

static void on_list_done(Upstream *u, void *ctx, const UpstreamReply *r);
static void on_relist_done(Upstream *u, void *ctx, const UpstreamReply *r);

/* The one tools/list in flight for this server's session. */
static void server_list_tools(Server *s, UpstreamReplyFn fn)
{
    UpstreamListLimits lim = {
        .max_tools = s->m->settings.max_tools_per_server,
        .max_pages = s->m->settings.max_list_pages,
        .max_bytes = s->m->settings.max_list_bytes,
    };

    s->listing = true;
    s->relist_pending = false;
    s->lists_total++;
    upstream_list_tools(s->up, s->cfg->timeout_ms, &lim, fn, s);
}

/* A list finished: a list_changed that came meanwhile gets its one re-list now. */
static void server_list_finished(Server *s)
{
    if (s->relist_pending && s->state == SERVER_CONNECTED && s->up)
        server_list_tools(s, on_relist_done);
}

static void on_list_done(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Server *s = ctx;
    _cleanup_free_ char *msg = NULL;

    if (r->outcome == UPSTREAM_CANCELLED || s->up != u)
        return;
    s->listing = false;
    if (r->outcome != UPSTREAM_OK) {
        /* A failed first tools/list is a failed server, not a connected one (B5). */
        msg = r->outcome == UPSTREAM_ERROR
                  ? xasprintf("tools/list failed: MCP error %" PRId64 ": %s", r->code, r->message)
                  : xasprintf("tools/list failed: %s", r->message);
        server_fail(s, msg, true);
        return;
    }
    server_clear_timers(s);
    /* Forget the cached list's fingerprint: a connect always refreshes the cache file. */
    s->tools_fp[0] = '\0';
    server_take_tools(s, r);
    s->tools_deferred = false;
    s->backoff_ms = 0;
    free(s->last_error);
    s->last_error = s->list_note ? xstrdup(s->list_note) : NULL;
    server_set_state(s, SERVER_CONNECTED, NULL);
    s->last_used_ms = now_ms();
    s->idle_stopped = false;
    server_arm_health(s);
    server_store_cache(s);
    surface_server_connected(s);
    log_full(LOG_INFO, s->cfg->name, "connected", "connected in %" PRIu64 " ms with %zu tools",
             now_ms() - s->connect_started_ms, json_array_len(s->tools));
    server_settled(s);
    server_list_finished(s);
}

static void on_upstream_ready(void *userdata)
{
    Server *s = userdata;

    server_list_tools(s, on_list_done);
}

static void on_relist_done(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Server *s = ctx;

    if (r->outcome == UPSTREAM_CANCELLED || s->up != u)
        return;
    s->listing = false;
    if (s->state != SERVER_CONNECTED)
        return;
    if (r->outcome != UPSTREAM_OK) {
        log_full(LOG_WARNING, s->cfg->name, "tools", "re-listing tools failed: %s", r->message);
        free(s->last_error);
        s->last_error = xasprintf("re-listing tools failed: %s", r->message);
    } else {
        free(s->last_error);
        s->last_error = NULL;
        if (server_take_tools(s, r)) {
            server_schedule_cache(s);
            server_views_changed(s);
        }
        if (s->list_note)
            s->last_error = xstrdup(s->list_note);
    }
    server_list_finished(s);
}

static void on_upstream_notification(void *userdata, const char *method, yajl_val params)
{
    Server *s = userdata;

    if (streq(method, "notifications/tools/list_changed")) {
        /* One list in flight at most: changes meanwhile make one re-list after it. */
        if (s->listing)
            s->relist_pending = true;
        else if (s->state == SERVER_CONNECTED)
            server_list_tools(s, on_relist_done);
        return;
    }
    if (!surface_notification(s, method, params))
        route_notification(s, method, params);
}

static void on_upstream_request(void *userdata, yajl_val id, const char *method, yajl_val params)
{
    route_request(userdata, id, method, params);
}

static void on_upstream_auth(void *userdata, const char *challenge)
{
    Server *s = userdata;

    s->needs_auth = true;
    free(s->auth_challenge);
    s->auth_challenge = xstrdup(challenge);
}

static void on_upstream_closed(void *userdata, const char *reason)
{
    Server *s = userdata;
    _cleanup_free_ char *msg = NULL;

    /* A 403 step-up left the connection up: a later close is not about credentials. */
    if (s->needs_auth &&
        !strstr(s->auth_challenge ? s->auth_challenge : "", "insufficient_scope")) {
        /* Retrying cannot fix missing credentials: a refresh token may, else a person must. */
        msg = xasprintf("%s; run: mcpctl login %s", reason, s->cfg->name);
        server_fail(s, msg, false);
        oauth_login_refresh(s);
        return;
    }
    if (s->state == SERVER_CONNECTED) {
        msg = xasprintf("connection lost: %s", reason);
        server_fail(s, msg, true);
    } else {
        server_fail(s, reason, true);
    }
}

static void on_connect_timeout(evutil_socket_t fd, short what, void *arg)
{
    Server *s = arg;
    _cleanup_free_ char *msg =
        xasprintf("Connection to MCP server \"%s\" timed out after %" PRId64 "ms", s->cfg->name,
                  s->cfg->timeout_ms);

    (void)fd, (void)what;
    /* The late session is closed here, never leaked (B4). */
    server_fail(s, msg, true);
}

static void on_ping_reply(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Server *s = ctx;
    _cleanup_free_ char *msg = NULL;

    if (r->outcome == UPSTREAM_CANCELLED || s->up != u)
        return;
    s->ping_in_flight = false;
    if (r->outcome == UPSTREAM_OK || r->outcome == UPSTREAM_ERROR)
        return; /* any answer, even -32601, shows the server is alive */
    msg = xasprintf("health ping failed: %s", r->message);
    server_fail(s, msg, true);
}

static void idle_stop(Server *s)
{
    log_full(LOG_INFO, s->cfg->name, "idle", "unused for %" PRId64 " ms: stopping it",
             s->cfg->idle_timeout_ms);
    server_clear_timers(s);
    server_close_upstream(s);
    if (s->tools)
        s->tools_deferred = true;
    s->idle_stopped = true;
    server_set_state(s, SERVER_STOPPED, NULL);
    server_settled(s);
}

static void on_health(evutil_socket_t fd, short what, void *arg)
{
    Server *s = arg;
    int64_t idle = s->cfg->type == TRANSPORT_STDIO ? s->cfg->idle_timeout_ms : 0;

    (void)fd, (void)what;
    if (s->state != SERVER_CONNECTED || !s->up)
        return;
    if (idle > 0 && !s->calls_in_flight && now_ms() - s->last_used_ms >= (uint64_t)idle) {
        idle_stop(s);
        return;
    }
    if (s->cfg->ping_interval_ms > 0 && !s->ping_in_flight) {
        /* A pong must come within the interval; a missed one marks the connection dead. */
        s->ping_in_flight = upstream_request(s->up, "ping", NULL, s->cfg->ping_interval_ms, false,
                                             on_ping_reply, s, NULL) == 0;
    }
    server_arm_health(s);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    Server *s = arg;

    (void)fd, (void)what;
    /* Every automatic retry is a restart, whether or not the attempt before it ever connected. */
    s->restarts++;
    server_connect(s);
}

/* Values resolved (or not): start the transport with the resolved copy, then forget it. */
static void on_resolved(void *userdata, ServerConfig *resolved, const char *error, bool retryable)
{
    static const UpstreamEvents ev = {on_upstream_ready, on_upstream_closed,
                                      on_upstream_notification, on_upstream_request,
                                      on_upstream_auth};
    Server *s = userdata;
    Manager *m = s->m;
    _cleanup_free_ char *why = NULL;
    const char *cwd = s->start_dir;
    struct timeval tv;
    int r;

    s->resolving = NULL;
    if (!resolved) {
        /* A failing !command may work later (a locked vault); an untrusted file will not. */
        server_fail(s, error, retryable);
        return;
    }
    /* The resolved copy holds secrets: only the transport sees it; s->cfg stays unresolved. */
    r = upstream_start(&s->up, m->base, resolved, cwd, m->settings.max_call_timeout_ms, &ev, s,
                       &why);
    server_config_free(resolved);
    if (r < 0) {
        /* No such command, bad cwd: the config must change first; out of fds: wait. */
        server_fail(s, why, transport_error_is_transient(r) ? FAIL_TRANSIENT : false);
        return;
    }
    if (s->cfg->timeout_ms > 0) {
        tv_ms(&tv, s->cfg->timeout_ms);
        evtimer_add(s->ev_connect_timeout, &tv);
    }
}

void server_connect(Server *s)
{
    Manager *m = s->m;

    if (s->up || s->resolving || !s->cfg->enabled || m->shutting_down)
        return;
    server_clear_timers(s);
    s->connect_started_ms = now_ms();
    s->needs_auth = false;
    server_set_state(s, SERVER_CONNECTING, NULL);
    if (s->tools)
        s->tools_deferred = true;
    /* !commands and credentials resolve on the loop (never blocking it), then on_resolved. */
    resolve_start(&s->resolving, m->base, s->cfg, NULL, on_resolved, s);
}

/* Identity of a connection: name, unresolved config, and where a stdio server starts. */
static bool server_matches(const Server *s, const ServerConfig *cfg, const char *start_dir)
{
    return server_config_same(s->cfg, cfg) && s->cfg->enabled == cfg->enabled &&
           (cfg->type != TRANSPORT_STDIO || cfg->cwd || streq(s->start_dir, start_dir));
}

Server *server_acquire(Manager *m, const ServerConfig *cfg, const char *start_dir, bool *createdp)
{
    Server *s;

    *createdp = false;
    for (size_t i = 0; i < m->n_order; i++)
        if (server_matches(m->order[i], cfg, start_dir)) {
            m->order[i]->n_refs++;
            return m->order[i];
        }
    *createdp = true;
    s = xcalloc(1, sizeof(*s));
    s->id = ++m->next_server_id;
    s->m = m;
    s->cfg = server_config_copy(cfg);
    s->start_dir = xstrdup(start_dir);
    s->n_refs = 1;
    s->log_level = -1;
    s->state = cfg->enabled ? SERVER_STOPPED : SERVER_DISABLED;
    s->since_wall_ms = wall_ms();
    s->ev_connect_timeout = evtimer_new(m->base, on_connect_timeout, s);
    s->ev_retry = evtimer_new(m->base, on_retry, s);
    s->ev_health = evtimer_new(m->base, on_health, s);
    s->ev_cache = evtimer_new(m->base, on_cache_timer, s);
    if (cfg->enabled) {
        server_load_cache(s);
        surface_load_cache(s);
    }
    idmap_put(&m->servers, s->id, s);
    m->order = xrealloc(m->order, (m->n_order + 1) * sizeof(*m->order));
    m->order[m->n_order++] = s;
    return s;
}

/* Disconnect and forget a server: exactly its own tools leave the views (B2, B3). */
static void server_remove(Server *s)
{
    Manager *m = s->m;

    server_clear_timers(s);
    server_close_upstream(s);
    s->state = SERVER_STOPPED;
    calls_server_removed(s);
    waiters_server_settled(s);
    idmap_remove(&m->servers, s->id);
    for (size_t i = 0; i < m->n_order; i++)
        if (m->order[i] == s) {
            memmove(m->order + i, m->order + i + 1, (m->n_order - i - 1) * sizeof(*m->order));
            m->n_order--;
            break;
        }
    event_free(s->ev_connect_timeout);
    event_free(s->ev_retry);
    event_free(s->ev_health);
    event_free(s->ev_cache);
    free(s->list_note);
    free(s->cache_problem);
    idmap_deinit(&s->live_calls);
    surface_server_free(s);
    json_free(s->tools);
    free(s->last_error);
    free(s->start_dir);
    free(s->auth_challenge);
    server_config_free(s->cfg);
    free(s);
}

void server_release(Server *s)
{
    if (s && --s->n_refs == 0)
        server_remove(s);
}

yajl_val problems_json(const ConfigSet *set)
{
    return config_problems_json(set);
}

void manager_start(Manager *m)
{
    m->user_ws = ws_new(m, NULL);
    ws_load(m->user_ws, NULL);
}

static void ws_problems_into(yajl_val arr, const Workspace *ws)
{
    yajl_val probs = problems_json(&ws->problems);

    for (size_t i = 0; i < probs->u.array.len; i++) {
        if (ws->root)
            json_object_set(probs->u.array.values[i], "workspace", json_string_new(ws->root));
        json_array_push(arr, json_copy(probs->u.array.values[i]));
    }
    json_free(probs);
}

yajl_val manager_reload(Manager *m, const char *root)
{
    yajl_val result = json_object_new(), servers = json_object_new(), probs = json_array_new();
    _cleanup_free_ Workspace **all = xcalloc(m->workspaces.n + 1, sizeof(*all));
    size_t n = 0, pos = 0;
    void *v;

    /* Collected first: a load may release servers, never workspaces, but keep it simple. */
    while (idmap_next(&m->workspaces, &pos, NULL, &v))
        if (!root || (((Workspace *)v)->root && streq(((Workspace *)v)->root, root)))
            all[n++] = v;
    for (size_t i = 0; i < n; i++) {
        ws_load(all[i], servers);
        ws_problems_into(probs, all[i]);
    }
    json_object_set(result, "servers", servers);
    json_object_set(result, "problems", probs);
    json_object_set(result, "workspaces", json_int_new((int64_t)n));
    return result;
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
    json_object_set(r, "state", json_string_new(s ? server_state_name(s->state) : "removed"));
    json_object_set(r, "connected", json_bool_new(s && s->state == SERVER_CONNECTED));
    json_object_set(r, "timedOut", json_bool_new(timed_out));
    if (s && s->last_error)
        json_object_set(r, "error", json_string_new(s->last_error));
    manager_reply_result(w->m, w->peer_id, w->id, r);
    json_free(r);
    event_free(w->timer);
    json_free(w->id);
    free(w);
}

static void on_waiter_timeout(evutil_socket_t fd, short what, void *arg)
{
    ServerWaiter *w = arg;

    (void)fd, (void)what;
    waiter_finish(w, idmap_get(&w->m->servers, w->server_id), true);
}

static void waiters_server_settled(Server *s)
{
    ServerWaiter *w = s->m->server_waiters, *next;

    for (; w; w = next) {
        next = w->next;
        if (w->server_id == s->id && (s->state == SERVER_CONNECTED || s->state == SERVER_FAILED ||
                                      s->state == SERVER_STOPPED || s->state == SERVER_DISABLED))
            waiter_finish(w, s->state == SERVER_STOPPED ? NULL : s, false);
    }
}

void manager_wait(Manager *m, Peer *p, yajl_val id, const char *name, int64_t timeout_ms)
{
    Server *s = manager_find_server(m, p, name);
    ServerWaiter *w;
    struct timeval tv;

    if (!s) {
        _cleanup_free_ char *msg = xasprintf("Unknown server: %s", name);
        manager_reply_error(m, p->id, id, JSONRPC_INVALID_PARAMS, msg);
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
        return -ENOENT;
    }
    if (!s->cfg->enabled) {
        *whyp = xasprintf("Server %s is disabled in %s", name,
                          s->cfg->source.path ? s->cfg->source.path : "its config");
        return -EPERM;
    }
    s->n_failures = 0;
    s->backoff_ms = 0;
    if (s->state != SERVER_CONNECTED && s->state != SERVER_CONNECTING) {
        server_close_upstream(s);
        server_connect(s);
    }
    return 0;
}

int manager_disconnect(Manager *m, Peer *p, const char *name, char **whyp)
{
    Server *s = manager_find_server(m, p, name);

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return -ENOENT;
    }
    server_clear_timers(s);
    server_close_upstream(s);
    s->tools = json_free(s->tools);
    s->tools_deferred = false;
    surface_server_clear(s);
    s->idle_stopped = false;
    server_set_state(s, SERVER_STOPPED, NULL);
    free(s->last_error);
    s->last_error = NULL;
    server_settled(s);
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
        return -ENOENT;
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

    for (size_t i = 0; i < m->n_order; i++) {
        Server *s = m->order[i];
        if (s->state == SERVER_DISABLED)
            continue;
        t++;
        if (s->state == SERVER_CONNECTED)
            c++;
        tools += (unsigned)json_array_len(s->tools);
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
    json_object_set(o, "state", json_string_new(server_state_name(s->state)));
    json_object_set(o, "since", json_int_new(s->since_wall_ms));
    json_object_set(o, "transport",
                    json_string_new(s->up && s->up->transport ? s->up->transport->ops->kind
                                                              : transport_type_name(s->cfg->type)));
    json_object_set(o, "tools", json_int_new((int64_t)json_array_len(s->tools)));
    json_object_set(o, "toolsDeferred", json_bool_new(s->tools_deferred));
    surface_status(s, o);
    if (s->n_tools_filtered)
        json_object_set(o, "toolsFiltered", json_int_new((int64_t)s->n_tools_filtered));
    if (s->idle_stopped)
        json_object_set(o, "idle", json_bool_new(true));
    json_object_set(o, "restarts", json_int_new(s->restarts));
    json_object_set(o, "callsInFlight", json_int_new(s->calls_in_flight));
    json_object_set(o, "callsTotal", json_int_new((int64_t)s->calls_total));
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
    json_object_set(o, "nameCollisions", json_int_new(ws->n_collisions));
    if (!ws->n_agents && ws->root && evtimer_pending(ws->ev_linger, NULL))
        json_object_set(o, "lingering", json_bool_new(true));
    return o;
}

static yajl_val agent_status(Manager *m, Peer *p)
{
    yajl_val a = json_object_new();
    Workspace *ws = p->workspace_id ? idmap_get(&m->workspaces, p->workspace_id) : NULL;
    Peer *parent = p->parent_peer_id ? peer_get(m->peers, p->parent_peer_id) : NULL;

    json_object_set(a, "id", json_int_new((int64_t)p->id));
    json_object_set(a, "pid", json_int_new(p->pid));
    if (p->client_name)
        json_object_set(a, "name", json_string_new(p->client_name));
    if (p->client_version)
        json_object_set(a, "version", json_string_new(p->client_version));
    json_object_set(a, "initialized", json_bool_new(p->initialized));
    if (p->protocol_version)
        json_object_set(a, "protocolVersion", json_string_new(p->protocol_version));
    if (ws) {
        json_object_set(a, "workspace", json_int_new((int64_t)ws->id));
        json_object_set(a, "root", ws->root ? json_string_new(ws->root) : json_null_new());
    }
    if (p->session_id)
        json_object_set(a, "session", json_int_new((int64_t)p->session_id));
    if (p->parent_peer_id) {
        json_object_set(a, "parent", json_int_new((int64_t)p->parent_peer_id));
        if (parent)
            json_object_set(a, "parentPid", json_int_new(parent->pid));
    }
    if (p->log_level >= 0)
        json_object_set(a, "logLevel", json_int_new(p->log_level));
    json_object_set(a, "callsInFlight", json_int_new(p->calls_in_flight));
    json_object_set(a, "bytesQueued", json_int_new((int64_t)peer_queued(p)));
    json_object_set(a, "connectedAt", json_int_new(p->connected_wall_ms));
    return a;
}

yajl_val manager_status(Manager *m)
{
    yajl_val o = json_object_new(), servers = json_array_new(), agents = json_array_new();
    yajl_val wss = json_array_new(), probs = json_array_new();
    size_t pos = 0;
    void *v;

    for (size_t i = 0; i < m->n_order; i++) {
        yajl_val so = server_status(m->order[i]);
        json_object_set(so, "id", json_int_new((int64_t)m->order[i]->id));
        json_array_push(servers, so);
    }
    for (Peer *p = m->peers->first; p; p = p->next)
        json_array_push(agents, agent_status(m, p));
    while (idmap_next(&m->workspaces, &pos, NULL, &v)) {
        json_array_push(wss, workspace_status(v));
        ws_problems_into(probs, v);
    }
    json_object_set(o, "servers", servers);
    json_object_set(o, "agents", agents);
    json_object_set(o, "workspaces", wss);
    if (m->user_ws) {
        ws_view_ensure(m->user_ws);
        json_object_set(o, "tools", json_int_new((int64_t)m->user_ws->n_view));
        json_object_set(o, "nameCollisions", json_int_new(m->user_ws->n_collisions));
    }
    for (size_t i = 0; i < m->n_order; i++)
        if (m->order[i]->cache_problem) {
            yajl_val cp = json_object_new();
            json_object_set(cp, "server", json_string_new(m->order[i]->cfg->name));
            json_object_set(cp, "path", json_string_new(m->cache_dir));
            json_object_set(cp, "error", json_string_new(m->order[i]->cache_problem));
            json_array_push(probs, cp);
        }
    json_object_set(o, "problems", probs);
    return o;
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
}

void manager_shutdown(Manager *m)
{
    size_t pos = 0;
    void *v;

    m->shutting_down = true;
    /* Workspaces stay (agents may still ask during the grace period), empty. */
    while (idmap_next(&m->workspaces, &pos, NULL, &v)) {
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
    while (m->n_order)
        server_remove(m->order[m->n_order - 1]);
}

void manager_deinit(Manager *m)
{
    size_t pos = 0;
    void *v;

    manager_shutdown(m);
    while (m->server_waiters)
        waiter_finish(m->server_waiters, NULL, false);
    calls_deinit(m);
    while (idmap_next(&m->workspaces, &pos, NULL, &v))
        ws_free(v);
    idmap_deinit(&m->workspaces);
    sessions_deinit(m);
    surface_passthrough_deinit(m);
    idmap_deinit(&m->servers);
    free(m->order);
    free(m->home);
    free(m->cache_dir);
    strbuf_deinit(&m->scratch);
}
