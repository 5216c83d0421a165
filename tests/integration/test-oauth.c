// SPDX-License-Identifier: MIT
// test-oauth: sign-in to a remote server against tests/helpers/oauth-server (resource server and
// authorization server in one): needs-auth, login, call, expiry, refresh with a rotated refresh
// token kept on disk, revocation back to needs-auth, logout; the token never shows anywhere.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Access tokens live this long (the daemon refreshes after four fifths of it). */
#define TOKEN_LIFETIME_S  "12"
#define TOKEN_LIFETIME_MS 12000

/* One GET to 127.0.0.1:port; returns the status code or -1, and the Location if asked. */
static int http_get_loc(int port, const char *path, char **locationp)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    char buf[8192], *loc;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), code = -1;
    size_t got = 0;
    ssize_t n;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    n = snprintf(buf, sizeof(buf), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (write(fd, buf, (size_t)n) == n) {
        while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
            got += (size_t)n;
        buf[got] = '\0';
        if (got > 12)
            code = atoi(buf + 9);
    }
    close(fd);
    if (locationp && (loc = strcasestr(buf, "\r\nLocation: ")))
        *locationp = strndup(loc + 12, strcspn(loc + 12, "\r\n"));
    return code;
}

static int http_get(int port, const char *path)
{
    return http_get_loc(port, path, NULL);
}

/* A person's browser: open the authorization URL, follow its redirect to mcpd's listener. */
static bool browse(const char *url)
{
    _cleanup_free_ char *loc = NULL;
    int port = 0, off = 0, code;

    if (sscanf(url, "http://127.0.0.1:%d%n", &port, &off) != 1 || !off)
        return false;
    code = http_get_loc(port, url + off, &loc);
    if (code != 302 || !loc || sscanf(loc, "http://127.0.0.1:%d%n", &port, &off) != 1)
        return false;
    return http_get(port, loc + off) == 200;
}

static char *store_text(const Harness *h)
{
    _cleanup_free_ char *p = xasprintf("%s/state/mcpd/oauth-tokens.json", h->dir);
    char *t = h_read_file(p);
    return t ? t : xstrdup("");
}

/* The current access token (from the store) is in none of: status, discover, log, tool cache. */
static void check_no_leak(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *store = store_text(h), *st_text = NULL, *disc = NULL, *log = NULL;
    _cleanup_free_ char *cache_cmd = NULL;
    _cleanup_json_ yajl_val st = h_status(c), sj = json_parse(store, NULL);
    yajl_val toks = json_get_array(sj, "tokens");
    const char *at = json_get_string(json_array_at(toks, 0), "accessToken");
    const char *rt = json_get_string(json_array_at(toks, 0), "refreshToken");

    CHECK_MSG(at && rt, "no token in the store: %s", store);
    if (!at || !rt)
        return;
    st_text = json_to_string(st);
    CHECK_MSG(!strstr(st_text, at) && !strstr(st_text, rt), "a token shows in mcpd/status");
    CHECK(mcpc_request(c, "mcpd/discover", NULL, &disc) == 0);
    CHECK_MSG(disc && !strstr(disc, at), "a token shows in mcpd/discover");
    log = h_read_file(h->log);
    CHECK_MSG(log && !strstr(log, at) && !strstr(log, rt), "a token shows in the log");
    cache_cmd = xasprintf("! grep -rqs -e '%s' -e '%s' '%s/cache'", at, rt, h->dir);
    CHECK_MSG(system(cache_cmd) == 0, "a token shows in the tool cache");
}

/* Whether the stored refresh token changed between two texts of the store. */
static bool rotated(const char *before, const char *after)
{
    _cleanup_json_ yajl_val a = json_parse(before, NULL), b = json_parse(after, NULL);
    const char *r0 = json_get_string(json_array_at(json_get_array(a, "tokens"), 0), "refreshToken");
    const char *r1 = json_get_string(json_array_at(json_get_array(b, "tokens"), 0), "refreshToken");

    return r0 && r1 && !streq(r0, r1);
}

/* A sign-in against a faulty authorization server fails with a clear error; nothing is stored. */
static void check_fault(Harness *h, mcpc_client *c, int port, const char *fault, const char *want)
{
    _cleanup_free_ char *path = xasprintf("/fault/%s", fault), *out = NULL, *store = NULL;
    const char *msg;
    int r;

    CHECK(http_get(port, path) == 200);
    r = mcpc_request(c, "mcpd/login", "{\"server\":\"o\",\"headless\":true}", &out);
    msg = mcpc_errmsg(c);
    CHECK_MSG(r != 0 && strstr(msg, "sign-in to server o failed at") && strstr(msg, want),
              "%s: login gave %d: %s", fault, r, r ? msg : out);
    store = store_text(h);
    CHECK_MSG(!strstr(store, "accessToken"), "%s: something was stored: %s", fault, store);
    CHECK(h_wait_needs_auth(c, "o", H_WAIT_MS));
}

int main(void)
{
    Harness h;
    const char *bin = getenv("OAUTH_SERVER");
    char port_file[400], srv_log[400], out_file[400];
    _cleanup_free_ char *cfg = NULL, *out = NULL, *t = NULL, *before = NULL, *after = NULL;
    char *argv[8];
    struct stat sb;
    int port, is_error = -1;
    pid_t pid;
    mcpc_client *c;

    h_setup(&h, "oauth");
    snprintf(port_file, sizeof(port_file), "%s/oauth.port", h.dir);
    snprintf(srv_log, sizeof(srv_log), "%s/oauth.log", h.dir);
    snprintf(out_file, sizeof(out_file), "%s/oauth.out", h.dir);
    argv[0] = (char *)bin;
    argv[1] = "--port-file";
    argv[2] = port_file;
    argv[3] = "--log";
    argv[4] = srv_log;
    argv[5] = "--expires-in";
    argv[6] = TOKEN_LIFETIME_S;
    argv[7] = NULL;
    {
        /* Untagged: the helper is the remote side, not a process of mcpd's. */
        _cleanup_free_ char *tag = xstrdup(getenv("MCPD_TEST_TAG"));
        unsetenv("MCPD_TEST_TAG");
        pid = bg_spawn(argv, NULL, out_file);
        setenv("MCPD_TEST_TAG", tag, 1);
    }
    port = bg_wait_port_file(port_file, H_WAIT_MS);
    if (port < 0) {
        fprintf(stderr, "oauth-server did not start\n");
        return 99;
    }
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}, \"o\": {\"url\": "
                    "\"http://127.0.0.1:%d/mcp\", \"timeout\": 20000}}}",
                    h_fake(), port);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "agent");

    /* 1. No sign-in: needs-auth, and the way out is in the error. */
    CHECK(h_wait_needs_auth(c, "o", H_WAIT_MS));
    {
        _cleanup_json_ yajl_val st = h_status(c);
        const char *e = json_get_string(h_server(st, "o"), "lastError");
        CHECK_MSG(e && strstr(e, "run: mcpctl login o"), "lastError: %s", e ? e : "(none)");
    }
    /* Bad requests: unknown server, a stdio server. */
    CHECK(mcpc_request(c, "mcpd/login", "{\"server\":\"nope\"}", &out) != 0);
    CHECK(mcpc_request(c, "mcpd/login", "{\"server\":\"steady\"}", &out) != 0);
    CHECK(mcpc_request(c, "mcpd/loginWait", "{\"server\":\"o\"}", &out) != 0);

    /* Bad answers end the attempt with the server and the step named, and keep nothing. */
    check_fault(&h, c, port, "garbage-meta", "authorization server metadata");
    check_fault(&h, c, port, "no-pkce", "does not advertise PKCE S256");
    check_fault(&h, c, port, "other-resource", "refusing it");
    check_fault(&h, c, port, "bad-state", "state does not match");
    check_fault(&h, c, port, "no-access-token", "no usable \"access_token\"");
    check_fault(&h, c, port, "wrong-iss", "not from the authorization server");
    check_fault(&h, c, port, "meta-issuer", "names the issuer \"https://attacker.example\"");
    CHECK(http_get(port, "/fault/none") == 200);

    /* 2. Login as a person does it: the URL, a browser, the redirect to mcpd's listener. */
    CHECK(mcpc_request(c, "mcpd/login", "{\"server\":\"o\"}", &out) == 0);
    {
        _cleanup_json_ yajl_val r = json_parse(out ? out : "", NULL);
        const char *url = json_get_string(r, "authorizationUrl");
        CHECK_MSG(url && strstr(url, "code_challenge_method=S256") && strstr(url, "state=") &&
                      strstr(url, "resource="),
                  "login gave %s", out ? out : "(null)");
        CHECK_MSG(url && browse(url), "the browser's round trip failed");
    }
    free(out);
    out = NULL;
    CHECK(mcpc_request(c, "mcpd/loginWait", "{\"server\":\"o\"}", &out) == 0);
    CHECK_MSG(out && strstr(out, "\"signedIn\":true"), "loginWait gave %s", out ? out : "(null)");
    CHECK(h_wait_state(c, "o", "connected", H_WAIT_MS));
    t = h_call_text(c, "mcp_o_whoami", NULL, &is_error);
    CHECK_MSG(is_error == 0 && t && strstr(t, "signed-in call"), "call gave %s", t ? t : "");
    free(t);
    t = NULL;
    {
        _cleanup_free_ char *p = xasprintf("%s/state/mcpd/oauth-tokens.json", h.dir);
        CHECK(stat(p, &sb) == 0 && (sb.st_mode & 0777) == 0600);
    }
    check_no_leak(&h, c);
    {
        _cleanup_json_ yajl_val st = h_status(c);
        yajl_val si = json_get_object(h_server(st, "o"), "signIn");
        CHECK_MSG(si && YAJL_IS_TRUE(json_get(si, "refreshable")) && json_get(si, "expiresAt"),
                  "status has no signIn summary");
    }

    /* 3a. Before expiry the token is refreshed: the first call after its end just works. */
    before = store_text(&h);
    h_sleep_ms(TOKEN_LIFETIME_MS - 1000);
    after = store_text(&h);
    CHECK_MSG(rotated(before, after), "no refresh before expiry (rotated token on disk)");
    t = h_call_text(c, "mcp_o_whoami", NULL, &is_error);
    CHECK_MSG(is_error == 0, "the first call after expiry gave %s", t ? t : "");
    free(t);
    t = NULL;

    /* 3b. A 401 (token ended early) is answered by one refresh and a reconnect. */
    free(before);
    before = store_text(&h);
    CHECK(http_get(port, "/expire-access") == 200);
    t = h_call_text(c, "mcp_o_whoami", NULL, &is_error); /* may fail: it met the 401 */
    free(t);
    t = NULL;
    CHECK(h_wait_state(c, "o", "connected", H_WAIT_MS));
    for (int waited = 0; waited < H_WAIT_MS; waited += 100) {
        t = h_call_text(c, "mcp_o_whoami", NULL, &is_error);
        if (is_error == 0)
            break;
        free(t);
        t = NULL;
        h_sleep_ms(100);
    }
    CHECK_MSG(is_error == 0, "no call worked after the refresh: %s", t ? t : "");
    free(after);
    after = store_text(&h);
    CHECK_MSG(rotated(before, after), "no refresh after the 401 (rotated token on disk)");
    check_no_leak(&h, c);

    /* 4. Revocation: the next request meets 401, nothing can refresh: back to needs-auth. */
    CHECK(http_get(port, "/revoke-all") == 200);
    free(t);
    t = h_call_text(c, "mcp_o_whoami", NULL, &is_error);
    CHECK_MSG(is_error == 1, "a call with a revoked token gave %s", t ? t : "");
    CHECK(h_wait_needs_auth(c, "o", H_WAIT_MS));
    /* Signed out, the agent still sees the tool, and calling it names the way out. */
    free(t);
    t = h_call_text(c, "mcp_o_whoami", NULL, &is_error);
    CHECK_MSG(is_error == 1 && t && strstr(t, "mcpctl login o"), "a call while signed out gave %s",
              t ? t : "");

    /* 4b. Signing in again (headless: mcpd follows the redirect itself) brings it back. */
    free(out);
    out = NULL;
    CHECK(mcpc_request(c, "mcpd/login", "{\"server\":\"o\",\"headless\":true}", &out) == 0);
    CHECK_MSG(out && strstr(out, "\"signedIn\":true"), "login gave %s", out ? out : "(null)");
    CHECK(h_wait_state(c, "o", "connected", H_WAIT_MS));
    /*
     * The baseline holds the connections to the remote server that curl's cache keeps; after
     * reconnects and calls it has as many as it will have.
     */
    h_settle(&h, c, "steady", NULL);

    /* 5. Logout forgets the sign-in, a second one says so. */
    free(out);
    out = NULL;
    CHECK(mcpc_request(c, "mcpd/logout", "{\"server\":\"o\"}", &out) == 0);
    CHECK_MSG(out && strstr(out, "\"removed\":true"), "logout gave %s", out ? out : "");
    free(out);
    out = NULL;
    CHECK(mcpc_request(c, "mcpd/logout", "{\"server\":\"o\"}", &out) == 0);
    CHECK_MSG(out && strstr(out, "\"removed\":false"), "second logout gave %s", out ? out : "");
    {
        _cleanup_free_ char *s = store_text(&h);
        CHECK_MSG(!strstr(s, "127.0.0.1"), "the store still names the server: %s", s);
    }

    h_check_healthy(&h, "oauth sign-in, refresh, revocation, logout", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(pid);
    h_teardown(&h);
    return h_finish("test-oauth");
}
