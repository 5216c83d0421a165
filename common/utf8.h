// SPDX-License-Identifier: MIT
// utf8: strict UTF-8 validation and U+FFFD repair of JSON texts, raw bytes and \u escapes alike.
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The replacement character U+FFFD, encoded. */
#define UTF8_REPLACEMENT     "\xef\xbf\xbd"
#define UTF8_REPLACEMENT_LEN 3

/*
 * Length of the valid UTF-8 sequence at p (n bytes available, n >= 1), or 0 when it is not
 * valid: overlong forms, UTF-16 surrogates (U+D800..U+DFFF), values past U+10FFFF, stray
 * continuation bytes and truncated sequences are all refused (RFC 3629 section 4). A NUL byte
 * counts as invalid: no string mcpd handles may carry one.
 */
size_t utf8_seq_len(const unsigned char *p, size_t n);

/*
 * The \u escape at p (p[0] == '\\', p[1] == 'u', n bytes available) as far as surrogates go:
 * returns 6 for an escape that is not a surrogate, 12 for a high surrogate followed by a low
 * one, and 0 for a lone surrogate (which names no character) or a malformed escape.
 */
size_t utf8_escape_len(const char *p, size_t n);

/* What is wrong with a JSON text, found by utf8_json_check(). */
typedef struct Utf8Problem {
    size_t offset;   /* byte offset of the first bad byte or escape */
    const char *why; /* "overlong form", "lone surrogate escape", ... */
} Utf8Problem;

/**
 * Scan a JSON text: every byte must be strict UTF-8, and every \u escape inside a string must
 * name a character. Return true when all is well; otherwise false with *probp describing the
 * first problem. Syntax is not checked (the parser does that). When the text is clean and
 * n_commasp is not NULL, *n_commasp is the number of commas outside strings and comments: each
 * is followed by a value of its own, so the text holds more values than that.
 */
bool utf8_json_check(const char *s, size_t n, Utf8Problem *probp, size_t *n_commasp);

/**
 * A copy of the JSON text s[0..n) (NUL-terminated, to free) in which each invalid byte becomes
 * U+FFFD and each lone surrogate escape becomes \ufffd; *n_fixedp counts the replacements.
 */
char *utf8_json_repair(const char *s, size_t n, size_t *n_fixedp);
