// SPDX-License-Identifier: MIT
// test-oauth: unit tests for the sign-in helpers (challenge parsing, PKCE, resource matching,
// base64, form encoding), the SEP-2468 issuer checks and the token store (durable, 0600, rotation,
// removal).

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/base64.h"
#include "common/strbuf.h"
#include "daemon/upstream/oauth-fetch.h"
#include "daemon/upstream/oauth-issuer.h"
#include "daemon/upstream/oauth-parse.h"
#include "daemon/upstream/oauth-store.h"
#include "tests/unit/test.h"

static void check_param(const char *ch, const char *name, const char *want)
{
    char *v = oauth_challenge_param(ch, name);
    CHECK_STREQ(v, want);
    free(v);
}

static void test_challenge(void)
{
    const char *ch = "Bearer error=\"insufficient_scope\", scope=\"a b\", "
                     "resource_metadata=\"http://h/.well-known/oauth-protected-resource/mcp\"";

    check_param(ch, "scope", "a b");
    check_param(ch, "error", "insufficient_scope");
    check_param(ch, "resource_metadata", "http://h/.well-known/oauth-protected-resource/mcp");
    check_param(ch, "realm", NULL);
    /* Unquoted values, and a name that is only the tail of another is not it. */
    check_param("Bearer realm=x, myscope=\"no\", scope=read", "scope", "read");
    check_param("Bearer scope=\"unterminated", "scope", NULL);
    check_param(NULL, "scope", NULL);
}

static void test_pkce(void)
{
    /* RFC 7636 appendix B. */
    char *c = oauth_pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
    CHECK_STREQ(c, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    free(c);
}

static void test_resource(void)
{
    CHECK(oauth_resource_matches("http://h:1/mcp", "http://h:1/mcp"));
    CHECK(oauth_resource_matches("http://h:1", "http://h:1/mcp"));
    CHECK(oauth_resource_matches("http://h:1/", "http://h:1/mcp/"));
    CHECK(!oauth_resource_matches("http://h:1/mc", "http://h:1/mcp"));
    CHECK(!oauth_resource_matches("http://h:1/other", "http://h:1/mcp"));
    CHECK(!oauth_resource_matches("http://evil:1/mcp", "http://h:1/mcp"));
    CHECK(!oauth_resource_matches("https://h:1/mcp", "http://h:1/mcp"));
    CHECK(!oauth_resource_matches("garbage", "http://h:1/mcp"));
}

static void test_encoding(void)
{
    StrBuf sb = STRBUF_INIT;
    char *b;

    b = base64_encode("id:sec", 6, false);
    CHECK_STREQ(b, "aWQ6c2Vj");
    free(b);
    b = base64_encode("\xfb\xff", 2, true);
    CHECK_STREQ(b, "-_8");
    free(b);
    b = base64_encode("\xfb\xff", 2, false);
    CHECK_STREQ(b, "+/8=");
    free(b);
    fetch_form_add(&sb, "a", "x y&z");
    fetch_form_add(&sb, "b", "http://h/c?d=1");
    CHECK_STREQ(strbuf_str(&sb), "a=x%20y%26z&b=http%3A%2F%2Fh%2Fc%3Fd%3D1");
    strbuf_deinit(&sb);
}

static void test_store(void)
{
    char *dir = test_tmpdir(), *path, *why = NULL;
    OAuthToken t = {0};
    const OAuthToken *got;
    struct stat st;

    setenv("XDG_STATE_HOME", dir, 1);
    oauth_store_reset();
    path = oauth_store_path();
    CHECK(strstr(path, "/mcpd/oauth-tokens.json") != NULL);
    CHECK(oauth_store_find("http://h/mcp") == NULL);
    t.resource = (char *)"http://h/mcp";
    t.issuer = (char *)"http://as";
    t.access_token = (char *)"at-1";
    t.refresh_token = (char *)"rt-1";
    CHECK_INTEQ(oauth_store_put(&t, &why), 0);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    /* Rotation replaces the entry, on disk too: a fresh load sees only the new one. */
    t.access_token = (char *)"at-2";
    t.refresh_token = (char *)"rt-2";
    CHECK_INTEQ(oauth_store_put(&t, &why), 0);
    oauth_store_reset();
    got = oauth_store_find("http://h/mcp");
    CHECK(got && streq(got->refresh_token, "rt-2") && streq(got->access_token, "at-2"));
    CHECK_INTEQ(oauth_store_remove("http://h/mcp", &why), 0);
    CHECK_INTEQ(oauth_store_remove("http://h/mcp", &why), OAUTH_STORE_E_NONE);
    oauth_store_reset();
    CHECK(oauth_store_find("http://h/mcp") == NULL);
    /* A store others can read is not used. */
    CHECK_INTEQ(oauth_store_put(&t, &why), 0);
    chmod(path, 0644);
    oauth_store_reset();
    CHECK(oauth_store_find("http://h/mcp") == NULL);
    oauth_store_reset();
    free(why);
    free(path);
    test_rm_rf(dir);
    free(dir);
}

/* Issue 40: generations tell sign-in states apart; client bindings and the resource persist. */
static void test_store_state(void)
{
    char *dir = test_tmpdir(), *why = NULL;
    OAuthToken t = {0};
    const OAuthToken *got;
    uint64_t g1, g2;

    setenv("XDG_STATE_HOME", dir, 1);
    oauth_store_reset();
    CHECK(oauth_store_generation("http://h/mcp") == 0);
    t.resource = (char *)"http://h/mcp";
    t.token_resource = (char *)"http://h/";
    t.access_token = (char *)"at-1";
    CHECK_INTEQ(oauth_store_put(&t, &why), 0);
    g1 = oauth_store_generation("http://h/mcp");
    CHECK_INTEQ(oauth_store_put(&t, &why), 0);
    g2 = oauth_store_generation("http://h/mcp");
    CHECK(g1 != 0 && g2 != 0 && g1 != g2);
    /* A reload gives new generations, never one handed out before. */
    oauth_store_reset();
    got = oauth_store_find("http://h/mcp");
    CHECK(got && got->generation != g1 && got->generation != g2);
    CHECK(got && streq(got->token_resource, "http://h/"));
    /* Bindings: recorded, replaced, kept across a removal of the sign-in and a reload. */
    CHECK(oauth_store_client_issuer("http://h/mcp", "cid") == NULL);
    CHECK_INTEQ(oauth_store_bind_client("http://h/mcp", "cid", "https://as1", &why), 0);
    CHECK_INTEQ(oauth_store_bind_client("http://h/mcp", "other", "https://as3", &why), 0);
    CHECK_INTEQ(oauth_store_bind_client("http://h/mcp", "cid", "https://as2", &why), 0);
    CHECK_INTEQ(oauth_store_remove("http://h/mcp", &why), 0);
    oauth_store_reset();
    CHECK_STREQ(oauth_store_client_issuer("http://h/mcp", "cid"), "https://as2");
    CHECK_STREQ(oauth_store_client_issuer("http://h/mcp", "other"), "https://as3");
    CHECK(oauth_store_client_issuer("http://other/mcp", "cid") == NULL);
    CHECK(oauth_store_find("http://h/mcp") == NULL);
    oauth_store_reset();
    free(why);
    test_rm_rf(dir);
    free(dir);
}

static void check_meta(const char *expected, const char *got, int want, const char *part)
{
    char *why = NULL;

    CHECK_INTEQ(oauth_check_metadata_issuer(expected, got, "http://as/.well-known/x", &why), want);
    CHECK(want == 0 ? why == NULL
                    : why && strstr(why, part) && strstr(why, "http://as/.well-known/x"));
    free(why);
}

static void check_iss(const char *iss, bool advertised, int want, const char *part)
{
    char *why = NULL;

    CHECK_INTEQ(oauth_check_response_iss("https://as.example/t1", iss, advertised, &why), want);
    CHECK(want == 0 ? why == NULL
                    : why && strstr(why, part) && strstr(why, "https://as.example/t1"));
    free(why);
}

static void check_union(const char *a, const char *b, const char *want)
{
    char *u = oauth_scope_union(a, b);
    CHECK_STREQ(u, want);
    free(u);
}

static void test_scope_union(void)
{
    check_union("mcp:basic", "mcp:write", "mcp:basic mcp:write");
    check_union("a b", "b  c a", "a b c");
    check_union(NULL, "x", "x");
    check_union("x", NULL, "x");
    check_union(NULL, NULL, NULL);
    check_union("  ", "", NULL);
    /* Whole words only: "read" is not in "read:all". */
    check_union("read:all", "read", "read:all read");
}

static void test_issuer(void)
{
    /* RFC 8414 3.3: exactly the issuer the well-known URL was built from. */
    check_meta("https://as.example/t1", "https://as.example/t1", 0, NULL);
    check_meta("https://as.example/t1", "https://attacker.example", -EPERM, "attacker.example");
    check_meta("https://as.example/t1", "https://as.example/t1/", -EPERM, "t1/");
    check_meta("https://as.example/t1", "HTTPS://as.example/t1", -EPERM, "HTTPS");
    check_meta("https://as.example/t1", NULL, -EPERM, "no \"issuer\"");
    /* RFC 9207: a present iss must match, advertised or not; absent only when not advertised. */
    check_iss("https://as.example/t1", true, 0, NULL);
    check_iss("https://as.example/t1", false, 0, NULL);
    check_iss(NULL, false, 0, NULL);
    check_iss(NULL, true, -EPERM, "authorization_response_iss_parameter_supported");
    check_iss("https://evil.example.com", true, -EPERM, "evil.example.com");
    check_iss("https://evil.example.com", false, -EPERM, "evil.example.com");
    check_iss("https://as.example/t1/", true, -EPERM, "t1/");
    check_iss("", false, -EPERM, "run mcpctl login again");
}

int main(void)
{
    RUN(test_challenge);
    RUN(test_pkce);
    RUN(test_resource);
    RUN(test_encoding);
    RUN(test_issuer);
    RUN(test_scope_union);
    RUN(test_store);
    RUN(test_store_state);
    return test_main_result();
}
