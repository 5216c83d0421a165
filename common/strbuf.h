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

/** Make room for n more bytes (plus the terminating NUL). */
void strbuf_reserve(StrBuf *sb, size_t n);
/** Append n bytes. */
void strbuf_append(StrBuf *sb, const void *data, size_t n);
/** Append a NUL-terminated string. */
void strbuf_puts(StrBuf *sb, const char *s);
/** Append one byte. */
void strbuf_putc(StrBuf *sb, char c);
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
