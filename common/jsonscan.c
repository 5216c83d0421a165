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
 * special_mask() for the SCAN_VECTOR bytes at p, one bit per byte (bit i: p[i]). Flipping bit 1
 * maps '"' (0x22) to 0x20 and the control bytes onto themselves, so one signed compare with 0x20
 * tells the quote, the control bytes and the bytes >= 0x80 (negative) at once; the backslash
 * takes one more.
 */
static inline unsigned special_mask_vector(const unsigned char *p)
{
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i above = _mm_cmpgt_epi8(_mm_xor_si128(x, _mm_set1_epi8(0x02)), _mm_set1_epi8(0x20));
    __m128i backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'));

    /* The bytes that are neither, inverted: no compare result needs inverting on its own. */
    return (unsigned)_mm_movemask_epi8(_mm_andnot_si128(backslash, above)) ^ 0xffffu;
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
        unsigned v = special_mask_vector(p);
        if (v)
            return p + __builtin_ctz(v);
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

/*
 * A string starting at the opening quote s; returns the byte after the closing one, or NULL.
 * lo <= s: where the readable bytes begin (see plain_run()).
 */
static inline __attribute__((always_inline)) const char *scan_string(const char *s, const char *end,
                                                                     const char *lo, bool *escapedp)
{
    const unsigned char *e = (const unsigned char *)end;
    const unsigned char *p = plain_run((const unsigned char *)s + 1, e, (const unsigned char *)lo);

    if (p < e && *p == '"')
        return (const char *)p + 1;
    return scan_string_rest(p, e, (const unsigned char *)lo, escapedp);
}

/*
 * The last address at which a whole vector before end can be loaded in [lo, end), or 0 when
 * that span is shorter than one (an integer, as the address may lie before the buffer).
 */
static inline uintptr_t vector_last(const char *lo, const char *end)
{
#ifdef __SSE2__
    return (size_t)(end - lo) >= SCAN_VECTOR ? (uintptr_t)end - SCAN_VECTOR : 0;
#else
    (void)lo;
    (void)end;
    return 0;
#endif
}

/*
 * The byte after the string at s (its opening quote) when it is plain and its closing quote
 * lies in the SCAN_VECTOR bytes after s, as most strings of a message are (a name, a word, an
 * id); else NULL, and the general path must decide. last: vector_last() of the text, so nothing
 * outside it is read; near its end, the vector that ends there is tested, its bytes before
 * s + 1 shifted out.
 */
static inline __attribute__((always_inline)) const char *
string_quick(const char *s, const char *end, uintptr_t last)
{
#ifdef __SSE2__
    const char *p = s + 1;
    uint64_t m;

    if ((uintptr_t)p <= last)
        m = special_mask_vector((const unsigned char *)p);
    else if (last)
        m = special_mask_vector((const unsigned char *)last) >> (SCAN_VECTOR - (size_t)(end - p));
    else
        return NULL;
    if (m) {
        p += (size_t)__builtin_ctzll(m);
        if (*p == '"')
            return p + 1;
    }
#else
    (void)s;
    (void)end;
    (void)last;
#endif
    return NULL;
}

/* Where a string ends (p NULL: it is invalid) and whether it has escapes. */
typedef struct StringEnd {
    const char *p;
    bool escaped;
} StringEnd;

/* scan_string() out of line, for the strings string_quick() could not finish. */
static __attribute__((noinline)) StringEnd string_slow(const char *s, const char *end)
{
    bool escaped = false;
    const char *p = scan_string(s, end, s, &escaped);

    return (StringEnd){p, escaped};
}

/* A string at s (its opening quote) as scan_string(), the short ones without a call. */
static inline __attribute__((always_inline)) const char *
scan_string_short(const char *s, const char *end, uintptr_t last)
{
    const char *p = string_quick(s, end, last);

    return p ? p : string_slow(s, end).p;
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

/* A literal (true, false, null) at s, whose first byte has class bc, or NULL. */
static inline const char *scan_word(const char *s, const char *end, unsigned bc)
{
    switch (bc) {
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

/* scan_word() out of line, for a member's value: literals are rare in messages. */
static __attribute__((noinline)) const char *scan_word_cold(const char *s, const char *end)
{
    return scan_word(s, end, byte_class[(unsigned char)*s]);
}

/* A scalar value at s, whose first byte has class bc; returns the byte after it, or NULL. */
static inline const char *scan_scalar(const char *s, const char *end, unsigned bc)
{
    switch (bc) {
    case BC_STRING:
        return scan_string(s, end, s, NULL);
    case BC_NUMBER:
        return scan_number(s, end);
    default:
        return scan_word(s, end, bc);
    }
}

/* The whitespace bytes as bits of a word (bit c: byte c), for is_ws(). */
#define WS_BITS                                                                                    \
    ((UINT64_C(1) << ' ') | (UINT64_C(1) << '\t') | (UINT64_C(1) << '\n') | (UINT64_C(1) << '\r'))

/* Whether c is whitespace: one compare passes the bytes that follow a token, all above ' '. */
static inline bool is_ws(unsigned char c)
{
    return c <= ' ' && ((WS_BITS >> c) & 1);
}

/*
 * Inside a container whose text ends with a closing '}' or ']' (its last byte once trailing
 * whitespace is cut off; a valid object or array must end so), the functions named _in below
 * read the byte where a token or separator should be without comparing with the end: every token
 * but a container stops before that last byte, since the byte that ends or follows it (a quote,
 * a digit, ',', ':', '{', '[') is no closer, so the byte after it is still inside. Only the close
 * of a container can be the last byte, so only there is the end compared; strings and literals,
 * which read ahead, keep their bounds.
 */
static inline const char *skip_ws_in(const char *s)
{
    while (is_ws((unsigned char)*s))
        s++;
    return s;
}

/* skip_ws_in() out of line: compact JSON has no whitespace, so the scans rarely need it. */
static __attribute__((noinline, cold)) const char *skip_ws_cold(const char *s)
{
    return skip_ws_in(s);
}

/* Past the whitespace that starts at s, or NULL when there is none there. */
static __attribute__((noinline, cold)) const char *ws_run(const char *s)
{
    return is_ws((unsigned char)*s) ? skip_ws_in(s + 1) : NULL;
}

/* Past one or more digits at p (see skip_ws_in()), or NULL when there is none. */
static inline const char *scan_digits_in(const char *p)
{
    if (!is_digit(*p))
        return NULL;
    do
        p++;
    while (is_digit(*p));
    return p;
}

/* scan_number() inside a container that ends with a closer (see skip_ws_in()). */
static inline const char *scan_number_in(const char *s)
{
    const char *p = s;

    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (!(p = scan_digits_in(p)))
        return NULL;
    if (*p == '.' && !(p = scan_digits_in(p + 1)))
        return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        p = scan_digits_in(p);
    }
    return p;
}

/* A scalar other than a string at s inside a container that ends with a closer, class bc. */
static inline const char *scan_other_in(const char *s, const char *end, unsigned bc)
{
    return bc == BC_NUMBER ? scan_number_in(s) : scan_word(s, end, bc);
}

/* Where a scan stopped (p NULL: the text is refused) and the values it counted, in registers. */
typedef struct ScanEnd {
    const char *p;
    size_t n_values;
} ScanEnd;

/*
 * The object or array at s (its '{' or '['), whose own depth is depth, and everything in it,
 * without recursion: the closing byte of each open container is kept in a stack bounded as
 * json_parse_full() bounds depth. s[0..end) must end with a closer (see skip_ws_in()); last is
 * vector_last() of the text it lies in. Counts the values json_parse_full() counts (every value,
 * containers too); the caller compares the total with JSON_MAX_VALUES at the end, which refuses
 * the same texts as a check per value since the count only grows. Whitespace is looked for only
 * where the expected byte is not found (compact JSON has none). Returns the byte after the
 * container (end when it was the last byte), or NULL.
 */
static __attribute__((noinline)) ScanEnd scan_container(const char *s, const char *end,
                                                        uintptr_t last, int depth)
{
    char closers[JSONSCAN_MAX_DEPTH], *top = closers, *limit;
    size_t n_values = 0;
    const char *p = s;
    unsigned char c;
    unsigned bc;

    if (depth >= JSONSCAN_MAX_DEPTH)
        return (ScanEnd){NULL, 0};
    limit = closers + (JSONSCAN_MAX_DEPTH - depth); /* no container opens at JSONSCAN_MAX_DEPTH */
    c = (unsigned char)*p;
value:
    /* p is where a value should start, c its byte. */
    if (c == '"') {
        n_values++;
        if (!(p = scan_string_short(p, end, last)))
            return (ScanEnd){NULL, 0};
        goto next;
    }
    if (c == '{') {
        if (top == limit)
            return (ScanEnd){NULL, 0};
        n_values++;
        *top++ = '}';
        c = (unsigned char)*++p;
        if (c == '"')
            goto key;
        if (c <= ' ')
            c = (unsigned char)*(p = skip_ws_cold(p));
        if (c == '}') {
            p++;
            goto close;
        }
        goto key;
    }
    if (c == '[') {
        if (top == limit)
            return (ScanEnd){NULL, 0};
        n_values++;
        *top++ = ']';
        c = (unsigned char)*++p;
        if (c <= ' ')
            c = (unsigned char)*(p = skip_ws_cold(p));
        if (c == ']') {
            p++;
            goto close;
        }
        goto value;
    }
    bc = byte_class[c];
    if (bc == BC_WS) {
        c = (unsigned char)*(p = skip_ws_cold(p));
        goto value;
    }
    n_values++;
    if (!(p = scan_other_in(p, end, bc)))
        return (ScanEnd){NULL, 0};
next:
    /* After a value: a ',' and the next member or element, or the close of its container. */
    c = (unsigned char)*p;
    if (c == ',') {
        c = (unsigned char)*++p;
        if (top[-1] == ']')
            goto value;
        goto key;
    }
    if (c == (unsigned char)top[-1]) {
        p++;
        goto close;
    }
    if (!(p = ws_run(p)))
        return (ScanEnd){NULL, 0};
    goto next;
key:
    /* In an object, p where a member name should start, c its byte. */
    if (c != '"') {
        p = skip_ws_cold(p);
        if (*p != '"')
            return (ScanEnd){NULL, 0};
    }
    if (!(p = scan_string_short(p, end, last)))
        return (ScanEnd){NULL, 0};
    if (*p != ':') {
        p = skip_ws_cold(p);
        if (*p != ':')
            return (ScanEnd){NULL, 0};
    }
    c = (unsigned char)*++p;
    goto value;
close:
    if (--top == closers)
        return (ScanEnd){p, n_values};
    if (p == end)
        return (ScanEnd){NULL,
                         0}; /* the last byte closed an inner container: outer ones are open */
    goto next;
}

/* The end of s[0..end) with its trailing whitespace cut off (at least s). */
static inline const char *trim_ws(const char *s, const char *end)
{
    while (end > s && byte_class[(unsigned char)end[-1]] == BC_WS)
        end--;
    return end;
}

bool jsonscan_valid(const char *s, size_t n)
{
    const char *end = s + n, *p = skip_ws(s, end);
    unsigned bc;

    if (p >= end)
        return false;
    if ((bc = byte_class[(unsigned char)*p]) == BC_OPEN) {
        end = trim_ws(p, end);
        if (end[-1] != '}' && end[-1] != ']')
            return false;
        ScanEnd r = scan_container(p, end, vector_last(p, end), 0);
        return r.p == end && r.n_values <= JSON_MAX_VALUES;
    }
    p = scan_scalar(p, end, bc);
    return p && skip_ws(p, end) == end;
}

/*
 * Bytes of a key name_is() compares unrolled, the last ones of it: every name the callers want is
 * shorter (progressToken has 13); the bytes of a longer key before those go through a loop.
 */
#define NAME_STEP 16

/* One byte of an unrolled compare: byte n - k of name and key (n: the key's length). */
#define NAME_BYTE(k)                                                                               \
    case k:                                                                                        \
        if (a[n - (k)] != b[n - (k)])                                                              \
            return false;                                                                          \
        __attribute__((fallthrough))

/*
 * Whether the NUL-terminated name is the key[0..n), compared without strlen(): byte by byte from
 * the first, since a name may end anywhere, but unrolled by a jump on n (names are short) so that
 * each byte costs a load and a compare. A key holds no NUL (the string scan refuses control
 * bytes), so a byte of name is read only once the ones before it matched bytes that are not NUL:
 * never past the name's end.
 */
static inline bool name_is(const char *name, const char *key, size_t n)
{
    const unsigned char *a = (const unsigned char *)name, *b = (const unsigned char *)key;

    switch (n) {
    default:
        /* A long name: its bytes before the last NAME_STEP in a loop, from the first. */
        for (size_t i = 0; i + NAME_STEP < n; i++)
            if (a[i] != b[i])
                return false;
        __attribute__((fallthrough));
        NAME_BYTE(16);
        NAME_BYTE(15);
        NAME_BYTE(14);
        NAME_BYTE(13);
        NAME_BYTE(12);
        NAME_BYTE(11);
        NAME_BYTE(10);
        NAME_BYTE(9);
        NAME_BYTE(8);
        NAME_BYTE(7);
        NAME_BYTE(6);
        NAME_BYTE(5);
        NAME_BYTE(4);
        NAME_BYTE(3);
        NAME_BYTE(2);
        NAME_BYTE(1);
    case 0:
        break;
    }
    return a[n] == '\0';
}

/*
 * The index of the name that is key[0..klen), or n_names. Names are distinct, so the order of
 * the search does not change the answer: the name after the last one found (hint) is tried
 * first, since members usually come in the order the caller lists them.
 */
static inline size_t want_find(const char *const *names, size_t n_names, const char *key,
                               size_t klen, size_t hint)
{
    if (hint < n_names && name_is(names[hint], key, klen))
        return hint;
    for (size_t i = 0; i < n_names; i++)
        if (i != hint && name_is(names[i], key, klen))
            return i;
    return n_names;
}

/* The member whose object value is looked into, and what is wanted in it. */
typedef struct Nest {
    size_t index;        /* of names; SIZE_MAX: none */
    JsonscanLevel *what; /* NULL: none */
} Nest;

static ScanEnd scan_inner(const char *s, const char *end, JsonscanLevel *lv);

/*
 * The object at s (its '{'), whose own depth is depth, in a text s[..end) that ends with a closer
 * (see skip_ws_in()): its members' values are scanned as scan_container() does, the wanted ones
 * recorded in lv (out, count, plain); when nest is not NULL, the value of names[nest->index] is
 * looked into as nest->what wants when it is an object (its count is then set). Returns the byte
 * after its '}' and the values counted, or NULL when it is invalid, a wanted name appears twice
 * or a name uses escapes (lv's outputs then mean nothing). Inlined in its two uses (the top level
 * and the inner one), so that depth is a constant and the state is in registers; nest is read
 * only for an object value. The spans are cleared up front, so that a span already set is a
 * duplicate; a member nobody wants is recorded in a span of its own that nobody reads.
 */
static inline __attribute__((always_inline)) ScanEnd
scan_members(const char *s, const char *end, int depth, JsonscanLevel *lv, const Nest *nest)
{
    const char *const *names = lv->names;
    const size_t n_names = lv->n_names;
    JsonSpan *out = lv->out, other;
    const uintptr_t last = vector_last(s, end);
    const char *p = s + 1;
    size_t containers = 0, i = SIZE_MAX; /* containers: the values they hold beyond themselves */
    uint32_t plain = 0;
    int count = 0;
    unsigned char c;

    for (size_t k = 0; k < n_names; k++)
        out[k] = (JsonSpan){NULL, 0};
    if (depth >= JSONSCAN_MAX_DEPTH)
        return (ScanEnd){NULL, 0};
    if (*p != '"') {
        p = skip_ws_cold(p);
        if (*p == '}') {
            p++;
            goto done;
        }
        if (*p != '"')
            return (ScanEnd){NULL, 0};
    }
    for (;;) {
        /* p is at the quote that opens a member name. */
        const char *key = p + 1, *v;
        JsonSpan *o;

        if (!(p = string_quick(p, end, last))) {
            StringEnd r = string_slow(key - 1, end);
            if (!(p = r.p) || r.escaped)
                return (ScanEnd){NULL, 0}; /* a name with escapes could be any of ours: parse it */
        }
        size_t klen = (size_t)(p - key) - 1;
        if (*p != ':') {
            p = skip_ws_cold(p);
            if (*p != ':')
                return (ScanEnd){NULL, 0};
        }
        v = p + 1;
        i = want_find(names, n_names, key, klen, i + 1);
        if (i < n_names) {
            o = out + i;
            if (o->p)
                return (ScanEnd){NULL, 0}; /* a duplicate: parsers disagree on which wins */
        } else {
            o = &other;
        }
    value:
        c = (unsigned char)*v;
        if (c == '"') {
            /* Whether it had escapes is known here, so callers need not look again. */
            if (!(p = string_quick(v, end, last))) {
                StringEnd r = string_slow(v, end);
                if (!(p = r.p))
                    return (ScanEnd){NULL, 0};
                if (r.escaped)
                    goto scanned;
            }
            if (i < JSONSCAN_PLAIN_MAX)
                plain |= UINT32_C(1) << i;
        } else if (c == '{' || c == '[') {
            ScanEnd r;
            if (nest && c == '{' && i == nest->index)
                r = scan_inner(v, end, nest->what); /* looked into in the same pass */
            else
                r = scan_container(v, end, last, depth + 1);
            if (!(p = r.p) || p == end)
                return (ScanEnd){NULL, 0};
            containers += r.n_values - 1;
        } else if (is_digit((char)c) || c == '-') {
            if (!(p = scan_number_in(v)))
                return (ScanEnd){NULL, 0};
        } else if (c <= ' ') {
            if (!(v = ws_run(v)))
                return (ScanEnd){NULL, 0};
            goto value;
        } else if (!(p = scan_word_cold(v, end))) {
            return (ScanEnd){NULL, 0};
        }
    scanned:
        count++;
        *o = (JsonSpan){v, (size_t)(p - v)};
        /* After a value: a ',' and the next member, or the '}'; whitespace only when neither. */
        c = (unsigned char)*p;
        if (c != ',') {
            if (c <= ' ')
                c = (unsigned char)*(p = skip_ws_cold(p));
            if (c == '}') {
                p++;
                break;
            }
            if (c != ',')
                return (ScanEnd){NULL, 0};
        }
        if (*++p != '"') {
            p = skip_ws_cold(p);
            if (*p != '"')
                return (ScanEnd){NULL, 0};
        }
    }
done:
    lv->count = count;
    lv->plain = plain;
    /* The object itself, one value per member, and what containers held beyond themselves. */
    return (ScanEnd){p, 1 + (size_t)count + containers};
}

/* scan_members() of the inner level, at depth 1 (nothing looked into below it). */
static __attribute__((noinline)) ScanEnd scan_inner(const char *s, const char *end,
                                                    JsonscanLevel *lv)
{
    return scan_members(s, end, 1, lv, NULL);
}

/* Every span of lv absent, as after a text that is not one valid object. */
static void level_clear(JsonscanLevel *lv)
{
    for (size_t i = 0; i < lv->n_names; i++)
        lv->out[i] = (JsonSpan){NULL, 0};
    lv->count = -1;
    lv->plain = 0;
}

/*
 * The whole of s[0..n) is one object: its members as top wants them, and when nest is not NULL
 * those of the value of top->names[nest->index] as nest->what wants them. Returns top->count; on
 * -1 every output is absent. Inlined in each entry point, so that nest is known there.
 */
static inline __attribute__((always_inline)) int scan_top(const char *s, size_t n,
                                                          JsonscanLevel *top, const Nest *nest)
{
    const char *end = n && s[n - 1] == '}' ? s + n : trim_ws(s, s + n), *p;

    if (nest)
        nest->what->count = -1; /* until looked into */
    /* The scan relies on the last byte being a closer: an object's text must end with its '}'. */
    if (end > s && end[-1] == '}' && *(p = *s == '{' ? s : skip_ws_cold(s)) == '{') {
        ScanEnd r = scan_members(p, end, 0, top, nest);
        if (r.p == end && r.n_values <= JSON_MAX_VALUES) {
            if (nest && nest->what->count < 0)
                level_clear(nest->what); /* absent or no object: not looked into, not reported */
            return top->count;
        }
    }
    level_clear(top);
    if (nest)
        level_clear(nest->what);
    return -1;
}

int jsonscan_members(const char *s, size_t n, const char *const *names, size_t n_names,
                     JsonSpan *out)
{
    JsonscanLevel top = {names, n_names, out, 0, 0};

    return scan_top(s, n, &top, NULL);
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
    Nest nest = {nested < top->n_names ? nested : SIZE_MAX, inner};

    /* Two copies of the scan, so that neither tests inner on its way. */
    return inner ? scan_top(s, n, top, &nest) : scan_top(s, n, top, NULL);
}

bool jsonscan_is_plain_string(JsonSpan v)
{
    bool escaped = false;

    return v.p && v.n >= 2 && v.p[0] == '"' &&
           scan_string(v.p, v.p + v.n, v.p, &escaped) == v.p + v.n && !escaped;
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
