// SPDX-License-Identifier: MIT
// oauth-issuer: the SEP-2468 issuer checks (RFC 8414 3.3 metadata issuer, RFC 9207 "iss").

#include <errno.h>
#include <string.h>

#include "common/util.h"
#include "daemon/upstream/oauth-issuer.h"

/* Issuers in error messages are cut here: a hostile server chooses them, the log keeps them. */
#define ISSUER_SHOWN_MAX 200

int oauth_check_metadata_issuer(const char *expected, const char *got, const char *meta_url,
                                char **whyp)
{
    /* Simple string comparison, no normalisation: a trailing "/" is another issuer. */
    if (got && streq(got, expected))
        return 0;
    if (!got)
        *whyp = xasprintf("the metadata at %s has no \"issuer\"; mcpd uses only metadata that "
                          "names the authorization server %s it was fetched for (RFC 8414 3.3); "
                          "ask the server's operator to fix it",
                          meta_url, expected);
    else
        *whyp = xasprintf("the metadata at %s names the issuer \"%.*s\", not the authorization "
                          "server %s it was fetched for; refusing it (RFC 8414 3.3: its endpoints "
                          "could send the sign-in elsewhere); ask the server's operator to fix it",
                          meta_url, ISSUER_SHOWN_MAX, got, expected);
    return -EPERM;
}

int oauth_check_response_iss(const char *issuer, const char *iss, bool advertised, char **whyp)
{
    if (iss && streq(iss, issuer))
        return 0;
    if (!iss && !advertised)
        return 0;
    if (!iss)
        *whyp = xasprintf("the authorization server %s says it names itself in its responses "
                          "(authorization_response_iss_parameter_supported) but this redirect "
                          "has no \"iss\"; the code was not used (RFC 9207); run mcpctl login "
                          "again, and report it to the server's operator if it repeats",
                          issuer);
    else
        *whyp =
            xasprintf("the redirect came from the issuer \"%.*s\", not from the authorization "
                      "server %s this sign-in began with (RFC 9207: a mix-up or a misconfigured "
                      "server); the code was not used; run mcpctl login again, and report it "
                      "to the server's operator if it repeats",
                      ISSUER_SHOWN_MAX, iss, issuer);
    return -EPERM;
}
