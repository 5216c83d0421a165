// SPDX-License-Identifier: MIT
// oauth: a sign-in to a remote server (the MCP authorization flow: OAuth 2.1 code + PKCE, client
// credentials, jwt-bearer), from the server's first challenge to the token stored.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "daemon/upstream/oauth-refresh.h" /* OAuthDoneFn */

/* A whole sign-in, browser included, is given up after this long (a person may be slow). */
#define OAUTH_FLOW_TIMEOUT_MS (5 * 60 * 1000)
/* Step-up (403 insufficient_scope) sign-ins allowed for one server before it is refused. */
#define OAUTH_STEP_UP_MAX 3

/* Called when the authorization URL is ready (not for client credentials or headless). */
typedef void (*OAuthUrlFn)(void *userdata, const char *url);

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
 * Daemon exit: close the redirect listener, end every refresh in flight (done_fn gets -ECANCELED),
 * free the store.
 */
void oauth_shutdown(void);
