// SPDX-License-Identifier: MIT
// child-env: the environment a child starts with (mcpd's own with a config entry's laid over).

#include <stdint.h>
#include <string.h>

#include "common/hash.h"
#include "common/util.h"
#include "daemon/sys/child-env.h"

/*
 * No bound of its own, for its inputs have theirs: base is mcpd's environment, which the kernel
 * capped at mcpd's exec (ARG_MAX, a quarter of the stack limit: 2 MiB by default), and over is a
 * config entry's "env", which the config file's bound caps (CONFIG_MAX_FILE_BYTES, 4 MiB: at most
 * ~700 000 members of 6 bytes). The table holds two slots per name (4 bytes each), so it is at
 * most a few MiB for the largest file, and a load of at most one half keeps probes short.
 */
typedef struct NameSet {
    uint32_t *slot; /* 1 + index into keys, 0 for empty */
    size_t mask;
    const char **keys;
} NameSet;

static uint64_t name_hash(const char *name, size_t len)
{
    return hash_fnv1a(name, len);
}

static void nameset_init(NameSet *s, yajl_val over)
{
    size_t n = over ? over->u.object.len : 0, cap = 8;

    while (cap < 2 * n)
        cap *= 2;
    s->slot = xcalloc(cap, sizeof(*s->slot));
    s->mask = cap - 1;
    s->keys = n ? over->u.object.keys : NULL;
    for (size_t j = 0; j < n; j++) {
        const char *k = s->keys[j];
        size_t i = (size_t)name_hash(k, strlen(k)) & s->mask;
        while (s->slot[i] && !streq(s->keys[s->slot[i] - 1], k))
            i = (i + 1) & s->mask;
        if (!s->slot[i]) /* a name set twice (duplicate keys) is one name here */
            s->slot[i] = (uint32_t)j + 1;
    }
}

static bool nameset_has(const NameSet *s, const char *name, size_t len)
{
    for (size_t i = (size_t)name_hash(name, len) & s->mask; s->slot[i]; i = (i + 1) & s->mask) {
        const char *k = s->keys[s->slot[i] - 1];
        if (strlen(k) == len && memcmp(k, name, len) == 0)
            return true;
    }
    return false;
}

char **child_env_merge(char *const *base, yajl_val over, const char *reserved, char *first)
{
    size_t n_base = 0, n_over = over ? over->u.object.len : 0, k = 0;
    size_t reserved_len = reserved ? strlen(reserved) : 0;
    NameSet names;
    char **out;

    while (base && base[n_base])
        n_base++;
    out = xcalloc(n_base + n_over + 2, sizeof(char *));
    if (first)
        out[k++] = first;
    nameset_init(&names, over);
    for (size_t i = 0; i < n_base; i++) {
        const char *eq = strchr(base[i], '=');
        size_t len = eq ? (size_t)(eq - base[i]) : strlen(base[i]);
        bool is_reserved =
            eq && reserved && len == reserved_len && memcmp(base[i], reserved, len) == 0;
        if (!is_reserved && !nameset_has(&names, base[i], len))
            out[k++] = xstrdup(base[i]);
    }
    free(names.slot);
    for (size_t j = 0; j < n_over; j++) {
        yajl_val v = over->u.object.values[j];
        if (!reserved || !streq(over->u.object.keys[j], reserved))
            out[k++] =
                xasprintf("%s=%s", over->u.object.keys[j], YAJL_IS_STRING(v) ? v->u.string : "");
    }
    return out;
}
