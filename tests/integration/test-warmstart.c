// SPDX-License-Identifier: MIT
// test-warmstart: cached servers never hold a tools/list back; uncached ones still do.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Slow servers, each cached after the cold start: the warm start the gate must not wait for. */
#define N_SLOW 10
/* How long each slow server takes to answer initialize: far beyond an answer from the cache. */
#define SLOW_MS 4000
/*
 * A warm list answers from the cache; one that waited for the servers takes SLOW_MS. Half of
 * SLOW_MS separates the two with room for a loaded machine.
 */
#define WARM_BOUND_MS (SLOW_MS / 2)
/* Tools the fake server offers by default. */
#define FAKE_TOOLS 10
/*
 * An explicit startupTimeoutMs still makes a list wait for cached servers. It counts from the
 * daemon's start, so the list answers no sooner than that after the test started the daemon.
 */
#define OPT_IN_GATE_MS 2000

typedef struct Listed {
    int64_t ms;
    int n_tools;
    int n_deferred;   /* tools marked _meta["mcpd/deferred"] */
    int n_newcomer;   /* tools of the server named "newcomer" */
    bool newcomer_ok; /* and none of them deferred */
} Listed;

/*
 * List c's tools into l, l->ms counted from t0 (now_ms()), or from the call when t0 is 0. A wait
 * that mcpd counts from its own start, or from a server's spawn, is measured from before the
 * test started the daemon: the client may come late on a loaded machine (or under valgrind),
 * but never early, so the bound holds whatever the load.
 */
static void timed_list(mcpc_client *c, Listed *l, uint64_t t0)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val tools;

    memset(l, 0, sizeof(*l));
    l->ms = -1;
    l->newcomer_ok = true;
    if (!t0)
        t0 = now_ms();
    if (mcpc_list_tools(c, &out) != 0)
        return;
    l->ms = (int64_t)(now_ms() - t0);
    r = json_parse(out, NULL);
    tools = json_get_array(r, "tools");
    l->n_tools = (int)json_array_len(tools);
    for (size_t i = 0; i < json_array_len(tools); i++) {
        yajl_val meta = json_get_object(json_array_at(tools, i), "_meta");
        bool deferred = YAJL_IS_TRUE(json_get(meta, "mcpd/deferred"));
        l->n_deferred += deferred;
        if (streq(json_get_string(meta, "mcpd/server"), "newcomer")) {
            l->n_newcomer++;
            l->newcomer_ok &= !deferred;
        }
    }
}

/* N_SLOW slow servers, and a quick one named "newcomer" that is slow too when delay_ms > 0. */
static char *slow_config(int newcomer_delay_ms)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\": {");
    for (int i = 0; i < N_SLOW; i++)
        strbuf_printf(&sb,
                      "%s\"slow%d\": {\"command\": \"%s\", \"args\": [\"--init-delay-ms\", "
                      "\"%d\"]}",
                      i ? "," : "", i, h_fake(), SLOW_MS);
    if (newcomer_delay_ms > 0)
        strbuf_printf(&sb,
                      ",\"newcomer\": {\"command\": \"%s\", \"args\": [\"--init-delay-ms\", "
                      "\"%d\"]}",
                      h_fake(), newcomer_delay_ms);
    strbuf_puts(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

int main(void)
{
    Harness h;
    Listed l;
    mcpc_client *c;
    uint64_t t0;
    _cleanup_free_ char *cfg = slow_config(0);

    h_setup(&h, "warmstart");
    /* Its servers start with mcpd (the warm start from the cache is what it checks), not on
     * their first call: lazy start has its own test (test-ondemand). */
    h_write_settings(&h, "{\"start\": \"eager\"}");
    h_write_config(&h, cfg);

    /* Cold: the list waits for every server, and their tools go to the cache. */
    t0 = now_ms();
    h_start(&h, NULL);
    c = h_client(&h, "cold");
    timed_list(c, &l, t0);
    CHECK_MSG(l.ms >= SLOW_MS - 500 && l.n_tools == N_SLOW * FAKE_TOOLS && l.n_deferred == 0,
              "cold: %lld ms, %d tools, %d deferred", (long long)l.ms, l.n_tools, l.n_deferred);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);

    /* Warm: every server is cached, so the list answers from the cache before any connects. */
    h_start(&h, NULL);
    c = h_client(&h, "warm");
    timed_list(c, &l, 0);
    CHECK_MSG(l.ms >= 0 && l.ms < WARM_BOUND_MS && l.n_tools == N_SLOW * FAKE_TOOLS &&
                  l.n_deferred == N_SLOW * FAKE_TOOLS,
              "warm: %lld ms, %d tools, %d deferred", (long long)l.ms, l.n_tools, l.n_deferred);
    printf("  warm start, %d cached slow servers: first tools/list after %lld ms\n", N_SLOW,
           (long long)l.ms);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);

    /* A server without a cache is still waited for; the cached ones are listed deferred. */
    free(cfg);
    cfg = slow_config(SLOW_MS);
    h_write_config(&h, cfg);
    t0 = now_ms();
    h_start(&h, NULL);
    c = h_client(&h, "uncached");
    timed_list(c, &l, t0);
    CHECK_MSG(l.ms >= SLOW_MS - 500 && l.n_newcomer == FAKE_TOOLS && l.newcomer_ok &&
                  l.n_tools == (N_SLOW + 1) * FAKE_TOOLS,
              "uncached: %lld ms, %d tools, %d of newcomer (live: %d)", (long long)l.ms, l.n_tools,
              l.n_newcomer, l.newcomer_ok);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);

    /* startupTimeoutMs set by the user: the list waits that long even for cached servers. */
    _cleanup_free_ char *settings =
        xasprintf("{\"startupTimeoutMs\": %d, \"start\": \"eager\"}", OPT_IN_GATE_MS);
    h_write_settings(&h, settings);
    t0 = now_ms();
    h_start(&h, NULL);
    c = h_client(&h, "opt-in");
    timed_list(c, &l, t0);
    CHECK_MSG(l.ms >= OPT_IN_GATE_MS && l.n_tools == (N_SLOW + 1) * FAKE_TOOLS,
              "startupTimeoutMs %d: %lld ms, %d tools", OPT_IN_GATE_MS, (long long)l.ms, l.n_tools);
    h_settle(&h, c, "slow0", "newcomer", NULL);
    mcpc_free(c);
    h_check_healthy(&h, "warmstart", "mcp_newcomer_echo");
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-warmstart");
}
