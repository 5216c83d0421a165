// SPDX-License-Identifier: MIT
// keyring-fallback: no Secret Service without libsystemd's sd-bus (-Dsystemd=disabled).

#include <errno.h>

#include "common/util.h"
#include "daemon/sys/keyring.h"

static const char no_bus[] = "mcpd was built without sd-bus (-Dsystemd=disabled)";

bool keyring_available(char **whyp)
{
    if (whyp)
        *whyp = xstrdup(no_bus);
    return false;
}

int keyring_lookup(const KeyringAttr *attrs, size_t n, char **secretp, size_t *lenp, char **whyp)
{
    (void)attrs, (void)n, (void)secretp, (void)lenp;
    return keyring_available(whyp) ? 0 : -ENOENT;
}

int keyring_search(const KeyringAttr *attrs, size_t n, KeyringEachFn fn, void *userdata,
                   char **whyp)
{
    (void)attrs, (void)n, (void)fn, (void)userdata;
    return keyring_available(whyp) ? 0 : -ENOENT;
}

int keyring_store(const char *label, const KeyringAttr *attrs, size_t n, const char *secret,
                  size_t len, char **whyp)
{
    (void)label, (void)attrs, (void)n, (void)secret, (void)len;
    return keyring_available(whyp) ? 0 : -ENOENT;
}

int keyring_delete(const KeyringAttr *attrs, size_t n, char **whyp)
{
    (void)attrs, (void)n;
    return keyring_available(whyp) ? 0 : -ENOENT;
}

void keyring_reset(void)
{
}
