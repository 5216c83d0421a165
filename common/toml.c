// SPDX-License-Identifier: MIT
// toml: a parser for the TOML subset config files use, producing yajl trees.

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/idmap.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/toml.h"
#include "common/util.h"

/*
 * Tables a later [header] or key may not touch again: defined by a header, or inline. A set by
 * address (a hash table: a list searched for each header made 690000 of them quadratic).
 */
typedef struct PtrList {
    IdMap set;
} PtrList;

typedef struct Parser {
    const char *p, *end, *line_start;
    unsigned line;
    char *err;
    yajl_val root, cur;
    PtrList defined; /* tables opened by a [header] */
    PtrList frozen;  /* inline tables and static arrays: closed once written */
    PtrList aot;     /* arrays made by [[header]] */
    unsigned depth;
    size_t n_values; /* values and tables made, up to TOML_MAX_VALUES */
} Parser;

typedef struct Key {
    char **part;
    size_t n;
} Key;

static bool ptrs_has(const PtrList *l, yajl_val v)
{
    return idmap_get(&l->set, (uint64_t)(uintptr_t)v) != NULL;
}

static void ptrs_add(PtrList *l, yajl_val v)
{
    idmap_put(&l->set, (uint64_t)(uintptr_t)v, v);
}

static void key_deinit(Key *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->part[i]);
    free(k->part);
    k->part = NULL;
    k->n = 0;
}

_printf_(2, 3) static int fail(Parser *ps, const char *fmt, ...)
{
    StrBuf sb = STRBUF_INIT;
    va_list ap;

    if (ps->err)
        return -EINVAL;
    strbuf_printf(&sb, "line %u, column %zu: ", ps->line, (size_t)(ps->p - ps->line_start) + 1);
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    ps->err = strbuf_detach(&sb, NULL);
    return -EINVAL;
}

static bool at_eof(const Parser *ps)
{
    return ps->p >= ps->end;
}

static int peek(const Parser *ps, size_t off)
{
    return ps->p + off < ps->end ? (unsigned char)ps->p[off] : -1;
}

static bool looking_at(const Parser *ps, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, s, n) == 0;
}

static void skip_ws(Parser *ps)
{
    while (!at_eof(ps) && (*ps->p == ' ' || *ps->p == '\t'))
        ps->p++;
}

/* At a newline ("\n" or "\r\n"): consume it and return true. */
static bool take_newline(Parser *ps)
{
    if (peek(ps, 0) == '\n' || (peek(ps, 0) == '\r' && peek(ps, 1) == '\n')) {
        ps->p += *ps->p == '\r' ? 2 : 1;
        ps->line++;
        ps->line_start = ps->p;
        return true;
    }
    return false;
}

/* Length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t n = p[0] < 0x80             ? 1
               : (p[0] & 0xe0) == 0xc0 ? 2
               : (p[0] & 0xf0) == 0xe0 ? 3
               : (p[0] & 0xf8) == 0xf0 ? 4
                                       : 0;
    uint32_t cp, min[] = {0, 0, 0x80, 0x800, 0x10000};

    if (!n || (size_t)(end - p) < n)
        return 0;
    cp = n == 1 ? p[0] : p[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    return cp < min[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ? 0 : n;
}

static void utf8_put(StrBuf *sb, uint32_t cp)
{
    char b[4];

    if (cp < 0x80) {
        strbuf_putc(sb, (char)cp);
    } else if (cp < 0x800) {
        b[0] = (char)(0xc0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3f));
        strbuf_append(sb, b, 2);
    } else if (cp < 0x10000) {
        b[0] = (char)(0xe0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        strbuf_append(sb, b, 3);
    } else {
        b[0] = (char)(0xf0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), b[3] = (char)(0x80 | (cp & 0x3f));
        strbuf_append(sb, b, 4);
    }
}

/* A comment runs to the end of the line; control characters other than tab are refused. */
static int skip_comment(Parser *ps)
{
    if (peek(ps, 0) != '#')
        return 0;
    while (!at_eof(ps) && *ps->p != '\n') {
        unsigned char c = (unsigned char)*ps->p;
        size_t n;
        if (c == '\r' && peek(ps, 1) == '\n')
            break;
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return fail(ps, "control character 0x%02x in a comment", c);
        if (!(n = utf8_len((const unsigned char *)ps->p, (const unsigned char *)ps->end)))
            return fail(ps, "invalid UTF-8 in a comment");
        ps->p += n;
    }
    return 0;
}

/* Whitespace, newlines and comments (inside arrays). */
static int skip_blank(Parser *ps)
{
    for (;;) {
        skip_ws(ps);
        if (skip_comment(ps) < 0)
            return -EINVAL;
        if (!take_newline(ps))
            return 0;
    }
}

/* After a statement: optional comment, then a newline or the end. */
static int end_of_line(Parser *ps)
{
    skip_ws(ps);
    if (skip_comment(ps) < 0)
        return -EINVAL;
    if (at_eof(ps) || take_newline(ps))
        return 0;
    return fail(ps, "expected the end of the line, found '%c'", *ps->p);
}

static int hex_escape(Parser *ps, int digits, StrBuf *sb)
{
    const char *backslash = ps->p - 2;
    uint32_t cp = 0;

    for (int i = 0; i < digits; i++) {
        int c = peek(ps, (size_t)i);
        int v = hex_digit(c);
        if (v < 0) {
            ps->p = backslash;
            return fail(ps, "\\%c escape needs %d hex digits", digits == 4 ? 'u' : 'U', digits);
        }
        cp = cp << 4 | (uint32_t)v;
    }
    ps->p = backslash;
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return fail(ps, "\\u escape names no Unicode scalar value");
    if (cp == 0)
        return fail(ps, "NUL characters are not allowed in strings");
    ps->p += 2;
    ps->p += digits;
    utf8_put(sb, cp);
    return 0;
}

/* One escape after a backslash (ps->p is past the backslash). */
static int escape(Parser *ps, StrBuf *sb, bool multiline)
{
    static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
    int c = peek(ps, 0);
    const char *hit = c > 0 ? strchr(from, c) : NULL;

    if (hit) {
        strbuf_putc(sb, to[hit - from]);
        ps->p++;
        return 0;
    }
    if (c == 'u' || c == 'U') {
        ps->p++;
        return hex_escape(ps, c == 'u' ? 4 : 8, sb);
    }
    if (multiline) {
        /* A line-ending backslash eats the newline and all whitespace after it. */
        const char *save = ps->p;
        skip_ws(ps);
        if (take_newline(ps)) {
            for (;;) {
                if (!at_eof(ps) && (*ps->p == ' ' || *ps->p == '\t'))
                    ps->p++;
                else if (!take_newline(ps))
                    break;
            }
            return 0;
        }
        ps->p = save;
    }
    ps->p--; /* at the backslash */
    return fail(ps, "unknown escape \\%c", c > 0x20 && c < 0x7f ? c : '?');
}

/*
 * A string of any of the four kinds; ps->p is at the opening quote. Multi-line strings drop a
 * newline right after the opening delimiter and may end with up to two extra quotes.
 */
static int parse_string(Parser *ps, char **outp)
{
    char q = *ps->p;
    bool basic = q == '"', multi = looking_at(ps, basic ? "\"\"\"" : "'''");
    StrBuf sb = STRBUF_INIT;

    ps->p += multi ? 3 : 1;
    if (multi)
        take_newline(ps);
    for (;;) {
        if (at_eof(ps)) {
            strbuf_deinit(&sb);
            return fail(ps, "unterminated string");
        }
        unsigned char c = (unsigned char)*ps->p;
        if (c == (unsigned char)q && (!multi || (peek(ps, 1) == q && peek(ps, 2) == q))) {
            size_t extra = 0;
            if (multi)
                while (extra < 2 && peek(ps, 3 + extra) == q)
                    extra++;
            strbuf_append(&sb, ps->p, extra);
            ps->p += multi ? 3 + extra : 1;
            break;
        }
        if (multi && take_newline(ps)) {
            strbuf_putc(&sb, '\n');
            continue;
        }
        if (basic && c == '\\') {
            ps->p++;
            if (escape(ps, &sb, multi) < 0) {
                strbuf_deinit(&sb);
                return -EINVAL;
            }
            continue;
        }
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            strbuf_deinit(&sb);
            return fail(ps, c == '\n' || c == '\r' ? "newline in a single-line string"
                                                   : "control character in a string");
        }
        size_t n = utf8_len((const unsigned char *)ps->p, (const unsigned char *)ps->end);
        if (!n) {
            strbuf_deinit(&sb);
            return fail(ps, "invalid UTF-8 in a string");
        }
        strbuf_append(&sb, ps->p, n);
        ps->p += n;
    }
    *outp = strbuf_detach(&sb, NULL);
    return 0;
}

static bool is_bare(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* A key, possibly dotted: a.b."c d".'e'. */
static int parse_key(Parser *ps, Key *k)
{
    for (;;) {
        char *part = NULL;
        skip_ws(ps);
        if (peek(ps, 0) == '"' || peek(ps, 0) == '\'') {
            if (looking_at(ps, "\"\"\"") || looking_at(ps, "'''"))
                return fail(ps, "a key cannot be a multi-line string");
            if (parse_string(ps, &part) < 0)
                return -EINVAL;
        } else {
            const char *start = ps->p;
            while (!at_eof(ps) && is_bare(*ps->p))
                ps->p++;
            if (ps->p == start)
                return at_eof(ps) || *ps->p == '\n' || *ps->p == '\r'
                           ? fail(ps, "expected a key")
                           : fail(ps, "unexpected '%c' where a key should be", *ps->p);
            part = xstrndup(start, (size_t)(ps->p - start));
        }
        if (k->n >= TOML_MAX_DEPTH) {
            free(part);
            return fail(ps, "a key of more than %d parts", TOML_MAX_DEPTH); /* each is a level */
        }
        k->part = xrealloc(k->part, (k->n + 1) * sizeof(char *));
        k->part[k->n++] = part;
        skip_ws(ps);
        if (peek(ps, 0) != '.')
            return 0;
        ps->p++;
    }
}

static int parse_value(Parser *ps, yajl_val *outp);

static int parse_array(Parser *ps, yajl_val *outp)
{
    yajl_val arr = json_array_new();

    ps->p++; /* [ */
    for (;;) {
        yajl_val v;
        if (skip_blank(ps) < 0)
            goto fail;
        if (peek(ps, 0) == ']')
            break;
        if (parse_value(ps, &v) < 0)
            goto fail;
        json_array_push(arr, v);
        if (skip_blank(ps) < 0)
            goto fail;
        if (peek(ps, 0) == ',') {
            ps->p++;
            continue;
        }
        if (peek(ps, 0) != ']') {
            fail(ps, "expected ',' or ']' in an array");
            goto fail;
        }
        break;
    }
    ps->p++;
    ptrs_add(&ps->frozen, arr);
    *outp = arr;
    return 0;
fail:
    json_free(arr);
    return -EINVAL;
}

/* One more value or table made: refused past TOML_MAX_VALUES. */
static int count_value(Parser *ps)
{
    if (++ps->n_values > TOML_MAX_VALUES)
        return fail(ps, "more than %d values and tables; no agent writes such a file",
                    TOML_MAX_VALUES);
    return 0;
}

/* Room for one more key in table t: refused past TOML_MAX_KEYS. */
static int room_for_key(Parser *ps, yajl_val t)
{
    if (YAJL_IS_OBJECT(t) && t->u.object.len >= TOML_MAX_KEYS)
        return fail(ps, "more than %d keys in one table; no agent writes such a file",
                    TOML_MAX_KEYS);
    return 0;
}

/* Walk (creating) the tables of k->part[0 .. n-2] under t for a key/value line. */
static int descend(Parser *ps, yajl_val t, const Key *k, yajl_val *tablep)
{
    for (size_t i = 0; i + 1 < k->n; i++) {
        yajl_val next = json_get(t, k->part[i]);
        if (!next) {
            if (count_value(ps) < 0 || room_for_key(ps, t) < 0)
                return -EINVAL;
            next = json_object_new();
            json_object_set(t, k->part[i], next);
        } else if (!YAJL_IS_OBJECT(next) || ptrs_has(&ps->frozen, next) ||
                   ptrs_has(&ps->defined, next)) {
            return fail(ps, "\"%s\" is already defined and cannot be extended here", k->part[i]);
        }
        t = next;
    }
    *tablep = t;
    return 0;
}

/* key = value into table t. */
static int parse_keyval(Parser *ps, yajl_val t)
{
    Key k = {0};
    yajl_val v = NULL, dst = NULL;
    const char *key_start = ps->p;
    int r;

    if ((r = parse_key(ps, &k)) < 0)
        goto out;
    if (peek(ps, 0) != '=') {
        r = fail(ps, "expected '=' after the key \"%s\"", k.part[k.n - 1]);
        goto out;
    }
    ps->p++;
    skip_ws(ps);
    const char *value_start = ps->p;
    ps->p = key_start; /* a clash is reported where the key starts */
    if ((r = descend(ps, t, &k, &dst)) < 0)
        goto out;
    if (json_get(dst, k.part[k.n - 1])) {
        r = fail(ps, "duplicate key \"%s\"", k.part[k.n - 1]);
        goto out;
    }
    if ((r = room_for_key(ps, dst)) < 0)
        goto out;
    ps->p = value_start;
    if ((r = parse_value(ps, &v)) < 0)
        goto out;
    json_object_set(dst, k.part[k.n - 1], v);
out:
    key_deinit(&k);
    return r;
}

static int parse_inline_table(Parser *ps, yajl_val *outp)
{
    yajl_val t = json_object_new();

    /* TOML 1.1 (as Codex parses it): newlines, comments and a trailing comma are allowed. */
    ps->p++; /* { */
    if (skip_blank(ps) < 0)
        goto fail;
    if (peek(ps, 0) == '}') {
        ps->p++;
        goto done;
    }
    for (;;) {
        if (parse_keyval(ps, t) < 0 || skip_blank(ps) < 0)
            goto fail;
        if (peek(ps, 0) == ',') {
            ps->p++;
            if (skip_blank(ps) < 0)
                goto fail;
            if (peek(ps, 0) != '}')
                continue;
        }
        if (peek(ps, 0) == '}') {
            ps->p++;
            break;
        }
        fail(ps, "expected ',' or '}' in an inline table");
        goto fail;
    }
done:
    ptrs_add(&ps->frozen, t);
    *outp = t;
    return 0;
fail:
    json_free(t);
    return -EINVAL;
}

/* Digits with single underscores between them, in the given base; copied into sb. */
static int take_digits(Parser *ps, const char *tok, size_t *ip, size_t n, int base, StrBuf *sb)
{
    size_t start = *ip;

    for (; *ip < n; (*ip)++) {
        char c = tok[*ip];
        bool digit =
            base == 16 ? (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
                       : c >= '0' && c < '0' + base;
        if (digit) {
            strbuf_putc(sb, c);
            continue;
        }
        if (c != '_')
            break;
        if (*ip == start || *ip + 1 >= n || tok[*ip + 1] == '_' || tok[*ip - 1] == '_')
            return fail(ps, "misplaced '_' in a number");
    }
    if (*ip == start || tok[*ip - 1] == '_')
        return fail(ps, "expected digits");
    return 0;
}

static int number_prefixed(Parser *ps, const char *tok, size_t n, yajl_val *outp)
{
    int base = tok[1] == 'x' ? 16 : tok[1] == 'o' ? 8 : 2;
    size_t i = 2;
    StrBuf sb = STRBUF_INIT;
    uint64_t v = 0;
    int r = take_digits(ps, tok, &i, n, base, &sb);

    if (r == 0 && i != n)
        r = fail(ps, "invalid number \"%.*s\"", (int)n, tok);
    for (size_t j = 0; r == 0 && j < sb.len; j++) {
        char c = sb.data[j];
        unsigned d = c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
        if (v > ((uint64_t)INT64_MAX - d) / (unsigned)base)
            r = fail(ps, "integer \"%.*s\" is out of range", (int)n, tok);
        v = v * (unsigned)base + d;
    }
    strbuf_deinit(&sb);
    if (r == 0)
        *outp = json_int_new((int64_t)v);
    return r;
}

/* Decimal integer or float: [+-] int [. digits] [e [+-] digits]. */
static int number_decimal(Parser *ps, const char *tok, size_t n, yajl_val *outp)
{
    StrBuf sb = STRBUF_INIT;
    size_t i = 0;
    bool is_float = false;
    int r = 0;

    if (tok[0] == '+' || tok[0] == '-') {
        if (tok[0] == '-')
            strbuf_putc(&sb, '-');
        i++;
    }
    size_t int_start = i;
    if (i >= n || tok[i] < '0' || tok[i] > '9') {
        r = fail(ps, "invalid value \"%.*s\"", (int)n, tok);
        goto out;
    }
    if ((r = take_digits(ps, tok, &i, n, 10, &sb)) < 0)
        goto out;
    if (tok[int_start] == '0' && i - int_start > 1) {
        r = fail(ps, "leading zeros are not allowed in \"%.*s\"", (int)n, tok);
        goto out;
    }
    if (i < n && tok[i] == '.') {
        is_float = true;
        strbuf_putc(&sb, tok[i++]);
        if ((r = take_digits(ps, tok, &i, n, 10, &sb)) < 0)
            goto out;
    }
    if (i < n && (tok[i] == 'e' || tok[i] == 'E')) {
        is_float = true;
        strbuf_putc(&sb, tok[i++]);
        if (i < n && (tok[i] == '+' || tok[i] == '-'))
            strbuf_putc(&sb, tok[i++]);
        if ((r = take_digits(ps, tok, &i, n, 10, &sb)) < 0)
            goto out;
    }
    if (i != n) {
        r = fail(ps, "invalid value \"%.*s\"", (int)n, tok);
        goto out;
    }
    errno = 0;
    if (is_float) {
        double d = strtod(sb.data, NULL);
        if (!isfinite(d))
            r = fail(ps, "float \"%.*s\" is out of range", (int)n, tok);
        else
            *outp = json_double_new(d);
    } else {
        long long v = strtoll(sb.data, NULL, 10);
        if (errno == ERANGE)
            r = fail(ps, "integer \"%.*s\" is out of range", (int)n, tok);
        else
            *outp = json_int_new(v);
    }
out:
    strbuf_deinit(&sb);
    return r;
}

static bool take_2digits(const char **sp, const char *end)
{
    const char *s = *sp;

    if (end - s < 2 || !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1]))
        return false;
    *sp = s + 2;
    return true;
}

/* HH:MM, then :SS and .fraction if present (TOML 1.1 makes the seconds optional). */
static bool take_time(const char **sp, const char *end)
{
    const char *s = *sp;

    if (!take_2digits(&s, end) || s == end || *s++ != ':' || !take_2digits(&s, end))
        return false;
    if (s < end && *s == ':') {
        s++;
        if (!take_2digits(&s, end))
            return false;
        if (s < end && *s == '.') {
            const char *f = ++s;
            while (s < end && isdigit((unsigned char)*s))
                s++;
            if (s == f)
                return false;
        }
    }
    *sp = s;
    return true;
}

/* Whether tok is a TOML date, time, local or offset date-time (RFC 3339 shapes). */
static bool is_datetime(const char *tok, size_t n)
{
    const char *s = tok, *end = tok + n;
    bool date = n >= 10 && tok[4] == '-';

    if (date) {
        if (!take_2digits(&s, end) || !take_2digits(&s, end) || *s++ != '-' ||
            !take_2digits(&s, end) || s == end || *s++ != '-' || !take_2digits(&s, end))
            return false;
        if (s == end)
            return true;
        if (*s != 'T' && *s != 't' && *s != ' ')
            return false;
        s++;
    }
    if (!take_time(&s, end))
        return false;
    if (date && s < end && (*s == 'Z' || *s == 'z'))
        s++;
    else if (date && s < end && (*s == '+' || *s == '-')) {
        s++;
        if (!take_2digits(&s, end) || s == end || *s++ != ':' || !take_2digits(&s, end))
            return false;
    }
    return s == end;
}

/*
 * A date or time is accepted and kept as its text: no field mcpd reads is a date, and Codex
 * users may have them elsewhere in config.toml. "1979-05-27 07:32:00" (a space between)
 * spans what the scalar scan sees as two tokens.
 */
static int parse_datetime(Parser *ps, const char *tok, size_t n, yajl_val *outp)
{
    if (n == 10 && ps->end - (tok + n) >= 3 && tok[n] == ' ' &&
        isdigit((unsigned char)tok[n + 1]) && isdigit((unsigned char)tok[n + 2])) {
        size_t m = n + 1;
        while (tok + m < ps->end &&
               (is_bare(tok[m]) || tok[m] == '+' || tok[m] == '.' || tok[m] == ':'))
            m++;
        if (is_datetime(tok, m))
            n = m;
    }
    if (!is_datetime(tok, n))
        return fail(ps, "invalid date or time \"%.*s\"", (int)n, tok);
    *outp = json_string_newn(tok, n);
    ps->p += n;
    return 0;
}

/* Booleans, numbers, dates and times (as text), and what JSON cannot hold (inf, nan). */
static int parse_scalar(Parser *ps, yajl_val *outp)
{
    const char *tok = ps->p;
    size_t n = 0;

    while (tok + n < ps->end &&
           (is_bare(tok[n]) || tok[n] == '+' || tok[n] == '.' || tok[n] == ':'))
        n++;
    if (n == 0)
        return at_eof(ps) || *tok == '\n' || *tok == '\r'
                   ? fail(ps, "expected a value")
                   : fail(ps, "unexpected '%c' where a value should be", *tok);
    if ((n == 4 && memcmp(tok, "true", 4) == 0) || (n == 5 && memcmp(tok, "false", 5) == 0)) {
        *outp = json_bool_new(n == 4);
        ps->p += n;
        return 0;
    }
    if (memchr(tok, ':', n) || (n >= 5 && tok[4] == '-' && tok[0] >= '0' && tok[0] <= '9'))
        return parse_datetime(ps, tok, n, outp);
    size_t sign = tok[0] == '+' || tok[0] == '-';
    if (n == sign + 3 && (memcmp(tok + sign, "inf", 3) == 0 || memcmp(tok + sign, "nan", 3) == 0))
        return fail(ps, "inf and nan are not supported");
    int r = n > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'o' || tok[1] == 'b')
                ? number_prefixed(ps, tok, n, outp)
                : number_decimal(ps, tok, n, outp);
    if (r == 0)
        ps->p += n;
    return r;
}

static int parse_value(Parser *ps, yajl_val *outp)
{
    int c = peek(ps, 0), r;
    char *s;

    if ((r = count_value(ps)) < 0)
        return r;
    if (c == '"' || c == '\'') {
        if ((r = parse_string(ps, &s)) < 0)
            return r;
        *outp = json_string_new(s);
        free(s);
        return 0;
    }
    if (c == '[' || c == '{') {
        if (ps->depth >= TOML_MAX_DEPTH)
            return fail(ps, "nested deeper than %d levels", TOML_MAX_DEPTH);
        ps->depth++;
        r = c == '[' ? parse_array(ps, outp) : parse_inline_table(ps, outp);
        ps->depth--;
        return r;
    }
    return parse_scalar(ps, outp);
}

/* Open [a.b] or [[a.b]]: make it the current table. */
static int open_table(Parser *ps, const Key *k, bool array)
{
    yajl_val t = ps->root, next;

    for (size_t i = 0; i < k->n; i++) {
        bool last = i + 1 == k->n;
        next = json_get(t, k->part[i]);
        if (!next || (last && array)) {
            int r = count_value(ps);
            if (r == 0 && !next)
                r = room_for_key(ps, t);
            if (r < 0)
                return r;
        }
        if (last && array) {
            if (!next) {
                next = json_array_new();
                json_object_set(t, k->part[i], next);
                ptrs_add(&ps->aot, next);
            } else if (!ptrs_has(&ps->aot, next)) {
                return fail(ps, "\"%s\" is not an array of tables", k->part[i]);
            }
            yajl_val elem = json_object_new();
            json_array_push(next, elem);
            ptrs_add(&ps->defined, elem);
            ps->cur = elem;
            return 0;
        }
        if (!next) {
            next = json_object_new();
            json_object_set(t, k->part[i], next);
        } else if (YAJL_IS_ARRAY(next) && ptrs_has(&ps->aot, next)) {
            next = next->u.array.values[next->u.array.len - 1];
        } else if (!YAJL_IS_OBJECT(next) || ptrs_has(&ps->frozen, next)) {
            return fail(ps, "\"%s\" is already defined as a value, not a table", k->part[i]);
        } else if (last && ptrs_has(&ps->defined, next)) {
            return fail(ps, "table [%s] is defined twice", k->part[i]);
        }
        t = next;
    }
    ptrs_add(&ps->defined, t);
    ps->cur = t;
    return 0;
}

static int parse_header(Parser *ps)
{
    bool array = looking_at(ps, "[[");
    Key k = {0};
    int r;

    ps->p += array ? 2 : 1;
    const char *key_start = ps->p;
    if ((r = parse_key(ps, &k)) < 0)
        goto out;
    if (!looking_at(ps, array ? "]]" : "]")) {
        r = fail(ps, "expected '%s' to close the table header", array ? "]]" : "]");
        goto out;
    }
    const char *after = ps->p + (array ? 2 : 1);
    ps->p = key_start; /* a clash is reported where the name starts */
    if ((r = open_table(ps, &k, array)) == 0)
        ps->p = after;
out:
    key_deinit(&k);
    return r;
}

static int parse_document(Parser *ps)
{
    while (!at_eof(ps)) {
        skip_ws(ps);
        if (skip_comment(ps) < 0)
            return -EINVAL;
        if (at_eof(ps) || take_newline(ps))
            continue;
        if (*ps->p == '\r')
            return fail(ps, "a carriage return must be followed by a newline");
        if ((*ps->p == '[' ? parse_header(ps) : parse_keyval(ps, ps->cur)) < 0)
            return -EINVAL;
        if (end_of_line(ps) < 0)
            return -EINVAL;
    }
    return 0;
}

yajl_val toml_parse(const char *text, size_t len, char **errp)
{
    Parser ps = {.p = text, .end = text + len, .line_start = text, .line = 1};
    const char *nul = memchr(text, '\0', len);
    int r;

    ps.root = ps.cur = json_object_new();
    if (nul) {
        ps.p = nul;
        for (const char *q = text; q < nul; q++)
            if (*q == '\n')
                ps.line++, ps.line_start = q + 1;
        r = fail(&ps, "NUL byte in the input");
    } else {
        r = parse_document(&ps);
    }
    idmap_deinit(&ps.defined.set);
    idmap_deinit(&ps.frozen.set);
    idmap_deinit(&ps.aot.set);
    if (r < 0) {
        json_free(ps.root);
        if (errp)
            *errp = ps.err;
        else
            free(ps.err);
        return NULL;
    }
    return ps.root;
}
