// SPDX-License-Identifier: MIT
// oauth-refresh: keeping a sign-in's tokens current: a token endpoint's answer taken into the
// store, the client's authentication to that endpoint, and the refreshes in flight.

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/json.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/oauth-fetch.h"
#include "daemon/upstream/oauth-issuer.h"
#include "daemon/upstream/oauth-private.h"
#include "daemon/upstream/oauth-store.h"
#include "daemon/upstream/oauth.h"

/*
 * A longer token is refused. JWTs with many claims are a few KiB; common front ends refuse
 * request header lines past 8-16 KiB, so a longer token could not be sent, and every token is
 * kept in a store read back only up to 1 MiB.
 */
#define OAUTH_TOKEN_MAX (16u * 1024u)
/*
 * A longer expires_in is taken as this: it only decides when mcpd refreshes ahead, and seconds
 * times 1000 must not overflow. A year: no server hands out access tokens that live longer.
 */
#define OAUTH_EXPIRES_MAX_S (366LL * 24 * 3600)
/* A token type is one word ("Bearer", "DPoP", "N_A"). */
#define TOKEN_TYPE_SHOWN_MAX 40

int oauth_take_tokens(Fetch *x, const OAuthToken *base_tok, char **whyp)
{
    _cleanup_json_ yajl_val v = fetch_json(x, whyp);
    const char *access, *type, *refresh, *scope;
    OAuthToken t = {0};
    int64_t expires = 0;
    int r;

    if (!v)
        return -EPROTO;
    access = json_get_string(v, "access_token");
    type = json_get_string(v, "token_type");
    refresh = json_get_string(v, "refresh_token");
    scope = json_get_string(v, "scope");
    if (!access || !*access || strpbrk(access, "\r\n")) {
        *whyp = xasprintf("the answer from %s has no usable \"access_token\"", x->url);
        return -EPROTO;
    }
    if (strlen(access) > OAUTH_TOKEN_MAX || (refresh && strlen(refresh) > OAUTH_TOKEN_MAX)) {
        *whyp = xasprintf("the answer from %s has a token longer than mcpd's bound of %u bytes; "
                          "report this to the authorization server's maintainers",
                          x->url, OAUTH_TOKEN_MAX);
        return -EPROTO;
    }
    if (type && strcasecmp(type, "bearer") != 0) {
        _cleanup_free_ char *shown = oauth_text_shown(type, TOKEN_TYPE_SHOWN_MAX);
        *whyp = xasprintf("the answer from %s has token_type \"%s\"; only Bearer is supported",
                          x->url, shown);
        return -EPROTO;
    }
    oauth_token_copy(&t, base_tok);
    free(t.access_token);
    t.access_token = xstrdup(access);
    if (refresh && *refresh) {
        /* A rotated refresh token replaces the old one, which the server has now spent. */
        free(t.refresh_token);
        t.refresh_token = xstrdup(refresh);
    }
    if (scope && oauth_scope_text_ok(scope)) { /* it is shown in status: printable only */
        free(t.scope);
        t.scope = xstrdup(scope);
    }
    t.obtained_ms = wall_ms();
    t.expires_at_ms = json_get_int(v, "expires_in", &expires) == 0 && expires > 0
                          ? t.obtained_ms + MIN(expires, OAUTH_EXPIRES_MAX_S) * 1000
                          : 0;
    r = oauth_store_put(&t, whyp);
    oauth_token_deinit(&t);
    return r;
}

char *oauth_client_auth(StrBuf *form, const char *method, const char *id, const char *secret)
{
    if (streq(method, "client_secret_basic") && secret) {
        /* RFC 6749 2.3.1: both parts form-encoded before base64. */
        char *eid = curl_easy_escape(NULL, id, 0), *esec = curl_easy_escape(NULL, secret, 0);
        _cleanup_free_ char *pair = xasprintf("%s:%s", eid, esec), *b = NULL;
        char *h;
        b = base64_encode(pair, strlen(pair), false);
        h = xasprintf("Authorization: Basic %s", b);
        explicit_bzero(pair, strlen(pair));
        explicit_bzero(b, strlen(b));
        explicit_bzero(esec, strlen(esec));
        curl_free(eid);
        curl_free(esec);
        return h;
    }
    form_add(form, "client_id", id);
    if (streq(method, "client_secret_post") && secret)
        form_add(form, "client_secret", secret);
    return NULL;
}

/* ---- refresh ---- */

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
    } else if ((r = oauth_take_tokens(x, cur, &why)) < 0) {
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
    form_add(&form, "grant_type", "refresh_token");
    form_add(&form, "refresh_token", t->refresh_token);
    /* RFC 8707: the resource the sign-in asked for, which may be a parent of the server URL. */
    form_add(&form, "resource", t->token_resource ? t->token_resource : t->resource);
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
