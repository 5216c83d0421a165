// SPDX-License-Identifier: MIT
// util: allocation, cleanup attributes, time, fd and random helpers shared by every layer.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f)    __attribute__((cleanup(f)))
#define _cleanup_free_  _cleanup_(util_freep)
#define _cleanup_close_ _cleanup_(util_closep)
#define _printf_(a, b)  __attribute__((format(printf, a, b)))
#define _unused_        __attribute__((unused))

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))
/* The struct of type that holds member at ptr (for nodes embedded in what they link). */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#define MIN(a, b)                       ((a) < (b) ? (a) : (b))
#define MAX(a, b)                       ((a) > (b) ? (a) : (b))

/* Allocation failure is not an expected outcome in this daemon: abort with a message. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) _printf_(1, 2);
/**
 * tsearch(3) (a balanced tree: O(log n) whatever the keys, so a hostile file cannot make it
 * slow as it can a hash table without a secret key), aborting when out of memory. Returns the
 * node, whose key is key itself when it was added and the earlier equal key otherwise.
 */
void *xtsearch(const void *key, void **rootp, int (*cmp)(const void *, const void *));

/** Free *p (for _cleanup_free_). */
void util_freep(void *p);
/** Close *fd if it is >= 0 (for _cleanup_close_). */
void util_closep(int *fd);

/** Return true when the strings are equal; NULL equals only NULL. */
static inline bool streq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

/** Return true when s starts with prefix. */
static inline bool startswith(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/** The value of hex digit c (either case), or -1. */
static inline int hex_digit(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/** Monotonic clock in milliseconds. */
uint64_t now_ms(void);
/** Monotonic clock in microseconds. */
uint64_t now_us(void);
/** Wall clock in milliseconds since the epoch. */
int64_t wall_ms(void);

/** Set O_NONBLOCK on fd; return 0 or -errno. */
int fd_set_nonblock(int fd);
/** Set FD_CLOEXEC on fd; return 0 or -errno. */
int fd_set_cloexec(int fd);
/** Write all of buf to a blocking fd; return 0 or -errno. */
int fd_write_all(int fd, const void *buf, size_t n);

/** Fill buf with n bytes from the kernel CSPRNG; return 0 or -errno. */
int random_bytes(void *buf, size_t n);
/** Write 2*n lowercase hex digits of bytes into out (which must hold 2*n + 1 bytes). */
void hex_encode(char *out, const void *bytes, size_t n);

/** Compare two byte strings in time that depends only on n. */
bool mem_equal_consttime(const void *a, const void *b, size_t n);

/** Parse a decimal integer in [min, max]; return 0 or -EINVAL / -ERANGE. */
int parse_int64(const char *s, int64_t min, int64_t max, int64_t *outp);
