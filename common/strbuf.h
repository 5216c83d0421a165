// SPDX-License-Identifier: MIT
// strbuf: a growable, always NUL-terminated byte buffer.
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "common/util.h"

typedef struct StrBuf {
    char *data;
    size_t len;
    size_t cap;
} StrBuf;

#define STRBUF_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/** Grow the buffer for n more bytes (the slow path of strbuf_reserve). */
void strbuf_grow(StrBuf *sb, size_t n);

/*
 * The appends are inline: they run for every byte run mcpd writes (each call's upstream line,
 * every reply), and all but the rare growth is a compare and a copy.
 */

/** Make room for n more bytes (plus the terminating NUL). */
static inline void strbuf_reserve(StrBuf *sb, size_t n)
{
    if (sb->len + n + 1 > sb->cap)
        strbuf_grow(sb, n);
}

/** Append n bytes. */
static inline void strbuf_append(StrBuf *sb, const void *data, size_t n)
{
    strbuf_reserve(sb, n);
    if (n)
        memcpy(sb->data + sb->len, data, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

/** Append a NUL-terminated string. */
static inline void strbuf_puts(StrBuf *sb, const char *s)
{
    strbuf_append(sb, s, strlen(s));
}

/** Append one byte. */
static inline void strbuf_putc(StrBuf *sb, char c)
{
    strbuf_reserve(sb, 1);
    sb->data[sb->len++] = c;
    sb->data[sb->len] = '\0';
}

/** Append formatted text. */
void strbuf_printf(StrBuf *sb, const char *fmt, ...) _printf_(2, 3);
/** Append formatted text from a va_list. */
void strbuf_vprintf(StrBuf *sb, const char *fmt, va_list ap);
/** Forget the contents, keep the allocation. */
void strbuf_reset(StrBuf *sb);
/** Hand the buffer to the caller (never NULL) and reset sb to empty. */
char *strbuf_detach(StrBuf *sb, size_t *lenp);
/** Release the buffer; safe on a zeroed value. */
void strbuf_deinit(StrBuf *sb);
/** Return the contents as a string ("" when empty). */
static inline const char *strbuf_str(const StrBuf *sb)
{
    return sb->data ? sb->data : "";
}
