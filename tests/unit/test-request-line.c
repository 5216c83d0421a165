// SPDX-License-Identifier: MIT
// test-request-line: the legacy request text written from pieces (every _meta/body shape).

#include <string.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "daemon/upstream/request-line.h"
#include "tests/unit/test.h"

static void check_line(uint64_t id, const char *method, const char *meta, const UpstreamPart *body,
                       size_t n_body, bool progress, const char *want)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "old text that must go");
    request_line_legacy(&sb, id, method, meta, body, n_body, progress);
    CHECK_STREQ(sb.data, want);
    CHECK_INTEQ(sb.len, strlen(want));
    /* Every shape is one valid JSON object. */
    _cleanup_json_ yajl_val v = json_parse(sb.data, NULL);
    CHECK(v && YAJL_IS_OBJECT(v));
    strbuf_deinit(&sb);
}

static void test_shapes(void)
{
    UpstreamPart call[] = {{"\"name\":\"", 8}, {"echo", 4}, {"\",\"arguments\":", 14}, {"{}", 2}};
    UpstreamPart one[] = {{"\"uri\":\"file:///a\"", 17}};

    check_line(7, "tools/call", NULL, call, 4, true,
               "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"_meta\":{"
               "\"progressToken\":7},\"name\":\"echo\",\"arguments\":{}}}\n");
    check_line(18446744073709551615ull, "tools/call", "\"k\":1", call, 4, true,
               "{\"jsonrpc\":\"2.0\",\"id\":18446744073709551615,\"method\":\"tools/call\","
               "\"params\":{\"_meta\":{\"progressToken\":18446744073709551615,\"k\":1},"
               "\"name\":\"echo\",\"arguments\":{}}}\n");
    check_line(1, "resources/read", "\"k\":1", one, 1, false,
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"_meta\":"
               "{\"k\":1},\"uri\":\"file:///a\"}}\n");
    check_line(2, "resources/read", "", one, 1, false,
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":"
               "\"file:///a\"}}\n");
    check_line(0, "ping", NULL, NULL, 0, false,
               "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\",\"params\":{}}\n");
    check_line(3, "x", NULL, NULL, 0, true,
               "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\",\"params\":{\"_meta\":{"
               "\"progressToken\":3}}}\n");
    /* A method that needs escapes is escaped. */
    check_line(4, "a\"b", NULL, NULL, 0, false,
               "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"a\\\"b\",\"params\":{}}\n");
}

static void test_parts(void)
{
    UpstreamPart p[] = {{"ab", 2}, {"", 0}, {"cde", 3}};
    char *s = request_parts_join(p, 3);

    CHECK_STREQ(s, "abcde");
    CHECK_INTEQ(request_parts_len(p, 3), 5);
    free(s);
    s = request_parts_join(NULL, 0);
    CHECK_STREQ(s, "");
    free(s);
}

/* A long body (larger than any first allocation) is written whole. */
static void test_big_body(void)
{
    size_t n = 100000;
    char *big = malloc(n + 3);
    UpstreamPart p[] = {{"\"a\":\"", 5}, {big, n}, {"\"", 1}};
    StrBuf sb = STRBUF_INIT;

    memset(big, 'x', n);
    request_line_legacy(&sb, 9, "tools/call", NULL, p, 3, false);
    CHECK_INTEQ(sb.len, strlen(sb.data));
    _cleanup_json_ yajl_val v = json_parse(sb.data, NULL);
    CHECK(v && strlen(json_get_string(json_get(v, "params"), "a")) == n);
    strbuf_deinit(&sb);
    free(big);
}

int main(void)
{
    RUN(test_shapes);
    RUN(test_parts);
    RUN(test_big_body);
    return test_main_result();
}
