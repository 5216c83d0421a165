// SPDX-License-Identifier: MIT
// test-oauth-redirect-listener: a local process attacks the sign-in's redirect listener, against
// the real mcpd.

/*
 * Round 3 of the attacks on OAuth (task h-red3). The redirect listener is a loopback port any
 * process on the machine can find. Before: one redirect with the wrong state ended the sign-in
 * (any process could cancel a person's login), connections were accepted without bound, and a
 * redirect that came while the client was still being registered (no state chosen yet) crashed
 * mcpd. Now a foreign redirect is answered and ignored while the sign-in waits on, the
 * connections open at once are bounded (the oldest goes), and the early redirect is ignored too.
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
/* Idle connections opened on the listener: well past its bound of 16 (LISTENER_MAX_CONNS). */
#define IDLE_CONNS 100
/* The listener's bound (oauth-listener.c) and slack for curl's own connections meanwhile. */
#define LISTENER_CONNS_MAX 16
#define FD_SLACK           4
/* Agents opened to use up mcpd's fds (its limit is set to its count + 8 first). */
#define EMFILE_AGENTS 32
/* How long mcpd's CPU time is watched while it cannot accept: a spin shows as nearly all of it. */
#define EMFILE_WATCH_MS 2000

/* A loopback port nothing listens on now (bound, read, released). */
static int free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* GET url with curl: "<status> <body>" (to free); status 000 when nothing answered. */
static char *get(const char *url, bool follow)
{
    int status = -1;
    char *out =
        h_shell(&status, "curl -s %s -m 20 -w ' %%{http_code}' '%s'", follow ? "-L" : "", url);
    return out ? out : xstrdup("");
}

static void check_ignored(int lport, const char *query)
{
    _cleanup_free_ char *url = xasprintf("http://127.0.0.1:%d/callback%s", lport, query);
    _cleanup_free_ char *out = get(url, false);

    CHECK_MSG(strstr(out, "was ignored") && strstr(out, " 400"), "redirect %s: %.300s", query, out);
}

static pid_t start_raw(Harness *h, const char *mode, int *portp)
{
    _cleanup_free_ char *port_file = xasprintf("%s/raw.port", h->dir);
    _cleanup_free_ char *out = xasprintf("%s/raw.out", h->dir);
    char *argv[] = {
        getenv("RAW_HTTP_SERVER"), "--port-file", port_file, "--mode", (char *)mode, NULL};
    pid_t pid = bg_spawn(argv, "MCPD_TEST_TAG=", out);

    *portp = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK_MSG(*portp > 0, "the raw server did not start");
    return pid;
}

/*
 * A redirect while the client is still being registered: the listener is open, the state not
 * yet chosen. Before, comparing with the missing state crashed mcpd.
 */
static void check_early_redirect(Harness *h, mcpc_client *c, int cb_port)
{
    static const char login[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"mcpd/login\","
                                "\"params\":{\"server\":\"early\"}}\n";
    _cleanup_free_ char *url =
        xasprintf("http://127.0.0.1:%d/callback?state=forged&code=c1", cb_port);
    _cleanup_free_ char *out = NULL;
    int fd = h_raw_connect(h);

    CHECK(fd >= 0 && h_raw_write(fd, h_raw_initialize, strlen(h_raw_initialize)) &&
          h_raw_write(fd, login, strlen(login)));
    CHECK_MSG(bg_wait_port(cb_port, H_WAIT_MS), "the early sign-in's listener never opened");
    out = get(url, false);
    CHECK_MSG(strstr(out, "was ignored") && strstr(out, " 400"), "early redirect: %.300s", out);
    if (fd >= 0)
        close(fd);
    free(out);
    out = NULL;
    /* The sign-in still waits on its registration: logout ends it, listener and all. */
    CHECK_MSG(mcpc_request(c, "mcpd/logout", "{\"server\":\"early\"}", &out) == 0, "logout: %s",
              mcpc_errmsg(c));
    h_check_healthy(h, "a redirect before the sign-in chose its state", CONTROL);
}

/*
 * Foreign redirects (wrong state, none, no query) and a flood of idle connections: each redirect
 * is answered and ignored, mcpd holds at most the bound of connections, and the person's real
 * redirect (curl following the authorization URL) still signs in.
 */
static void check_foreign_redirects(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *out = NULL, *page = NULL;
    int fds[IDLE_CONNS], lport = 0, fd0, fd1 = 0;

    CHECK(mcpc_request(c, "mcpd/login", "{\"server\":\"o\"}", &out) == 0);
    _cleanup_json_ yajl_val r = json_parse(out ? out : "", NULL);
    const char *url = json_get_string(r, "authorizationUrl");
    const char *ru = url ? strstr(url, "redirect_uri=http%3A%2F%2F127.0.0.1%3A") : NULL;
    CHECK_MSG(ru &&
                  sscanf(ru + strlen("redirect_uri=http%3A%2F%2F127.0.0.1%3A"), "%d", &lport) == 1,
              "no loopback redirect_uri in %s", url ? url : "(none)");
    if (lport <= 0)
        return;
    check_ignored(lport, "?state=forged&code=c1&code=c2&state=x%0d%0aX:y");
    check_ignored(lport, "?code=c3");
    check_ignored(lport, "");

    fd0 = h_mcpd_fds(h);
    for (int i = 0; i < IDLE_CONNS; i++)
        fds[i] = bg_tcp_connect(lport);
    /* mcpd accepts them as its loop gets to them: wait until the count stops moving. */
    for (int i = 0, last = -1; i < 50 && (fd1 = h_mcpd_fds(h)) != last; i++) {
        last = fd1;
        h_sleep_ms(200);
    }
    fprintf(stderr, "  %d idle connections: mcpd fds %d -> %d\n", IDLE_CONNS, fd0, fd1);
    CHECK_MSG(fd1 - fd0 <= LISTENER_CONNS_MAX + FD_SLACK,
              "%d idle connections: mcpd fds went from %d to %d", IDLE_CONNS, fd0, fd1);

    page = get(url, true);
    CHECK_MSG(strstr(page, "Signed in to mcpd.") && strstr(page, " 200"), "real redirect: %.300s",
              page);
    free(out);
    out = NULL;
    CHECK_MSG(mcpc_request(c, "mcpd/loginWait", "{\"server\":\"o\"}", &out) == 0 && out &&
                  strstr(out, "\"signedIn\":true"),
              "after foreign redirects, loginWait gave %s", out ? out : mcpc_errmsg(c));
    for (int i = 0; i < IDLE_CONNS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    /* One warning per sign-in (early's and this one), however many came. */
    CHECK_MSG(bg_count_lines(h->log, "ignored a redirect", NULL) == 2,
              "foreign redirects logged %d", bg_count_lines(h->log, "ignored a redirect", NULL));
    CHECK_MSG(bg_count_lines(h->log, "closing the oldest", NULL) == 1, "connection bound logged %d",
              bg_count_lines(h->log, "closing the oldest", NULL));
    CHECK(h_wait_state(c, "o", "connected", H_WAIT_MS));
    h_settle(h, c, "steady", "o", NULL);
    h_check_healthy(h, "foreign redirects and 100 idle connections", CONTROL);
}

/* CPU time (user + system) of pid so far, in ms; -1 when unreadable. */
static long cpu_ms(pid_t pid)
{
    _cleanup_free_ char *path = xasprintf("/proc/%d/stat", (int)pid);
    _cleanup_free_ char *text = h_read_file(path);
    const char *p = text ? strrchr(text, ')') : NULL;
    unsigned long utime, stime;

    /* Fields after "pid (comm) ": state ... utime is the 12th, stime the 13th. */
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return -1;
    return (long)((utime + stime) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

/*
 * Out of fds while a sign-in's listener waits: a browser's connection cannot be accepted.
 * Before, the listening socket stayed readable and libevent retried accept at once, forever: a
 * busy loop (a whole CPU) for as long as the fds lasted. Now the listener pauses between tries.
 */
static void check_out_of_fds(Harness *h, mcpc_client *c, int cb_port)
{
    static const char login[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"mcpd/login\","
                                "\"params\":{\"server\":\"early\"}}\n";
    int agent = h_raw_connect(h), fds[EMFILE_AGENTS], n = 0, browser;
    long before, spent;
    _cleanup_free_ char *out = NULL;

    CHECK(agent >= 0 && h_raw_write(agent, h_raw_initialize, strlen(h_raw_initialize)) &&
          h_raw_write(agent, login, strlen(login)));
    CHECK_MSG(bg_wait_port(cb_port, H_WAIT_MS), "the sign-in's listener never opened");
    /* mcpd's fds: what it holds now and a few more, then agents until none is left. */
    /* The soft limit only: the hard one stays, so it can be raised again below. */
    h_sh("prlimit --pid %d --nofile=%d:", (int)h->pid, h_mcpd_fds(h) + 8);
    for (; n < EMFILE_AGENTS; n++)
        fds[n] = h_raw_connect(h);
    h_sleep_ms(500); /* mcpd accepts what it can, then its agents' listener pauses too */
    browser = bg_tcp_connect(cb_port);
    h_sleep_ms(300); /* the connection waits in the backlog; mcpd tries to accept it */
    before = cpu_ms(h->pid);
    h_sleep_ms(EMFILE_WATCH_MS);
    spent = cpu_ms(h->pid) - before;
    fprintf(stderr, "  out of fds with a redirect waiting: mcpd used %ld ms of CPU in %d ms\n",
            spent, EMFILE_WATCH_MS);
    CHECK_MSG(before >= 0 && spent < EMFILE_WATCH_MS / 4,
              "out of fds, mcpd spun on the redirect listener: %ld ms of CPU in %d ms", spent,
              EMFILE_WATCH_MS);
    CHECK_MSG(bg_count_lines(h->log, "redirect listener", "cannot accept") == 1,
              "the accept failure was logged %d times",
              bg_count_lines(h->log, "redirect listener", "cannot accept"));
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (browser >= 0)
        close(browser);
    close(agent);
    h_sh("prlimit --pid %d --nofile=1024:", (int)h->pid);
    CHECK_MSG(mcpc_request(c, "mcpd/logout", "{\"server\":\"early\"}", &out) == 0, "logout: %s",
              mcpc_errmsg(c));
    h_check_healthy(h, "a redirect listener out of fds", CONTROL);
}

int main(void)
{
    _cleanup_free_ char *port_file = NULL, *out_file = NULL, *cfg = NULL;
    Harness h;
    mcpc_client *c;
    int port, raw_port, cb_port = free_port();

    h_setup(&h, "oauth-redirect-listener");
    port_file = xasprintf("%s/oauth.port", h.dir);
    out_file = xasprintf("%s/oauth.out", h.dir);
    char *argv[] = {getenv("OAUTH_SERVER"), "--port-file", port_file, NULL};
    /* Not tagged as mcpd's: the remote side. */
    pid_t srv = bg_spawn(argv, "MCPD_TEST_TAG=", out_file);
    port = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK(port > 0 && cb_port > 0);
    pid_t raw = start_raw(&h, "oauth-hang-register", &raw_port);
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}, \"o\": {\"url\": "
                    "\"http://127.0.0.1:%d/mcp\", \"timeout\": 20000}, \"early\": {\"url\": "
                    "\"http://127.0.0.1:%d/mcp\", \"reconnect\": false, \"oauth\": "
                    "{\"callbackPort\": %d}}}}",
                    h_fake(), port, raw_port, cb_port);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "oauth-redirect-listener");
    h_settle(&h, c, "steady", NULL);

    check_early_redirect(&h, c, cb_port);
    check_foreign_redirects(&h, c);
    check_out_of_fds(&h, c, cb_port);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(raw);
    bg_stop(srv);
    h_teardown(&h);
    return h_finish("test-oauth-redirect-listener");
}
