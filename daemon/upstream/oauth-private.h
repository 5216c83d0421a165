// SPDX-License-Identifier: MIT
// oauth-private: what oauth.c (the sign-in flow) and oauth-refresh.c share; nothing else.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

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
/** base64url of n random bytes (n at most 64), newly allocated; NULL without randomness. */
char *oauth_random_token(size_t n);
/** scheme://host[:port] of url, newly allocated, or NULL. */
char *oauth_url_origin(const char *url);
/** The path of url without a trailing slash ("" for the root), newly allocated, or NULL. */
char *oauth_url_path(const char *url);
/**
 * A scope list from a string or an array of words (only words of printable ASCII are kept),
 * space-separated and newly allocated; NULL when empty.
 */
char *oauth_str_or_list(yajl_val v);
/** Whether the JSON array arr holds the string s. */
bool oauth_list_has(yajl_val arr, const char *s);
/** Daemon exit: every refresh in flight ends (its owner told -ECANCELED, to free its context). */
void oauth_refresh_shutdown(void);
