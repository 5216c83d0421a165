// SPDX-License-Identifier: MIT
// bench-sandbox: what a sandbox adds to a stdio server's start (issue 37: at most +20 ms). The
// same probe server, unconfined and in bubblewrap ("project-write"), each started through the
// real mcpd in alternating rounds: mcpd/connect to connected (mcpd/wait), spawn and handshake.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Rounds per server; the median is compared (a shared machine has outliers). */
#define N_ROUNDS       25
#define N_ROUNDS_SHORT 3
/* The target: what containment may add to one start. */
#define TARGET_EXTRA_MS 20.0

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One start of server: disconnected first, then connect and wait for it. Milliseconds. */
static double one_start(mcpc_client *c, const char *server)
{
    _cleanup_free_ char *p = xasprintf("{\"server\": \"%s\"}", server);
    _cleanup_free_ char *w = xasprintf("{\"server\": \"%s\", \"timeoutMs\": 30000}", server);
    char *out = NULL;
    uint64_t t0;

    if (mcpc_request(c, "mcpd/disconnect", p, &out) != 0) {
        fprintf(stderr, "bench-sandbox: disconnect %s failed\n", server);
        exit(1);
    }
    free(out);
    h_sleep_ms(50); /* the old process gone, not competing with the new one */
    t0 = now_us();
    if (mcpc_request(c, "mcpd/connect", p, &out) != 0) {
        fprintf(stderr, "bench-sandbox: connect %s failed\n", server);
        exit(1);
    }
    free(out);
    if (mcpc_request(c, "mcpd/wait", w, &out) != 0 || !strstr(out ?: "", "connected")) {
        fprintf(stderr, "bench-sandbox: %s did not connect: %s\n", server, out ?: "");
        exit(1);
    }
    free(out);
    return (double)(now_us() - t0) / 1e3;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 && streq(argv[1], "--short") ? N_ROUNDS_SHORT : N_ROUNDS;
    double open_ms[N_ROUNDS], boxed_ms[N_ROUNDS];
    char dir[] = "/var/tmp/mcpd-bench-sandbox-XXXXXX";
    const char *probe = getenv("PROBE_SERVER");
    Harness h;

    if (!probe) {
        fprintf(stderr, "bench-sandbox: PROBE_SERVER is not set (run through meson)\n");
        return 99;
    }
    h_setup(&h, "bench-sandbox");
    if (!mkdtemp(dir))
        return 99;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"open\": {\"command\": \"%s\", \"cwd\": \"%s\"}, \"boxed\": "
                  "{\"command\": \"%s\", \"cwd\": \"%s\", \"sandbox\": \"project-write\"}}}",
                  probe, dir, probe, dir);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "bench");
    if (!h_wait_state(c, "open", "connected", H_WAIT_MS) ||
        !h_wait_state(c, "boxed", "connected", H_WAIT_MS)) {
        fprintf(stderr, "bench-sandbox: the servers did not connect\n");
        return 1;
    }
    for (int i = 0; i < rounds; i++) {
        /* Alternating which goes first, so neither always meets a warmer cache. */
        if (i % 2) {
            boxed_ms[i] = one_start(c, "boxed");
            open_ms[i] = one_start(c, "open");
        } else {
            open_ms[i] = one_start(c, "open");
            boxed_ms[i] = one_start(c, "boxed");
        }
    }
    qsort(open_ms, (size_t)rounds, sizeof(double), cmp_double);
    qsort(boxed_ms, (size_t)rounds, sizeof(double), cmp_double);
    double om = open_ms[rounds / 2], bm = boxed_ms[rounds / 2];
    printf("server start through mcpd (connect to connected), %d rounds each, median [min, max]:\n",
           rounds);
    printf("  unconfined:            %7.2f ms [%.2f, %.2f]\n", om, open_ms[0], open_ms[rounds - 1]);
    printf("  bubblewrap (project-write): %7.2f ms [%.2f, %.2f]\n", bm, boxed_ms[0],
           boxed_ms[rounds - 1]);
    printf("  added by the sandbox: %+.2f ms (ratio %.2f); target <= +%.0f ms: %s\n", bm - om,
           om > 0 ? bm / om : 0.0, TARGET_EXTRA_MS, bm - om <= TARGET_EXTRA_MS ? "met" : "MISSED");
    mcpc_free(c);
    h_teardown(&h);
    h_sh("rm -rf '%s'", dir);
    return h_finish("bench-sandbox");
}
