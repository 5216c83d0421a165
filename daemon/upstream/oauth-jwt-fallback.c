// SPDX-License-Identifier: MIT
// oauth-jwt-fallback: private_key_jwt for a build without libcrypto (refused with the reason).

#include "common/util.h"
#include "daemon/upstream/oauth-jwt.h"

char *oauth_jwt_assertion(const char *client_id, const char *audience, const char *key_pem,
                          const char *alg, char **whyp)
{
    (void)client_id, (void)audience, (void)key_pem, (void)alg;
    *whyp = xstrdup("this mcpd was built without libcrypto: private_key_jwt is not available");
    return NULL;
}
