// SPDX-License-Identifier: MIT
// wake: what mcpd does when the machine resumes from sleep (sys/sleepwatch.c hears it): every
// running stdio server pinged (a dead one restarted, a live one's subscriptions sent again),
// HTTP and SSE servers reconnected (their streams reopened, subscriptions sent again), OAuth
// tokens that ended or end soon refreshed first; and when that last happened, for status.

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/oauth-login.h"
#include "daemon/core/surface.h"
#include "daemon/core/wake.h"

/* A ping or a refresh of the resume, by ids: the server may be gone when it ends. */
typedef struct WakeJob {
    Wake *w;
    uint64_t server_id;
    uint64_t upstream_id;
} WakeJob;

static WakeJob *job_new(Wake *w, const Server *s)
{
    WakeJob *j = xcalloc(1, sizeof(*j));

    j->w = w;
    j->server_id = s->id;
    j->upstream_id = s->up ? s->up->id : 0;
    return j;
}

static void on_ping(Upstream *u, void *ctx, const UpstreamReply *r)
{
    _cleanup_free_ WakeJob *j = ctx;
    Server *s;

    /* Closed: its session ended by itself (the server's own lifecycle restarts it), or mcpd
     * is exiting (the Wake may be gone): nothing to do either way. */
    if (r->outcome == UPSTREAM_CANCELLED || r->outcome == UPSTREAM_CLOSED)
        return;
    s = server_get(&j->w->m->servers, j->server_id);
    if (!s || s->up != u)
        return;
    if (r->outcome == UPSTREAM_OK || r->outcome == UPSTREAM_ERROR) {
        /* Alive (any answer, even -32601). Its subscriptions are sent again: a server that
         * lost them in the sleep (an upstream of its own reconnected) gets them back. */
        j->w->last.resubscribed += (unsigned)surface_resubscribe(s);
        return;
    }
    j->w->last.restarted++;
    server_reconnect_now(s, "no answer to a ping after the machine resumed");
}

static void on_refreshed(void *userdata, int r, const char *why)
{
    _cleanup_free_ WakeJob *j = userdata;
    Server *s;

    (void)why; /* logged by the refresh */
    if (r == -ECANCELED)
        return; /* mcpd is exiting */
    if (r == 0)
        j->w->last.refreshed++;
    s = server_get(&j->w->m->servers, j->server_id);
    if (s)
        server_reconnect_now(s, "the machine resumed: its token refreshed, its streams reopened");
}

/* A stdio server that runs: pinged, restarted when it does not answer in time. */
static void wake_stdio(Wake *w, Server *s)
{
    WakeJob *j = job_new(w, s);

    if (upstream_request(s->up, "ping", NULL, WAKE_PING_TIMEOUT_MS, 0, on_ping, j, NULL) < 0) {
        free(j);
        return;
    }
    w->last.pinged++;
}

/*
 * An HTTP or SSE server: its connections are likely dead after a sleep (NAT and proxies forget
 * idle ones, the peer may have closed them) and curl would notice only at the next request, a
 * server's stream never: it is connected again, after its token is refreshed when that ends
 * soon. A server waiting for a sign-in stays so unless a refresh brings it back.
 */
static void wake_http(Wake *w, Server *s)
{
    WakeJob *j = job_new(w, s);
    bool live = s->state == SERVER_CONNECTED || s->state == SERVER_BACKOFF;

    if ((live || s->needs_auth) &&
        oauth_login_refresh_ending(s, WAKE_TOKEN_MARGIN_MS, on_refreshed, j)) {
        w->last.reopened++;
        return; /* on_refreshed reconnects it */
    }
    free(j);
    if (!live)
        return;
    w->last.reopened++;
    server_reconnect_now(s, "the machine resumed: its streams reopened");
}

void wake_resumed(Wake *w, const char *source, int64_t slept_ms)
{
    ServerRegistry *reg = &w->m->servers;

    w->resumes++;
    w->last_wall_ms = wall_ms();
    w->last_slept_ms = slept_ms;
    w->last_source = source;
    w->last = (WakeCounts){0};
    if (slept_ms >= 0)
        log_notice("the machine resumed (%s; asleep %" PRId64 " s): checking every server", source,
                   slept_ms / 1000);
    else
        log_notice("the machine resumed (%s): checking every server", source);
    /* A reconnect changes a server's state, never the registry's order. */
    for (size_t i = 0; i < reg->n_order; i++) {
        Server *s = reg->order[i];
        if (!s->cfg->enabled)
            continue;
        if (s->cfg->type == TRANSPORT_STDIO) {
            if (s->state == SERVER_CONNECTED && s->up)
                wake_stdio(w, s);
        } else {
            wake_http(w, s);
        }
    }
}

static void on_resumed(void *ud, const char *source, int64_t slept_ms)
{
    wake_resumed(ud, source, slept_ms);
}

void wake_init(Wake *w, Manager *m)
{
    int r;

    *w = (Wake){.m = m, .last_slept_ms = -1};
    r = sleepwatch_init(&w->watch, m->base, on_resumed, w);
    if (r < 0)
        log_warning("cannot watch the clocks for a resume (timerfd: %s): after a sleep, servers "
                    "are checked only by their own health pings",
                    strerror(-r));
}

void wake_deinit(Wake *w)
{
    sleepwatch_deinit(&w->watch);
}

yajl_val wake_describe(const Wake *w)
{
    yajl_val o = json_object_new();

    json_object_set(
        o, "watching",
        json_string_new(sleepwatch_has_logind(&w->watch) ? "logind, clocks" : "clocks"));
    json_object_set(o, "resumes", json_int_new(w->resumes));
    if (!w->resumes)
        return o;
    json_object_set(o, "lastAt", json_int_new(w->last_wall_ms));
    json_object_set(o, "source", json_string_new(w->last_source));
    if (w->last_slept_ms >= 0)
        json_object_set(o, "sleptMs", json_int_new(w->last_slept_ms));
    json_object_set(o, "pinged", json_int_new(w->last.pinged));
    json_object_set(o, "restarted", json_int_new(w->last.restarted));
    json_object_set(o, "reopened", json_int_new(w->last.reopened));
    json_object_set(o, "tokensRefreshed", json_int_new(w->last.refreshed));
    json_object_set(o, "resubscribed", json_int_new(w->last.resubscribed));
    return o;
}
