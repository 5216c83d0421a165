// SPDX-License-Identifier: MIT
// test-http-parse: an agent's HTTP request: the head's fields found, its framing read, a chunked
// body decoded, and every malformed or oversized head or body refused with its status.

#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"
#include "daemon/downstream/http-chunked.h"
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
        {"POST /mcp HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
        {"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", 400},
        {"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
         400},
        {"POST /mcp HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
    };
    HttpHead h;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int r = parse(cases[i].req, &h);
        CHECK_MSG(r == cases[i].status, "case %zu: %d, wanted %d", i, r, cases[i].status);
    }
    /* Equal duplicate lengths are one length. */
    CHECK_INTEQ(parse("POST /mcp HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n", &h),
                HTTP_PARSE_OK);
    CHECK_INTEQ(parse("POST /mcp HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &h),
                HTTP_PARSE_OK);
    CHECK(h.chunked && h.content_length == 0);
}

/*
 * A chunked body decoded whole, and again fed a byte at a time as a slow client sends it: the
 * same body, then what followed it. Returns the outcome; *out gets the body and the rest.
 */
static int dechunk(const char *raw, size_t max_body, bool bytewise, StrBuf *out)
{
    char buf[8192];
    size_t len = strlen(raw), have = 0, n = 0;
    HttpChunked st = {0};
    int r = HTTP_CHUNKED_AGAIN;

    while (r == HTTP_CHUNKED_AGAIN && have < len) {
        size_t k = bytewise ? 1 : len;
        memcpy(buf + n, raw + have, k);
        have += k;
        n += k;
        r = http_chunked_step(&st, buf, &n, max_body);
    }
    strbuf_reset(out);
    if (r == HTTP_CHUNKED_DONE) {
        strbuf_append(out, buf, st.out);
        strbuf_puts(out, "|");
        strbuf_append(out, buf + st.out, n - st.out);
    }
    return r;
}

static void test_chunked(void)
{
    static const struct {
        const char *raw, *want; /* want: body|rest, or NULL for the status */
        int status;
    } cases[] = {
        {"2\r\n{}\r\n0\r\n\r\n", "{}|", HTTP_CHUNKED_DONE},
        {"1\r\n{\r\n1;ext=1\r\n}\r\n0\r\n\r\nGET /", "{}|GET /", HTTP_CHUNKED_DONE},
        {"A \r\n0123456789\r\n0\r\nX-Trailer: y\r\n\r\n", "0123456789|", HTTP_CHUNKED_DONE},
        {"0\r\n\r\n", "|", HTTP_CHUNKED_DONE},
        {"2\r\n{}\r\n", NULL, HTTP_CHUNKED_AGAIN},   /* no last chunk yet */
        {"zz\r\n{}\r\n0\r\n\r\n", NULL, 400},        /* bad hex */
        {"\r\n", NULL, 400},                         /* no size */
        {"2\n{}\r\n0\r\n\r\n", NULL, 400},           /* bare LF */
        {"2\r\n{}xx0\r\n\r\n", NULL, 400},           /* data longer than its size */
        {"2 x\r\n{}\r\n0\r\n\r\n", NULL, 400},       /* junk after the size */
        {"2;a\rb\r\n{}\r\n0\r\n\r\n", NULL, 400},    /* bare CR in an extension */
        {"0\r\nX: y\n\r\n", NULL, 400},              /* trailer line with a bare LF */
        {"0\r\nX: y\r\n\nZ", NULL, 400},             /* a bare LF first in a read (fuzz) */
        {"FFFFFFFFFFFFFFFFFFFFFFFF\r\n", NULL, 413}, /* huge chunk size */
        {"401\r\n", NULL, 413},                      /* one chunk past max_body */
    };
    StrBuf out = STRBUF_INIT;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        for (int bytewise = 0; bytewise <= 1; bytewise++) {
            int r = dechunk(cases[i].raw, 1024, bytewise, &out);
            CHECK_MSG(r == cases[i].status, "case %zu (bytewise %d): %d, wanted %d", i, bytewise, r,
                      cases[i].status);
            /* Fed a byte at a time, nothing is left over past the body's end. */
            size_t want = cases[i].want ? (size_t)(strchr(cases[i].want, '|') - cases[i].want) +
                                              (bytewise ? 1 : strlen(strchr(cases[i].want, '|')))
                                        : 0;
            if (cases[i].want)
                CHECK_MSG(out.len == want && memcmp(out.data, cases[i].want, want) == 0,
                          "case %zu: \"%.*s\"", i, (int)out.len, out.data);
        }
    /* Chunks adding up past max_body: 413 at the one that passes it. */
    CHECK_INTEQ(dechunk("200\r\n", 1024, false, &out), HTTP_CHUNKED_AGAIN);
    StrBuf sb = STRBUF_INIT;
    for (int i = 0; i < 3; i++) {
        strbuf_puts(&sb, "180\r\n");
        for (int j = 0; j < 0x180; j++)
            strbuf_puts(&sb, "x");
        strbuf_puts(&sb, "\r\n");
    }
    CHECK_INTEQ(dechunk(sb.data, 1024, false, &out), 413);
    /* A size line that never ends, and a trailer section past its bound. */
    strbuf_reset(&sb);
    for (int i = 0; i < HTTP_CHUNK_LINE_MAX; i++)
        strbuf_puts(&sb, "0");
    CHECK_INTEQ(dechunk(sb.data, 1024, false, &out), 400);
    strbuf_reset(&sb);
    strbuf_puts(&sb, "1;");
    for (int i = 0; i < HTTP_CHUNK_LINE_MAX; i++)
        strbuf_puts(&sb, "e");
    strbuf_puts(&sb, "\r\n");
    CHECK_INTEQ(dechunk(sb.data, 1024, false, &out), 400);
    strbuf_reset(&sb);
    strbuf_puts(&sb, "0\r\n");
    for (int i = 0; i < 200; i++)
        strbuf_puts(&sb, "X-Trailer: yyyyyyyyyyyyyyyyyyyyyyyyy\r\n");
    CHECK_INTEQ(dechunk(sb.data, 1024, false, &out), 431);
    strbuf_deinit(&sb);
    strbuf_deinit(&out);
}

/* Endless one-byte chunks: refused at HTTP_CHUNKS_MAX, long before max_body. */
static void test_chunk_count(void)
{
    static const char one[] = "1\r\nx\r\n";
    char buf[64];
    HttpChunked st = {0};
    size_t i, n;
    int r = HTTP_CHUNKED_AGAIN;

    for (i = 0; i <= HTTP_CHUNKS_MAX && r == HTTP_CHUNKED_AGAIN; i++) {
        n = st.out > 16 ? 16 : st.out; /* keep the decoded bytes few: only the count matters */
        st.out = n;
        memcpy(buf + n, one, sizeof(one) - 1);
        n += sizeof(one) - 1;
        r = http_chunked_step(&st, buf, &n, (size_t)1 << 30);
    }
    CHECK_INTEQ(r, 413);
    CHECK_INTEQ(i, HTTP_CHUNKS_MAX + 1);
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
    RUN(test_chunked);
    RUN(test_chunk_count);
    return test_main_result();
}
