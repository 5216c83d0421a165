// SPDX-License-Identifier: MIT
// test-util: unit tests for integer parsing, hex encoding and constant-time comparison.

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/redact.h"
#include "common/pool.h"
#include "common/util.h"
#include "tests/unit/test.h"

static void test_parse_int64_ok(void)
{
    int64_t v = 0;

    CHECK_INTEQ(parse_int64("0", 0, 10, &v), 0);
    CHECK_INTEQ(v, 0);
    CHECK_INTEQ(parse_int64("10", 0, 10, &v), 0);
    CHECK_INTEQ(v, 10);
    CHECK_INTEQ(parse_int64("-5", -5, 5, &v), 0);
    CHECK_INTEQ(v, -5);
    CHECK_INTEQ(parse_int64("9223372036854775807", INT64_MIN, INT64_MAX, &v), 0);
    CHECK(v == INT64_MAX);
    CHECK_INTEQ(parse_int64("-9223372036854775808", INT64_MIN, INT64_MAX, &v), 0);
    CHECK(v == INT64_MIN);
    /* Decimal only: a leading zero does not mean octal. */
    CHECK_INTEQ(parse_int64("010", 0, 100, &v), 0);
    CHECK_INTEQ(v, 10);
}

static void test_parse_int64_bounds(void)
{
    int64_t v = 1234;

    CHECK_INTEQ(parse_int64("11", 0, 10, &v), -ERANGE);
    CHECK_INTEQ(parse_int64("-1", 0, 10, &v), -ERANGE);
    CHECK_INTEQ(parse_int64("-6", -5, 5, &v), -ERANGE);
    CHECK_INTEQ(parse_int64("9223372036854775808", INT64_MIN, INT64_MAX, &v), -ERANGE);
    CHECK_INTEQ(parse_int64("-9223372036854775809", INT64_MIN, INT64_MAX, &v), -ERANGE);
    CHECK_INTEQ(parse_int64("99999999999999999999999", 0, 10, &v), -ERANGE);
    /* Failures leave the output alone. */
    CHECK_INTEQ(v, 1234);
}

static void test_parse_int64_invalid(void)
{
    static const char *const bad[] = {"", "abc", "12abc", "1.5", "0x10", "1e3", "12 ", "--1", "-"};
    int64_t v = 1234;

    for (size_t i = 0; i < N_ELEMENTS(bad); i++) {
        int r = parse_int64(bad[i], INT64_MIN, INT64_MAX, &v);
        CHECK_INTEQ(r, -EINVAL);
        if (r != -EINVAL)
            fprintf(stderr, "  input \"%s\"\n", bad[i]);
    }
    CHECK_INTEQ(parse_int64(NULL, 0, 10, &v), -EINVAL);
    CHECK_INTEQ(v, 1234);
}

static void test_hex_encode(void)
{
    static const unsigned char bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    char out[2 * sizeof(bytes) + 1];
    char empty[1] = {'x'};

    hex_encode(out, bytes, sizeof(bytes));
    CHECK_STREQ(out, "00017f80abff");
    hex_encode(empty, bytes, 0);
    CHECK_STREQ(empty, "");

    /* Every byte value maps to its two lowercase digits. */
    unsigned char all[256];
    char all_hex[513];
    char want[3];
    int bad = 0;
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    hex_encode(all_hex, all, sizeof(all));
    for (int i = 0; i < 256; i++) {
        snprintf(want, sizeof(want), "%02x", i);
        if (memcmp(all_hex + 2 * i, want, 2) != 0)
            bad++;
    }
    CHECK_INTEQ(bad, 0);
    CHECK_INTEQ(strlen(all_hex), 512);
}

static void test_mem_equal_consttime(void)
{
    unsigned char a[64], b[64];

    for (size_t i = 0; i < sizeof(a); i++)
        a[i] = b[i] = (unsigned char)(i * 13);
    CHECK(mem_equal_consttime(a, b, sizeof(a)));
    CHECK(mem_equal_consttime(a, b, 0));
    /* A difference anywhere, in any bit, is found. */
    for (size_t i = 0; i < sizeof(a); i++) {
        for (int bit = 0; bit < 8; bit++) {
            b[i] ^= (unsigned char)(1u << bit);
            if (mem_equal_consttime(a, b, sizeof(a)))
                CHECK(!"difference not found");
            b[i] ^= (unsigned char)(1u << bit);
        }
    }
    /* Bytes past n are not compared. */
    b[63] ^= 1;
    CHECK(mem_equal_consttime(a, b, 63));
    CHECK(!mem_equal_consttime(a, b, 64));
    CHECK(mem_equal_consttime("secret", "secret", 6));
    CHECK(!mem_equal_consttime("secret", "secreT", 6));
}

static void test_string_helpers(void)
{
    CHECK(streq("a", "a"));
    CHECK(!streq("a", "b"));
    CHECK(streq(NULL, NULL));
    CHECK(!streq("a", NULL));
    CHECK(!streq(NULL, "a"));
    CHECK(startswith("mcp_server", "mcp_"));
    CHECK(startswith("abc", ""));
    CHECK(!startswith("mc", "mcp"));

    _cleanup_free_ char *s = xasprintf("%s-%d", "x", 42);
    CHECK_STREQ(s, "x-42");
    _cleanup_free_ char *n = xstrndup("abcdef", 3);
    CHECK_STREQ(n, "abc");
}

/* Compare a newly allocated redaction with want, then free it. */
static void check_redact(const char *in, const char *want)
{
    char *got = url_redact_secrets(in);
    CHECK_STREQ(got, want);
    free(got);
}

static void test_url_redact_secrets(void)
{
    check_redact("http://user:pw@host/x", "http://user:***@host/x");
    check_redact("https://a:b@h:8443?q=1#f", "https://a:***@h:8443?q=1#f");
    /* The password may hold '@' and ':' (badly escaped): all of it goes, up to the last '@'. */
    check_redact("http://u:p@ss:w@h/", "http://u:***@h/");
    /* No password, no userinfo, nothing URL-like: unchanged. */
    check_redact("http://token@host/", "http://token@host/");
    check_redact("http://u:@host/", "http://u:@host/");
    check_redact("http://host:8080/a@b", "http://host:8080/a@b");
    check_redact("no url here", "no url here");
    check_redact("", "");
    /* Several URLs in one string (a command line); the text around them kept. */
    check_redact("--from http://a:1@x --to 'ws://b:22@y/p' end",
                 "--from http://a:***@x --to 'ws://b:***@y/p' end");
    /* A password far longer than the mask, and one shorter. */
    check_redact("http://u:0123456789abcdef0123456789@h", "http://u:***@h");
    check_redact("s://u:1@h", "s://u:***@h");
    check_redact("://:x@", "://:***@");
    /* Query parameters named as secrets; other parameters and plain text kept. */
    check_redact("https://mcp.exa.ai/mcp?exaApiKey=abc-123&tools=web",
                 "https://mcp.exa.ai/mcp?exaApiKey=***&tools=web");
    check_redact("http://h/p?q=1&api_key=s3&access_token=t#frag",
                 "http://h/p?q=1&api_key=***&access_token=***#frag");
    check_redact("http://u:p@h/?Signature=x&page=2", "http://u:***@h/?Signature=***&page=2");
    check_redact("http://h/?token=&keyless", "http://h/?token=&keyless");
    check_redact("what?token=x, no url", "what?token=x, no url");
}

/* Redact a JSON text's secrets and compare the compact result with want. */
static void check_redact_json(const char *in, const char *want)
{
    yajl_val v = json_parse(in, NULL);
    CHECK(v != NULL);
    redact_json_secrets(v);
    _cleanup_free_ char *got = json_to_string(v);
    CHECK_STREQ(got, want);
    json_free(v);
}

static void test_redact_json_secrets(void)
{
    /* A secret's value goes whatever it holds; other members' strings lose URL secrets only. */
    check_redact_json("{\"apiToken\":\"T\",\"Password\":{\"a\":1},\"n\":2}",
                      "{\"apiToken\":\"***\",\"Password\":\"***\",\"n\":2}");
    check_redact_json("{\"url\":\"https://u:pw@h/x?api_key=K&q=1\"}",
                      "{\"url\":\"https://u:***@h/x?api_key=***&q=1\"}");
    check_redact_json("[{\"auth\":[1]},\"plain\",[\"http://a:b@c\"]]",
                      "[{\"auth\":\"***\"},\"plain\",[\"http://a:***@c\"]]");
    check_redact_json("{}", "{}");
}

typedef struct Obj {
    void *first; /* the pool links through the first pointer of a free object */
    int a, b;
} Obj;

static void test_pool(void)
{
    Pool pool = POOL_INIT(Obj, 2);
    Obj *o[3];

    for (int i = 0; i < 3; i++) {
        o[i] = pool_get(&pool);
        CHECK(o[i] && !o[i]->first && !o[i]->a && !o[i]->b);
        o[i]->first = o;
        o[i]->a = i + 1;
    }
    CHECK_INTEQ(pool.n, 0);
    for (int i = 0; i < 3; i++)
        pool_put(&pool, o[i]);
    pool_put(&pool, NULL);
    CHECK_INTEQ(pool.n, 2); /* the third went back to malloc: at most max kept */
    /* Reused last in, first out, and zeroed again. */
    Obj *x = pool_get(&pool), *y = pool_get(&pool), *z = pool_get(&pool);
    CHECK(x == o[1] && y == o[0]);
    CHECK(z && z != x && z != y);
    CHECK(!x->first && !x->a && !y->a && !z->a);
    CHECK_INTEQ(pool.n, 0);
    pool_put(&pool, x);
    pool_put(&pool, y);
    pool_put(&pool, z);
    pool_drain(&pool);
    CHECK(pool.free == NULL && pool.n == 0);
    pool_drain(&pool); /* twice is harmless */
}

int main(void)
{
    RUN(test_pool);
    RUN(test_parse_int64_ok);
    RUN(test_parse_int64_bounds);
    RUN(test_parse_int64_invalid);
    RUN(test_hex_encode);
    RUN(test_mem_equal_consttime);
    RUN(test_string_helpers);
    RUN(test_url_redact_secrets);
    RUN(test_redact_json_secrets);
    return test_main_result();
}
