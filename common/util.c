// SPDX-License-Identifier: MIT
// util: allocation, cleanup attributes, time, fd and random helpers shared by every layer.

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "common/strbuf.h"
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
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
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

/* The end of a URL's authority (RFC 3986 3.2): a path, query or fragment starts, or the text
 * around the URL resumes (a space or a quote in a command line). */
static size_t authority_len(const char *a)
{
    return strcspn(a, "/?#\\ \t\r\n\"'<>");
}

/* Words that make a query parameter's value a secret (matched case-insensitively). */
static const char *const secret_param_words[] = {"key", "token", "secret", "passw", "auth", "sig"};

static bool secret_param(const char *name, size_t n)
{
    for (size_t i = 0; i < N_ELEMENTS(secret_param_words); i++)
        for (size_t k = 0, w = strlen(secret_param_words[i]); k + w <= n; k++)
            if (strncasecmp(name + k, secret_param_words[i], w) == 0)
                return true;
    return false;
}

/* Takes s (from the userinfo pass): each "?name=value" or "&name=value" with a secret name. */
static char *redact_query_params(char *s)
{
    StrBuf sb = STRBUF_INIT;
    const char *p = s;
    bool changed = false;

    while (*p) {
        size_t lit = strcspn(p, "?&");
        strbuf_append(&sb, p, lit);
        p += lit;
        if (!*p)
            break;
        strbuf_putc(&sb, *p++); /* the '?' or '&' */
        size_t name = strcspn(p, "=&#? \t\r\n\"'");
        if (p[name] != '=' || !name || !secret_param(p, name))
            continue;
        size_t value = strcspn(p + name + 1, "&# \t\r\n\"'");
        if (!value)
            continue;
        strbuf_append(&sb, p, name + 1);
        strbuf_puts(&sb, "***");
        p += name + 1 + value;
        changed = true;
    }
    if (!changed) {
        strbuf_deinit(&sb);
        return s;
    }
    free(s);
    return strbuf_detach(&sb, NULL);
}

char *url_redact_secrets(const char *s)
{
    static const char mask[] = "***";
    size_t n = strlen(s), len = 0, cap = n + 1;
    char *out = xmalloc(cap);
    const char *p = s;

    for (;;) {
        const char *sep = strstr(p, "://");
        if (!sep)
            break;
        const char *auth = sep + 3, *at = NULL;
        size_t alen = authority_len(auth);
        /* userinfo ends at the last '@' of the authority; its password after its first ':'. */
        for (size_t i = 0; i < alen; i++)
            if (auth[i] == '@')
                at = auth + i;
        const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
        const char *copy_to = colon && colon + 1 < at ? colon + 1 : auth + alen;
        size_t keep = (size_t)(copy_to - p);
        if (len + keep + sizeof(mask) > cap) {
            cap = len + keep + sizeof(mask) + (n - (size_t)(copy_to - s)) + 1;
            out = xrealloc(out, cap);
        }
        memcpy(out + len, p, keep);
        len += keep;
        if (copy_to != auth + alen) {
            memcpy(out + len, mask, sizeof(mask) - 1);
            len += sizeof(mask) - 1;
            p = at;
        } else {
            p = copy_to;
        }
    }
    size_t rest = strlen(p);
    if (len + rest + 1 > cap)
        out = xrealloc(out, len + rest + 1);
    memcpy(out + len, p, rest + 1);
    return strstr(out, "://") ? redact_query_params(out) : out;
}
