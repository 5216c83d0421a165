// SPDX-License-Identifier: MIT
// test-utf8: unit tests for the strict UTF-8 validator and the U+FFFD repair of JSON texts.

#include <stdint.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"
#include "tests/unit/test.h"

/* Encode cp the textbook way (no checks), into out; return the length. */
static size_t encode(uint32_t cp, unsigned char *out)
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xc0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xe0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (unsigned char)(0xf0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Every code point: its shortest form is accepted unless it is a surrogate or NUL. */
static void test_every_code_point(void)
{
    unsigned char b[4];
    size_t wrong = 0;

    for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
        size_t n = encode(cp, b);
        size_t want = cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : n;
        if (utf8_seq_len(b, n) != want)
            wrong++;
        /* Any truncation is refused. */
        if (n > 1 && utf8_seq_len(b, n - 1) != 0)
            wrong++;
    }
    CHECK_INTEQ(wrong, 0);
}

/* Overlong forms of every code point that has a shorter one are refused. */
static void test_overlong(void)
{
    size_t wrong = 0;

    for (uint32_t cp = 0; cp < 0x10000; cp++) {
        unsigned char b[4];
        /* The same value in one more byte than it needs. */
        if (cp < 0x80) {
            b[0] = 0xc0 | (unsigned char)(cp >> 6);
            b[1] = 0x80 | (cp & 0x3f);
            wrong += utf8_seq_len(b, 2) != 0;
        }
        if (cp < 0x800) {
            b[0] = 0xe0;
            b[1] = (unsigned char)(0x80 | cp >> 6);
            b[2] = (unsigned char)(0x80 | (cp & 0x3f));
            wrong += utf8_seq_len(b, 3) != 0;
        }
        b[0] = 0xf0;
        b[1] = (unsigned char)(0x80 | cp >> 12);
        b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        b[3] = (unsigned char)(0x80 | (cp & 0x3f));
        wrong += utf8_seq_len(b, 4) != 0;
    }
    CHECK_INTEQ(wrong, 0);
    CHECK(utf8_seq_len((const unsigned char *)"\xc0\xaf", 2) == 0);
    CHECK(utf8_seq_len((const unsigned char *)"\xe0\x80\xaf", 3) == 0);
    CHECK(utf8_seq_len((const unsigned char *)"\xf0\x80\x80\xaf", 4) == 0);
}

static void test_other_invalid(void)
{
    static const char *const bad[] = {
        "\x80",             /* stray continuation */
        "\xbf",             /* stray continuation */
        "\xf4\x90\x80\x80", /* U+110000 */
        "\xf5\x80\x80\x80", /* lead byte past U+10FFFF */
        "\xff",
        "\xe2\x28\xa1", /* continuation missing */
    };

    for (size_t i = 0; i < N_ELEMENTS(bad); i++)
        CHECK(utf8_seq_len((const unsigned char *)bad[i], strlen(bad[i])) == 0);
    CHECK(utf8_seq_len((const unsigned char *)"\xf4\x8f\xbf\xbf", 4) == 4); /* U+10FFFF */
    CHECK(utf8_seq_len((const unsigned char *)"\xef\xbf\xbd", 3) == 3);     /* U+FFFD */
}

static void test_escapes(void)
{
    CHECK_INTEQ(utf8_escape_len("\\u0041", 6), 6);
    CHECK_INTEQ(utf8_escape_len("\\uD83D\\uDE00", 12), 12);
    CHECK_INTEQ(utf8_escape_len("\\ud83d\\ude00", 12), 12);
    CHECK_INTEQ(utf8_escape_len("\\ud800", 6), 0);         /* high, nothing after */
    CHECK_INTEQ(utf8_escape_len("\\ud800\\u0041", 12), 0); /* high, no low after */
    CHECK_INTEQ(utf8_escape_len("\\ud800\\ud800", 12), 0);
    CHECK_INTEQ(utf8_escape_len("\\udc00", 6), 0); /* low alone */
    CHECK_INTEQ(utf8_escape_len("\\ud83d\\ude0", 11), 0);
    CHECK_INTEQ(utf8_escape_len("\\u00g1", 6), 0);
}

static bool check(const char *s, Utf8Problem *probp)
{
    return utf8_json_check(s, strlen(s), probp, NULL);
}

static char *repair(const char *s, size_t *n_fixedp)
{
    return utf8_json_repair(s, strlen(s), n_fixedp);
}

static void test_json_check(void)
{
    Utf8Problem prob = {0, NULL};

    CHECK(check("{\"a\":\"h\xc3\xa9\\u00e9\\ud83d\\ude00\"}", &prob));
    /* An escaped backslash followed by "ud800" is text, not an escape. */
    CHECK(check("\"\\\\ud800\"", &prob));
    /* A quote inside a comment opens no string: the escape after it is still checked. */
    CHECK(!check("/* \" */ {\"a\":\"\\udc00\"}", &prob));
    CHECK_STREQ(prob.why, "lone UTF-16 surrogate escape");
    CHECK(!check("// it's \"\n[\"\\ud800\"]", &prob));
    CHECK_INTEQ(prob.offset, 12);
    CHECK(check("[\"/* \\ud83d\\ude00\"] /* \\ud800 */", &prob));
    size_t commas = 0;
    CHECK(utf8_json_check("[1,\",\",{\"a,\":2}] // ,\n/* , */", 29, &prob, &commas));
    CHECK_INTEQ(commas, 2);
    CHECK(!check("\"ab\xc0\xaf\"", &prob));
    CHECK_INTEQ(prob.offset, 3);
    CHECK_STREQ(prob.why, "overlong form");
    CHECK(!check("[\"x\",\"\\ud800\"]", &prob));
    CHECK_INTEQ(prob.offset, 6);
    CHECK_STREQ(prob.why, "lone UTF-16 surrogate escape");
    CHECK(!check("\"\xed\xa0\x80\"", &prob));
    CHECK_STREQ(prob.why, "encoded UTF-16 surrogate");
    CHECK(!check("\"\xf4\x90\x80\x80\"", &prob));
    CHECK_STREQ(prob.why, "code point past U+10FFFF");
    CHECK(!check("\"\xe2\x82\"", &prob));
    CHECK_STREQ(prob.why, "truncated sequence");
    CHECK(!check("\"\x80\"", &prob));
    CHECK_STREQ(prob.why, "stray continuation byte");
}

static void test_json_repair(void)
{
    size_t n = 0;
    _cleanup_free_ char *a = repair("\"a\xc0\xaf\"", &n);
    CHECK_STREQ(a, "\"a" UTF8_REPLACEMENT UTF8_REPLACEMENT "\"");
    CHECK_INTEQ(n, 2);
    _cleanup_free_ char *b = repair("\"\\ud800x\\udc00\\ud83d\\ude00\"", &n);
    CHECK_STREQ(b, "\"\\ufffdx\\ufffd\\ud83d\\ude00\"");
    CHECK_INTEQ(n, 2);
    _cleanup_free_ char *c = repair("\"ok \xe2\x82\xac\"", &n);
    CHECK_STREQ(c, "\"ok \xe2\x82\xac\"");
    CHECK_INTEQ(n, 0);
    /* What the repair produces always passes the check. */
    static const char junk[] = "\"\xff\xfe\xed\xbf\xbf\\udfff\\ud800\\\\ud800\xf0\x9f\x98\"";
    _cleanup_free_ char *d = utf8_json_repair(junk, sizeof(junk) - 1, &n);
    CHECK(utf8_json_check(d, strlen(d), NULL, NULL));
    CHECK(n >= 6);
}

int main(void)
{
    RUN(test_every_code_point);
    RUN(test_overlong);
    RUN(test_other_invalid);
    RUN(test_escapes);
    RUN(test_json_check);
    RUN(test_json_repair);
    return test_main_result();
}
