// SPDX-License-Identifier: MIT
// test-http-bounds: HTTP upstreams that answer past the message bound, redirect badly, flood 401s.

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

/* The test HTTP server with up to four flags (NULL ends them), on an ephemeral port. */
static pid_t start_srv(Harness *h, const char *name, int *portp, const char *a, const char *b,
                       const char *c, const char *d)
{
    _cleanup_free_ char *port_file = xasprintf("%s/%s.port", h->dir, name);
    _cleanup_free_ char *out = xasprintf("%s/%s.out", h->dir, name);
    char *argv[] = {getenv("HTTP_SERVER"),
                    "--port-file",
                    port_file,
                    (char *)a,
                    (char *)b,
                    (char *)c,
                    (char *)d,
                    NULL};
    /* Not tagged as mcpd's: the health checks count tagged processes mcpd did not start. */
    pid_t pid = bg_spawn(argv, "MCPD_TEST_TAG=", out);

    *portp = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK(*portp > 0);
    return pid;
}

/* A web page where the MCP endpoint should be: the error says what came and asks about the URL. */
static void check_html(mcpc_client *c)
{
    int is_error = 0;
    _cleanup_free_ char *t = h_call_text(c, "mcp_web_echo", "{\"text\":\"x\"}", &is_error);

    CHECK_MSG(is_error && t && strstr(t, "Content-Type: text/html") &&
                  strstr(t, "the server's MCP endpoint?"),
              "web: %.300s", t ? t : "(null)");
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg = NULL;
    pid_t srv;
    int port, file_port, loop_port, flood_port, web_port;
    mcpc_client *c;

    h_setup(&h, "http-bounds");
    srv = start_srv(&h, "big", &port, "--huge-answers", NULL, NULL, NULL);
    pid_t file_srv =
        start_srv(&h, "file", &file_port, "--redirect-to", "file:///etc/passwd", NULL, NULL);
    pid_t loop_srv = start_srv(&h, "loop", &loop_port, "--redirect-to", "/mcp", NULL, NULL);
    pid_t flood_srv =
        start_srv(&h, "flood", &flood_port, "--token", "t0k", "--auth-flood", AUTH_FLOOD);
    pid_t web_srv = start_srv(&h, "web", &web_port, "--html-answers", NULL, NULL, NULL);
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"},"
                    " \"big\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                    " \"callTimeout\": %d},"
                    " \"file\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                    " \"reconnect\": false},"
                    " \"loop\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                    " \"reconnect\": false},"
                    " \"flood\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                    " \"reconnect\": false},"
                    " \"web\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\"}}}",
                    h_fake(), port, CALL_TIMEOUT_MS, file_port, loop_port, flood_port, web_port);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "http-bounds");
    h_settle(&h, c, "steady", "big", "web", NULL);

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
    check_html(c);
    h_check_healthy(&h, "a web page for an answer", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(srv);
    bg_stop(file_srv);
    bg_stop(loop_srv);
    bg_stop(flood_srv);
    bg_stop(web_srv);
    h_teardown(&h);
    return h_finish("test-http-bounds");
}
