// SPDX-License-Identifier: MIT
// oauth-tokens: a token endpoint's answer (RFC 6749 5.1) checked and taken into the store.

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/upstream/oauth-fetch.h"
#include "daemon/upstream/oauth-issuer.h"
#include "daemon/upstream/oauth-store.h"
#include "daemon/upstream/oauth-tokens.h"

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

int oauth_tokens_take(Fetch *x, const OAuthToken *base_tok, char **whyp)
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
