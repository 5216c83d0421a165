// SPDX-License-Identifier: MIT
// test-gate: warm starts meet the start-up gate, not the slow server, every time.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/*
 * How long the only server takes to answer initialize: far beyond what a warm start takes on a
 * loaded machine (one took 1301 ms at load 10 on 2 cores).
 */
#define SLOW_MS 10000
/* Warm starts measured. The race this guards against lost about one start in seven. */
#define N_WARM_STARTS 30
/*
 * The first tools/list of a warm start must answer below this. The gate opens at once for a
 * cached server; a list that waited for the server takes SLOW_MS. Half of SLOW_MS still tells
 * the two apart, with room for a loaded machine (the deferred stand-ins prove the same from the
 * other side: a list that waited would carry the live tools).
 */
#define WARM_BOUND_MS (SLOW_MS / 2)
/* Tools the fake server offers by default. */
#define FAKE_TOOLS 10

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* One tools/list: its duration, its tool count and whether the slow server's tools are stand-ins.
 */
static int64_t timed_list(mcpc_client *c, int *np, bool *deferredp)
{
    uint64_t t0 = now_ms();
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val tools;

    *np = -1;
    *deferredp = false;
    if (mcpc_list_tools(c, &out) != 0)
        return -1;
    int64_t ms = (int64_t)(now_ms() - t0);
    r = json_parse(out, NULL);
    tools = json_get_array(r, "tools");
    *np = (int)json_array_len(tools);
    for (size_t i = 0; i < json_array_len(tools); i++) {
        yajl_val meta = json_get_object(json_array_at(tools, i), "_meta");
        if (YAJL_IS_TRUE(json_get(meta, "mcpd/deferred")))
            *deferredp = true;
    }
    return ms;
}

int main(void)
{
    Harness h;
    int64_t ms[N_WARM_STARTS];
    int n, slow_starts = 0;
    bool deferred;
    mcpc_client *c;

    h_setup(&h, "gate");
    /* Its servers start with mcpd (the warm start from the cache is what it checks), not on
     * their first call: lazy start has its own test (test-ondemand). */
    h_write_settings(&h, "{\"start\": \"eager\"}");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"slow\": {\"command\": \"%s\", \"args\": [\"--init-delay-ms\", "
        "\"%d\"]}}}",
        h_fake(), SLOW_MS);
    h_write_config(&h, cfg);

    /* Cold: the list waits for the server, and its tools go to the cache. */
    h_start(&h, NULL);
    c = h_client(&h, "cold");
    int64_t cold = timed_list(c, &n, &deferred);
    CHECK_MSG(cold >= SLOW_MS - 500 && n == FAKE_TOOLS && !deferred, "cold: %lld ms, %d tools",
              (long long)cold, n);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);

    for (int i = 0; i < N_WARM_STARTS; i++) {
        h_start(&h, NULL);
        c = h_client(&h, "warm");
        ms[i] = timed_list(c, &n, &deferred);
        CHECK_MSG(ms[i] >= 0 && ms[i] < WARM_BOUND_MS && n == FAKE_TOOLS && deferred,
                  "warm start %d: first tools/list after %lld ms, %d tools, deferred %d", i,
                  (long long)ms[i], n, deferred);
        slow_starts += ms[i] >= WARM_BOUND_MS;
        mcpc_free(c);
        CHECK(h_stop(&h) == 0);
    }
    qsort(ms, N_WARM_STARTS, sizeof(ms[0]), cmp_i64);
    printf("  %d warm starts: first tools/list min %lld ms, median %lld ms, max %lld ms; "
           "%d over %d ms\n",
           N_WARM_STARTS, (long long)ms[0], (long long)ms[N_WARM_STARTS / 2],
           (long long)ms[N_WARM_STARTS - 1], slow_starts, WARM_BOUND_MS);

    /* The deferred server still connects, and the daemon is whole after all the restarts. */
    h_start(&h, NULL);
    c = h_client(&h, "settle");
    h_settle(&h, c, "slow", NULL);
    mcpc_free(c);
    h_check_healthy(&h, "gate", "mcp_slow_echo");
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-gate");
}
