// SPDX-License-Identifier: MIT
// test-http-hostile-responses: hostile HTTP responses (headers, SSE lines, lies), against the real
// mcpd.

/*
 * Round 5 of the attacks on remote servers (task h-red5), with raw-http-server: 100 MB of response
 * headers, one header line of 50 MB, headers and a status line dripped a byte a second, an SSE
 * answer of 100 MB with no newline (on the request's stream, the GET stream and a legacy SSE
 * stream), Content-Type lies, a 200 without a body, a 202 for a request, and a chunked answer
 * that never ends. Each call fails in bounded time with an error naming the server, other agents
 * are served meanwhile, mcpd's memory stays flat, and nothing is left held afterwards.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* The hostile calls that hang must fail at this callTimeout, well inside the test's timeout. */
#define CALL_TIMEOUT_MS 4000
/*
 * RSS growth allowed over all the floods (100 MB of headers, a 50 MB header line, three 100 MB
 * SSE lines): what a bounded reader holds is one message bound (16 MiB) at most, doubled by its
 * buffer's growth, with ASan's shadow and allocator slack; an unbounded one holds hundreds of MiB.
 */
#define FLOOD_RSS_GROWTH_MAX_KIB (96L * 1024L)
/* How long the GET and legacy streams' floods are given to arrive (100 MB on loopback). */
#define STREAM_FLOOD_WAIT_MS 8000

typedef struct Case {
    const char *name; /* the server's name in the config; its tool is mcp_<name>_t */
    const char *mode; /* raw-http-server's --mode */
    const char *want; /* what the call's error must say, beside the server's URL */
} Case;

static const Case cases[] = {
    {"hflood", "hdr-flood", "response headers passed"},
    {"cont", "cont-flood", "response headers passed"},
    {"hline", "hdr-line", "header lines passed"},
    {"hdrip", "hdr-drip", "callTimeout"},
    {"sdrip", "status-drip", "callTimeout"},
    {"noline", "sse-noline", "larger than"},
    {"ctsse", "ct-sse-json", "no SSE event"},
    {"ctjson", "ct-json-sse", "without a JSON-RPC response"},
    {"empty", "empty-200", "without a JSON-RPC response"},
    {"acc", "accepted-202", "202 Accepted for a request"},
    {"chunk", "chunked-forever", "callTimeout"},
};

static pid_t start_raw(Harness *h, const char *name, const char *mode, int *portp)
{
    _cleanup_free_ char *port_file = xasprintf("%s/%s.port", h->dir, name);
    _cleanup_free_ char *out = xasprintf("%s/%s.out", h->dir, name);
    char *argv[] = {
        getenv("RAW_HTTP_SERVER"), "--port-file", port_file, "--mode", (char *)mode, NULL};
    /* Not tagged as mcpd's: the health checks count tagged processes mcpd did not start. */
    pid_t pid = bg_spawn(argv, "MCPD_TEST_TAG=", out);

    *portp = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK_MSG(*portp > 0, "%s: the raw server did not start", name);
    return pid;
}

/*
 * Call the case's tool from a child while the parent calls the control server: the control
 * calls come back meanwhile, and the child's call ends with an error holding the case's text and
 * the server's port (its URL).
 */
static void check_case(Harness *h, mcpc_client *c, const Case *k, int port)
{
    _cleanup_free_ char *tool = xasprintf("mcp_%s_t", k->name);
    _cleanup_free_ char *url = xasprintf("127.0.0.1:%d", port);
    _cleanup_free_ char *quoted = xasprintf("\"%s\"", k->name);
    uint64_t t0 = now_ms();
    pid_t child = fork();
    int status = -1;

    if (child == 0) {
        mcpc_client *cc = h_client(h, "red5-hostile");
        int is_err = 0;
        _cleanup_free_ char *e = h_call_text(cc, tool, "{}", &is_err);
        fprintf(stderr, "  %s (%s): %.400s\n", k->name, k->mode, e ? e : "(null)");
        _exit(is_err && e && strstr(e, k->want) && (strstr(e, url) || strstr(e, quoted)) ? 0 : 1);
    }
    h_sleep_ms(300); /* the child's call is under way */
    for (int i = 0; i < 3; i++) {
        int is_err = 0;
        _cleanup_free_ char *t = h_call_text(c, CONTROL, "{\"text\":\"during\"}", &is_err);
        CHECK_MSG(!is_err && t && strstr(t, "during"), "control during %s: %.300s", k->mode,
                  t ? t : "(null)");
    }
    CHECK(waitpid(child, &status, 0) == child);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "%s: the call did not fail with \"%s\" and the server's URL or name", k->mode,
              k->want);
    fprintf(stderr, "  %s: call ended in %llu ms\n", k->mode, (unsigned long long)(now_ms() - t0));
    h_check_healthy(h, k->mode, CONTROL);
}

/* Whether mcpd's log has a line holding a and b within ms. */
static bool wait_log(Harness *h, const char *a, const char *b, int ms)
{
    for (uint64_t end = now_ms() + (uint64_t)ms; now_ms() < end; h_sleep_ms(100))
        if (bg_count_lines(h->log, a, b) >= 1)
            return true;
    return bg_count_lines(h->log, a, b) >= 1;
}

/*
 * The GET stream of a server that is otherwise fine, and a legacy server's SSE stream, flood one
 * line with no newline: each stream is dropped with a warning, the server's calls still work.
 */
static void check_stream_floods(Harness *h, mcpc_client *c)
{
    int is_err = 0, wait = STREAM_FLOOD_WAIT_MS * (h_measurable("the floods' speed") ? 1 : 20);

    CHECK_MSG(wait_log(h, "[getnl]", "no newline", wait),
              "getnl: the over-long line on the GET stream was not reported");
    CHECK_MSG(wait_log(h, "[legacy]", "no newline", wait),
              "legacy: the over-long line on the SSE stream was not reported");
    _cleanup_free_ char *t = h_call_text(c, "mcp_getnl_t", "{}", &is_err);
    CHECK_MSG(!is_err && t && strstr(t, "plain answer"), "getnl: %.300s", t ? t : "(null)");
}

int main(void)
{
    pid_t srv[N_ELEMENTS(cases) + 2];
    int port[N_ELEMENTS(cases) + 2];
    StrBuf cfg = STRBUF_INIT;
    Harness h;
    mcpc_client *c;
    long rss0, grown;

    h_setup(&h, "http-hostile-responses");
    /* RSS must show what mcpd holds, not ASan's quarantine of freed blocks: keep it small. */
    const char *asan = getenv("ASAN_OPTIONS");
    _cleanup_free_ char *asan_opts =
        xasprintf("%s%squarantine_size_mb=1", asan ? asan : "", asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", asan_opts, 1);
    strbuf_printf(&cfg, "{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}", h_fake());
    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        srv[i] = start_raw(&h, cases[i].name, cases[i].mode, &port[i]);
        strbuf_printf(&cfg,
                      ", \"%s\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                      " \"callTimeout\": %d, \"reconnect\": false}",
                      cases[i].name, port[i], CALL_TIMEOUT_MS);
    }
    size_t g = N_ELEMENTS(cases), l = g + 1;
    srv[g] = start_raw(&h, "getnl", "get-noline", &port[g]);
    srv[l] = start_raw(&h, "legacy", "legacy-noline", &port[l]);
    strbuf_printf(&cfg,
                  ", \"getnl\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\"}"
                  ", \"legacy\": {\"type\": \"sse\", \"url\": \"http://127.0.0.1:%d/sse\","
                  " \"timeout\": %d, \"reconnect\": false}}}",
                  port[g], port[l], CALL_TIMEOUT_MS);
    h_write_config(&h, strbuf_str(&cfg));
    strbuf_deinit(&cfg);
    h_start(&h, NULL);
    c = h_client(&h, "http-hostile-responses");
    h_settle(&h, c, "steady", "hflood", "cont", "hline", "hdrip", "sdrip", "noline", "ctsse",
             "ctjson", "empty", "acc", "chunk", "getnl", NULL);
    rss0 = h_rss_kib(h.pid);

    for (size_t i = 0; i < N_ELEMENTS(cases); i++)
        check_case(&h, c, &cases[i], port[i]);
    check_stream_floods(&h, c);

    grown = h_rss_kib(h.pid) - rss0;
    fprintf(stderr, "  all floods: mcpd RSS grew by %ld KiB\n", grown);
    CHECK_MSG(!h_measurable("the floods' RSS bound") || grown < FLOOD_RSS_GROWTH_MAX_KIB,
              "RSS grew by %ld KiB (bound %ld)", grown, FLOOD_RSS_GROWTH_MAX_KIB);
    h_check_healthy(&h, "the hostile responses", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    for (size_t i = 0; i < N_ELEMENTS(srv); i++)
        bg_stop(srv[i]);
    h_teardown(&h);
    return h_finish("test-http-hostile-responses");
}
