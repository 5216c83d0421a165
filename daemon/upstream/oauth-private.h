// SPDX-License-Identifier: MIT
// oauth-private: what oauth.c (the sign-in flow) and oauth-refresh.c share; nothing else.
#pragma once

#include "common/strbuf.h"
#include "daemon/upstream/oauth-fetch.h"
#include "daemon/upstream/oauth-store.h"

/**
 * Take a token endpoint answer into the store, on top of base_tok (the sign-in's client and
 * endpoints, or the entry refreshed): a rotated refresh token replaces the old one.
 */
int oauth_take_tokens(Fetch *x, const OAuthToken *base_tok, char **whyp);
/**
 * Client authentication of a token request by method: the Authorization header to send
 * (client_secret_basic, newly allocated), or NULL after adding client_id (and
 * client_secret for client_secret_post) to form.
 */
char *oauth_client_auth(StrBuf *form, const char *method, const char *id, const char *secret);
/** Daemon exit: free the redirect listeners still lingering. */
void oauth_listeners_shutdown(void);
