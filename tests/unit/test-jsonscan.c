// SPDX-License-Identifier: MIT
// test-jsonscan: the allocation-free scanner agrees with yajl on what is JSON, and finds members.

#include <yajl/yajl_tree.h>

#include "common/jsonscan.h"
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

int main(void)
{
    RUN(test_valid);
    RUN(test_depth);
    RUN(test_members);
    RUN(test_scalars);
    RUN(test_agrees_with_yajl);
    return test_main_result();
}
