// SPDX-License-Identifier: MIT
// test-jsonscan: the allocation-free scanner agrees with yajl on what is JSON, and finds members.

#include <stdlib.h>

#include <yajl/yajl_tree.h>

#include "common/json.h"
#include "common/jsonscan.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/unit/test.h"

static bool yajl_accepts(const char *s, size_t n)
{
    char buf[4096], err[256];
    yajl_val v;

    if (n >= sizeof(buf) || memchr(s, '\0', n))
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    v = yajl_tree_parse(buf, err, sizeof(err));
    yajl_tree_free(v);
    return v != NULL;
}

static bool valid(const char *s)
{
    return jsonscan_valid(s, strlen(s));
}

static void test_valid(void)
{
    static const char *const good[] = {
        "{}",
        "[]",
        " {\"a\" : 1 } ",
        "0",
        "-0",
        "-12.5e+3",
        "1E9",
        "true",
        "false",
        "null",
        "\"\"",
        "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"",
        "\"\\u00e9\\uD83D\\uDE00\"",
        "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
        "[1,[2,[3,{\"x\":[]}]]]",
        "{\"a\":{\"b\":{\"c\":null}},\"d\":[true,false]}",
    };
    static const char *const bad[] = {
        "",
        "{",
        "}",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "[1,]",
        "[1 2]",
        "01",
        "1.",
        ".5",
        "1e",
        "-",
        "+1",
        "tru",
        "nul",
        "\"abc",
        "\"\\x\"",
        "\"\\u12\"",
        "\"a\tb\"",
        "{a:1}",
        "{'a':1}",
        "[1] [2]",
        "// c\n1",
        "\"\xc0\xaf\"" /* overlong */,
        "\"\xed\xa0\x80\"" /* surrogate */,
        "\"\xf4\x90\x80\x80\"" /* past U+10FFFF */,
        "\"\xe2\x82\"" /* cut short */,
        "\"\x80\"",
        "NaN",
        "Infinity",
        "{\"a\":1}}",
    };

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        CHECK(valid(good[i]));
        CHECK(yajl_accepts(good[i], strlen(good[i])));
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK(!valid(bad[i]));
    CHECK(!jsonscan_valid("1\0", 2));
}

static void test_depth(void)
{
    char deep[2 * JSONSCAN_MAX_DEPTH + 8];
    size_t n = 0;

    for (int i = 0; i < JSONSCAN_MAX_DEPTH + 1; i++)
        deep[n++] = '[';
    for (int i = 0; i < JSONSCAN_MAX_DEPTH + 1; i++)
        deep[n++] = ']';
    CHECK(!jsonscan_valid(deep, n)); /* too deep for the scanner: the caller parses instead */
    CHECK(jsonscan_valid(deep + 2, n - 4));
}

static void test_members(void)
{
    static const char *const names[] = {"id", "result", "error"};
    JsonSpan v[3];
    const char *s = "{\"jsonrpc\":\"2.0\", \"id\" : 42 ,\"result\":{\"content\":[{\"a\":\"}\"}]}}";

    CHECK_INTEQ(jsonscan_members(s, strlen(s), names, 3, v), 3);
    CHECK(jsonscan_span_eq(v[0], "42"));
    CHECK(jsonscan_span_eq(v[1], "{\"content\":[{\"a\":\"}\"}]}"));
    CHECK(!v[2].p);
    int64_t id = 0;
    CHECK(jsonscan_is_int(v[0], &id) && id == 42);

    /* A duplicate of a wanted member, or an escaped name, sends the caller to a real parser. */
    s = "{\"id\":1,\"id\":2}";
    CHECK_INTEQ(jsonscan_members(s, strlen(s), names, 3, v), -1);
    s = "{\"\\u0069d\":1}";
    CHECK_INTEQ(jsonscan_members(s, strlen(s), names, 3, v), -1);
    /* Duplicates of members nobody asked for are the parser's business too, but harmless. */
    s = "{\"x\":1,\"x\":2,\"id\":3}";
    CHECK_INTEQ(jsonscan_members(s, strlen(s), names, 3, v), 3);
    CHECK(jsonscan_span_eq(v[0], "3"));
    /* Not an object, trailing bytes, an invalid value anywhere. */
    CHECK_INTEQ(jsonscan_members("[1]", 3, names, 3, v), -1);
    CHECK_INTEQ(jsonscan_members("{} x", 4, names, 3, v), -1);
    s = "{\"id\":1,\"other\":[1,}";
    CHECK_INTEQ(jsonscan_members(s, strlen(s), names, 3, v), -1);
    CHECK_INTEQ(jsonscan_members(" { } ", 5, names, 3, v), 0);
}

static void test_scalars(void)
{
    int64_t x;

    CHECK(jsonscan_is_int((JsonSpan){"-17", 3}, &x) && x == -17);
    CHECK(!jsonscan_is_int((JsonSpan){"1.0", 3}, &x));
    CHECK(!jsonscan_is_int((JsonSpan){"1e3", 3}, &x));
    CHECK(!jsonscan_is_int((JsonSpan){"0123", 4}, &x));
    CHECK(!jsonscan_is_int((JsonSpan){"1234567890123456789", 19}, &x));
    CHECK(!jsonscan_is_int((JsonSpan){"\"1\"", 3}, &x));
    CHECK(jsonscan_is_plain_string((JsonSpan){"\"abc\"", 5}));
    CHECK(!jsonscan_is_plain_string((JsonSpan){"\"a\\nb\"", 6}));
    CHECK(!jsonscan_is_plain_string((JsonSpan){"12", 2}));
    CHECK(!jsonscan_is_plain_string((JsonSpan){NULL, 0}));
}

/* Random byte strings built from JSON-ish pieces: whatever the scanner accepts, yajl parses. */
static void test_agrees_with_yajl(void)
{
    static const char *const pieces[] = {
        "{",     "}",        "[",    "]",       ",",   ":",  "\"",   "\\",   "a",
        "1",     "-",        ".",    "e",       "0",   " ",  "true", "null", "\"k\"",
        "\"v\"", "\xc3\xa9", "\xff", "\\u0041", "\\n", "\t", "2",    "+",
    };
    unsigned seed = 12345;
    int accepted = 0;

    for (int round = 0; round < 200000; round++) {
        char buf[64];
        size_t n = 0;
        int k = 1 + (int)(rand_r(&seed) % 12);
        for (int i = 0; i < k; i++) {
            const char *p = pieces[rand_r(&seed) % (sizeof(pieces) / sizeof(pieces[0]))];
            size_t l = strlen(p);
            if (n + l >= sizeof(buf))
                break;
            memcpy(buf + n, p, l);
            n += l;
        }
        if (jsonscan_valid(buf, n)) {
            accepted++;
            if (!yajl_accepts(buf, n)) {
                fprintf(stderr, "scanner accepts what yajl rejects: %.*s\n", (int)n, buf);
                CHECK(false);
            }
        }
    }
    CHECK(accepted > 1000); /* the generator does produce JSON, so the comparison means something */
}

static void test_surrogate_escapes(void)
{
    CHECK(valid("\"\\ud83d\\ude00\""));
    CHECK(valid("\"\\\\ud800\"")); /* an escaped backslash, then text */
    CHECK(!valid("\"\\ud800\""));
    CHECK(!valid("\"\\udc00\""));
    CHECK(!valid("\"\\ud800\\u0041\""));
    CHECK(!valid("\"\\ud83d\\ude0\""));
    CHECK(!valid("\"\xc0\xaf\""));
    CHECK(!valid("\"\xed\xa0\x80\""));
    CHECK(!valid("\"\xf4\x90\x80\x80\""));
    JsonSpan v = {"\"a\\ud800\"", 10};
    CHECK(!jsonscan_is_plain_string(v));
}

static void test_values_limit(void)
{
    StrBuf sb = STRBUF_INIT;
    static const char *const names[] = {"a"};
    JsonSpan out[1];

    /* {"a":[0,...]}: the object, the array and its zeros, exactly JSON_MAX_VALUES. */
    strbuf_puts(&sb, "{\"a\":[0");
    for (size_t i = 4; i <= JSON_MAX_VALUES; i++)
        strbuf_append(&sb, ",0", 2);
    strbuf_puts(&sb, "]}");
    CHECK(jsonscan_valid(sb.data, sb.len));
    CHECK_INTEQ(jsonscan_members(sb.data, sb.len, names, 1, out), 1);
    strbuf_deinit(&sb);
    strbuf_puts(&sb, "{\"a\":[0");
    for (size_t i = 4; i <= JSON_MAX_VALUES + 1; i++)
        strbuf_append(&sb, ",0", 2);
    strbuf_puts(&sb, "]}");
    CHECK(!jsonscan_valid(sb.data, sb.len));
    CHECK_INTEQ(jsonscan_members(sb.data, sb.len, names, 1, out), -1);
    strbuf_deinit(&sb);
}

/* String contents, good and bad, for gen_value(). */
static const char *const string_pieces[] = {
    "a",         "\\ud800",          "\\udc00",  "\\ud83d\\ude00", "\xc0\xaf", "\xed\xa0\x80",
    "\\\\ud800", "\xf4\x90\x80\x80", "\xe2\x82", "\xe2\x82\xac",   "\\n",      "\xc3\xa9",
};

/* A random value, JSON in shape, with a run of nesting that may pass JSON_MAX_DEPTH. */
static void gen_value(StrBuf *sb, unsigned *seed, int budget)
{
    unsigned pick = rand_r(seed) % 6;

    if (budget <= 0 || pick == 0) {
        strbuf_putc(sb, '"');
        for (unsigned i = rand_r(seed) % 3; i > 0; i--)
            strbuf_puts(sb, string_pieces[rand_r(seed) % N_ELEMENTS(string_pieces)]);
        strbuf_putc(sb, '"');
    } else if (pick == 1) {
        strbuf_puts(sb, "-12");
    } else if (pick == 2) {
        int n = JSON_MAX_DEPTH - 8 + (int)(rand_r(seed) % 12);
        for (int i = 0; i < n; i++)
            strbuf_putc(sb, '[');
        gen_value(sb, seed, 0);
        for (int i = 0; i < n; i++)
            strbuf_putc(sb, ']');
    } else {
        bool object = pick == 3;
        strbuf_putc(sb, object ? '{' : '[');
        for (unsigned i = rand_r(seed) % 4; i > 0; i--) {
            if (object) {
                gen_value(sb, seed, 0);
                strbuf_putc(sb, ':');
            }
            gen_value(sb, seed, budget - 1);
            if (i > 1)
                strbuf_putc(sb, ',');
        }
        strbuf_putc(sb, object ? '}' : ']');
    }
}

/* Whatever the scanner accepts, the strict tree parser accepts too (limits and UTF-8 included). */
static void test_agrees_with_parser(void)
{
    unsigned seed = 777;
    int accepted = 0, refused = 0;

    for (int round = 0; round < 20000; round++) {
        StrBuf sb = STRBUF_INIT;
        yajl_val v = NULL;
        gen_value(&sb, &seed, 3);
        bool scan = jsonscan_valid(sb.data, sb.len);
        bool parse = json_parse_full(&v, sb.data, sb.len, JSON_UTF8_REFUSE, NULL) == 0;
        if (scan && !parse) {
            fprintf(stderr, "scanner accepts what the parser refuses: %.200s\n", sb.data);
            CHECK(false);
        }
        /* Both see the same limits and the same UTF-8 rules: here they agree both ways. */
        CHECK(scan == parse);
        accepted += scan;
        refused += !scan;
        json_free(v);
        strbuf_deinit(&sb);
    }
    CHECK(accepted > 1000 && refused > 1000);
    /* At the depth limit both agree too. */
    char deep[2 * JSON_MAX_DEPTH + 2];
    yajl_val v = NULL;
    memset(deep, '[', JSON_MAX_DEPTH);
    memset(deep + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
    CHECK(jsonscan_valid(deep, 2 * JSON_MAX_DEPTH));
    CHECK_INTEQ(json_parse_full(&v, deep, 2 * JSON_MAX_DEPTH, JSON_UTF8_REFUSE, NULL), 0);
    json_free(v);
}

static void test_skim_member(void)
{
    StrBuf sb = STRBUF_INIT;
    JsonSpan v;

    /* A million levels before the id: skimmed without recursion or limits. */
    strbuf_puts(&sb, "{\"params\":{\"a\":\"]}\\\"\",\"b\":");
    for (int i = 0; i < 1000000; i++)
        strbuf_putc(&sb, '[');
    for (int i = 0; i < 1000000; i++)
        strbuf_putc(&sb, ']');
    strbuf_puts(&sb, "}, \"id\" : \"x,1\" ,\"n\":-12}");
    CHECK(jsonscan_skim_member(sb.data, sb.len, "id", &v));
    CHECK(jsonscan_span_eq(v, "\"x,1\""));
    CHECK(jsonscan_skim_member(sb.data, sb.len, "n", &v));
    CHECK(jsonscan_span_eq(v, "-12"));
    CHECK(!jsonscan_skim_member(sb.data, sb.len, "a", &v)); /* not at the top level */
    CHECK(!jsonscan_skim_member("[1]", 3, "id", &v));
    CHECK(!jsonscan_skim_member("{\"id\":", 6, "id", &v));
    /* An escaped backslash before the closing quote; a text cut right after a backslash. */
    CHECK(jsonscan_skim_member("{\"a\":\"\\\\\",\"id\":7}", 17, "id", &v));
    CHECK(jsonscan_span_eq(v, "7"));
    CHECK(!jsonscan_skim_member("{\"a\":\"x\\\"}", 8, "id", &v));
    strbuf_deinit(&sb);
}

/* Longest run of plain bytes placed before (and after) a special byte: past two 8-byte words. */
#define ALIGN_MAX 17

/* What a string body (between the quotes) holds at its special byte, and whether it is valid. */
typedef struct SpecialCase {
    const char *bytes;
    size_t n;
    bool ok;
} SpecialCase;

/* The bytes next to the special ones in value ('!' and '#' around '"', '[' and ']' around '\\'). */
static const char plain_fill[] = " !#[]~\x7f"
                                 "a";

/*
 * jsonscan_valid() on a string "<k plain><special><j plain>" copied into a buffer of exactly its
 * size, so that any read past the end is an ASan report; the parser must agree on good ones.
 */
static void check_special_at(const SpecialCase *c, size_t k, size_t j, bool close)
{
    size_t n = 1 + k + c->n + j + (close ? 1 : 0);
    char *buf = xmalloc(n);
    size_t at = 0;

    buf[at++] = '"';
    for (size_t i = 0; i < k; i++)
        buf[at++] = plain_fill[i % (sizeof(plain_fill) - 1)];
    memcpy(buf + at, c->bytes, c->n);
    at += c->n;
    for (size_t i = 0; i < j; i++)
        buf[at++] = plain_fill[(i + 3) % (sizeof(plain_fill) - 1)];
    if (close)
        buf[at++] = '"';
    bool want = c->ok && close, got = jsonscan_valid(buf, n);
    if (got != want)
        fprintf(stderr, "special byte at offset %zu (+%zu after, closed %d): want %d\n", k, j,
                close, want);
    CHECK(got == want);
    yajl_val v = NULL;
    bool parse = json_parse_full(&v, buf, n, JSON_UTF8_REFUSE, NULL) == 0;
    CHECK(parse == want);
    json_free(v);
    /* The same string as a member name: an escape sends the caller to the parser. */
    if (want) {
        bool escaped = memchr(c->bytes, '\\', c->n) != NULL;
        JsonSpan span = {buf, n};
        CHECK(jsonscan_is_plain_string(span) == !escaped);
    }
    free(buf);
}

/* The word-at-a-time string path meets each kind of special byte at every alignment. */
static void test_special_byte_offsets(void)
{
    static const SpecialCase cases[] = {
        {"", 0, true},
        {"\\\"", 2, true},
        {"\\\\", 2, true},
        {"\\/", 2, true},
        {"\\b", 2, true},
        {"\\f", 2, true},
        {"\\n", 2, true},
        {"\\r", 2, true},
        {"\\t", 2, true},
        {"\\u0041", 6, true},
        {"\\ud83d\\ude00", 12, true},
        {"\\ud800", 6, false},
        {"\\u12", 4, false},
        {"\\x", 2, false},
        {"\\", 1, false},
        {"\x01", 1, false},
        {"\x1f", 1, false},
        {"\t", 1, false},
        {"\0", 1, false},
        {"\xc3\xa9", 2, true},
        {"\xe2\x82\xac", 3, true},
        {"\xf0\x9f\x98\x80", 4, true},
        {"\xc0\xaf", 2, false},
        {"\xed\xa0\x80", 3, false},
        {"\xf4\x90\x80\x80", 4, false},
        {"\xe2\x82", 2, false},
        {"\x80", 1, false},
        {"\xff", 1, false},
    };

    for (size_t i = 0; i < N_ELEMENTS(cases); i++)
        for (size_t k = 0; k <= ALIGN_MAX; k++)
            for (size_t j = 0; j <= ALIGN_MAX; j += 3) {
                check_special_at(&cases[i], k, j, true);
                check_special_at(&cases[i], k, j, false); /* ends exactly at end, unclosed */
            }
    /* A closing quote at every offset ends the string exactly there: the rest is outside. */
    for (size_t k = 0; k <= ALIGN_MAX; k++) {
        char buf[2 * ALIGN_MAX + 8];
        memset(buf, 'a', sizeof(buf));
        buf[0] = '[';
        buf[1] = '"';
        buf[2 + k] = '"';
        buf[3 + k] = ']';
        CHECK(jsonscan_valid(buf, 4 + k));
        CHECK(!jsonscan_valid(buf, 5 + k));
    }
}

/* Every byte value at every offset of a word and a half: accepted exactly when it is plain. */
static void test_every_byte_at_every_offset(void)
{
    for (unsigned b = 0; b < 256; b++) {
        bool plain = b >= 0x20 && b < 0x80 && b != '"' && b != '\\';
        for (size_t k = 0; k <= ALIGN_MAX; k++) {
            char buf[ALIGN_MAX + 8];
            size_t n = 0;
            buf[n++] = '"';
            for (size_t i = 0; i < k; i++)
                buf[n++] = 'x';
            buf[n++] = (char)b;
            buf[n++] = 'y';
            buf[n++] = '"';
            if (jsonscan_valid(buf, n) != plain)
                fprintf(stderr, "byte 0x%02x at offset %zu: want %d\n", b, k, plain);
            CHECK(jsonscan_valid(buf, n) == plain);
        }
    }
}

/* Member names of every length: found by name, never by prefix; escaped names refused. */
static void test_member_name_lengths(void)
{
    static const char *const names[] = {"a", "aaaaaaaa", "aaaaaaaaaaaaaaaaa", "b"};

    for (size_t k = 0; k <= ALIGN_MAX; k++) {
        StrBuf sb = STRBUF_INIT;
        JsonSpan v[N_ELEMENTS(names)];
        strbuf_puts(&sb, "{\"");
        for (size_t i = 0; i < k; i++)
            strbuf_putc(&sb, 'a');
        strbuf_puts(&sb, "\":1,\"b\":2}");
        CHECK_INTEQ(jsonscan_members(sb.data, sb.len, names, N_ELEMENTS(names), v), 2);
        CHECK(jsonscan_span_eq(v[3], "2"));
        for (size_t i = 0; i < 3; i++)
            CHECK((v[i].p != NULL) == (strlen(names[i]) == k));
        strbuf_deinit(&sb);
        /* The same name with an escape at offset k. */
        strbuf_puts(&sb, "{\"");
        for (size_t i = 0; i < k; i++)
            strbuf_putc(&sb, 'a');
        strbuf_puts(&sb, "\\n\":1}");
        CHECK_INTEQ(jsonscan_members(sb.data, sb.len, names, N_ELEMENTS(names), v), -1);
        strbuf_deinit(&sb);
    }
}

/* One call's nested scan, checked against the plain scan of the object and of params. */
static void check_nested(const char *text, int want_r, int want_inner)
{
    static const char *const top[] = {"jsonrpc", "id", "method", "params"};
    static const char *const inner[] = {"name", "arguments", "_meta"};
    JsonSpan v[4], v2[4], pv[3], pv2[3];
    size_t n = strlen(text);
    int ic = -2, r = jsonscan_members_nested(text, n, top, 4, v, 3, inner, 3, pv, &ic);

    CHECK_MSG(r == want_r && ic == want_inner, "%s: got %d/%d, want %d/%d", text, r, ic, want_r,
              want_inner);
    if (r < 0)
        return;
    CHECK_INTEQ(jsonscan_members(text, n, top, 4, v2), r);
    for (int i = 0; i < 4; i++)
        CHECK(v[i].p == v2[i].p && v[i].n == v2[i].n);
    if (ic < 0) {
        CHECK(!pv[0].p && !pv[1].p && !pv[2].p);
        return;
    }
    CHECK_INTEQ(jsonscan_members(v[3].p, v[3].n, inner, 3, pv2), ic);
    for (int i = 0; i < 3; i++)
        CHECK(pv[i].p == pv2[i].p && pv[i].n == pv2[i].n);
}

static void test_members_nested(void)
{
    check_nested("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"echo\",\"arguments\":{\"text\":\"hi\"},\"_meta\":{\"progressToken\":3}}}",
                 4, 3);
    check_nested(" { \"params\" : { } , \"id\" : \"x\" } ", 2, 0);
    check_nested("{\"params\":{\"other\":[1,{\"name\":2}],\"name\":\"n\"}}", 1, 2);
    check_nested("{\"id\":1}", 1, -1);                            /* no params */
    check_nested("{\"params\":[1,2]}", 1, -1);                    /* params not an object */
    check_nested("{\"params\":\"{\"}", 1, -1);                    /* a string, not an object */
    check_nested("{\"params\":{\"name\":1,\"name\":2}}", -1, -1); /* a repeated wanted name */
    check_nested("{\"params\":{\"na\\u006de\":1}}", -1, -1);      /* an escaped name */
    check_nested("{\"params\":{\"name\":1}", -1, -1);             /* cut short */
    check_nested("{\"params\":{\"name\":1}} x", -1, -1);          /* trailing bytes */
    check_nested("{\"params\":{},\"params\":{}}", -1, -1);        /* params twice */
    /* Depth: params at depth 1, so its members' values nest one level deeper. */
    char deep[2 * JSONSCAN_MAX_DEPTH + 64];
    int k = snprintf(deep, sizeof(deep), "{\"params\":{\"arguments\":");
    for (int i = 0; i < JSONSCAN_MAX_DEPTH - 2; i++)
        deep[k++] = '[';
    for (int i = 0; i < JSONSCAN_MAX_DEPTH - 2; i++)
        deep[k++] = ']';
    snprintf(deep + k, sizeof(deep) - (size_t)k, "}}");
    check_nested(deep, jsonscan_valid(deep, strlen(deep)) ? 1 : -1,
                 jsonscan_valid(deep, strlen(deep)) ? 1 : -1);
}

int main(void)
{
    RUN(test_members_nested);
    RUN(test_valid);
    RUN(test_depth);
    RUN(test_members);
    RUN(test_scalars);
    RUN(test_agrees_with_yajl);
    RUN(test_surrogate_escapes);
    RUN(test_values_limit);
    RUN(test_agrees_with_parser);
    RUN(test_skim_member);
    RUN(test_special_byte_offsets);
    RUN(test_member_name_lengths);
    RUN(test_every_byte_at_every_offset);
    return test_main_result();
}
