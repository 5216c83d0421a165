// SPDX-License-Identifier: MIT
// alloc: memory allocation that aborts with a message when memory runs out.

#include <search.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

static void oom(size_t n)
{
    fprintf(stderr, "mcpd: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    size_t total;
    void *p;

    /*
     * malloc and memset, not calloc: glibc's calloc bypasses its per-thread cache and takes the
     * arena's slow path, and mcpd's zeroed objects (a call, a pending request) are small and
     * made on every request.
     */
    if (__builtin_mul_overflow(n ? n : 1, size ? size : 1, &total))
        oom(SIZE_MAX);
    p = malloc(total);
    if (!p)
        oom(total);
    /* An empty barrier: without it the compiler folds malloc+memset back into calloc. */
    __asm__ volatile("" : : "r"(p) : "memory");
    return memset(p, 0, total);
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

void *xtsearch(const void *key, void **rootp, int (*cmp)(const void *, const void *))
{
    void *node = tsearch(key, rootp, cmp);

    if (!node)
        oom(sizeof(void *) * 3);
    return node;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        oom(strlen(fmt));
    va_end(ap);
    return s;
}
