// SPDX-License-Identifier: MIT
// utf8: strict UTF-8 validation and U+FFFD repair of JSON texts, raw bytes and \u escapes alike.

#include <stdint.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/util.h"

size_t utf8_seq_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    unsigned lo = 0x80, hi = 0xbf;
    size_t len;

    if (c >= 0x01 && c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* shorter forms of U+0000..U+07FF are overlong */
        if (c == 0xed)
            hi = 0x9f; /* U+D800..U+DFFF are surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        if (c == 0xf4)
            hi = 0x8f; /* nothing past U+10FFFF */
    } else {
        return 0; /* NUL, a continuation byte, 0xc0/0xc1 (always overlong) or 0xf5..0xff */
    }
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return len;
}

static int hex4(const char *p)
{
    int v = 0;

    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = hex_digit(c);
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

size_t utf8_escape_len(const char *p, size_t n)
{
    int u, lo;

    if (n < 6 || p[0] != '\\' || p[1] != 'u' || (u = hex4(p + 2)) < 0)
        return 0;
    if (u < 0xd800 || u > 0xdfff)
        return 6;
    if (u >= 0xdc00)
        return 0; /* a low surrogate with no high one before it */
    if (n < 12 || p[6] != '\\' || p[7] != 'u' || (lo = hex4(p + 8)) < 0xdc00 || lo > 0xdfff)
        return 0;
    return 12;
}

/* Why the bytes at p are not UTF-8, for the error message. */
static const char *seq_problem(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];

    if (c == 0)
        return "NUL byte";
    if (c >= 0x80 && c <= 0xbf)
        return "stray continuation byte";
    if (c == 0xc0 || c == 0xc1 || (c == 0xe0 && n > 1 && p[1] < 0xa0) ||
        (c == 0xf0 && n > 1 && p[1] < 0x90))
        return "overlong form";
    if (c == 0xed && n > 1 && p[1] >= 0xa0)
        return "encoded UTF-16 surrogate";
    if (c > 0xf4 || (c == 0xf4 && n > 1 && p[1] > 0x8f))
        return "code point past U+10FFFF";
    return "truncated sequence";
}

/*
 * Walk the JSON text s once, tracking whether we are inside a string so that an escaped
 * backslash followed by "u" is not taken for an escape. The first problem goes to *probp. With
 * out, the text is copied there with each problem replaced (counted in *n_fixedp); without it,
 * the walk stops at the first problem. Commas outside strings and comments are counted in
 * *n_commasp. Returns whether the text was clean.
 */
static bool walk(const char *s, size_t n, Utf8Problem *probp, StrBuf *out, size_t *n_fixedp,
                 size_t *n_commasp)
{
    const unsigned char *p = (const unsigned char *)s;
    enum { CODE, STRING, LINE_COMMENT, BLOCK_COMMENT } at = CODE;
    bool clean = true;
    size_t run = 0, i = 0;

    while (i < n) {
        unsigned char c = p[i];
        size_t k = 1;
        bool bad = false, escape = false, in_string = at == STRING;

        /* yajl takes comments (config files carry them): a quote inside one opens no string. */
        if (at == CODE && c == '/' && i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '*')) {
            at = s[i + 1] == '/' ? LINE_COMMENT : BLOCK_COMMENT;
            k = 2;
        } else if ((at == LINE_COMMENT && c == '\n') ||
                   (at == BLOCK_COMMENT && c == '*' && i + 1 < n && s[i + 1] == '/')) {
            k = at == LINE_COMMENT ? 1 : 2;
            at = CODE;
        } else if (c == '"' && (at == CODE || at == STRING)) {
            at = at == CODE ? STRING : CODE;
        } else if (c == ',' && at == CODE) {
            (*n_commasp)++;
        } else if (c == '\\' && in_string && i + 1 < n && s[i + 1] == 'u') {
            k = utf8_escape_len(s + i, n - i);
            if (!k) {
                bad = escape = true;
                k = 6; /* a malformed \u is a syntax error the parser reports; skip its head */
                if (n - i < 6 || hex4(s + i + 2) < 0)
                    bad = false, k = 2;
            }
        } else if (c == '\\' && in_string) {
            k = i + 1 < n ? 2 : 1;
        } else if (c >= 0x80 || c == 0) {
            k = utf8_seq_len(p + i, n - i);
            bad = k == 0;
            k = k ? k : 1;
        }
        if (bad) {
            if (clean && probp)
                *probp = (Utf8Problem){i, escape ? "lone UTF-16 surrogate escape"
                                                 : seq_problem(p + i, n - i)};
            clean = false;
            if (!out)
                return false;
            strbuf_append(out, s + run, i - run);
            if (escape)
                strbuf_append(out, "\\ufffd", 6);
            else
                strbuf_append(out, UTF8_REPLACEMENT, UTF8_REPLACEMENT_LEN);
            run = i + k;
            (*n_fixedp)++;
        }
        i += k;
    }
    if (out)
        strbuf_append(out, s + run, n - run);
    return clean;
}

bool utf8_json_check(const char *s, size_t n, Utf8Problem *probp, size_t *n_commasp)
{
    size_t commas = 0;
    bool ok = walk(s, n, probp, NULL, NULL, &commas);

    if (n_commasp)
        *n_commasp = commas;
    return ok;
}

char *utf8_json_repair(const char *s, size_t n, size_t *n_fixedp)
{
    StrBuf sb = STRBUF_INIT;
    size_t fixed = 0, commas = 0;

    strbuf_reserve(&sb, n + 16);
    walk(s, n, NULL, &sb, &fixed, &commas);
    if (n_fixedp)
        *n_fixedp = fixed;
    return strbuf_detach(&sb, NULL);
}
