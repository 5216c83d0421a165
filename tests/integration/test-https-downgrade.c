// SPDX-License-Identifier: MIT
// test-https-downgrade: an https server that redirects to plain http is refused, end to end.

/*
 * A real TLS server on loopback (tests/helpers/tls-redirect-server.c, with a certificate made
 * here) answers mcpd's initialize with "307 Location: http://127.0.0.1:P/mcp". mcpd must not
 * follow it: the server fails with an error that names it and says why, and nothing reaches
 * the plain port. mcpd trusts the test's certificate through tests/helpers/ca-wrap.sh (the CA
 * bundle replaced in a private mount namespace for mcpd alone); where the machine allows no
 * user namespace, or has no openssl command, the test is skipped (77).
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Where libcurl's OpenSSL build looks for CAs (curl-config --ca); MCPD_TEST_CA_BUNDLE overrides. */
#define DEFAULT_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
/* The server's own bound: the refusal comes at once, the rest is a loaded machine. */
#define SERVER_TIMEOUT_MS 10000

/* A listening socket on 127.0.0.1 nobody answers on: what reaches it came in plain http. */
static int listen_plain(int *portp)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t len = sizeof(sin);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 && listen(fd, 8) == 0 &&
          getsockname(fd, (struct sockaddr *)&sin, &len) == 0);
    *portp = ntohs(sin.sin_port);
    return fd;
}

static int skip(Harness *h, const char *why)
{
    fprintf(stderr, "test-https-downgrade: skipped: %s\n", why);
    h_teardown(h);
    return 77;
}

int main(void)
{
    const char *tls = getenv("TLS_REDIRECT_SERVER"), *wrap = getenv("CA_WRAP");
    const char *bundle = getenv("MCPD_TEST_CA_BUNDLE") ?: DEFAULT_CA_BUNDLE;
    const char *old_wrapper = getenv("MCPD_WRAPPER");
    int plain, pport, tport, st;
    Harness h;

    if (!tls || !wrap) {
        fprintf(stderr, "TLS_REDIRECT_SERVER and CA_WRAP must be set (run through meson)\n");
        return 77;
    }
    h_setup(&h, "https-downgrade");
    _cleanup_free_ char *cert = xasprintf("%s/cert.pem", h.dir);
    _cleanup_free_ char *key = xasprintf("%s/key.pem", h.dir);
    _cleanup_free_ char *made =
        h_shell(&st,
                "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
                "-subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 -keyout %s -out %s "
                "2>&1",
                key, cert);
    (void)made; /* only its cleanup is wanted */
    if (st != 0)
        return skip(&h, "no openssl command to make a certificate");
    _cleanup_free_ char *probe = h_shell(&st, "%s --probe %s %s 2>&1", wrap, cert, bundle);
    (void)probe; /* only its cleanup is wanted */
    if (st != 0 || access(bundle, R_OK) != 0)
        return skip(&h, "no private mount namespace to trust a test CA in");

    plain = listen_plain(&pport);
    _cleanup_free_ char *location = xasprintf("http://127.0.0.1:%d/mcp", pport);
    _cleanup_free_ char *port_file = xasprintf("%s/tls.port", h.dir);
    _cleanup_free_ char *log = xasprintf("%s/tls.log", h.dir);
    _cleanup_free_ char *out = xasprintf("%s/tls.out", h.dir);
    char *argv[] = {(char *)tls, "--cert",      cert,      "--key", key, "--location",
                    location,    "--port-file", port_file, "--log", log, NULL};
    pid_t srv = bg_spawn(argv, "MCPD_TEST_TAG=", out);
    tport = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK_MSG(tport > 0, "the TLS server did not start");

    _cleanup_free_ char *wrapper =
        xasprintf("%s %s %s%s%s", wrap, cert, bundle, old_wrapper ? " " : "", old_wrapper ?: "");
    setenv("MCPD_WRAPPER", wrapper, 1);
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}, \"secure\": {\"type\": \"http\", "
        "\"url\": \"https://127.0.0.1:%d/mcp\", \"timeout\": %d, \"reconnect\": false}}}",
        h_fake(), tport, SERVER_TIMEOUT_MS);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "ctl");
    h_settle(&h, c, "steady", NULL);

    CHECK_MSG(h_wait_state(c, "secure", "failed", H_WAIT_MS), "secure never failed");
    yajl_val status = h_status(c);
    const char *e = json_get_string(h_server(status, "secure"), "lastError");
    CHECK_MSG(e && strstr(e, "secure") && strstr(e, "from https to plain http") &&
                  strstr(e, location) && strstr(e, "refused"),
              "lastError: %s", e ? e : "(none)");
    json_free(status);
    /* The TLS part worked (else the test proves nothing), and nothing went out in the clear. */
    CHECK_MSG(bg_count_lines(log, "POST /mcp", NULL) >= 1, "no request reached the TLS server");
    int conn = accept(plain, NULL, NULL);
    CHECK_MSG(conn < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
              "a connection reached the plain http port");
    if (conn >= 0)
        close(conn);
    h_check_healthy(&h, "an https server redirecting to plain http", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(srv);
    close(plain);
    h_teardown(&h);
    return h_finish("test-https-downgrade");
}
