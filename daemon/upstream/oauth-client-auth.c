// SPDX-License-Identifier: MIT
// oauth-client-auth: how mcpd's client authenticates itself to a token endpoint (none,
// client_secret_basic, client_secret_post, private_key_jwt).

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <yajl/yajl_tree.h>

#include "common/base64.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/oauth-client-auth.h"
#include "daemon/upstream/oauth-fetch.h"
#include "daemon/upstream/oauth-jwt.h"
#include "daemon/upstream/oauth-parse.h"

const char *oauth_client_auth_method(yajl_val as_meta, const char *secret)
{
    yajl_val m = json_get_array(as_meta, "token_endpoint_auth_methods_supported");

    if (!secret)
        return "none";
    /* RFC 8414: absent means client_secret_basic. */
    if (!m || oauth_list_has(m, "client_secret_basic"))
        return "client_secret_basic";
    if (oauth_list_has(m, "client_secret_post"))
        return "client_secret_post";
    return "client_secret_basic";
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
    fetch_form_add(form, "client_id", id);
    if (streq(method, "client_secret_post") && secret)
        fetch_form_add(form, "client_secret", secret);
    return NULL;
}

int oauth_client_assertion(StrBuf *form, const char *client_id, const char *audience,
                           const char *key_pem, const char *alg, char **whyp)
{
    _cleanup_free_ char *jwt = oauth_jwt_assertion(client_id, audience, key_pem, alg, whyp);

    if (!jwt)
        return -EINVAL;
    fetch_form_add(form, "client_id", client_id);
    fetch_form_add(form, "client_assertion_type",
                   "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    fetch_form_add(form, "client_assertion", jwt);
    return 0;
}
