// SPDX-License-Identifier: MIT
// test-stdio-output-flood: stdio servers that flood their stdout or stderr, against the real mcpd.

/*
 * Round 3 of the attacks on stdio servers (task h-red3). A server writing tiny lines to stdout
 * as fast as it can (`yes 1`) made mcpd handle every line of each 64 KiB read in one loop turn:
 * tens of thousands of parses per turn, so every other server's call took half a second or more
 * (50 times its usual). Now a server's lines are handled 1024 per turn and its pipe waits
 * meanwhile. A server writing megabytes to stderr is read into its ring and logged at a bounded
 * rate.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Control calls made while the floods run. */
#define N_CALLS 20
/*
 * Their mean time allowed, generous: 11 ms measured under ASan with the floods, 561 ms when the
 * stdout flood's reads were handled whole each turn.
 */
#define FLOOD_CALL_MS_MAX 200
/* Log lines of the stderr flood: a burst of 100, then 20 a second, over a test of seconds. */
#define STDERR_LOG_LINES_MAX 1000
/* RSS growth allowed while the floods run (each byte is read, handled and let go). */
#define FLOOD_RSS_GROWTH_MAX_KIB (16L * 1024L)

int main(void)
{
    _cleanup_free_ char *cfg = NULL;
    Harness h;
    mcpc_client *c;
    uint64_t t0, ms;
    long rss0, grown;

    h_setup(&h, "stdio-output-flood");
    /* RSS must show what mcpd holds, not ASan's quarantine of freed blocks (see
     * test-http-batch-sse-floods). */
    const char *asan = getenv("ASAN_OPTIONS");
    _cleanup_free_ char *asan_opts =
        xasprintf("%s%squarantine_size_mb=1", asan ? asan : "", asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", asan_opts, 1);
    /* The floods never answer initialize: a long timeout keeps them running through the test. */
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}, "
                    "\"outflood\": {\"command\": \"yes\", \"args\": [\"1\"], \"timeout\": 120000},"
                    " \"errflood\": {\"command\": \"sh\", \"args\": [\"-c\", \"yes "
                    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA >&2\"], "
                    "\"timeout\": 120000}}}",
                    h_fake());
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "stdio-output-flood");
    h_settle(&h, c, "steady", NULL);

    rss0 = h_rss_kib(h.pid);
    t0 = now_ms();
    for (int i = 0; i < N_CALLS; i++) {
        int is_err = 0;
        _cleanup_free_ char *t = h_call_text(c, CONTROL, "{\"text\":\"during\"}", &is_err);
        CHECK_MSG(!is_err && t && strstr(t, "during"), "control during the floods: %.300s",
                  t ? t : "(null)");
    }
    ms = (now_ms() - t0) / N_CALLS;
    grown = h_rss_kib(h.pid) - rss0;
    fprintf(stderr, "  floods: control calls took %llu ms each, RSS grew by %ld KiB, %d lines\n",
            (unsigned long long)ms, grown, bg_count_lines(h.log, "[errflood]", NULL));
    if (h_measurable("the floods' call time and RSS bounds")) {
        CHECK_MSG(ms < FLOOD_CALL_MS_MAX, "a stdout flood held the others up: %llu ms a call",
                  (unsigned long long)ms);
        CHECK_MSG(grown < FLOOD_RSS_GROWTH_MAX_KIB, "floods: RSS grew by %ld KiB", grown);
    }
    CHECK_MSG(bg_count_lines(h.log, "[errflood]", NULL) < STDERR_LOG_LINES_MAX,
              "stderr flood: %d log lines", bg_count_lines(h.log, "[errflood]", NULL));
    h_check_healthy(&h, "stdout and stderr floods", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-stdio-output-flood");
}
