// SPDX-License-Identifier: MIT
// oauth-keyring: where the token store's sign-ins sit in the Secret Service (items, attributes).
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The xdg:schema of a sign-in's item (libsecret's tools show it; seahorse groups by it). */
#define OAUTH_KEYRING_SCHEMA "io.github.mcpd.OAuthToken"

/**
 * Whether the token store keeps its sign-ins in the Secret Service: decided once per daemon,
 * and logged with the reason when it does not.
 */
bool oauth_keyring_use(void);
/** Create or replace resource's item; json is the entry as the file would hold it. */
int oauth_keyring_put(const char *resource, const char *json, size_t len, char **whyp);
/** The entry of resource (newly allocated JSON text): 0, KEYRING_E_NOTFOUND or -errno. */
int oauth_keyring_get(const char *resource, char **jsonp, char **whyp);
/** Delete resource's item: 0, KEYRING_E_NOTFOUND or -errno. */
int oauth_keyring_remove(const char *resource, char **whyp);
/** Each sign-in's entry (JSON text, not terminated): 0 or -errno. */
int oauth_keyring_each(void (*fn)(void *userdata, const char *json, size_t len), void *userdata,
                       char **whyp);
