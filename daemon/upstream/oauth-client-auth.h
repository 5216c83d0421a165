// SPDX-License-Identifier: MIT
// oauth-client-auth: how mcpd's client authenticates itself to a token endpoint (none,
// client_secret_basic, client_secret_post, private_key_jwt).
#pragma once

#include <yajl/yajl_tree.h>

#include "common/strbuf.h"

/**
 * The method for a client registered with secret (NULL: a public client, "none"), as the
 * authorization server's metadata as_meta offers them (client_secret_basic when it names none).
 */
const char *oauth_client_auth_method(yajl_val as_meta, const char *secret);
/**
 * Client authentication of a token request by method: the Authorization header to send
 * (client_secret_basic, newly allocated), or NULL after adding client_id (and
 * client_secret for client_secret_post) to form.
 */
char *oauth_client_auth(StrBuf *form, const char *method, const char *id, const char *secret);
/**
 * private_key_jwt (RFC 7523): add client_id and a client assertion for audience, signed with
 * key_pem (alg ES256 or RS256, NULL: ES256), to form. 0, or -EINVAL with *whyp.
 */
int oauth_client_assertion(StrBuf *form, const char *client_id, const char *audience,
                           const char *key_pem, const char *alg, char **whyp);
