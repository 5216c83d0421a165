// SPDX-License-Identifier: MIT
// naming: exposed tool names mcp_<server>_<tool>, sanitised, capped and collision-free.

#include <stdio.h>
#include <stdlib.h>

#include "common/hash.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/core/naming.h"

char *naming_sanitize(const char *part, const char *fallback)
{
    StrBuf sb = STRBUF_INIT;
    bool pending_sep = false;

    for (const unsigned char *p = (const unsigned char *)part; *p; p++) {
        unsigned char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (pending_sep && sb.len > 0)
                strbuf_putc(&sb, '_');
            pending_sep = false;
            strbuf_putc(&sb, (char)c);
        } else {
            pending_sep = true;
        }
    }
    if (sb.len == 0) {
        strbuf_deinit(&sb);
        return xstrdup(fallback);
    }
    return strbuf_detach(&sb, NULL);
}

/* Cut name to fit NAMING_MAX_LEN with "_" + hash digits of key appended. */
static char *with_suffix(const char *name, const char *key)
{
    char hex[2 * SHA256_DIGEST_SIZE + 1];
    size_t keep = NAMING_MAX_LEN - 1 - NAMING_HASH_DIGITS;
    size_t n = strlen(name);

    sha256_hex(hex, key, strlen(key));
    if (n > keep)
        n = keep;
    while (n > 0 && name[n - 1] == '_')
        n--;
    return xasprintf("%.*s_%.*s", (int)n, name, NAMING_HASH_DIGITS, hex);
}

char *naming_tool_name(const char *server, const char *tool)
{
    _cleanup_free_ char *s = naming_sanitize(server, "server");
    _cleanup_free_ char *t = naming_sanitize(tool, "tool");
    size_t sl = strlen(s);
    const char *tp = t;
    char *full;

    /* puppeteer + puppeteer_screenshot gives mcp_puppeteer_screenshot. */
    if (strncmp(t, s, sl) == 0 && t[sl] == '_' && t[sl + 1])
        tp = t + sl + 1;
    full = xasprintf("mcp_%s_%s", s, tp);
    if (strlen(full) <= NAMING_MAX_LEN)
        return full;
    char *cut = with_suffix(full, full);
    free(full);
    return cut;
}

static int cmp_source(const void *a, const void *b)
{
    const NamingEntry *x = a, *y = b;
    int c = strcmp(x->server, y->server);
    return c ? c : strcmp(x->tool, y->tool);
}

static int cmp_name(const void *a, const void *b)
{
    const NamingEntry *x = a, *y = b;
    return strcmp(x->name, y->name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool taken(char **names, size_t n, const char *name)
{
    return n && bsearch(&name, names, n, sizeof(char *), cmp_str);
}

/* Insert name into the sorted array names[0..n). */
static void insert_sorted(char **names, size_t n, char *name)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(names[mid], name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(names + lo + 1, names + lo, (n - lo) * sizeof(char *));
    names[lo] = name;
}

void naming_assign(NamingEntry *entries, size_t n)
{
    _cleanup_free_ char **names = n ? xmalloc(n * sizeof(char *)) : NULL;
    size_t n_names = 0;

    /* qsort() must not be given NULL, even for no elements: nothing to name is done. */
    if (n == 0)
        return;
    qsort(entries, n, sizeof(*entries), cmp_source);
    for (size_t i = 0; i < n; i++) {
        NamingEntry *e = &entries[i];
        e->name = naming_tool_name(e->server, e->tool);
        e->collided = 0;
        for (unsigned k = 0; taken(names, n_names, e->name); k++) {
            /* Key the suffix on the raw identity, so it is stable whatever else is listed. */
            _cleanup_free_ char *key = xasprintf("%s\x1f%s\x1f%u", e->server, e->tool, k);
            char *alt = with_suffix(e->name, key);
            free(e->name);
            e->name = alt;
            e->collided = 1;
        }
        insert_sorted(names, n_names++, e->name);
    }
    qsort(entries, n, sizeof(*entries), cmp_name);
}
