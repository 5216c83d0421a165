// SPDX-License-Identifier: MIT
// test-oauth-holes: the sign-in's secrets go only where they belong (issue 40), tried as attacks.

/*
 * Hostile resource and authorization servers (tests/helpers/oauth-server.c) on loopback, and a
 * "third host" in a private network namespace: the test runs itself under `unshare -n -m`, gives
 * its loopback device a second, non-loopback address (10.200.0.2) and mounts a private
 * /etc/hosts in which 127.attacker.test is that address. So the name resolves through the real
 * resolver (glibc, /etc/hosts), not through a knob of the test's. Each check is one attack:
 *  1. a token endpoint at http://127.attacker.test: the secret, code and verifier must not go;
 *  2. another program on [::1]:PORT of a "localhost" redirect URI: the sign-in must not begin;
 *  3. the resource names another authorization server: the configured client id and secret
 *     must not go there;
 *  4. a refresh held by a slow token endpoint while mcpctl login signs in anew: the new
 *     sign-in's tokens must stay;
 *  5. the metadata's resource is the server's root: the refresh must send that resource;
 *  6. escape sequences in an endpoint and in an error description: nothing reaches the
 *     terminal or the log;
 *  7. a config's oauth.tokenUrl in plain http to another host: refused like a server's.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
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
/* The third host: an address of the namespace's own, outside 127.0.0.0/8. */
#define THIRD_ADDR "10.200.0.2"
#define THIRD_NAME "127.attacker.test"
/* mcpctl's own bound on each request: long enough for a loaded machine, short for a hang. */
#define CTL_TIMEOUT_MS 20000

typedef struct As {
    pid_t pid;
    int port;
    char *log;
} As;

static Harness h;

/* Start an oauth-server (extra: more arguments, NULL-ended) and wait for its port. */
static void as_start(As *as, const char *name, ...)
{
    _cleanup_free_ char *port_file = xasprintf("%s/%s.port", h.dir, name);
    _cleanup_free_ char *out = xasprintf("%s/%s.out", h.dir, name);
    char *argv[16] = {getenv("OAUTH_SERVER"), "--port-file", port_file, "--log", NULL};
    size_t n = 4;
    va_list ap;

    as->log = xasprintf("%s/%s.log", h.dir, name);
    argv[n++] = as->log;
    va_start(ap, name);
    for (char *a; n < N_ELEMENTS(argv) - 1 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    /* Not tagged as mcpd's: the remote side. */
    as->pid = bg_spawn(argv, "MCPD_TEST_TAG=", out);
    as->port = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK_MSG(as->port > 0, "oauth-server %s did not start", name);
}

static void as_get(const As *as, const char *path)
{
    h_sh("curl -s -m 10 -o /dev/null http://127.0.0.1:%d%s", as->port, path);
}

static void as_stop(As *as)
{
    bg_stop(as->pid);
    free(as->log);
}

/* mcpctl login SERVER ARGS: its output (stdout and stderr), *statusp its exit status. */
static char *login(int *statusp, const char *server, const char *args)
{
    char *out = h_shell(statusp, "'%s' --socket '%s' --timeout %d login %s %s 2>&1",
                        getenv("MCPCTL_BINARY"), h.socket, CTL_TIMEOUT_MS, server, args);
    return out ? out : xstrdup("");
}

/* Wait until the file at path has a line with a (and b), bounded. */
static bool wait_line(const char *path, const char *a, const char *b)
{
    for (int waited = 0; waited < H_WAIT_MS; waited += 50) {
        if (bg_count_lines(path, a, b) > 0)
            return true;
        h_sleep_ms(50);
    }
    return false;
}

/* The stored access token of resource (to free), or NULL. */
static char *stored_access(const char *resource)
{
    _cleanup_free_ char *p = xasprintf("%s/state/mcpd/oauth-tokens.json", h.dir);
    _cleanup_free_ char *text = h_read_file(p);
    _cleanup_json_ yajl_val v = json_parse(text ? text : "", NULL);
    yajl_val arr = json_get_array(v, "tokens");

    for (size_t i = 0; arr && i < arr->u.array.len; i++)
        if (streq(json_get_string(arr->u.array.values[i], "resource"), resource))
            return xstrdup(json_get_string(arr->u.array.values[i], "accessToken"));
    return NULL;
}

/* The last "code grant gave AT RT" of an authorization server's log: AT (to free). */
static char *last_code_grant(const As *as)
{
    _cleanup_free_ char *text = h_read_file(as->log);
    const char *p = text, *last = NULL;
    char at[64] = "";

    while (p && (p = strstr(p, "code grant gave ")))
        last = p++;
    if (last)
        sscanf(last + strlen("code grant gave "), "%63s", at);
    return xstrdup(at);
}

/* mcpctl login in the background, its output in a file: the link is followed meanwhile. */
static char *login_bg(const char *server)
{
    char *out = xasprintf("%s/login-%s.out", h.dir, server);

    h_sh("('%s' --socket '%s' --timeout %d login %s --no-browser >'%s' 2>&1; echo \"exit $?\" "
         ">>'%s') </dev/null >/dev/null 2>&1 &",
         getenv("MCPCTL_BINARY"), h.socket, CTL_TIMEOUT_MS, server, out, out);
    return out;
}

/* The sign-in link the background login printed (to free), or NULL once it ended without. */
static char *login_link(const char *out)
{
    for (int waited = 0; waited < H_WAIT_MS; waited += 50) {
        _cleanup_free_ char *text = h_read_file(out);
        const char *u = text ? strstr(text, "http://127.0.0.1:") : NULL;
        if (u)
            return xstrndup(u, strcspn(u, " \n"));
        if (text && strstr(text, "exit "))
            return NULL;
        h_sleep_ms(50);
    }
    return NULL;
}

/* Hole 1: plain http "to this machine" judged by the name's spelling. */
static void check_third_host(const As *third)
{
    _cleanup_free_ char *out = login_bg("third"), *url = login_link(out), *said = NULL;
    int st;

    /* The person follows the link: the code comes back, and mcpd asks for tokens. */
    if (url)
        free(h_shell(&st, "curl -s -m 20 -L -o /dev/null '%s'", url));
    CHECK_MSG(wait_line(out, "exit ", NULL), "the login never ended");
    said = h_read_file(out);
    CHECK_MSG(bg_count_lines(third->log, "TOKEN", NULL) == 0,
              "the third host %s (%s) received a token request: %d", THIRD_NAME, THIRD_ADDR,
              bg_count_lines(third->log, "TOKEN", NULL));
    CHECK_MSG(said && strstr(said, "exit 1") && strstr(said, THIRD_ADDR) &&
                  strstr(said, "not a loopback address") && strstr(said, THIRD_NAME),
              "login should fail saying where %s resolves: %s", THIRD_NAME, said ? said : "");
}

/* Hole 2: a "localhost" redirect URI whose ::1 side another program holds. */
static void check_localhost_redirect(int lport, int squatter)
{
    _cleanup_free_ char *out = login_bg("lh"), *url = login_link(out), *said = NULL;
    struct pollfd pfd = {.fd = squatter, .events = POLLIN};
    char buf[512] = "";
    int st;

    if (url) {
        /*
         * Before: the browser's redirect went to ::1 (where browsers try "localhost" first), to
         * the other program, code and all: the authorization server's redirect, followed in IPv6.
         */
        h_sh("(loc=$(curl -s -m 5 -o /dev/null -w '%%{redirect_url}' '%s'); curl -s -6 -m 5 -o "
             "/dev/null \"$loc\") </dev/null >/dev/null 2>&1 &",
             url);
        if (poll(&pfd, 1, 10000) == 1) {
            int fd = accept(squatter, NULL, NULL);
            if (fd >= 0 && poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 5000) == 1) {
                ssize_t n = read(fd, buf, sizeof(buf) - 1);
                buf[n > 0 ? n : 0] = '\0';
            }
            if (fd >= 0)
                close(fd);
        }
        free(h_shell(&st, "'%s' --socket '%s' logout lh >/dev/null 2>&1", getenv("MCPCTL_BINARY"),
                     h.socket));
    }
    CHECK_MSG(!strstr(buf, "code="), "the program on [::1]:%d got the redirect: %.200s", lport,
              buf);
    CHECK_MSG(wait_line(out, "exit ", NULL), "the login never ended");
    said = h_read_file(out);
    CHECK_MSG(!url && said && strstr(said, "exit 1") && strstr(said, "[::1]") &&
                  strstr(said, "another program holds"),
              "login with [::1]:%d taken: %s", lport, said ? said : "");
}

/* The good side of hole 2: with both ports free, the browser's redirect to ::1 reaches mcpd. */
static void check_localhost_signin(void)
{
    _cleanup_free_ char *out = login_bg("lh6"), *url = login_link(out), *said = NULL;
    int st;

    CHECK_MSG(url, "the localhost sign-in showed no link");
    /* The authorization server's redirect, followed in IPv6 as browsers try localhost first. */
    if (url)
        free(h_shell(&st,
                     "loc=$(curl -s -m 10 -o /dev/null -w '%%{redirect_url}' '%s'); curl -s -6 "
                     "-m 10 -o /dev/null \"$loc\"",
                     url));
    CHECK_MSG(wait_line(out, "exit ", NULL), "the login never ended");
    said = h_read_file(out);
    CHECK_MSG(said && strstr(said, "exit 0") && strstr(said, "signed in"),
              "a localhost sign-in through [::1]: %s", said ? said : "");
}

/* Hole 3: the configured client secret offered to whichever issuer the resource names. */
static void check_client_binding(const As *as1, const As *as2)
{
    int st;
    _cleanup_free_ char *first = login(&st, "cc", "--headless");
    _cleanup_free_ char *issuer2 = xasprintf("http://127.0.0.1:%d", as2->port);

    CHECK_MSG(st == 0, "the first sign-in (its own issuer) failed: %s", first);
    as_get(as1, "/fault/other-as");
    _cleanup_free_ char *out = login(&st, "cc", "--headless");
    CHECK_MSG(bg_count_lines(as2->log, "AUTHORIZE", NULL) == 0 &&
                  bg_count_lines(as2->log, "TOKEN", NULL) == 0,
              "the other authorization server got the client: %d authorize, %d token requests",
              bg_count_lines(as2->log, "AUTHORIZE", NULL), bg_count_lines(as2->log, "TOKEN", NULL));
    CHECK_MSG(st != 0 && strstr(out, issuer2) && strstr(out, "oauth.clientId") &&
                  strstr(out, "\"issuer\"") && strstr(out, "server cc"),
              "the refusal should name the server, both issuers and the fix: %s", out);
    as_get(as1, "/fault/none");
}

/* Hole 4: a refresh answer that comes after mcpctl login replaced the sign-in. */
static void check_refresh_race(mcpc_client *c, const As *as)
{
    _cleanup_free_ char *resource = xasprintf("http://127.0.0.1:%d/mcp", as->port);
    _cleanup_free_ char *first = NULL, *second = NULL, *at = NULL, *kept = NULL;
    int st, is_error = 0;

    first = login(&st, "race", "--headless");
    CHECK_MSG(st == 0, "sign-in: %s", first);
    CHECK(h_wait_state(c, "race", "connected", H_WAIT_MS));
    as_get(as, "/fault/hold-refresh");
    as_get(as, "/expire-access");
    free(h_call_text(c, "mcp_race_whoami", "{}", &is_error)); /* a 401: mcpd refreshes */
    CHECK_MSG(wait_line(as->log, "refresh held", NULL), "no refresh reached the token endpoint");
    second = login(&st, "race", "--headless");
    CHECK_MSG(st == 0, "the new sign-in: %s", second);
    at = last_code_grant(as);
    as_get(as, "/release-refresh");
    /* Before: the late answer was taken ("access token refreshed"); now the login cancelled it. */
    CHECK(wait_line(h.log, "race", "access token refreshed") ||
          bg_count_lines(h.log, "refresh in flight cancelled", NULL) > 0);
    wait_line(as->log, "held refresh", NULL);
    h_sleep_ms(300); /* a late answer, if read, is stored within a turn; nothing waits on it */
    kept = stored_access(resource);
    CHECK_MSG(kept && streq(kept, at), "after the race the store holds %s, the new sign-in gave %s",
              kept ? kept : "(nothing)", at);
    as_get(as, "/fault/none");
}

/*
 * Hole 4, the other order: the refresh begins while a sign-in waits for the person, and answers
 * after that sign-in stored its tokens. Its answer is for a state that is gone: dropped.
 */
static void check_refresh_during_login(mcpc_client *c, const As *as)
{
    _cleanup_free_ char *resource = xasprintf("http://127.0.0.1:%d/mcp", as->port);
    _cleanup_free_ char *first = NULL, *out = NULL, *url = NULL, *at = NULL, *kept = NULL;
    int st, is_error = 0;

    first = login(&st, "race2", "--headless");
    CHECK_MSG(st == 0, "sign-in: %s", first);
    CHECK(h_wait_state(c, "race2", "connected", H_WAIT_MS));
    out = login_bg("race2");
    url = login_link(out);
    CHECK_MSG(url, "the sign-in showed no link");
    as_get(as, "/fault/hold-refresh");
    as_get(as, "/expire-access");
    free(h_call_text(c, "mcp_race2_whoami", "{}", &is_error)); /* a 401: mcpd refreshes */
    CHECK_MSG(wait_line(as->log, "refresh held", NULL), "no refresh reached the token endpoint");
    if (url)
        free(h_shell(&st, "curl -s -m 20 -L -o /dev/null '%s'", url));
    CHECK_MSG(wait_line(out, "exit 0", NULL), "the sign-in did not end well");
    at = last_code_grant(as);
    as_get(as, "/release-refresh");
    /* Before: taken ("access token refreshed"); now dropped, and said so. */
    CHECK(wait_line(h.log, "race2", "access token refreshed") ||
          bg_count_lines(h.log, "dropped a refresh answer", NULL) > 0);
    kept = stored_access(resource);
    CHECK_MSG(kept && streq(kept, at),
              "a refresh that began before the sign-in ended left %s in the store, the sign-in "
              "gave %s",
              kept ? kept : "(nothing)", at);
    CHECK(bg_count_lines(h.log, "dropped a refresh answer for server race2", NULL) == 1);
    as_get(as, "/fault/none");
}

/* Hole 5: the refresh must ask for the resource the sign-in asked for. */
static void check_refresh_resource(mcpc_client *c, const As *as)
{
    int st, is_error = 0;
    _cleanup_free_ char *out = NULL, *text = NULL;

    as_get(as, "/fault/root-resource");
    out = login(&st, "rootres", "--headless");
    CHECK_MSG(st == 0, "sign-in: %s", out);
    CHECK(h_wait_state(c, "rootres", "connected", H_WAIT_MS));
    as_get(as, "/expire-access");
    free(h_call_text(c, "mcp_rootres_whoami", "{}", &is_error)); /* a 401: mcpd refreshes */
    CHECK_MSG(wait_line(h.log, "rootres", "access token refreshed") ||
                  bg_count_lines(h.log, "refreshing the token of server rootres failed", NULL) > 0,
              "no refresh happened");
    CHECK_MSG(bg_count_lines(h.log, "refreshing the token of server rootres failed", NULL) == 0,
              "the refresh was refused (it named another resource than the sign-in)");
    CHECK(h_wait_state(c, "rootres", "connected", H_WAIT_MS));
    text = h_call_text(c, "mcp_rootres_whoami", "{}", &is_error);
    CHECK_MSG(text && !is_error && strstr(text, "signed-in call"), "after the refresh: %s",
              text ? text : "(null)");
}

/* Hole 6: escape sequences in an endpoint (to the terminal) and in an error (to the log). */
static void check_escapes(const As *esc, const As *err)
{
    int st;
    _cleanup_free_ char *out = NULL, *out2 = NULL, *log = NULL, *status = NULL;

    as_get(esc, "/fault/esc-endpoint");
    out = login(&st, "esc", "--no-browser");
    CHECK_MSG(!strchr(out, '\x1b'), "login printed an escape sequence: %s", out);
    CHECK_MSG(st != 0 && strstr(out, "not a usable URL"), "login: exit %d: %s", st, out);
    as_get(err, "/fault/esc-error");
    out2 = login(&st, "escerr", "--headless");
    CHECK_MSG(st != 0 && !strchr(out2, '\x1b') && strstr(out2, "?[8mhidden"),
              "login with a hostile error: exit %d: %s", st, out2);
    log = h_read_file(h.log);
    CHECK_MSG(log && strstr(log, "?[8mhidden") && !strchr(log, '\x1b'),
              "mcpd's log holds an escape sequence from a server");
    /* A 401's WWW-Authenticate (server escch) is in status as the server's last error. */
    status =
        h_shell(&st, "'%s' --socket '%s' status --json 2>&1", getenv("MCPCTL_BINARY"), h.socket);
    CHECK_MSG(status && strstr(status, "escch") && strstr(status, "?[8mhidden") &&
                  !strstr(status, "\\u001b") && !strchr(status, '\x1b'),
              "status shows a server's escape sequence: %s", status ? status : "");
}

/* Issue 39, item 5: a token endpoint from the config gets the checks of a server's. */
static void check_config_token_url(mcpc_client *c)
{
    int st;
    _cleanup_free_ char *out = login(&st, "cfgtok", "--no-browser");
    _cleanup_json_ yajl_val status = h_status(c);
    const char *e = json_get_string(h_server(status, "cfgtok"), "lastError");

    /* Client credentials are asked for on the 401, with nobody at mcpctl: status says why. */
    CHECK_MSG(e && strstr(e, "oauth.tokenUrl") && strstr(e, "another host"), "status of cfgtok: %s",
              e ? e : "(no lastError)");

    CHECK_MSG(st != 0 && strstr(out, "oauth.tokenUrl") && strstr(out, "192.0.2.1") &&
                  strstr(out, "another host"),
              "login with a plain http tokenUrl on another host: exit %d: %s", st, out);
}

/* [::1]:port taken by "another program" (the test): bound and listening; -1 without IPv6. */
static int squat_v6(int *portp)
{
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin6_addr = in6addr_loopback;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *portp = ntohs(sa.sin6_port);
    return fd;
}

/* A port free on both 127.0.0.1 and ::1 (bound on ::1, read, released; 127.0.0.1 checked). */
static int free_port_v6(void)
{
    int port = 0, fd = squat_v6(&port);

    if (fd >= 0)
        close(fd);
    return port > 0 && !bg_port_open(port) ? port : -1;
}

/* Into a private network and mount namespace with the third host; false: cannot (not root). */
static bool enter_namespace(void)
{
    char hosts[] = "/tmp/mcpd-test-hosts.XXXXXX", self[4096];
    ssize_t n;
    int fd;

    if (getenv("MCPD_TEST_OAUTH_NETNS")) {
        const char *file = getenv("MCPD_TEST_OAUTH_NETNS");
        int st = system("mount --make-rprivate / && ip link set lo up && "
                        "ip addr add " THIRD_ADDR "/32 dev lo");
        _cleanup_free_ char *cmd = xasprintf("mount --bind '%s' /etc/hosts", file);
        CHECK_MSG(st == 0 && system(cmd) == 0, "cannot set up the private namespace");
        unlink(file);
        return true;
    }
    if (geteuid() != 0 || system("unshare -n -m true 2>/dev/null") != 0)
        return false;
    fd = mkstemp(hosts);
    if (fd < 0)
        return false;
    dprintf(fd, "127.0.0.1 localhost\n::1 localhost ip6-localhost\n%s %s\n", THIRD_ADDR,
            THIRD_NAME);
    close(fd);
    chmod(hosts, 0644);
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    setenv("MCPD_TEST_OAUTH_NETNS", hosts, 1);
    execlp("unshare", "unshare", "-n", "-m", "--", self, (char *)NULL);
    return false;
}

int main(void)
{
    As res, third, as1, as2, race, race2, root, esc, escerr, escch, lh6;
    _cleanup_free_ char *cfg = NULL, *tok = NULL, *other = NULL;
    mcpc_client *c;
    int lport = 0, squatter, lh6_port;

    if (!enter_namespace()) {
        fprintf(stderr, "test-oauth-holes: SKIP: needs root for a private network namespace\n");
        return 77;
    }
    h_setup(&h, "oauth-holes");
    as_start(&third, "third", "--bind", THIRD_ADDR, NULL);
    tok = xasprintf("http://%s:%d/token", THIRD_NAME, third.port);
    as_start(&res, "res", "--token-endpoint", tok, NULL);
    as_start(&as2, "as2", NULL);
    other = xasprintf("http://127.0.0.1:%d", as2.port);
    as_start(&as1, "as1", "--other-as", other, NULL);
    as_start(&race, "race", NULL);
    as_start(&race2, "race2", NULL);
    as_start(&root, "root", NULL);
    as_start(&esc, "esc", NULL);
    as_start(&escerr, "escerr", NULL);
    as_start(&escch, "escch", "--fault", "esc-challenge", NULL);
    as_start(&lh6, "lh6", NULL);
    squatter = squat_v6(&lport);
    lh6_port = free_port_v6();
    CHECK_MSG(squatter >= 0, "no IPv6 loopback in the namespace: %s", strerror(errno));
    cfg = xasprintf(
        "{\"mcpServers\": {\"steady\": {\"command\": \"%s\"},"
        " \"third\": {\"url\": \"http://127.0.0.1:%d/mcp\", \"reconnect\": false,"
        "   \"oauth\": {\"clientId\": \"c3\", \"clientSecret\": \"third-secret\"}},"
        " \"lh\": {\"url\": \"http://127.0.0.1:%d/mcp\", \"reconnect\": false,"
        "   \"oauth\": {\"redirectUri\": \"http://localhost:%d/cb\"}},"
        " \"cc\": {\"url\": \"http://127.0.0.1:%d/mcp\", \"reconnect\": false,"
        "   \"oauth\": {\"clientId\": \"cc-id\", \"clientSecret\": \"cc-secret\"}},"
        " \"race\": {\"url\": \"http://127.0.0.1:%d/mcp\"},"
        " \"race2\": {\"url\": \"http://127.0.0.1:%d/mcp\"},"
        " \"rootres\": {\"url\": \"http://127.0.0.1:%d/mcp\"},"
        " \"esc\": {\"url\": \"http://127.0.0.1:%d/mcp\", \"reconnect\": false},"
        " \"escerr\": {\"url\": \"http://127.0.0.1:%d/mcp\", \"reconnect\": false},"
        " \"escch\": {\"url\": \"http://127.0.0.1:%d/mcp\", \"reconnect\": false},"
        " \"lh6\": {\"url\": \"http://127.0.0.1:%d/mcp\", \"reconnect\": false,"
        "   \"oauth\": {\"redirectUri\": \"http://localhost:%d/cb\"}},"
        " \"cfgtok\": {\"url\": \"http://127.0.0.1:%d/mcp\", \"reconnect\": false,"
        "   \"oauth\": {\"grantType\": \"client_credentials\", \"clientId\": \"x\","
        "     \"clientSecret\": \"cfg-secret\", \"tokenUrl\": \"http://192.0.2.1/token\"}}}}",
        h_fake(), res.port, as2.port, lport, as1.port, race.port, race2.port, root.port, esc.port,
        escerr.port, escch.port, lh6.port, lh6_port, escerr.port);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "oauth-holes");
    h_settle(&h, c, "steady", NULL);

    check_third_host(&third);
    check_localhost_redirect(lport, squatter);
    check_localhost_signin();
    check_client_binding(&as1, &as2);
    check_refresh_race(c, &race);
    check_refresh_during_login(c, &race2);
    check_refresh_resource(c, &root);
    check_escapes(&esc, &escerr);
    check_config_token_url(c);
    h_check_healthy(&h, "hostile sign-ins", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    if (squatter >= 0)
        close(squatter);
    As *all[] = {&res, &third, &as1, &as2, &race, &race2, &root, &esc, &escerr, &escch, &lh6};
    for (size_t i = 0; i < N_ELEMENTS(all); i++)
        as_stop(all[i]);
    h_teardown(&h);
    return h_finish("test-oauth-holes");
}
