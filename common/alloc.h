// SPDX-License-Identifier: MIT
// alloc: memory allocation that aborts with a message when memory runs out.
#pragma once

#include <stddef.h>

/* Allocation failure is not an expected outcome in this daemon: abort with a message. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* (The attribute spelt out, not util.h's _printf_: util.h includes this header.) */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/**
 * tsearch(3) (a balanced tree: O(log n) whatever the keys, so a hostile file cannot make it
 * slow as it can a hash table without a secret key), aborting when out of memory. Returns the
 * node, whose key is key itself when it was added and the earlier equal key otherwise.
 */
void *xtsearch(const void *key, void **rootp, int (*cmp)(const void *, const void *));
