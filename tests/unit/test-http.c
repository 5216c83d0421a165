// SPDX-License-Identifier: MIT
// test-http: unit tests for the URL helpers of the HTTP layer (redaction, resolution, origin).

#include <stdlib.h>

#include "daemon/upstream/http.h"
#include "tests/unit/test.h"

static void check_redact(const char *in, const char *want)
{
    char *r = http_url_redact(in);
    CHECK_STREQ(r, want);
    free(r);
}

static void test_redact(void)
{
    check_redact("http://user:pw@127.0.0.1:3101/mcp", "http://127.0.0.1:3101/mcp");
    check_redact("https://token@example.com/mcp?x=1", "https://example.com/mcp?x=1");
    check_redact("http://127.0.0.1/mcp", "http://127.0.0.1/mcp");
    check_redact("not a url", NULL);
}

static void check_resolve(const char *base, const char *ref, const char *want)
{
    char *r = http_url_resolve(base, ref);
    CHECK_STREQ(r, want);
    free(r);
}

static void test_resolve(void)
{
    /* server-everything's endpoint event, and the other forms a server may send */
    check_resolve("http://127.0.0.1:3102/sse", "/message?sessionId=abc",
                  "http://127.0.0.1:3102/message?sessionId=abc");
    check_resolve("http://h/a/sse", "messages", "http://h/a/messages");
    check_resolve("http://h/sse", "http://other:9/m", "http://other:9/m");
}

static void test_same_origin(void)
{
    CHECK(http_same_origin("http://127.0.0.1:80/a", "http://127.0.0.1/b"));
    CHECK(http_same_origin("https://Example.com/a", "https://example.com:443/z?q"));
    CHECK(!http_same_origin("http://127.0.0.1:3101/mcp", "http://localhost:3101/mcp"));
    CHECK(!http_same_origin("http://h:1/", "http://h:2/"));
    CHECK(!http_same_origin("http://h/", "https://h/"));
    CHECK(!http_same_origin("http://h/", "::garbage"));
}

int main(void)
{
    RUN(test_redact);
    RUN(test_resolve);
    RUN(test_same_origin);
    return test_main_result();
}
