// SPDX-License-Identifier: MIT
// test-red-http: HTTP upstreams that answer past the message bound, redirect badly, flood 401s.

/*
 * Found by attacking the daemon (task h-red): a 17 MiB JSON body came back as curl's "Failed
 * writing received data to disk/application", and a 17 MiB SSE event (or an endless one) was
 * dropped without a word while the call waited for its whole callTimeout. Both must fail the
 * call at once, with an error naming the server's URL and the bound, and mcpd keeps serving.
 */

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/*
 * Far longer than the answer takes on a loaded ASan box, so the error seen is the size one.
 * Without the fix the SSE call would wait for all of it and then report a timeout.
 */
#define CALL_TIMEOUT_MS 120000

/* The call's text: an MCP error naming the bound and the server's URL, not a timeout. */
static void check_too_big(mcpc_client *c, const char *tool, const char *what, int port)
{
    int is_error = 0;
    _cleanup_free_ char *t = h_call_text(c, tool, "{\"text\":\"x\"}", &is_error);
    _cleanup_free_ char *url = xasprintf("127.0.0.1:%d", port);

    CHECK_MSG(is_error, "%s: not an error: %.200s", tool, t ? t : "(null)");
    CHECK_MSG(t && strstr(t, what) && strstr(t, "larger than 16777216 bytes") && strstr(t, url),
              "%s: error does not name the %s, bound and server: %.300s", tool, what,
              t ? t : "(null)");
    CHECK_MSG(t && !strstr(t, "timed out"), "%s: waited for the timeout: %.300s", tool, t);
}

/* Server name's lastError in status holds want. */
static void check_last_error(mcpc_client *c, const char *name, const char *want)
{
    CHECK_MSG(h_wait_state(c, name, "failed", H_WAIT_MS), "%s never failed", name);
    yajl_val st = h_status(c), s = h_server(st, name);
    const char *e = json_get_string(s, "lastError");
    CHECK_MSG(e && strstr(e, want), "%s: lastError %s lacks \"%s\"", name, e ? e : "(none)", want);
    json_free(st);
}

/* Challenges the auth-flood server adds to its real one: 500 x ~220 bytes, 110 KB of headers. */
#define AUTH_FLOOD "500"
/* An error naming a challenge is read by people: a few hundred bytes of it, not the flood. */
#define ERROR_SHOWN_MAX 2048

/* A 401 with a flood of WWW-Authenticate headers: the error quotes the real one, bounded. */
static void check_auth_flood(mcpc_client *c)
{
    const char *e = NULL;
    yajl_val st = NULL;

    for (uint64_t end = now_ms() + H_WAIT_MS; now_ms() < end; h_sleep_ms(100)) {
        json_free(st);
        st = h_status(c);
        e = json_get_string(h_server(st, "flood"), "lastError");
        if (e && strstr(e, "401"))
            break;
    }
    CHECK_MSG(e && strstr(e, "401") && strstr(e, "resource_metadata"), "flood: lastError %.300s",
              e ? e : "(none)");
    CHECK_MSG(e && strlen(e) < ERROR_SHOWN_MAX, "flood: lastError is %zu bytes", e ? strlen(e) : 0);
    json_free(st);
}

/* A server that redirects every POST: to a file:// URL, or to itself (a loop). */
static pid_t start_redirector(Harness *h, const char *name, const char *to, int *portp)
{
    _cleanup_free_ char *port_file = xasprintf("%s/%s.port", h->dir, name);
    _cleanup_free_ char *out = xasprintf("%s/%s.out", h->dir, name);
    char *argv[] = {getenv("HTTP_SERVER"), "--port-file", port_file,
                    "--redirect-to",       (char *)to,    NULL};
    pid_t pid = bg_spawn(argv, "MCPD_TEST_TAG=", out);

    *portp = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK(*portp > 0);
    return pid;
}

int main(void)
{
    Harness h;
    char port_file[400], out[400];
    _cleanup_free_ char *cfg = NULL;
    pid_t srv;
    int port, file_port, loop_port;
    mcpc_client *c;

    h_setup(&h, "red-http");
    snprintf(port_file, sizeof(port_file), "%s/big.port", h.dir);
    snprintf(out, sizeof(out), "%s/big.out", h.dir);
    char *argv[] = {getenv("HTTP_SERVER"), "--port-file", port_file, "--huge-answers", NULL};
    /* Not tagged as mcpd's: the health checks count tagged processes mcpd did not start. */
    srv = bg_spawn(argv, "MCPD_TEST_TAG=", out);
    port = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK(port > 0);
    pid_t file_srv = start_redirector(&h, "file", "file:///etc/passwd", &file_port);
    pid_t loop_srv = start_redirector(&h, "loop", "/mcp", &loop_port);
    _cleanup_free_ char *flood_pf = xasprintf("%s/flood.port", h.dir);
    _cleanup_free_ char *flood_out = xasprintf("%s/flood.out", h.dir);
    char *flood_argv[] = {getenv("HTTP_SERVER"), "--port-file", flood_pf, "--token", "t0k",
                          "--auth-flood",        AUTH_FLOOD,    NULL};
    pid_t flood_srv = bg_spawn(flood_argv, "MCPD_TEST_TAG=", flood_out);
    int flood_port = bg_wait_port_file(flood_pf, H_WAIT_MS);
    CHECK(flood_port > 0);
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"},"
                    " \"big\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                    " \"callTimeout\": %d},"
                    " \"file\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                    " \"reconnect\": false},"
                    " \"loop\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                    " \"reconnect\": false},"
                    " \"flood\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                    " \"reconnect\": false}}}",
                    h_fake(), port, CALL_TIMEOUT_MS, file_port, loop_port, flood_port);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "red-http");
    h_settle(&h, c, "steady", "big", NULL);

    check_too_big(c, "mcp_big_echo", "HTTP response body", port);
    h_check_healthy(&h, "HTTP answer body past the bound", CONTROL);
    check_too_big(c, "mcp_big_sse_echo", "SSE event", port);
    h_check_healthy(&h, "SSE answer event past the bound", CONTROL);
    /* The server itself is still usable: the transport was not torn down for it. */
    check_too_big(c, "mcp_big_echo", "HTTP response body", port);

    /* Redirects: curl's "Unsupported protocol" and a bare "HTTP 307" said neither what nor why. */
    check_last_error(c, "file", "a redirect to a file URL, refused");
    check_last_error(c, "loop", "more than 5 redirects");
    h_check_healthy(&h, "redirects to file:// and in a loop", CONTROL);
    check_auth_flood(c);
    h_check_healthy(&h, "a 401 with a flood of WWW-Authenticate headers", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(srv);
    bg_stop(file_srv);
    bg_stop(loop_srv);
    bg_stop(flood_srv);
    h_teardown(&h);
    return h_finish("test-red-http");
}
