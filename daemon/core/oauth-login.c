// SPDX-License-Identifier: MIT
// oauth-login: mcpd/login, mcpd/loginWait and mcpd/logout, and what a 401 does to a server.

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/manager-control.h" /* a server by name */
#include "daemon/core/manager.h" /* the servers by URL, server_connect (reconnect after sign-in) */
#include "daemon/core/oauth-login.h"
#include "daemon/upstream/oauth-parse.h"
#include "daemon/upstream/oauth-refresh.h"
#include "daemon/upstream/oauth-store.h"
#include "daemon/upstream/oauth.h"

/*
 * A 401 soon after a refresh made for a 401 means the new token is refused too: refreshing
 * again would loop. Within this time of the last one, a 401 waits for a person to sign in.
 */
#define REFRESH_REPEAT_MIN_MS 10000
/*
 * Tokens are refreshed this long before they end, so no request meets an expired one; a
 * short-lived token is refreshed after four fifths of its life instead.
 */
#define REFRESH_AHEAD_MS 60000
/*
 * A refresh is never due sooner than this after its token was obtained: a server whose tokens
 * live a second (or whose answers say so) is refreshed at most every 5 s, not in a tight loop. A
 * call that meets the 401 in between refreshes on demand. Short enough for real short-lived
 * tokens (minutes) and for the 12 s tokens of test-oauth.
 */
#define REFRESH_MIN_GAP_MS 5000

/* A peer request waiting for a sign-in's end. */
typedef struct LoginWaiter {
    uint64_t peer_id;
    yajl_val id;
    struct LoginWaiter *next;
} LoginWaiter;

/* One sign-in per server name; kept after it ends so a late mcpd/loginWait gets the outcome. */
typedef struct Login {
    Manager *m;
    char *server, *resource;
    OAuthFlow *flow;
    LoginWaiter *waiters;
    bool done;
    int r;
    char *why;
    unsigned step_ups; /* consecutive sign-ins asked for by 403 insufficient_scope */
    struct event *ev_free_flow;
    struct Login *next;
} Login;

static Login *logins;

/* A stored token's refresh before it ends (one per resource). */
typedef struct Renewal {
    Manager *m;
    char *server, *resource;
    struct event *timer;
    bool refreshing;
    struct Renewal *next;
} Renewal;

static Renewal *renewals;

/* When a 401 last led to a refresh, per resource (monotonic ms). */
typedef struct Recent401 {
    char *resource;
    uint64_t at_ms;
    struct Recent401 *next;
} Recent401;

static Recent401 *recent_401s;

static void renewal_arm(Manager *m, const char *server, const char *resource);

/* A refresh started by a 401, waiting to reconnect its server (by id: it may be gone). */
typedef struct RefreshCtx {
    Manager *m;
    uint64_t server_id;
} RefreshCtx;

static Login *login_find(const char *server)
{
    for (Login *l = logins; l; l = l->next)
        if (streq(l->server, server))
            return l;
    return NULL;
}

static void waiters_answer(Login *l)
{
    LoginWaiter *w;

    while ((w = l->waiters)) {
        l->waiters = w->next;
        if (l->r < 0) {
            agent_reply_error(l->m->peers, w->peer_id, w->id, JSONRPC_INTERNAL_ERROR, l->why);
        } else {
            yajl_val res = json_object_new();
            json_object_set(res, "signedIn", json_bool_new(true));
            json_object_set(res, "server", json_string_new(l->server));
            agent_reply(l->m->peers, w->peer_id, w->id, res);
            json_free(res);
        }
        json_free(w->id);
        free(w);
    }
}

static void login_free(Login *l)
{
    for (Login **pp = &logins; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    oauth_flow_free(l->flow);
    while (l->waiters) {
        LoginWaiter *w = l->waiters;
        l->waiters = w->next;
        json_free(w->id);
        free(w);
    }
    event_free(l->ev_free_flow);
    free(l->server);
    free(l->resource);
    free(l->why);
    free(l);
}

/* Every server at this URL (any workspace) comes back with the new token. */
static void reconnect_resource(Manager *m, const char *resource)
{
    for (size_t i = 0; i < m->servers.n_order; i++) {
        Server *s = m->servers.order[i];
        if (!streq(s->cfg->url, resource) || !s->cfg->enabled)
            continue;
        if (s->state == SERVER_CONNECTED) {
            s->needs_auth = false; /* a step-up: the transport sends the new token from now on */
            continue;
        }
        s->n_failures = 0;
        s->backoff_ms = 0;
        if (!s->up && !s->resolving)
            server_connect(s);
    }
}

/*
 * A failed sign-in says why in status too: the servers at its URL that wait for one show it as
 * their last error (a refused issuer or URL is otherwise only in the log when nobody ran mcpctl
 * login, as for client credentials asked for on a 401).
 */
static void note_failure(Manager *m, const char *resource, const char *why)
{
    for (size_t i = 0; why && i < m->servers.n_order; i++) {
        Server *s = m->servers.order[i];
        if (!streq(s->cfg->url, resource) || s->state == SERVER_CONNECTED)
            continue;
        free(s->last_error);
        s->last_error = xstrdup(why);
        s->last_error_wall_ms = wall_ms();
    }
}

static void on_free_flow(evutil_socket_t fd, short what, void *arg)
{
    Login *l = arg;

    (void)fd, (void)what;
    l->flow = oauth_flow_free(l->flow);
}

static void on_login_done(void *userdata, int r, const char *why)
{
    Login *l = userdata;

    l->done = true;
    l->r = r;
    free(l->why);
    l->why = why ? xstrdup(why) : NULL;
    /* The flow is on the stack below us: it goes from the loop. */
    event_active(l->ev_free_flow, EV_TIMEOUT, 0);
    if (r == 0) {
        renewal_arm(l->m, l->server, l->resource);
        reconnect_resource(l->m, l->resource);
    } else if (r != -ECANCELED) {
        note_failure(l->m, l->resource, why);
    }
    waiters_answer(l);
}

static void on_login_url(void *userdata, const char *url)
{
    Login *l = userdata;
    LoginWaiter *w = l->waiters;
    yajl_val res;

    if (!w)
        return;
    /* The mcpd/login request is answered with the URL; mcpd/loginWait then waits. */
    l->waiters = w->next;
    res = json_object_new();
    json_object_set(res, "authorizationUrl", json_string_new(url));
    json_object_set(res, "server", json_string_new(l->server));
    agent_reply(l->m->peers, w->peer_id, w->id, res);
    json_free(res);
    json_free(w->id);
    free(w);
}

static void add_waiter(Login *l, Peer *p, yajl_val id)
{
    LoginWaiter *w = xcalloc(1, sizeof(*w)), **pp = &l->waiters;

    w->peer_id = p->id;
    w->id = json_copy(id);
    while (*pp)
        pp = &(*pp)->next;
    *pp = w;
}

static Server *http_server_or_error(Manager *mgr, Peer *p, JsonrpcMsg *m)
{
    const char *name = json_get_string(m->params, "server");
    Server *s = manager_find_server(mgr, p, name);
    _cleanup_free_ char *msg = NULL;

    if (!s)
        msg = xasprintf("Unknown server: %s", name);
    else if (!s->cfg->url)
        msg = xasprintf("Server %s is a stdio server: sign-in is for remote (http) servers", name);
    if (msg)
        agent_reply_error(mgr->peers, p->id, m->id, JSONRPC_INVALID_PARAMS, msg);
    return msg ? NULL : s;
}

/*
 * Start a sign-in for s, replacing one under way; p and id (or NULL) wait for its end. NULL
 * with *whyp when the step-up limit is reached.
 */
static Login *login_start(Manager *m, Server *s, bool headless, Peer *p, yajl_val id, char **whyp)
{
    _cleanup_free_ char *err = NULL;
    OAuthRequest req = {0};
    unsigned step_ups = 0;
    Login *l, *old;
    int r;

    err = s->auth_challenge ? oauth_challenge_param(s->auth_challenge, "error") : NULL;
    if ((old = login_find(s->cfg->name))) {
        step_ups = old->step_ups;
        if (!old->done) {
            old->r = -ECANCELED;
            old->why = xasprintf("sign-in to server %s was replaced by a newer one", old->server);
            waiters_answer(old);
        }
        login_free(old);
    }
    step_ups = streq(err, "insufficient_scope") ? step_ups + 1 : 0;
    if (step_ups > OAUTH_STEP_UP_MAX) {
        *whyp = xasprintf("server %s asked for more scope %d times in a row (403 "
                          "insufficient_scope); not signing in again: check the scopes its "
                          "authorization server grants",
                          s->cfg->name, OAUTH_STEP_UP_MAX);
        return NULL;
    }
    /*
     * Sign-in state changes one at a time: a refresh still on the way would answer for the
     * sign-in this one replaces (its tokens under the new issuer, its refresh token sent to the
     * new authorization server later). Its answer is never read.
     */
    oauth_refresh_cancel(s->cfg->url, "a new sign-in began (mcpctl login)");
    l = xcalloc(1, sizeof(*l));
    l->m = m;
    l->server = xstrdup(s->cfg->name);
    l->resource = xstrdup(s->cfg->url);
    l->step_ups = step_ups;
    l->ev_free_flow = event_new(m->base, -1, 0, on_free_flow, l);
    l->next = logins;
    logins = l;
    if (p)
        add_waiter(l, p, id);
    req.server = s->cfg->name;
    req.resource = s->cfg->url;
    req.options = s->cfg->oauth;
    req.challenge = s->auth_challenge;
    req.headless = headless;
    r = oauth_flow_start(&l->flow, m->base, &req, on_login_url, on_login_done, l, whyp);
    if (r < 0) {
        l->done = true;
        l->r = r;
        l->why = xstrdup(*whyp);
        note_failure(m, l->resource, l->why);
        waiters_answer(l);
    }
    return l;
}

void oauth_m_login(Manager *mgr, Peer *p, JsonrpcMsg *m)
{
    Server *s = http_server_or_error(mgr, p, m);
    _cleanup_free_ char *why = NULL;
    bool headless = false;

    if (!s)
        return;
    if (json_get_bool(m->params, "headless", &headless) == -EINVAL) {
        agent_reply_error(mgr->peers, p->id, m->id, JSONRPC_INVALID_PARAMS,
                          "headless must be a boolean");
        return;
    }
    if (!login_start(mgr, s, headless, p, m->id, &why))
        agent_reply_error(mgr->peers, p->id, m->id, JSONRPC_INVALID_PARAMS, why);
}

void oauth_m_login_wait(Manager *mgr, Peer *p, JsonrpcMsg *m)
{
    const char *name = json_get_string(m->params, "server");
    Login *l = login_find(name);
    _cleanup_free_ char *msg = NULL;

    if (!l) {
        msg = xasprintf("No sign-in to server %s was started: run mcpctl login %s", name, name);
        agent_reply_error(mgr->peers, p->id, m->id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    add_waiter(l, p, m->id);
    if (l->done)
        waiters_answer(l);
}

void oauth_m_logout(Manager *mgr, Peer *p, JsonrpcMsg *m)
{
    Server *s = http_server_or_error(mgr, p, m);
    Login *l;
    _cleanup_free_ char *why = NULL;
    yajl_val res;
    int r;

    if (!s)
        return;
    if ((l = login_find(s->cfg->name)) && !l->done) {
        l->r = -ECANCELED;
        l->why = xasprintf("sign-in to server %s was cancelled by mcpctl logout", l->server);
        waiters_answer(l);
    }
    if (l)
        login_free(l);
    r = oauth_store_remove(s->cfg->url, &why);
    renewal_arm(mgr, s->cfg->name, s->cfg->url); /* nothing stored: it goes */
    if (r < 0) {
        agent_reply_error(mgr->peers, p->id, m->id, JSONRPC_INTERNAL_ERROR, why);
        return;
    }
    log_full(LOG_INFO, s->cfg->name, "oauth", "%s", r == 0 ? "signed out" : "was not signed in");
    res = json_object_new();
    json_object_set(res, "removed", json_bool_new(r == 0));
    agent_reply(mgr->peers, p->id, m->id, res);
    json_free(res);
}

static void on_refreshed(void *userdata, int r, const char *why)
{
    RefreshCtx *c = userdata;
    Server *s = r == 0 ? server_get(&c->m->servers, c->server_id) : NULL;

    (void)why; /* logged by the refresh; the server keeps its "run: mcpctl login" error */
    if (s) {
        renewal_arm(c->m, s->cfg->name, s->cfg->url);
        reconnect_resource(c->m, s->cfg->url);
    }
    free(c);
}

static bool client_credentials(yajl_val oauth)
{
    const char *g = json_get_string(oauth, "grantType");

    if (!g)
        g = json_get_string(oauth, "grant_type");
    return streq(g, "client_credentials") || streq(g, "jwt-bearer");
}

bool oauth_login_refresh(Server *s)
{
    const OAuthToken *t = s->cfg->url ? oauth_store_find(s->cfg->url) : NULL;
    _cleanup_free_ char *why = NULL;
    RefreshCtx *c = NULL;
    Recent401 *rc;

    if (!s->cfg->url)
        return false;
    for (rc = recent_401s; rc && !streq(rc->resource, s->cfg->url); rc = rc->next)
        ;
    if (rc && now_ms() - rc->at_ms < REFRESH_REPEAT_MIN_MS)
        return false;
    if (t && t->refresh_token) {
        c = xcalloc(1, sizeof(*c));
        c->m = server_manager(s);
        c->server_id = s->id;
        if (oauth_refresh_start(s->reg->base, s->cfg->name, s->cfg->url, on_refreshed, c) != 0) {
            free(c);
            c = NULL;
        }
    }
    if (!c && client_credentials(s->cfg->oauth)) {
        /* A headless client gets its own token: no person is asked. */
        if (!login_start(server_manager(s), s, true, NULL, NULL, &why) ||
            login_find(s->cfg->name)->done) {
            log_full(LOG_WARNING, s->cfg->name, "oauth", "no client credentials token: %s",
                     why ? why : "the sign-in did not start");
            return false;
        }
    } else if (!c) {
        return false;
    }
    if (!rc) {
        rc = xcalloc(1, sizeof(*rc));
        rc->resource = xstrdup(s->cfg->url);
        rc->next = recent_401s;
        recent_401s = rc;
    }
    rc->at_ms = now_ms();
    log_full(LOG_INFO, s->cfg->name, "oauth", "HTTP 401: %s",
             c ? "refreshing the access token" : "asking for a client credentials token");
    return true;
}

/* ---- refresh before expiry ---- */

static void renewal_free(Renewal *rn)
{
    for (Renewal **pp = &renewals; *pp; pp = &(*pp)->next)
        if (*pp == rn) {
            *pp = rn->next;
            break;
        }
    event_free(rn->timer);
    free(rn->server);
    free(rn->resource);
    free(rn);
}

static void on_renewed(void *userdata, int r, const char *why)
{
    Renewal *rn = userdata;

    (void)why; /* logged by the refresh */
    rn->refreshing = false;
    if (r == -ECANCELED)
        return; /* daemon exit: oauth_login_shutdown frees it */
    if (r == -ESTALE) {
        renewal_arm(rn->m, rn->server, rn->resource); /* on the sign-in that replaced it */
        return;
    }
    if (r == 0) {
        renewal_arm(rn->m, rn->server, rn->resource);
        /* A server that met a 401 while this ran comes back with the new token. */
        reconnect_resource(rn->m, rn->resource);
    } else {
        renewal_free(rn); /* a refused refresh removed the sign-in: the next 401 says so */
    }
}

static void on_renewal_due(evutil_socket_t fd, short what, void *arg)
{
    Renewal *rn = arg;

    (void)fd, (void)what;
    if (oauth_refresh_start(rn->m->base, rn->server, rn->resource, on_renewed, rn) == 0)
        rn->refreshing = true;
    else
        renewal_free(rn);
}

/* (Re)arm the refresh of resource's token ahead of its end, when it has an end and a way on. */
static void renewal_arm(Manager *m, const char *server, const char *resource)
{
    const OAuthToken *t = oauth_store_find(resource);
    Renewal *rn;
    int64_t life, ahead, due;
    struct timeval tv;

    for (rn = renewals; rn && !streq(rn->resource, resource); rn = rn->next)
        ;
    if (!t || !t->refresh_token || !t->expires_at_ms) {
        if (rn && !rn->refreshing)
            renewal_free(rn);
        return;
    }
    if (!rn) {
        rn = xcalloc(1, sizeof(*rn));
        rn->m = m;
        rn->server = xstrdup(server);
        rn->resource = xstrdup(resource);
        rn->timer = evtimer_new(m->base, on_renewal_due, rn);
        rn->next = renewals;
        renewals = rn;
    }
    life = t->expires_at_ms - t->obtained_ms;
    ahead = MIN(REFRESH_AHEAD_MS, life / 5);
    due = MAX(t->expires_at_ms - ahead - wall_ms(), 0);
    /* A token that lives a second must not be refreshed every 800 ms for as long as mcpd runs. */
    due = MAX(due, t->obtained_ms + REFRESH_MIN_GAP_MS - wall_ms());
    tv_ms(&tv, due);
    evtimer_add(rn->timer, &tv);
}

bool oauth_login_refresh_ending(Server *s, int64_t within_ms,
                                void (*done_fn)(void *, int, const char *), void *userdata)
{
    const OAuthToken *t = s->cfg->url ? oauth_store_find(s->cfg->url) : NULL;

    if (!t || !t->refresh_token || !t->expires_at_ms || t->expires_at_ms - wall_ms() > within_ms)
        return false;
    log_full(LOG_INFO, s->cfg->name, "oauth", "the access token %s: refreshing it",
             t->expires_at_ms <= wall_ms() ? "ended while the machine slept" : "ends soon");
    return oauth_refresh_start(s->reg->base, s->cfg->name, s->cfg->url, done_fn, userdata) == 0;
}

void oauth_login_shutdown(void)
{
    while (logins)
        login_free(logins);
    oauth_shutdown(); /* refreshes end first: their callbacks still see the renewals */
    while (renewals)
        renewal_free(renewals);
    while (recent_401s) {
        Recent401 *rc = recent_401s;
        recent_401s = rc->next;
        free(rc->resource);
        free(rc);
    }
}
