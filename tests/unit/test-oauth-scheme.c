// SPDX-License-Identifier: MIT
// test-oauth-scheme: which URLs a sign-in takes from a server or a config (oauth_check_url_scheme,
// oauth_check_config_url): http(s) only, never plain http for an https server (resource_metadata,
// issuer, endpoints), and plain http only to a loopback address (decided on the address: a name
// is connected only where it resolves to loopback) or on the server's own host; server text shown
// without control characters.

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "daemon/upstream/oauth-issuer.h"
#include "tests/unit/test.h"

static void check(const char *resource, const char *url, int want, const char *part)
{
    char *why = NULL;

    CHECK_INTEQ(oauth_check_url_scheme(resource, "token_endpoint", url, &why), want);
    CHECK(want == 0 ? why == NULL
                    : why && strstr(why, part) && strstr(why, "token_endpoint") &&
                          strstr(why, "operator"));
    free(why);
}

static void test_scheme(void)
{
    /* Same scheme, or an upgrade: fine. */
    check("https://mcp.example/mcp", "https://as.example/token", 0, NULL);
    check("HTTPS://mcp.example/mcp", "HTTPS://as.example/token", 0, NULL);
    check("http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/token", 0, NULL);
    check("http://127.0.0.1:8080/mcp", "https://as.example/token", 0, NULL);
    /* A downgrade from an https server: refused, naming both. */
    check("https://mcp.example/mcp", "http://as.example/token", -EPERM, "plain http");
    check("https://mcp.example/mcp", "HTTP://as.example/token", -EPERM, "https://mcp.example");
    /* Plain http from a plain http server: on this machine or on its own host only. */
    check("http://127.0.0.1:8080/mcp", "http://localhost:9/token", 0, NULL);
    check("http://127.0.0.1:8080/mcp", "http://[::1]:9/token", 0, NULL);
    check("http://devbox.lan:8080/mcp", "http://DevBox.lan:9000/token", 0, NULL);
    check("http://u:p@devbox.lan/mcp", "http://devbox.lan/token", 0, NULL);
    check("http://127.0.0.1:8080/mcp", "http://192.0.2.1/token", -EPERM, "another host");
    check("http://127.0.0.1:8080/mcp", "http://[2001:db8::1]/token", -EPERM, "another host");
    check("http://127.0.0.1:8080/mcp", "http://[::ffff:192.0.2.1]/token", -EPERM, "another host");
    check("http://127.0.0.1:8080/mcp", "http://[::ffff:127.0.0.1]:9/token", 0, NULL);
    check("http://127.0.0.1:8080/mcp", "http://127.255.0.9:9/token", 0, NULL);
    /* Numeric forms curl reads as addresses are judged as the address curl connects to. */
    check("http://127.0.0.1:8080/mcp", "http://3221225985/token", -EPERM, "another host");
    check("http://127.0.0.1:8080/mcp", "http://0x7f.1/token", 0, NULL);
    /* Control characters, spaces, too long: not a URL at all (and shown without the ESC). */
    check("http://127.0.0.1/mcp", "http://127.0.0.1/\x1b[8mx", -EPERM, "?[8mx");
    check("http://127.0.0.1/mcp", "http://127.0.0.1/a b", -EPERM, "not a usable URL");
    check("https://mcp.example/mcp", "", -EPERM, "not a usable URL");
}

/* Names are never "this machine" by their spelling: plain http to a name is pinned to loopback. */
static void test_loopback_by_address(void)
{
    const char *res = "http://127.0.0.1:8080/mcp";
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};

    /* Allowed by the check, but only over a connection to a loopback address. */
    CHECK_INTEQ(oauth_url_verdict(res, "http://127.attacker.test/token"), 0);
    CHECK(oauth_url_needs_loopback(res, "http://127.attacker.test/token"));
    CHECK(oauth_url_needs_loopback(res, "http://localhost:9/token"));
    CHECK(oauth_url_needs_loopback(res, "http://127.0.0.1@as.example/token"));
    CHECK(oauth_url_needs_loopback(res, "http://as.example?@127.0.0.1/token"));
    CHECK(oauth_url_needs_loopback("http://devbox.lan:8080/mcp", "http://as.example/token"));
    /* A literal loopback address, the resource's own host, or https: nothing to pin. */
    CHECK(!oauth_url_needs_loopback(res, "http://127.0.0.1:9/token"));
    CHECK(!oauth_url_needs_loopback(res, "http://[::1]:9/token"));
    CHECK(!oauth_url_needs_loopback("http://devbox.lan/mcp", "http://DevBox.lan:9/token"));
    CHECK(!oauth_url_needs_loopback(res, "https://127.attacker.test/token"));
    /* The addresses the guard lets through. */
    inet_pton(AF_INET, "127.1.2.3", &a4.sin_addr);
    CHECK(oauth_sockaddr_is_loopback((struct sockaddr *)&a4));
    inet_pton(AF_INET, "10.200.0.2", &a4.sin_addr);
    CHECK(!oauth_sockaddr_is_loopback((struct sockaddr *)&a4));
    inet_pton(AF_INET6, "::1", &a6.sin6_addr);
    CHECK(oauth_sockaddr_is_loopback((struct sockaddr *)&a6));
    inet_pton(AF_INET6, "::ffff:127.0.0.2", &a6.sin6_addr);
    CHECK(oauth_sockaddr_is_loopback((struct sockaddr *)&a6));
    inet_pton(AF_INET6, "::ffff:10.0.0.1", &a6.sin6_addr);
    CHECK(!oauth_sockaddr_is_loopback((struct sockaddr *)&a6));
    inet_pton(AF_INET6, "::2", &a6.sin6_addr);
    CHECK(!oauth_sockaddr_is_loopback((struct sockaddr *)&a6));
}

/* A token endpoint from the config passes the same checks, and the refusal names the field. */
static void test_config_urls(void)
{
    char *why = NULL;

    CHECK_INTEQ(oauth_check_config_url("gh", "http://127.0.0.1/mcp", "tokenUrl",
                                       "http://192.0.2.1/token", &why),
                -EPERM);
    CHECK(why && strstr(why, "oauth.tokenUrl") && strstr(why, "server gh") &&
          strstr(why, "another host") && strstr(why, "config"));
    free(why);
    why = NULL;
    CHECK_INTEQ(oauth_check_config_url("gh", "https://mcp.example/mcp", "tokenUrl",
                                       "http://as.example/token", &why),
                -EPERM);
    CHECK(why && strstr(why, "downgrade"));
    free(why);
    why = NULL;
    CHECK_INTEQ(oauth_check_config_url("gh", "https://mcp.example/mcp", "tokenUrl",
                                       "https://as.example/token", &why),
                0);
    CHECK(!why);
}

/* Server text in messages: no control character, no C1, cut whole, marked as cut. */
static void test_text_shown(void)
{
    char *s = oauth_text_shown("bad\x1b[8mhidden\x1b[0m\r\n\xc2\x9b"
                               "31m\x7f",
                               100);

    CHECK_STREQ(s, "bad?[8mhidden?[0m???31m?");
    free(s);
    s = oauth_text_shown("\xc3\xa9\xc3\xa9\xc3\xa9", 5);
    CHECK_STREQ(s, "\xc3\xa9\xc3\xa9...");
    free(s);
    s = oauth_text_shown(NULL, 5);
    CHECK_STREQ(s, "");
    free(s);
    CHECK(oauth_scope_text_ok("mcp offline_access"));
    CHECK(!oauth_scope_text_ok("mcp\x1b[8m"));
    /* Not http(s) at all, whatever the server: refused. */
    check("http://127.0.0.1/mcp", "file:///etc/passwd", -EPERM, "not an http(s) URL");
    check("https://mcp.example/mcp", "javascript:alert(1)", -EPERM, "not an http(s) URL");
    check("https://mcp.example/mcp", "httpsx://as.example/", -EPERM, "not an http(s) URL");
    check("https://mcp.example/mcp", "https:/as.example/", -EPERM, "not an http(s) URL");
}

int main(void)
{
    RUN(test_scheme);
    RUN(test_loopback_by_address);
    RUN(test_config_urls);
    RUN(test_text_shown);
    return test_main_result();
}
