// SPDX-License-Identifier: MIT
// test-http-batch-sse-floods: hostile HTTP and SSE upstreams (raw-http-server), against the real
// mcpd.

/*
 * Round 3 of the attacks on remote servers (task h-red3). A JSON batch of a million junk values
 * was parsed whole into a tree before it was cut (about 143 MiB under ASan for a 16 MiB body);
 * now its entries are found by a scan and parsed one at a time, so it costs about its own bytes.
 * Each time mcpd keeps serving the others, names the server and the fault, and leaks nothing.
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
/*
 * RSS growth allowed for the 16 MiB junk batch: the body held while it arrives (a buffer that
 * doubles: up to 32 MiB) and ASan's shadow of it, with room; a tree of its million values took
 * about 143 MiB.
 */
#define BATCH_RSS_GROWTH_MAX_KIB (64L * 1024L)
/*
 * The trickled answer takes 30 s and the tiny events last at least 30 s: the calls must fail
 * well before, at this callTimeout, which leaves the control calls made meanwhile 9 s to come
 * back even on a loaded machine (at 4 s they lost that race there).
 */
#define CALL_TIMEOUT_MS 10000
/* Log lines about the tiny-event server: its stray values are rate-limited to a few. */
#define TINY_LOG_LINES_MAX 100
/*
 * RSS growth allowed for two million tiny events (18 MiB on the wire): a bounded queue holds a
 * few curl buffers' worth (about 2 MiB measured), this leaves allocator slack; the unbounded
 * queue grew by 36 MiB with ASan's quarantine kept small (386 MiB with the default one).
 */
#define TINY_RSS_GROWTH_MAX_KIB (16L * 1024L)

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

/* The junk batch: the answer in it still comes, and mcpd's memory grows by about the body. */
static void check_junk_batch(Harness *h, mcpc_client *c)
{
    int is_error = 0;
    long rss0 = h_rss_kib(h->pid), grown;
    _cleanup_free_ char *t = h_call_text(c, "mcp_batch_t", "{}", &is_error);

    CHECK_MSG(!is_error && t && strstr(t, "after the junk"), "batch: %.300s", t ? t : "(null)");
    grown = h_rss_kib(h->pid) - rss0;
    fprintf(stderr, "  junk batch: mcpd RSS grew by %ld KiB\n", grown);
    CHECK_MSG(!h_measurable("the batch's RSS bound") || grown < BATCH_RSS_GROWTH_MAX_KIB,
              "batch: RSS grew by %ld KiB (bound %ld)", grown, BATCH_RSS_GROWTH_MAX_KIB);
    CHECK_MSG(
        bg_count_lines(h->log, "dropped 1000000 of the 1000001 entries of a JSON batch", NULL) == 1,
        "batch: the drop was not reported once");
    h_check_healthy(h, "a JSON batch of a million junk values", CONTROL);
}

/*
 * Call tool from a child while the parent calls the control server: the control calls come back
 * while the child still waits (the hostile server stalls nobody else), and the child's call
 * ends with an error holding want. Returns the child's call time in ms.
 */
static uint64_t check_others_served(Harness *h, mcpc_client *c, const char *tool, const char *want)
{
    uint64_t t0 = now_ms();
    pid_t child = fork();
    int status = -1;

    if (child == 0) {
        mcpc_client *cc = h_client(h, "hostile-agent");
        int is_err = 0;
        _cleanup_free_ char *e = h_call_text(cc, tool, "{}", &is_err);
        fprintf(stderr, "  %s: %.300s\n", tool, e ? e : "(null)");
        _exit(is_err && e && strstr(e, want) ? 0 : 1);
    }
    h_sleep_ms(500); /* the child's call is under way */
    for (int i = 0; i < 3; i++) {
        int is_err = 0;
        _cleanup_free_ char *t = h_call_text(c, CONTROL, "{\"text\":\"during\"}", &is_err);
        CHECK_MSG(!is_err && t && strstr(t, "during"), "control during %s: %.300s", tool,
                  t ? t : "(null)");
    }
    pid_t w = waitpid(child, &status, WNOHANG);
    /* A race with the hostile call's callTimeout, which a 20 times slower mcpd can lose. */
    CHECK_MSG(w == 0 || !h_measurable("the control calls' race with the hostile call"),
              "%s: its call ended before the control calls came back", tool);
    if (w == 0)
        w = waitpid(child, &status, 0);
    CHECK_MSG(w == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "%s: the call did not fail with \"%s\"", tool, want);
    return now_ms() - t0;
}

/* A server that trickles its answer a byte at a time: it fails at its callTimeout. */
static void check_trickle(Harness *h, mcpc_client *c)
{
    check_others_served(h, c, "mcp_trickle_t", "callTimeout");
    h_check_healthy(h, "an answer trickled a byte at a time", CONTROL);
}

/*
 * Two million tiny SSE events before the answer: the stream is paused while mcpd delivers what
 * it queued, so the others are served, the call ends at its callTimeout, and memory stays flat.
 */
static void check_tiny_events(Harness *h, mcpc_client *c)
{
    long rss0 = h_rss_kib(h->pid), grown;
    uint64_t ms = check_others_served(h, c, "mcp_tiny_t", "callTimeout");

    grown = h_rss_kib(h->pid) - rss0;
    fprintf(stderr, "  tiny events: call ended in %llu ms, RSS grew by %ld KiB, %d log lines\n",
            (unsigned long long)ms, grown, bg_count_lines(h->log, "[tiny]", NULL));
    CHECK_MSG(!h_measurable("the tiny events' RSS bound") || grown < TINY_RSS_GROWTH_MAX_KIB,
              "tiny: RSS grew by %ld KiB (bound %ld)", grown, TINY_RSS_GROWTH_MAX_KIB);
    CHECK_MSG(bg_count_lines(h->log, "[tiny]", NULL) < TINY_LOG_LINES_MAX, "tiny: %d log lines",
              bg_count_lines(h->log, "[tiny]", NULL));
    h_check_healthy(h, "two million tiny SSE events", CONTROL);
}

int main(void)
{
    static const char *const modes[] = {"batch", "trickle", "sse-tiny"};
    static const char *const names[] = {"batch", "trickle", "tiny"};
    pid_t srv[N_ELEMENTS(modes)];
    int port[N_ELEMENTS(modes)];
    StrBuf cfg = STRBUF_INIT;
    Harness h;
    mcpc_client *c;

    h_setup(&h, "http-batch-sse-floods");
    /*
     * RSS must show what mcpd holds, not ASan's quarantine of freed blocks (256 MiB by default,
     * filled by any flood of small messages): keep it small. Ignored without ASan.
     */
    const char *asan = getenv("ASAN_OPTIONS");
    _cleanup_free_ char *asan_opts =
        xasprintf("%s%squarantine_size_mb=1", asan ? asan : "", asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", asan_opts, 1);
    strbuf_printf(&cfg, "{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}", h_fake());
    for (size_t i = 0; i < N_ELEMENTS(modes); i++) {
        srv[i] = start_raw(&h, names[i], modes[i], &port[i]);
        strbuf_printf(&cfg,
                      ", \"%s\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                      " \"callTimeout\": %d, \"reconnect\": false}",
                      names[i], port[i], CALL_TIMEOUT_MS);
    }
    strbuf_puts(&cfg, "}}");
    h_write_config(&h, strbuf_str(&cfg));
    strbuf_deinit(&cfg);
    h_start(&h, NULL);
    c = h_client(&h, "http-batch-sse-floods");
    h_settle(&h, c, "steady", "batch", "trickle", "tiny", NULL);

    check_junk_batch(&h, c);
    check_trickle(&h, c);
    check_tiny_events(&h, c);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    for (size_t i = 0; i < N_ELEMENTS(modes); i++)
        bg_stop(srv[i]);
    h_teardown(&h);
    return h_finish("test-http-batch-sse-floods");
}
