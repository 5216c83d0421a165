// SPDX-License-Identifier: MIT
// util: allocation, cleanup attributes, time, fd and random helpers shared by every layer.

#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>

#include "common/util.h"

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

void util_freep(void *p)
{
    free(*(void **)p);
}

void util_closep(int *fd)
{
    if (*fd >= 0)
        close(*fd);
}

uint64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t now_ms(void)
{
    return now_us() / 1000u;
}

int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int fd_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

int fd_set_cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFD);

    if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
        return -errno;
    return 0;
}

int fd_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;

    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int random_bytes(void *buf, size_t n)
{
    char *p = buf;

    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

void hex_encode(char *out, const void *bytes, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = bytes;

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 0xf];
    }
    out[2 * n] = '\0';
}

bool mem_equal_consttime(const void *a, const void *b, size_t n)
{
    const volatile unsigned char *x = a, *y = b;
    unsigned char d = 0;

    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}

int parse_int64(const char *s, int64_t min, int64_t max, int64_t *outp)
{
    char *end;
    long long v;

    if (!s || !*s)
        return -EINVAL;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (*end != '\0')
        return -EINVAL;
    if (errno == ERANGE || v < min || v > max)
        return -ERANGE;
    *outp = v;
    return 0;
}
