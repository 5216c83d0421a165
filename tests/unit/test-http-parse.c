// SPDX-License-Identifier: MIT
// test-http-parse: the head of an agent's HTTP request: fields found, framing read, and every
// malformed or oversized head refused with its status, never half-taken.

#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"
#include "daemon/downstream/http-parse.h"
#include "tests/unit/test.h"

static int parse(const char *s, HttpHead *h)
{
    size_t scan = 0;

    return http_parse_head(h, s, strlen(s), &scan);
}

static void test_post(void)
{
    static const char req[] = "POST /servers/a/mcp?token=x HTTP/1.1\r\nHost: localhost\r\n"
                              "content-type:  application/json \r\nAccept: application/json, "
                              "text/event-stream;q=1\r\nContent-Length: 2\r\n\r\n{}";
    HttpHead h;
    size_t n;

    CHECK_INTEQ(parse(req, &h), HTTP_PARSE_OK);
    CHECK(http_method_is(&h, "POST"));
    CHECK_INTEQ(h.target_len, strlen("/servers/a/mcp?token=x"));
    CHECK_INTEQ(h.content_length, 2);
    CHECK_INTEQ(h.head_len, strlen(req) - 2);
    CHECK(h.keep_alive);
    const char *v = http_field(&h, "Content-Type", &n);
    CHECK(v && n == 16 && memcmp(v, "application/json", 16) == 0); /* white space trimmed */
    CHECK(http_field_lists(&h, "Accept", "text/event-stream"));
    CHECK(http_field_lists(&h, "accept", "application/json"));
    CHECK(!http_field_lists(&h, "Accept", "text/html"));
    CHECK(!http_field(&h, "Mcp-Session-Id", &n));
}

static void test_incremental(void)
{
    static const char req[] = "GET /mcp HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
    HttpHead h;
    size_t scan = 0;
    int r = HTTP_PARSE_AGAIN;

    for (size_t n = 1; n <= strlen(req) && r == HTTP_PARSE_AGAIN; n++)
        r = http_parse_head(&h, req, n, &scan);
    CHECK_INTEQ(r, HTTP_PARSE_OK);
    CHECK_INTEQ(h.minor, 0);
    CHECK(h.keep_alive);
    CHECK_INTEQ(parse("GET /mcp HTTP/1.1\r\nConnection: close\r\n\r\n", &h), HTTP_PARSE_OK);
    CHECK(!h.keep_alive);
}

static void test_refused(void)
{
    static const struct {
        const char *req;
        int status;
    } cases[] = {
        {"GARBAGE\r\n\r\n", 400},
        {"GET  /mcp HTTP/1.1\r\n\r\n", 400},
        {"GET /mcp HTTP/2.0\r\n\r\n", 505},
        {"GET /mcp HTTP/1.1 extra\r\n\r\n", 400},
        {"GET /m\x01p HTTP/1.1\r\n\r\n", 400},
        {"GET /mcp HTTP/1.1\r\nNo colon\r\n\r\n", 400},
        {"GET /mcp HTTP/1.1\r\n folded: x\r\n\r\n", 400},
        {"GET /mcp HTTP/1.1\r\nBad name: x\r\n\r\n", 400},
        {"GET /mcp HTTP/1.1\r\nX: a\rb\r\n\r\n", 400},
        {"GET /mcp HTTP/1.1\r\nX: a\nb\r\n\r\n", 400},
        {"GET /mcp HTTP/1.1\r\nX: a\x7f\r\n\r\n", 400},
        {"POST /mcp HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
        {"POST /mcp HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
        {"POST /mcp HTTP/1.1\r\nContent-Length: 9999999999999999\r\n\r\n", 400},
        {"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
    };
    HttpHead h;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int r = parse(cases[i].req, &h);
        CHECK_MSG(r == cases[i].status, "case %zu: %d, wanted %d", i, r, cases[i].status);
    }
    /* Equal duplicate lengths are one length. */
    CHECK_INTEQ(parse("POST /mcp HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n", &h),
                HTTP_PARSE_OK);
}

static void test_bounds(void)
{
    StrBuf sb = STRBUF_INIT;
    HttpHead h;

    /* Fields past HTTP_MAX_FIELDS: 431. */
    strbuf_puts(&sb, "GET /mcp HTTP/1.1\r\n");
    for (int i = 0; i <= HTTP_MAX_FIELDS; i++)
        strbuf_printf(&sb, "X-%d: y\r\n", i);
    strbuf_puts(&sb, "\r\n");
    CHECK_INTEQ(parse(sb.data, &h), 431);
    /* A head that has not ended by HTTP_MAX_HEAD bytes: 431 without waiting for more. */
    strbuf_reset(&sb);
    strbuf_puts(&sb, "GET /mcp HTTP/1.1\r\nX: ");
    while (sb.len < HTTP_MAX_HEAD)
        strbuf_putc(&sb, 'a');
    CHECK_INTEQ(parse(sb.data, &h), 431);
    /* A long target: 414. */
    strbuf_reset(&sb);
    strbuf_puts(&sb, "GET /");
    for (int i = 0; i < HTTP_MAX_TARGET; i++)
        strbuf_putc(&sb, 'a');
    strbuf_puts(&sb, " HTTP/1.1\r\n\r\n");
    CHECK_INTEQ(parse(sb.data, &h), 414);
    strbuf_deinit(&sb);
}

int main(void)
{
    RUN(test_post);
    RUN(test_incremental);
    RUN(test_refused);
    RUN(test_bounds);
    return test_main_result();
}
