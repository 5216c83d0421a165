// SPDX-License-Identifier: MIT
// oauth-jwt: client assertions for private_key_jwt (RFC 7523), signed with libcrypto.
#pragma once

/* An assertion is valid this long: one token request, with room for clock skew. */
#define OAUTH_JWT_LIFETIME_S 300

/**
 * A signed JWT with iss = sub = client_id and aud = audience, for the token endpoint's
 * client_assertion. alg is ES256 or RS256 (NULL: ES256); key_pem a PEM private key. Newly
 * allocated, or NULL with *whyp.
 */
char *oauth_jwt_assertion(const char *client_id, const char *audience, const char *key_pem,
                          const char *alg, char **whyp);
