// SPDX-License-Identifier: MIT
// jsonscan-old: the scanner as it was before the iterative rewrite, kept for differential tests.

/*
 * Included (not linked) by tests/fuzz/fuzz-jsonscan.c and tests/unit/test-jsonscan-diff.c,
 * which check that common/jsonscan.c accepts and refuses exactly what this copy does and records
 * the same spans. Its public functions carry the prefix old_; nothing else may use it.
 */

#include <string.h>

#include "common/jsonscan.h"
#include "common/utf8.h"

static const char *skip_ws(const char *s, const char *end)
{
    /* Every whitespace byte is <= ' ': one test passes the usual byte that is none. */
    while (s < end && (unsigned char)*s <= ' ' &&
           (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
        s++;
    return s;
}

/*
 * Past whitespace up to a byte that should be c (':' or ','): with compact JSON it is the very
 * next byte, so that is tested before any whitespace is looked for.
 */
static inline const char *skip_ws_to(const char *s, const char *end, char c)
{
    return s < end && *s == c ? s : skip_ws(s, end);
}

/* Bytes tested at once by plain_run(): one 64-bit word. */
#define SCAN_WORD 8
/* A byte value repeated in every byte of a word, for the bit tricks of special_mask(). */
#define REPEAT(b) ((uint64_t)(b)*0x0101010101010101ULL)

/*
 * Bit 7 of each byte of w (bytes in memory order from the least significant) that is special in
 * a string: '"', '\\', a control byte (< 0x20) or a non-ASCII byte (>= 0x80, its own bit 7).
 * For a byte x < 0x80, x - 0x20 sets bit 7 exactly when x < 0x20, and (x ^ c) - 1 exactly when
 * x == c (x ^ c < 0x80 too); a byte >= 0x80 never borrows. A borrow taken by a special byte may
 * mark later bytes too, never earlier ones, so the lowest bit set marks the first special byte.
 */
static inline uint64_t special_mask(uint64_t w)
{
    uint64_t control = w - REPEAT(0x20);
    uint64_t quote = (w ^ REPEAT('"')) - REPEAT(1), backslash = (w ^ REPEAT('\\')) - REPEAT(1);

    return (w | control | quote | backslash) & REPEAT(0x80);
}

static bool is_plain(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/*
 * Past the printable ASCII run at p that needs no check beyond its class: a word at a time
 * while a whole word lies before e (memcpy loads: no alignment or aliasing assumption), then
 * bytewise, so nothing at or past e is read. Returns the first special byte, or e.
 */
static inline __attribute__((always_inline)) const unsigned char *plain_run(const unsigned char *p,
                                                                            const unsigned char *e)
{
    while ((size_t)(e - p) >= SCAN_WORD) {
        uint64_t w, m;
        memcpy(&w, p, SCAN_WORD);
        if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
            w = __builtin_bswap64(w);
        if ((m = special_mask(w)) != 0)
            return p + __builtin_ctzll(m) / 8;
        p += SCAN_WORD;
    }
    while (p < e && is_plain(*p))
        p++;
    return p;
}

/*
 * The rest of a string from its first special byte p (see plain_run()) on: escapes and UTF-8
 * sequences, checked byte by byte. Kept out of line so that scan_string(), which most strings
 * never leave, stays small enough to inline.
 */
static __attribute__((noinline)) const char *
scan_string_rest(const unsigned char *p, const unsigned char *e, bool *escapedp)
{
    for (;;) {
        if (p >= e)
            return NULL;
        unsigned char c = *p;
        if (c == '"') {
            return (const char *)p + 1;
        } else if (c == '\\') {
            if (escapedp)
                *escapedp = true;
            if (p + 1 >= e)
                return NULL;
            c = p[1];
            if (c == 'u') {
                /* Lone surrogates name no character: the tree parser repairs or refuses them. */
                size_t n = utf8_escape_len((const char *)p, (size_t)(e - p));
                if (!n)
                    return NULL;
                p += n;
            } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                       c == 'r' || c == 't') {
                p += 2;
            } else {
                return NULL;
            }
        } else if (c < 0x20) {
            return NULL;
        } else {
            /* plain_run() stops only at the bytes above, at e, or at a byte >= 0x80. */
            size_t n = utf8_seq_len(p, (size_t)(e - p));
            if (!n)
                return NULL;
            p += n;
        }
        p = plain_run(p, e);
    }
}

/* A string starting at the opening quote; returns the byte after the closing one, or NULL. */
static inline const char *scan_string(const char *s, const char *end, bool *escapedp)
{
    const unsigned char *e = (const unsigned char *)end;
    const unsigned char *p = plain_run((const unsigned char *)s + 1, e);

    if (p < e && *p == '"')
        return (const char *)p + 1;
    return scan_string_rest(p, e, escapedp);
}

static const char *scan_digits(const char *s, const char *end)
{
    const char *p = s;

    while (p < end && *p >= '0' && *p <= '9')
        p++;
    return p > s ? p : NULL;
}

static const char *scan_number(const char *s, const char *end)
{
    const char *p = s;

    if (p < end && *p == '-')
        p++;
    if (p < end && *p == '0')
        p++;
    else if (!(p = scan_digits(p, end)))
        return NULL;
    if (p < end && *p == '.' && !(p = scan_digits(p + 1, end)))
        return NULL;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (!(p = scan_digits(p, end)))
            return NULL;
    }
    return p;
}

static const char *scan_literal(const char *s, const char *end, const char *word)
{
    size_t n = strlen(word);

    return (size_t)(end - s) >= n && memcmp(s, word, n) == 0 ? s + n : NULL;
}

static const char *scan_value(const char *s, const char *end, int depth, size_t *n_valuesp);

static const char *scan_container(const char *s, const char *end, int depth, bool object,
                                  size_t *n_valuesp)
{
    const char close = object ? '}' : ']';
    const char *p = skip_ws(s + 1, end);

    if (depth >= JSONSCAN_MAX_DEPTH)
        return NULL;
    if (p < end && *p == close)
        return p + 1;
    for (;;) {
        if (object) {
            if (p >= end || *p != '"' || !(p = scan_string(p, end, NULL)))
                return NULL;
            p = skip_ws_to(p, end, ':');
            if (p >= end || *p != ':')
                return NULL;
            p = skip_ws(p + 1, end);
        }
        if (!(p = scan_value(p, end, depth + 1, n_valuesp)))
            return NULL;
        p = skip_ws_to(p, end, ',');
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        return p < end && *p == close ? p + 1 : NULL;
    }
}

/* One value; n_valuesp counts values as json_parse_full() does, so both refuse the same texts. */
static inline const char *scan_value(const char *s, const char *end, int depth, size_t *n_valuesp)
{
    if (s >= end || ++*n_valuesp > JSON_MAX_VALUES)
        return NULL;
    switch (*s) {
    case '{':
        return scan_container(s, end, depth, true, n_valuesp);
    case '[':
        return scan_container(s, end, depth, false, n_valuesp);
    case '"':
        return scan_string(s, end, NULL);
    case 't':
        return scan_literal(s, end, "true");
    case 'f':
        return scan_literal(s, end, "false");
    case 'n':
        return scan_literal(s, end, "null");
    default:
        return *s == '-' || (*s >= '0' && *s <= '9') ? scan_number(s, end) : NULL;
    }
}

static bool old_jsonscan_valid(const char *s, size_t n)
{
    size_t n_values = 0;
    const char *end = s + n, *p = scan_value(skip_ws(s, end), end, 0, &n_values);

    return p && skip_ws(p, end) == end;
}

/*
 * Whether the NUL-terminated name is the key[0..klen): compared in one pass, without strlen(),
 * since most names differ from the key in their first byte. A key holds no NUL (scan_string()
 * refuses control bytes), so the loop stops at the name's end.
 */
static bool name_is(const char *name, const char *key, size_t klen)
{
    size_t i = 0;

    while (i < klen && name[i] == key[i])
        i++;
    return i == klen && name[i] == '\0';
}

/* The members wanted at one level of an object, and what was found. */
typedef struct Want {
    const char *const *names;
    size_t n_names;
    JsonSpan *out;
    int count;          /* members of the object */
    size_t nested;      /* the index of the name whose object value is looked into, or SIZE_MAX */
    struct Want *inner; /* what is wanted in it */
} Want;

/*
 * The object at s (its '{'), whose own depth is depth: its members' values are scanned as
 * scan_container() does, the wanted ones recorded in w. Returns the byte after its '}', or NULL
 * when it is invalid, a wanted name appears twice or a name uses escapes.
 */
static const char *scan_members(const char *s, const char *end, int depth, size_t *n_valuesp,
                                Want *w)
{
    const char *p = skip_ws(s + 1, end);

    for (size_t i = 0; i < w->n_names; i++)
        w->out[i] = (JsonSpan){NULL, 0};
    w->count = 0;
    if (depth >= JSONSCAN_MAX_DEPTH)
        return NULL;
    if (p < end && *p == '}')
        return p + 1;
    for (;;) {
        bool escaped = false;
        const char *key = p, *v;
        size_t i;
        if (p >= end || *p != '"' || !(p = scan_string(p, end, &escaped)))
            return NULL;
        size_t klen = (size_t)(p - key) - 2;
        if (escaped)
            return NULL; /* a name written with escapes could be any of ours: let a parser decide */
        p = skip_ws_to(p, end, ':');
        if (p >= end || *p != ':')
            return NULL;
        v = skip_ws(p + 1, end);
        for (i = 0; i < w->n_names && !name_is(w->names[i], key + 1, klen); i++)
            ;
        if (i < w->n_names && w->out[i].p)
            return NULL; /* a duplicate: parsers disagree on which wins */
        if (i < w->n_names && i == w->nested && v < end && *v == '{') {
            /* Looked into in the same pass: counted as scan_value() counts the object. */
            if (++*n_valuesp > JSON_MAX_VALUES ||
                !(p = scan_members(v, end, depth + 1, n_valuesp, w->inner)))
                return NULL;
        } else if (!(p = scan_value(v, end, depth + 1, n_valuesp))) {
            return NULL;
        }
        w->count++;
        if (i < w->n_names)
            w->out[i] = (JsonSpan){v, (size_t)(p - v)};
        p = skip_ws_to(p, end, ',');
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        return p < end && *p == '}' ? p + 1 : NULL;
    }
}

/* The whole of s[0..n) is one object: its members as w wants them; the count or -1. */
static int scan_top(const char *s, size_t n, Want *w)
{
    const char *end = s + n, *p = skip_ws(s, end);
    size_t n_values = 1; /* the object itself */

    if (p >= end || *p != '{') {
        for (size_t i = 0; i < w->n_names; i++)
            w->out[i] = (JsonSpan){NULL, 0};
        return -1;
    }
    p = scan_members(p, end, 0, &n_values, w);
    return p && skip_ws(p, end) == end ? w->count : -1;
}

static int old_jsonscan_members(const char *s, size_t n, const char *const *names, size_t n_names,
                                JsonSpan *out)
{
    Want w = {names, n_names, out, 0, SIZE_MAX, NULL};

    return scan_top(s, n, &w);
}

static int old_jsonscan_members_nested(const char *s, size_t n, const char *const *names,
                                       size_t n_names, JsonSpan *out, size_t nested,
                                       const char *const *inner_names, size_t n_inner,
                                       JsonSpan *inner_out, int *inner_countp)
{
    Want in = {inner_names, n_inner, inner_out, -1, SIZE_MAX, NULL};
    Want w = {names, n_names, out, 0, nested < n_names ? nested : SIZE_MAX, &in};
    int r;

    for (size_t i = 0; i < n_inner; i++)
        inner_out[i] = (JsonSpan){NULL, 0};
    r = scan_top(s, n, &w);
    /* Not looked into (absent, or not an object): say so, whatever was left in in.count. */
    *inner_countp = r >= 0 && w.nested < n_names && out[w.nested].p && out[w.nested].p[0] == '{'
                        ? in.count
                        : -1;
    return r;
}

static bool old_jsonscan_is_plain_string(JsonSpan v)
{
    bool escaped = false;

    return v.p && v.n >= 2 && v.p[0] == '"' && scan_string(v.p, v.p + v.n, &escaped) == v.p + v.n &&
           !escaped;
}
