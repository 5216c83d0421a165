// SPDX-License-Identifier: MIT
// oauth-refresh: keeping a sign-in's access token current: the refreshes in flight.

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/oauth-client-auth.h"
#include "daemon/upstream/oauth-fetch.h"
#include "daemon/upstream/oauth-refresh.h"
#include "daemon/upstream/oauth-store.h"
#include "daemon/upstream/oauth-tokens.h"

typedef struct Refresh {
    char *server, *resource;
    uint64_t generation; /* the store entry's when the refresh began */
    Fetch *x;
    OAuthDoneFn fn;
    void *userdata;
    struct Refresh *next;
} Refresh;

static Refresh *refreshes;

static void refresh_free(Refresh *rf)
{
    for (Refresh **pp = &refreshes; *pp; pp = &(*pp)->next)
        if (*pp == rf) {
            *pp = rf->next;
            break;
        }
    fetch_free(rf->x);
    free(rf->server);
    free(rf->resource);
    free(rf);
}

static void on_refresh(void *owner, Fetch *x)
{
    Refresh *rf = owner;
    const OAuthToken *cur = oauth_store_find(rf->resource);
    _cleanup_free_ char *why = NULL, *msg = NULL, *rm_why = NULL;
    OAuthDoneFn fn = rf->fn;
    void *ud = rf->userdata;
    int r = -ENOENT;

    if (!cur) {
        msg = xasprintf("the sign-in for server %s was removed meanwhile", rf->server);
    } else if (cur->generation != rf->generation) {
        /*
         * A sign-in (or another refresh) replaced the entry while this one was on the way: its
         * answer belongs to a state that is gone. Taken, it would put the old authorization
         * server's tokens under the new one's issuer and endpoint.
         */
        r = -ESTALE;
        msg = xasprintf("dropped a refresh answer for server %s: the sign-in changed while it "
                        "was on the way (the newer sign-in is kept)",
                        rf->server);
    } else if ((r = oauth_tokens_take(x, cur, &why)) < 0) {
        msg = xasprintf("refreshing the token of server %s failed: %s", rf->server, why);
        /* A refused refresh token is spent or revoked: the sign-in is over, say so once. */
        if (x->status == 400 || x->status == 401)
            (void)oauth_store_remove(rf->resource, &rm_why);
    } else {
        log_full(LOG_INFO, rf->server, "oauth", "access token refreshed");
    }
    if (msg)
        log_full(LOG_WARNING, rf->server, "oauth", "%s", msg);
    refresh_free(rf);
    fn(ud, r, msg);
}

int oauth_refresh_start(struct event_base *base, const char *server, const char *resource,
                        OAuthDoneFn done_fn, void *userdata)
{
    const OAuthToken *t = oauth_store_find(resource);
    StrBuf form = STRBUF_INIT;
    _cleanup_free_ char *auth = NULL, *why = NULL;
    Refresh *rf;

    if (!t || !t->refresh_token || !t->token_endpoint || !t->client_id)
        return OAUTH_E_NO_REFRESH;
    /* Two refreshes with one refresh token: the second would spend a rotated token. */
    for (rf = refreshes; rf; rf = rf->next)
        if (streq(rf->resource, resource))
            return OAUTH_E_BUSY;
    rf = xcalloc(1, sizeof(*rf));
    rf->server = xstrdup(server);
    rf->resource = xstrdup(resource);
    rf->generation = t->generation;
    rf->fn = done_fn;
    rf->userdata = userdata;
    fetch_form_add(&form, "grant_type", "refresh_token");
    fetch_form_add(&form, "refresh_token", t->refresh_token);
    /* RFC 8707: the resource the sign-in asked for, which may be a parent of the server URL. */
    fetch_form_add(&form, "resource", t->token_resource ? t->token_resource : t->resource);
    auth = oauth_client_auth(&form, t->auth_method, t->client_id, t->client_secret);
    rf->x = fetch_start(base, resource, t->token_endpoint, strbuf_str(&form),
                        "application/x-www-form-urlencoded", auth, on_refresh, rf, &why);
    explicit_bzero(form.data, form.cap);
    strbuf_deinit(&form);
    if (auth)
        explicit_bzero(auth, strlen(auth));
    if (!rf->x) {
        log_full(LOG_WARNING, server, "oauth", "cannot refresh the token: %s", why);
        refresh_free(rf);
        return OAUTH_E_NO_REFRESH;
    }
    rf->next = refreshes;
    refreshes = rf;
    return 0;
}

void oauth_refresh_cancel(const char *resource, const char *why)
{
    for (Refresh *rf = refreshes, *next; rf; rf = next) {
        OAuthDoneFn fn = rf->fn;
        void *ud = rf->userdata;
        next = rf->next;
        if (!streq(rf->resource, resource))
            continue;
        log_full(LOG_INFO, rf->server, "oauth", "refresh in flight cancelled: %s", why);
        refresh_free(rf);
        fn(ud, -ESTALE, why);
        next = refreshes; /* the callback may have changed the list */
    }
}

void oauth_refresh_shutdown(void)
{
    while (refreshes) {
        Refresh *rf = refreshes;
        OAuthDoneFn fn = rf->fn;
        void *ud = rf->userdata;
        refresh_free(rf);
        fn(ud, -ECANCELED, NULL); /* only so the owner frees its context */
    }
}
