// SPDX-License-Identifier: MIT
// oauth: the MCP authorization flow for remote servers (OAuth 2.1 code + PKCE, refresh, client
// credentials), on the daemon's curl multi and a one-shot loopback redirect listener.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

/* A whole sign-in, browser included, is given up after this long (a person may be slow). */
#define OAUTH_FLOW_TIMEOUT_MS (5 * 60 * 1000)
/* Step-up (403 insufficient_scope) sign-ins allowed for one server before it is refused. */
#define OAUTH_STEP_UP_MAX 3

/* Called when the authorization URL is ready (not for client credentials or headless). */
typedef void (*OAuthUrlFn)(void *userdata, const char *url);
/* Called once when the flow or refresh ends: r 0 (token stored) or < 0 with why. */
typedef void (*OAuthDoneFn)(void *userdata, int r, const char *why);

typedef struct OAuthFlow OAuthFlow;

/* What starts a sign-in. Strings are borrowed for the call only. */
typedef struct OAuthRequest {
    const char *server;    /* name, for messages */
    const char *resource;  /* the MCP server URL */
    yajl_val options;      /* the server entry's "oauth" object, or NULL */
    const char *challenge; /* the last WWW-Authenticate from the server, or NULL */
    bool headless;         /* follow the authorization redirect here instead of a browser */
} OAuthRequest;

/**
 * Start a sign-in. *whyp on a bad request (options). The flow calls url_fn (unless headless or
 * client credentials), then done_fn exactly once, unless freed first.
 */
int oauth_flow_start(OAuthFlow **fp, struct event_base *base, const OAuthRequest *req,
                     OAuthUrlFn url_fn, OAuthDoneFn done_fn, void *userdata, char **whyp);
/** Stop a flow (no callback); returns NULL. */
OAuthFlow *oauth_flow_free(OAuthFlow *f);

/**
 * Refresh the stored token for resource. Return 0 (done_fn will run), OAUTH_E_NO_REFRESH
 * when there is no refresh token (a person must sign in again), or OAUTH_E_BUSY. A refresh that the
 * authorization server refuses removes the stored sign-in. An answer that comes after the entry
 * changed (a new sign-in, a logout) is dropped: done_fn gets -ESTALE.
 */
int oauth_refresh_start(struct event_base *base, const char *server, const char *resource,
                        OAuthDoneFn done_fn, void *userdata);
/**
 * A new sign-in for resource begins: stop its refreshes in flight (their answers are never
 * read); each done_fn gets -ESTALE with why.
 */
void oauth_refresh_cancel(const char *resource, const char *why);
/** Daemon exit: end every refresh in flight (done_fn gets -ECANCELED), free the store. */
void oauth_shutdown(void);

/** Parse one auth-param (resource_metadata, scope, error) of a WWW-Authenticate value. */
char *oauth_challenge_param(const char *challenge, const char *name);
/** PKCE: the S256 challenge of a verifier (base64url of its SHA-256), newly allocated. */
char *oauth_pkce_challenge(const char *verifier);
/**
 * The scopes of a and then those of b not in a, space-separated (SEP-2350: a re-authorization
 * keeps what was granted), newly allocated; NULL when both are empty. Either may be NULL.
 */
char *oauth_scope_union(const char *a, const char *b);
/** Whether a Protected Resource Metadata "resource" may stand for url (same, or a parent). */
bool oauth_resource_matches(const char *prm_resource, const char *url);

#define OAUTH_E_NO_REFRESH 1
#define OAUTH_E_BUSY       2 /* a refresh for that resource is already running */
