// SPDX-License-Identifier: MIT
// oauth-keyring: where the token store's sign-ins sit in the Secret Service (items, attributes).
//
// One item per sign-in, found by {xdg:schema, application: "mcpd", resource: URL}; its secret
// is the entry as oauth-tokens.json would hold it (tokens, client secret, endpoints), so the
// store parses one shape wherever it reads it from. A person sees them with
// `secret-tool search --all application mcpd` and can remove one with `secret-tool clear`.

#include <stdlib.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/sys/keyring.h"
#include "daemon/upstream/oauth-keyring.h"

bool oauth_keyring_use(void)
{
    _cleanup_free_ char *why = NULL;
    bool yes = keyring_available(&why);

    if (yes)
        log_full(LOG_INFO, NULL, "oauth", "sign-ins are kept in the Secret Service");
    else
        log_full(LOG_INFO, NULL, "oauth", "sign-ins are kept in files: %s",
                 why ? why : "no Secret Service");
    return yes;
}

int oauth_keyring_put(const char *resource, const char *json, size_t len, char **whyp)
{
    const KeyringAttr attrs[] = {
        {"xdg:schema", OAUTH_KEYRING_SCHEMA}, {"application", "mcpd"}, {"resource", resource}};
    _cleanup_free_ char *label = xasprintf("mcpd sign-in to %s", resource);

    return keyring_store(label, attrs, N_ELEMENTS(attrs), json, len, whyp);
}

int oauth_keyring_get(const char *resource, char **jsonp, char **whyp)
{
    const KeyringAttr attrs[] = {
        {"xdg:schema", OAUTH_KEYRING_SCHEMA}, {"application", "mcpd"}, {"resource", resource}};

    return keyring_lookup(attrs, N_ELEMENTS(attrs), jsonp, NULL, whyp);
}

int oauth_keyring_remove(const char *resource, char **whyp)
{
    const KeyringAttr attrs[] = {
        {"xdg:schema", OAUTH_KEYRING_SCHEMA}, {"application", "mcpd"}, {"resource", resource}};

    return keyring_delete(attrs, N_ELEMENTS(attrs), whyp);
}

int oauth_keyring_each(void (*fn)(void *userdata, const char *json, size_t len), void *userdata,
                       char **whyp)
{
    const KeyringAttr attrs[] = {{"xdg:schema", OAUTH_KEYRING_SCHEMA}, {"application", "mcpd"}};

    return keyring_search(attrs, N_ELEMENTS(attrs), fn, userdata, whyp);
}
