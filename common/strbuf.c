// SPDX-License-Identifier: MIT
// strbuf: a growable, always NUL-terminated byte buffer.

#include <stdio.h>

#include "common/strbuf.h"

void strbuf_grow(StrBuf *sb, size_t n)
{
    size_t need = sb->len + n + 1;

    if (need <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap *= 2;
    sb->data = xrealloc(sb->data, cap);
    sb->cap = cap;
    /* A first allocation holds garbage: keep the buffer a valid string even before appends. */
    sb->data[sb->len] = '\0';
}

void strbuf_vprintf(StrBuf *sb, const char *fmt, va_list ap)
{
    char small[256];
    va_list aq;
    int n;

    /* Most records are short: format once into the stack, twice only when it is too small. */
    va_copy(aq, ap);
    n = vsnprintf(small, sizeof(small), fmt, aq);
    va_end(aq);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        strbuf_append(sb, small, (size_t)n);
        return;
    }
    strbuf_reserve(sb, (size_t)n);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void strbuf_printf(StrBuf *sb, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    strbuf_vprintf(sb, fmt, ap);
    va_end(ap);
}

void strbuf_reset(StrBuf *sb)
{
    sb->len = 0;
    if (sb->data)
        sb->data[0] = '\0';
}

char *strbuf_detach(StrBuf *sb, size_t *lenp)
{
    char *p = sb->data ? sb->data : xstrdup("");

    if (lenp)
        *lenp = sb->len;
    sb->data = NULL;
    sb->len = sb->cap = 0;
    return p;
}

void strbuf_deinit(StrBuf *sb)
{
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
}
