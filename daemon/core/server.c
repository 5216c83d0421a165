// SPDX-License-Identifier: MIT
// server: one upstream server's lifecycle (connect pipeline, backoff, breaker, health, tool
// list and its cache), reported upward through ServerEvents.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/config/resolve.h"
#include "daemon/config/server-identity.h"
#include "daemon/config/tool-filter.h"
#include "daemon/core/cache.h"
#include "daemon/core/server.h"
#include "daemon/core/toolset.h"

/* Tell the layers above: ev is static, each member may be NULL. */
#define EMIT(s, name, ...)                                                                         \
    do {                                                                                           \
        if ((s)->reg->ev && (s)->reg->ev->name)                                                    \
            (s)->reg->ev->name((s)->reg->ud, (s), ##__VA_ARGS__);                                  \
    } while (0)

const char *server_state_name(ServerState s)
{
    static const char *const names[] = {
        [SERVER_DISABLED] = "disabled",   [SERVER_CONNECTING] = "connecting",
        [SERVER_CONNECTED] = "connected", [SERVER_FAILED] = "failed",
        [SERVER_BACKOFF] = "backoff",     [SERVER_STOPPED] = "stopped",
    };
    return names[s];
}

const char *server_state_word(const Server *s)
{
    return s->state == SERVER_STOPPED && s->idle_stopped ? "idle" : server_state_name(s->state);
}

static void server_set_state(Server *s, ServerState st, const char *error)
{
    if (s->state != st)
        log_full(st == SERVER_FAILED ? LOG_WARNING : LOG_INFO, s->cfg->name, "state",
                 "%s -> %s%s%s", server_state_name(s->state), server_state_name(st),
                 error ? ": " : "", error ? error : "");
    s->state = st;
    s->since_wall_ms = wall_ms();
    EMIT(s, state_changed);
    if (error) {
        free(s->last_error);
        s->last_error = xstrdup(error);
        s->last_error_wall_ms = wall_ms();
    }
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
    int64_t ping = s->cfg->ping_interval_ms, idle = server_idle_timeout_ms(s);
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
        EMIT(s, closed, u->id);
    upstream_close(u);
}

/* Any change of "connecting": waiting calls, mcpd/wait, the gate, the view. */
static void server_settled(Server *s)
{
    EMIT(s, settled);
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

/* Why a server that tripped the breaker is failed, and the way out (to free). */
static char *breaker_message(const Server *s, const char *why)
{
    return xasprintf("%s (failed %d times within %d s; not retrying: run `mcpctl connect %s` or "
                     "reload once it is fixed)",
                     why, BREAKER_FAILURES, BREAKER_WINDOW_MS / 1000, s->cfg->name);
}

/*
 * A start on demand (server_wake) failed: the calls waiting for it hear why at once (state
 * failed), its tools stay listed and the next call tries again. Nothing retries meanwhile, since
 * nothing needs the server until then; failures one call after another trip the breaker as a
 * crash loop does, and then its tools go.
 */
static void server_fail_woken(Server *s, const char *why, int retryable)
{
    if (retryable != FAIL_TRANSIENT && breaker_tripped(s)) {
        _cleanup_free_ char *msg = breaker_message(s, why);
        s->idle_stopped = false;
        server_set_state(s, SERVER_FAILED, msg);
        s->tools = toolset_free(s->tools);
        s->tools_deferred = false;
        EMIT(s, cleared);
    } else {
        server_set_state(s, SERVER_FAILED, why);
    }
    server_settled(s);
}

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
    if (s->idle_stopped) {
        server_fail_woken(s, why, retryable);
        return;
    }
    if (retryable && (s->cfg->reconnect || transient) && !s->reg->shutting_down) {
        if (!transient && breaker_tripped(s)) {
            _cleanup_free_ char *msg = breaker_message(s, why);
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
        s->tools = toolset_free(s->tools);
        s->tools_deferred = false;
        EMIT(s, cleared);
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
    if (cache_check_dir(s->reg->cache_dir, &why) != 0) {
        server_cache_problem(s, why);
        return;
    }
    size_t len;
    _cleanup_free_ char *text = toolset_json(s->tools, &len);
    /* The era goes with the tools, so a restart skips a probe this server never answers. */
    UpstreamEra era = s->up && s->up->era ? s->up->era : era_known(s->cfg->hash);
    if (cache_store_json(s->reg->cache_dir, s->cfg, s->up ? s->up->server_info : NULL, text, len,
                         era, now, s->reg->settings->cache_ttl_days * 86400000LL, &why) < 0) {
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
    UpstreamEra era = UPSTREAM_ERA_UNKNOWN;
    int r = cache_load_entry(s->reg->cache_dir, s->cfg, wall_ms(), &tools, &saved, &era, &why);

    if (r == CACHE_E_UNSAFE)
        server_cache_problem(s, why);
    if (r == CACHE_E_STALE)
        log_full(LOG_NOTICE, s->cfg->name, "cache", "cache miss: %s", why);
    if (r != 0)
        return;
    s->n_tools_filtered = config_filter_tools(s->cfg, tools);
    s->tools = toolset_new_take(tools);
    s->tools_deferred = true;
    s->cache_saved_wall_ms = saved;
    /* A pinned "protocol" still wins: upstream_start() reads the memory only for "auto". */
    era_seed(s->cfg->hash, era);
    log_full(LOG_DEBUG, s->cfg->name, "cache", "%zu tools from the cache (era %s)",
             toolset_len(s->tools),
             era == UPSTREAM_ERA_LEGACY   ? "2025"
             : era == UPSTREAM_ERA_MODERN ? MCP_PROTOCOL_2026_07_28
                                          : "unknown");
}

/* Fingerprint of a tool list, to skip the work a re-list that changed nothing would cause. */
static void tools_fingerprint(char out[2 * SHA256_DIGEST_SIZE + 1], const ToolSet *tools)
{
    size_t len;
    _cleanup_free_ char *text = toolset_json(tools, &len);

    sha256_hex(out, text, len);
}

/* Take a successful list's tools; false when they are the ones already held. */
static bool server_take_tools(Server *s, const UpstreamReply *r)
{
    char fp[2 * SHA256_DIGEST_SIZE + 1];
    /* Taken, not copied (upstream_list_tools allows it): lists may hold 10 000 tools. */
    yajl_val tree = json_object_take(r->result, "tools");
    ToolSet *tools;

    free(s->list_note);
    s->list_note = r->message ? xstrdup(r->message) : NULL;
    if (s->list_note)
        log_full(LOG_WARNING, s->cfg->name, "tools", "%s", s->list_note);
    if (!YAJL_IS_ARRAY(tree)) {
        json_free(tree);
        tree = json_array_new();
    }
    /* The user's filters (enabledTools, disabledTools): hidden tools never reach agents. */
    s->n_tools_filtered = config_filter_tools(s->cfg, tree);
    tools = toolset_new_take(tree);
    tools_fingerprint(fp, tools);
    if (s->tools && streq(fp, s->tools_fp)) {
        toolset_free(tools);
        return false;
    }
    memcpy(s->tools_fp, fp, sizeof(fp));
    toolset_free(s->tools);
    s->tools = tools;
    return true;
}

static void on_list_done(Upstream *u, void *ctx, const UpstreamReply *r);
static void on_relist_done(Upstream *u, void *ctx, const UpstreamReply *r);

/* The one tools/list in flight for this server's session. */
static void server_list_tools(Server *s, UpstreamReplyFn fn)
{
    UpstreamListLimits lim = {
        .max_tools = s->reg->settings->max_tools_per_server,
        .max_pages = s->reg->settings->max_list_pages,
        .max_bytes = s->reg->settings->max_list_bytes,
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
    server_arm_health(s);
    log_full(LOG_INFO, s->cfg->name, "connected", "connected in %" PRIu64 " ms with %zu tools",
             now_ms() - s->connect_started_ms, toolset_len(s->tools));
    if (s->idle_stopped) {
        /*
         * Started for a call: the calls waiting go to the server first, ahead of the surface's
         * lists, and the cache (whose tools it most likely just listed again) is written later,
         * not with an fsync before the call leaves (bench-ondemand: a first call costs no more
         * than the server's own cold start).
         */
        s->idle_stopped = false;
        server_settled(s);
        server_schedule_cache(s);
        if (s->up && s->state == SERVER_CONNECTED) /* a call's fate may have changed it */
            EMIT(s, connected);
    } else {
        server_store_cache(s);
        EMIT(s, connected);
        server_settled(s);
    }
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
            EMIT(s, tools_changed);
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
    EMIT(s, notification, method, params);
}

static void on_upstream_request(void *userdata, yajl_val id, const char *method, yajl_val params)
{
    Server *s = userdata;

    EMIT(s, request, id, method, params);
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
        EMIT(s, signed_out);
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

int64_t server_idle_timeout_ms(const Server *s)
{
    if (s->cfg->type != TRANSPORT_STDIO)
        return 0; /* a remote server costs this machine nothing while it waits */
    if (s->cfg->start == CONFIG_START_EAGER && !s->cfg->idle_timeout_set)
        return 0; /* eager: kept up, unless its entry asks for an idle stop */
    return s->cfg->idle_timeout_ms;
}

/* Whether it must stay up though unused: a call in flight, a pin, a subscription, a task. */
static bool server_needed(Server *s)
{
    return s->calls_in_flight || s->n_pins ||
           (s->reg->ev && s->reg->ev->busy && s->reg->ev->busy(s->reg->ud, s));
}

/*
 * Unused for its idle timeout: stopped, its tools kept as they are listed while it runs (the
 * view does not change), the next call starts it. Not a failure: no backoff, no restart count.
 */
static void idle_stop(Server *s)
{
    log_full(LOG_INFO, s->cfg->name, "idle", "unused for %" PRId64 " ms: stopping it",
             server_idle_timeout_ms(s));
    server_clear_timers(s);
    server_close_upstream(s);
    s->tools_deferred = false;
    s->idle_stopped = true;
    s->backoff_ms = 0;
    server_set_state(s, SERVER_STOPPED, NULL);
    server_settled(s);
}

static void on_health(evutil_socket_t fd, short what, void *arg)
{
    Server *s = arg;
    int64_t idle = server_idle_timeout_ms(s);

    (void)fd, (void)what;
    if (s->state != SERVER_CONNECTED || !s->up)
        return;
    if (idle > 0 && now_ms() - s->last_used_ms >= (uint64_t)idle) {
        if (!server_needed(s)) {
            idle_stop(s);
            return;
        }
        s->last_used_ms = now_ms(); /* still needed: a full timeout again from now */
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
    ServerRegistry *reg = s->reg;
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
    r = upstream_start(&s->up, reg->base, resolved, cwd, reg->settings->max_call_timeout_ms, &ev, s,
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
    ServerRegistry *reg = s->reg;

    if (s->up || s->resolving || !s->cfg->enabled || reg->shutting_down)
        return;
    server_clear_timers(s);
    s->connect_started_ms = now_ms();
    s->needs_auth = false;
    server_set_state(s, SERVER_CONNECTING, NULL);
    /* Woken from idle: its tools are listed as while it runs (byte for byte the same view). */
    if (s->tools && !s->idle_stopped)
        s->tools_deferred = true;
    /* !commands and credentials resolve on the loop (never blocking it), then on_resolved. */
    resolve_start(&s->resolving, reg->base, s->cfg, NULL, on_resolved, s);
}

void server_activate(Server *s)
{
    if (s->cfg->enabled && s->cfg->type == TRANSPORT_STDIO && s->cfg->start == CONFIG_START_LAZY &&
        s->tools && !s->up && !s->resolving &&
        (s->state == SERVER_STOPPED || s->state == SERVER_FAILED)) {
        if (!s->idle_stopped)
            log_full(LOG_DEBUG, s->cfg->name, "idle", "lazy: starts on its first call");
        s->idle_stopped = true;
        s->tools_deferred = false;
        if (s->state != SERVER_STOPPED)
            server_set_state(s, SERVER_STOPPED, NULL);
        server_settled(s);
        return;
    }
    server_connect(s);
}

void server_wake(Server *s)
{
    if (!s->idle_stopped || (s->state != SERVER_STOPPED && s->state != SERVER_FAILED))
        return;
    log_full(LOG_INFO, s->cfg->name, "idle", "starting on demand");
    server_connect(s);
}

void server_pin(Server *s, uint64_t peer_id, bool on)
{
    size_t i;

    for (i = 0; i < s->n_pins && s->pins[i] != peer_id; i++)
        ;
    if (on && i == s->n_pins) {
        /* One per agent: the agents' connection limit bounds the array. */
        s->pins = xrealloc(s->pins, (s->n_pins + 1) * sizeof(*s->pins));
        s->pins[s->n_pins++] = peer_id;
    } else if (!on && i < s->n_pins) {
        s->pins[i] = s->pins[--s->n_pins];
    }
    if (on)
        server_wake(s);
}

void server_ondemand_status(const Server *s, yajl_val o)
{
    if (s->cfg->type != TRANSPORT_STDIO)
        return;
    json_object_set(o, "start",
                    json_string_new(s->cfg->start == CONFIG_START_EAGER ? "eager" : "lazy"));
    json_object_set(o, "idleTimeoutMs", json_int_new(server_idle_timeout_ms(s)));
    if (s->state == SERVER_STOPPED && s->idle_stopped)
        json_object_set(o, "idle", json_bool_new(true));
    if (s->n_pins)
        json_object_set(o, "pins", json_int_new((int64_t)s->n_pins));
}

void server_registry_unpin(ServerRegistry *reg, uint64_t peer_id)
{
    for (size_t i = 0; i < reg->n_order; i++)
        server_pin(reg->order[i], peer_id, false);
}

/* Identity of a connection: name, unresolved config, and where a stdio server starts. */
static bool server_matches(const Server *s, const ServerConfig *cfg, const char *start_dir)
{
    return server_config_same(s->cfg, cfg) && s->cfg->enabled == cfg->enabled &&
           (cfg->type != TRANSPORT_STDIO || cfg->cwd || streq(s->start_dir, start_dir));
}

Server *server_acquire(ServerRegistry *m, const ServerConfig *cfg, const char *start_dir,
                       bool *createdp)
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
    s->id = ++m->next_id;
    s->reg = m;
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
        EMIT(s, created);
    }
    idmap_put(&m->by_id, s->id, s);
    m->order = xrealloc(m->order, (m->n_order + 1) * sizeof(*m->order));
    m->order[m->n_order++] = s;
    return s;
}

/* Disconnect and forget a server: exactly its own tools leave the views (B2, B3). */
static void server_remove(Server *s)
{
    ServerRegistry *m = s->reg;

    server_clear_timers(s);
    server_close_upstream(s);
    s->state = SERVER_STOPPED;
    EMIT(s, removed);
    idmap_remove(&m->by_id, s->id);
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
    loglimit_deinit(&s->request_log);
    free(s->list_note);
    free(s->cache_problem);
    list_detach_all(&s->calls);
    idmap_deinit(&s->requests);
    toolset_free(s->tools);
    progress_memo_deinit(&s->progress);
    toolstats_deinit(&s->tool_stats);
    free(s->last_error);
    free(s->start_dir);
    free(s->auth_challenge);
    free(s->pins);
    for (size_t i = 0; i < SERVER_URL_ELICITATIONS; i++)
        free(s->url_elicitations[i].id);
    server_config_free(s->cfg);
    free(s);
}

void server_release(Server *s)
{
    if (s && --s->n_refs == 0)
        server_remove(s);
}

void server_restart(Server *s)
{
    s->n_failures = 0;
    s->backoff_ms = 0;
    if (s->state != SERVER_CONNECTED && s->state != SERVER_CONNECTING) {
        server_close_upstream(s);
        server_connect(s);
    }
}

void server_reconnect_now(Server *s, const char *why)
{
    if (!s->cfg->enabled || s->reg->shutting_down)
        return;
    log_full(LOG_NOTICE, s->cfg->name, "wake", "%s: connecting again", why);
    server_clear_timers(s);
    server_close_upstream(s);
    s->restarts++;
    s->n_failures = 0;
    s->backoff_ms = 0;
    server_connect(s);
    server_settled(s);
}

void server_stop(Server *s)
{
    server_clear_timers(s);
    server_close_upstream(s);
    s->tools = toolset_free(s->tools);
    s->tools_deferred = false;
    EMIT(s, cleared);
    s->idle_stopped = false;
    server_set_state(s, SERVER_STOPPED, NULL);
    free(s->last_error);
    s->last_error = NULL;
    server_settled(s);
}

void server_registry_init(ServerRegistry *reg, struct event_base *base, const Settings *settings,
                          const char *cache_dir, const ServerEvents *ev, void *ud)
{
    memset(reg, 0, sizeof(*reg));
    reg->base = base;
    reg->settings = settings;
    reg->cache_dir = cache_dir;
    reg->ev = ev;
    reg->ud = ud;
}

void server_registry_shutdown(ServerRegistry *reg)
{
    reg->shutting_down = true;
    while (reg->n_order)
        server_remove(reg->order[reg->n_order - 1]);
}

void server_registry_deinit(ServerRegistry *reg)
{
    server_registry_shutdown(reg);
    idmap_deinit(&reg->by_id);
    free(reg->order);
    reg->order = NULL;
}
