// SPDX-License-Identifier: MIT
// oauth-parse: the sign-in's small pure helpers: WWW-Authenticate parameters, PKCE, random
// tokens, URL origins and paths, resource matching, scope lists.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

/** Parse one auth-param (resource_metadata, scope, error) of a WWW-Authenticate value. */
char *oauth_challenge_param(const char *challenge, const char *name);
/** PKCE: the S256 challenge of a verifier (base64url of its SHA-256), newly allocated. */
char *oauth_pkce_challenge(const char *verifier);
/** base64url of n random bytes (n at most 64), newly allocated; NULL without randomness. */
char *oauth_random_token(size_t n);
/** scheme://host[:port] of url, newly allocated, or NULL. */
char *oauth_url_origin(const char *url);
/** The path of url without a trailing slash ("" for the root), newly allocated, or NULL. */
char *oauth_url_path(const char *url);
/** Whether a Protected Resource Metadata "resource" may stand for url (same, or a parent). */
bool oauth_resource_matches(const char *prm_resource, const char *url);
/**
 * A scope list from a string or an array of words (only words of printable ASCII are kept),
 * space-separated and newly allocated; NULL when empty.
 */
char *oauth_str_or_list(yajl_val v);
/**
 * The scopes of a and then those of b not in a, space-separated (SEP-2350: a re-authorization
 * keeps what was granted), newly allocated; NULL when both are empty. Either may be NULL.
 */
char *oauth_scope_union(const char *a, const char *b);
/** Whether the JSON array arr holds the string s. */
bool oauth_list_has(yajl_val arr, const char *s);
