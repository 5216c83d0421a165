// SPDX-License-Identifier: MIT
// test-oauth-token-endpoint: a hostile token endpoint (200 KB token, expires_in past any clock, 1 s
// tokens).

/*
 * Round 2 of the attacks on OAuth (task h-red2), through oauth-server's faults. An expires_in of
 * 2^63-1 overflowed "seconds times 1000" (undefined behaviour: UBSan stops mcpd); a 200 KB
 * access token was stored and sent in every request's headers; tokens that live one second were
 * refreshed every 800 ms for as long as mcpd ran. Each must be refused or bounded, with the
 * daemon serving everyone else.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* How long the 1 s tokens are watched, and the refreshes allowed in it (one per 5 s, plus one). */
#define WATCH_MS      10000
#define REFRESHES_MAX 3
/* The longest life mcpd may take from expires_in: a year and a day, with a day of slack. */
#define EXPIRY_MAX_MS (368LL * 24 * 3600 * 1000)
/* Idle connections held open on the redirect listener while the forged redirect comes. */
#define IDLE_CONNS 50

static void srv_get(int port, const char *path)
{
    int status = -1;
    _cleanup_free_ char *out = h_shell(
        &status, "curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d%s", port, path);

    CHECK_MSG(status == 0 && out && streq(out, "200"), "GET %s: %s", path, out ? out : "");
}

static long refreshes(int port)
{
    int status = -1;
    _cleanup_free_ char *out = h_shell(&status, "curl -s http://127.0.0.1:%d/stats", port);
    _cleanup_json_ yajl_val v = json_parse(out ? out : "", NULL);
    int64_t n = -1;

    CHECK_MSG(json_get_int(v, "refreshes", &n) == 0, "stats: %s", out ? out : "");
    return (long)n;
}

static char *store_text(const Harness *h)
{
    _cleanup_free_ char *p = xasprintf("%s/state/mcpd/oauth-tokens.json", h->dir);
    char *t = h_read_file(p);
    return t ? t : xstrdup("");
}

static int login(mcpc_client *c, char **outp)
{
    free(*outp);
    *outp = NULL;
    return mcpc_request(c, "mcpd/login", "{\"server\":\"o\",\"headless\":true}", outp);
}

/*
 * The redirect listener under attack: connections that never send a byte, then a redirect with
 * a forged state and injected parameters. It is answered at once (the idle ones hold nothing
 * up), and once the sign-in ends the listener's connections are all closed.
 */
static void check_forged_redirect(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *out = NULL, *cb = NULL;
    int fds[IDLE_CONNS], lport = 0, status = -1;

    CHECK(mcpc_request(c, "mcpd/login", "{\"server\":\"o\"}", &out) == 0);
    _cleanup_json_ yajl_val r = json_parse(out ? out : "", NULL);
    const char *url = json_get_string(r, "authorizationUrl");
    const char *ru = url ? strstr(url, "redirect_uri=http%3A%2F%2F127.0.0.1%3A") : NULL;
    CHECK_MSG(ru &&
                  sscanf(ru + strlen("redirect_uri=http%3A%2F%2F127.0.0.1%3A"), "%d", &lport) == 1,
              "no loopback redirect_uri in %s", url ? url : "(none)");
    if (lport <= 0)
        return;
    for (int i = 0; i < IDLE_CONNS; i++)
        fds[i] = bg_tcp_connect(lport);
    cb = h_shell(&status,
                 "curl -s -m 20 -o /dev/null -w '%%{http_code}' "
                 "'http://127.0.0.1:%d/callback?state=forged&code=c1&code=c2&state=x%%0d%%0aX:y'",
                 lport);
    CHECK_MSG(cb && streq(cb, "400"), "forged redirect: HTTP %s", cb ? cb : "(none)");
    free(out);
    out = NULL;
    /* The forgery is ignored and the sign-in waits on (test-oauth-redirect-listener): logout ends
     * it. */
    CHECK_MSG(mcpc_request(c, "mcpd/logout", "{\"server\":\"o\"}", &out) == 0,
              "forged redirect: logout gave %s", mcpc_errmsg(c));
    for (int i = 0; i < IDLE_CONNS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    h_check_healthy(h, "a forged redirect behind 50 idle connections", CONTROL);
}

int main(void)
{
    _cleanup_free_ char *port_file = NULL, *out_file = NULL, *cfg = NULL, *out = NULL;
    _cleanup_free_ char *store = NULL;
    Harness h;
    mcpc_client *c;
    int port, r;

    h_setup(&h, "oauth-token-endpoint");
    port_file = xasprintf("%s/oauth.port", h.dir);
    out_file = xasprintf("%s/oauth.out", h.dir);
    char *argv[] = {getenv("OAUTH_SERVER"), "--port-file", port_file, "--expires-in", "1", NULL};
    /* Not tagged as mcpd's: the remote side. */
    pid_t srv = bg_spawn(argv, "MCPD_TEST_TAG=", out_file);
    port = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK(port > 0);
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}, \"o\": {\"url\": "
                    "\"http://127.0.0.1:%d/mcp\", \"timeout\": 20000}}}",
                    h_fake(), port);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "oauth-token-endpoint");
    h_settle(&h, c, "steady", NULL);

    check_forged_redirect(&h, c);

    /* A 200 KB access token: refused, naming the bound; nothing stored. */
    srv_get(port, "/fault/huge-token");
    r = login(c, &out);
    CHECK_MSG(r != 0 && strstr(mcpc_errmsg(c), "longer than mcpd's bound of 16384 bytes"),
              "huge token: login gave %d: %s", r, r ? mcpc_errmsg(c) : out);
    store = store_text(&h);
    CHECK_MSG(!strstr(store, "AAAAAAAA"), "huge token: stored (%zu bytes)", strlen(store));
    h_check_healthy(&h, "a 200 KB access token", CONTROL);

    /* expires_in = 2^63-1: the sign-in works, the life taken is bounded, mcpd does not trap. */
    srv_get(port, "/fault/huge-expiry");
    r = login(c, &out);
    CHECK_MSG(r == 0, "huge expiry: login gave %d: %s", r, r ? mcpc_errmsg(c) : out);
    {
        _cleanup_json_ yajl_val st = h_status(c);
        yajl_val si = json_get_object(h_server(st, "o"), "signIn");
        int64_t at = 0;
        CHECK_MSG(json_get_int(si, "expiresAt", &at) == 0 && at > wall_ms() &&
                      at < wall_ms() + EXPIRY_MAX_MS,
                  "huge expiry: expiresAt %lld", (long long)at);
    }
    /* Signed in, curl keeps connections to the remote server: they are part of the baseline. */
    CHECK(h_wait_state(c, "o", "connected", H_WAIT_MS));
    h_settle(&h, c, "steady", NULL);
    h_check_healthy(&h, "expires_in of 2^63-1", CONTROL);

    /* Tokens of 1 s: refreshed at most every 5 s, not in a loop. */
    srv_get(port, "/fault/none");
    r = login(c, &out);
    CHECK_MSG(r == 0, "1 s tokens: login gave %d: %s", r, r ? mcpc_errmsg(c) : out);
    long r0 = refreshes(port);
    h_sleep_ms(WATCH_MS);
    long n = refreshes(port) - r0;
    fprintf(stderr, "  1 s tokens: %ld refreshes in %d ms\n", n, WATCH_MS);
    CHECK_MSG(n <= REFRESHES_MAX, "1 s tokens: %ld refreshes in %d ms", n, WATCH_MS);
    h_check_healthy(&h, "tokens that live one second", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(srv);
    h_teardown(&h);
    return h_finish("test-oauth-token-endpoint");
}
