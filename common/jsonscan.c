// SPDX-License-Identifier: MIT
// jsonscan: a validating JSON scanner that allocates nothing and records where members are.

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/jsonscan.h"
#include "common/utf8.h"

/* What a byte is where a value or whitespace may stand; one table load picks the branch. */
enum {
    BC_BAD = 0, /* nothing a value starts with */
    BC_WS,      /* whitespace: ' ', '\t', '\n', '\r' (RFC 8259 section 2) */
    BC_STRING,  /* '"' */
    BC_NUMBER,  /* '-' or a digit */
    BC_OPEN,    /* '{' or '[' */
    BC_TRUE,    /* 't' */
    BC_FALSE,   /* 'f' */
    BC_NULL,    /* 'n' */
};

static const unsigned char byte_class[256] = {
    [' '] = BC_WS,     ['\t'] = BC_WS,    ['\n'] = BC_WS,    ['\r'] = BC_WS,    ['"'] = BC_STRING,
    ['-'] = BC_NUMBER, ['0'] = BC_NUMBER, ['1'] = BC_NUMBER, ['2'] = BC_NUMBER, ['3'] = BC_NUMBER,
    ['4'] = BC_NUMBER, ['5'] = BC_NUMBER, ['6'] = BC_NUMBER, ['7'] = BC_NUMBER, ['8'] = BC_NUMBER,
    ['9'] = BC_NUMBER, ['{'] = BC_OPEN,   ['['] = BC_OPEN,   ['t'] = BC_TRUE,   ['f'] = BC_FALSE,
    ['n'] = BC_NULL,
};

static inline const char *skip_ws(const char *s, const char *end)
{
    while (s < end && byte_class[(unsigned char)*s] == BC_WS)
        s++;
    return s;
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

#ifdef __SSE2__
/* Bytes tested at once where SSE2 is there (every x86-64): one 128-bit vector. */
#define SCAN_VECTOR 16

/*
 * special_mask() for the SCAN_VECTOR bytes at p, one bit per byte (bit i: p[i]). A signed
 * compare with 0x20 catches the control bytes and the bytes >= 0x80 (negative) at once.
 */
static inline uint64_t special_mask_vector(const unsigned char *p)
{
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i quote = _mm_cmpeq_epi8(x, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'));
    __m128i low = _mm_cmplt_epi8(x, _mm_set1_epi8(0x20));

    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), low));
}
#endif

/* The word at p, bytes in memory order from the least significant (memcpy: no alignment). */
static inline uint64_t load_word(const unsigned char *p)
{
    uint64_t w;

    memcpy(&w, p, SCAN_WORD);
    if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
        w = __builtin_bswap64(w);
    return w;
}

/*
 * Past the printable ASCII run at p that needs no check beyond its class: a word at a time
 * while a whole word lies before e. The last few bytes are tested in one word too when a whole
 * word lies in [lo, e) (lo: where the readable bytes begin): the word ending at e, its bytes
 * before p shifted out; the zero bytes shifted in count as control bytes, so the first special
 * byte found is at most e. Nothing outside [lo, e) is read. Returns the first special byte, or e.
 */
static inline __attribute__((always_inline)) const unsigned char *
plain_run(const unsigned char *p, const unsigned char *e, const unsigned char *lo)
{
    uint64_t m;

#ifdef __SSE2__
    while ((size_t)(e - p) >= SCAN_VECTOR) {
        m = special_mask_vector(p);
        if (m)
            return p + __builtin_ctzll(m);
        p += SCAN_VECTOR;
    }
#endif
    while ((size_t)(e - p) >= SCAN_WORD) {
        if ((m = special_mask(load_word(p))) != 0)
            return p + __builtin_ctzll(m) / 8;
        p += SCAN_WORD;
    }
    if (p < e && (size_t)(e - lo) >= SCAN_WORD) {
        m = special_mask(load_word(e - SCAN_WORD) >> (8 * (SCAN_WORD - (size_t)(e - p))));
        return p + __builtin_ctzll(m) / 8;
    }
    while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
        p++;
    return p;
}

/*
 * The rest of a string from its first special byte p (see plain_run()) on: escapes and UTF-8
 * sequences, checked byte by byte. Kept out of line so that scan_string(), which most strings
 * never leave, stays small enough to inline.
 */
static __attribute__((noinline)) const char *scan_string_rest(const unsigned char *p,
                                                              const unsigned char *e,
                                                              const unsigned char *lo,
                                                              bool *escapedp)
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
        p = plain_run(p, e, lo);
    }
}

/* A string starting at the opening quote; returns the byte after the closing one, or NULL. */
static inline __attribute__((always_inline)) const char *scan_string(const char *s, const char *end,
                                                                     bool *escapedp)
{
    const unsigned char *e = (const unsigned char *)end, *lo = (const unsigned char *)s;
    const unsigned char *p = plain_run(lo + 1, e, lo);

    if (p < e && *p == '"')
        return (const char *)p + 1;
    return scan_string_rest(p, e, lo, escapedp);
}

static inline bool is_digit(char c)
{
    return (unsigned char)(c - '0') < 10;
}

/* Past one or more digits at p, or NULL when there is none. */
static inline const char *scan_digits(const char *p, const char *end)
{
    if (p >= end || !is_digit(*p))
        return NULL;
    do
        p++;
    while (p < end && is_digit(*p));
    return p;
}

/* A number (RFC 8259 section 6) at s, which is '-' or a digit. */
static inline const char *scan_number(const char *s, const char *end)
{
    const char *p = s;

    if (*p == '-')
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

/* The literal word (its length n known where this inlines, so the compare is a load or two). */
static inline const char *scan_literal(const char *s, const char *end, const char *word, size_t n)
{
    return (size_t)(end - s) >= n && memcmp(s, word, n) == 0 ? s + n : NULL;
}

/* A scalar value at s, whose first byte has class bc; returns the byte after it, or NULL. */
static inline __attribute__((always_inline)) const char *scan_scalar(const char *s, const char *end,
                                                                     unsigned bc)
{
    switch (bc) {
    case BC_STRING:
        return scan_string(s, end, NULL);
    case BC_NUMBER:
        return scan_number(s, end);
    case BC_TRUE:
        return scan_literal(s, end, "true", 4);
    case BC_FALSE:
        return scan_literal(s, end, "false", 5);
    case BC_NULL:
        return scan_literal(s, end, "null", 4);
    default:
        return NULL;
    }
}

/*
 * The object or array at s (its '{' or '['), whose own depth is depth, and everything in it,
 * without recursion: the closing byte of each open container is kept in a stack bounded as
 * json_parse_full() bounds depth. *n_valuesp counts values as json_parse_full() does (every
 * value, containers too); the caller compares the total with JSON_MAX_VALUES at the end, which
 * refuses the same texts as a check per value since the count only grows. Whitespace is looked
 * for only where the expected byte is not found (compact JSON has none), and before a value by
 * the class dispatch itself.
 */
static __attribute__((noinline)) const char *scan_container(const char *s, const char *end,
                                                            int depth, size_t *n_valuesp)
{
    char closers[JSONSCAN_MAX_DEPTH], closer;
    int n_open = 0;
    size_t n_values = *n_valuesp;
    const char *p = s;
    unsigned bc;

    goto open;
value:
    if (p >= end)
        return NULL;
    bc = byte_class[(unsigned char)*p];
    if (bc == BC_OPEN)
        goto open;
    if (bc == BC_WS) {
        p = skip_ws(p + 1, end);
        goto value;
    }
    n_values++;
    if (!(p = scan_scalar(p, end, bc)))
        return NULL;
    goto next;
open:
    n_values++;
    if (depth + n_open >= JSONSCAN_MAX_DEPTH)
        return NULL;
    closer = (char)(*p + 2); /* '{' + 2 is '}', '[' + 2 is ']' */
    closers[n_open++] = closer;
    p = skip_ws(p + 1, end);
    if (p < end && *p == closer) {
        p++;
        goto close;
    }
    if (closer == ']')
        goto value;
key:
    if (p < end && *p != '"')
        p = skip_ws(p, end);
    if (p >= end || *p != '"' || !(p = scan_string(p, end, NULL)))
        return NULL;
    if (p >= end || *p != ':') {
        p = skip_ws(p, end);
        if (p >= end || *p != ':')
            return NULL;
    }
    p++;
    goto value;
close:
    if (--n_open == 0) {
        *n_valuesp = n_values;
        return p;
    }
    closer = closers[n_open - 1];
next:
    /* After a value: a ',' and the next member or element, or the close of its container. */
    if (p >= end)
        return NULL;
    if (*p == ',') {
        p++;
        if (closer == '}')
            goto key;
        goto value;
    }
    if (*p == closer) {
        p++;
        goto close;
    }
    if (byte_class[(unsigned char)*p] != BC_WS)
        return NULL;
    p = skip_ws(p + 1, end);
    goto next;
}

/* One value at s, whose depth is depth; counted in *n_valuesp (see scan_container()). */
static inline const char *scan_value(const char *s, const char *end, int depth, size_t *n_valuesp)
{
    unsigned bc;

    if (s >= end)
        return NULL;
    if ((bc = byte_class[(unsigned char)*s]) == BC_OPEN)
        return scan_container(s, end, depth, n_valuesp);
    ++*n_valuesp;
    return scan_scalar(s, end, bc);
}

bool jsonscan_valid(const char *s, size_t n)
{
    size_t n_values = 0;
    const char *end = s + n, *p = scan_value(skip_ws(s, end), end, 0, &n_values);

    return p && skip_ws(p, end) == end && n_values <= JSON_MAX_VALUES;
}

/*
 * Whether the NUL-terminated name is the key[0..klen): compared in one pass, without strlen(),
 * since most names differ from the key in their first byte. A key holds no NUL (scan_string()
 * refuses control bytes), so the loop stops at the name's end.
 */
static inline bool name_is(const char *name, const char *key, size_t klen)
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
    uint32_t plain;     /* bit i: out[i] is a string without escapes (i < JSONSCAN_PLAIN_MAX) */
    size_t nested;      /* the index of the name whose object value is looked into, or SIZE_MAX */
    struct Want *inner; /* what is wanted in it */
} Want;

/*
 * The index of the name that is key[0..klen), or n_names. Names are distinct, so the order of
 * the search does not change the answer: the name after the last one found (hint) is tried
 * first, since members usually come in the order the caller lists them.
 */
static inline size_t want_find(const Want *w, const char *key, size_t klen, size_t hint)
{
    if (hint < w->n_names && name_is(w->names[hint], key, klen))
        return hint;
    for (size_t i = 0; i < w->n_names; i++)
        if (i != hint && name_is(w->names[i], key, klen))
            return i;
    return w->n_names;
}

/*
 * The object at s (its '{'), whose own depth is depth: its members' values are scanned as
 * scan_container() does, the wanted ones recorded in w. Returns the byte after its '}', or NULL
 * when it is invalid, a wanted name appears twice or a name uses escapes.
 */
static const char *scan_members(const char *s, const char *end, int depth, size_t *n_valuesp,
                                Want *w)
{
    const char *p = skip_ws(s + 1, end);
    size_t hint = 0;

    for (size_t i = 0; i < w->n_names; i++)
        w->out[i] = (JsonSpan){NULL, 0};
    w->count = 0;
    w->plain = 0;
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
        if (escaped)
            return NULL; /* a name written with escapes could be any of ours: let a parser decide */
        size_t klen = (size_t)(p - key) - 2;
        if (p >= end || *p != ':') {
            p = skip_ws(p, end);
            if (p >= end || *p != ':')
                return NULL;
        }
        v = p + 1;
        if (v < end && byte_class[(unsigned char)*v] == BC_WS)
            v = skip_ws(v + 1, end);
        i = want_find(w, key + 1, klen, hint);
        hint = i + 1;
        if (i < w->n_names && w->out[i].p)
            return NULL; /* a duplicate: parsers disagree on which wins */
        if (i == w->nested && v < end && *v == '{') {
            /* Looked into in the same pass: counted as scan_value() counts the object. */
            ++*n_valuesp;
            if (!(p = scan_members(v, end, depth + 1, n_valuesp, w->inner)))
                return NULL;
        } else if (v < end && *v == '"') {
            /* A string: whether it had escapes is known here, so callers need not look again. */
            bool esc = false;
            ++*n_valuesp;
            if (!(p = scan_string(v, end, &esc)))
                return NULL;
            if (!esc && i < JSONSCAN_PLAIN_MAX)
                w->plain |= UINT32_C(1) << i;
        } else if (!(p = scan_value(v, end, depth + 1, n_valuesp))) {
            return NULL;
        }
        w->count++;
        if (i < w->n_names)
            w->out[i] = (JsonSpan){v, (size_t)(p - v)};
        if (p < end && byte_class[(unsigned char)*p] == BC_WS)
            p = skip_ws(p + 1, end);
        if (p < end && *p == ',') {
            p++;
            if (p < end && *p != '"')
                p = skip_ws(p, end);
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
    return p && skip_ws(p, end) == end && n_values <= JSON_MAX_VALUES ? w->count : -1;
}

int jsonscan_members(const char *s, size_t n, const char *const *names, size_t n_names,
                     JsonSpan *out)
{
    Want w = {names, n_names, out, 0, 0, SIZE_MAX, NULL};

    return scan_top(s, n, &w);
}

int jsonscan_members_nested(const char *s, size_t n, const char *const *names, size_t n_names,
                            JsonSpan *out, size_t nested, const char *const *inner_names,
                            size_t n_inner, JsonSpan *inner_out, int *inner_countp)
{
    JsonscanLevel top = {names, n_names, out, 0, 0};
    JsonscanLevel in = {inner_names, n_inner, inner_out, 0, 0};
    int r = jsonscan_object(s, n, &top, nested, &in);

    *inner_countp = in.count;
    return r;
}

int jsonscan_object(const char *s, size_t n, JsonscanLevel *top, size_t nested,
                    JsonscanLevel *inner)
{
    Want in = {NULL, 0, NULL, -1, 0, SIZE_MAX, NULL};
    Want w = {top->names, top->n_names, top->out, 0, 0, SIZE_MAX, &in};
    int r;

    if (inner) {
        in.names = inner->names;
        in.n_names = inner->n_names;
        in.out = inner->out;
        w.nested = nested < top->n_names ? nested : SIZE_MAX;
    }
    for (size_t i = 0; i < in.n_names; i++)
        in.out[i] = (JsonSpan){NULL, 0};
    r = scan_top(s, n, &w);
    top->count = r;
    top->plain = r >= 0 ? w.plain : 0;
    if (inner) {
        /* Not looked into (absent, or not an object): say so, whatever was left in in.count. */
        bool looked =
            r >= 0 && w.nested < w.n_names && w.out[w.nested].p && w.out[w.nested].p[0] == '{';
        inner->count = looked ? in.count : -1;
        inner->plain = looked ? in.plain : 0;
    }
    return r;
}

bool jsonscan_is_plain_string(JsonSpan v)
{
    bool escaped = false;

    return v.p && v.n >= 2 && v.p[0] == '"' && scan_string(v.p, v.p + v.n, &escaped) == v.p + v.n &&
           !escaped;
}

bool jsonscan_is_int(JsonSpan v, int64_t *outp)
{
    int64_t x = 0;
    size_t i = 0;
    bool neg = false;

    if (!v.p || !v.n || v.n > 18)
        return false;
    if (v.p[0] == '-') {
        neg = true;
        i = 1;
    }
    if (i >= v.n || (v.p[i] == '0' && v.n > i + 1))
        return false;
    for (; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return false;
        x = x * 10 + (v.p[i] - '0');
    }
    if (outp)
        *outp = neg ? -x : x;
    return true;
}

/* Past a string at s (the opening quote), leniently: any bytes, escapes skipped. */
static const char *skim_string(const char *s, const char *end)
{
    for (const char *p = s + 1; p < end; p++) {
        if (*p == '"')
            return p + 1;
        /* Skip the escaped byte; a backslash that ends the text ends the scan (p stays <= end). */
        if (*p == '\\' && ++p == end)
            return NULL;
    }
    return NULL;
}

/* Past one value at s without recursion or limits: brackets are counted, not matched. */
static const char *skim_value(const char *s, const char *end)
{
    size_t depth = 0;
    const char *p = s;

    while (p < end) {
        char c = *p;
        if (c == '"') {
            if (!(p = skim_string(p, end)))
                return NULL;
            if (depth == 0)
                return p;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return p; /* the end of the enclosing container: a scalar ended here */
            if (--depth == 0)
                return p + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
            return p;
        }
        p++;
    }
    return depth == 0 ? p : NULL;
}

bool jsonscan_skim_member(const char *s, size_t n, const char *name, JsonSpan *outp)
{
    const char *end = s + n, *p = skip_ws(s, end);
    size_t len = strlen(name);

    *outp = (JsonSpan){NULL, 0};
    if (p >= end || *p != '{')
        return false;
    p = skip_ws(p + 1, end);
    while (p < end && *p == '"') {
        const char *key = p, *v;
        if (!(p = skim_string(p, end)))
            return false;
        bool match = (size_t)(p - key) == len + 2 && memcmp(key + 1, name, len) == 0;
        p = skip_ws(p, end);
        if (p >= end || *p != ':')
            return false;
        v = skip_ws(p + 1, end);
        if (!(p = skim_value(v, end)) || p == v)
            return false;
        if (match) {
            *outp = (JsonSpan){v, (size_t)(p - v)};
            return true;
        }
        p = skip_ws(p, end);
        if (p >= end || *p != ',')
            return false;
        p = skip_ws(p + 1, end);
    }
    return false;
}
