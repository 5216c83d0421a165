// SPDX-License-Identifier: MIT
// bench-first-connect: what the era probe costs a 2025 server's first connect: real npm servers
// (server-everything, -filesystem, -memory) with "protocol" auto against the same servers pinned
// to 2025 (no probe), started together by one mcpd with nothing cached, then the auto ones again
// after a restart (their era from the cache). Prints the medians; asserts no times.

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Rounds of cold start and restart; the median of each figure is reported. */
#define ROUNDS 3
/* How long a Node server may take to start under load before the benchmark gives up on it. */
#define CONNECT_WAIT_MS 120000

static const struct {
    const char *name, *package, *arg;
} servers[] = {
    {"everything", "server-everything", "stdio"},
    {"filesystem", "server-filesystem", "DIR"},
    {"memory", "server-memory", NULL},
};
#define N_SERVERS N_ELEMENTS(servers)

/* [server][0: auto cold, 1: pinned 2025 cold, 2: auto after a restart][round] */
static long ms[N_SERVERS][3][ROUNDS];

static char *config(const char *modules, const char *dir, bool pinned_too)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\":{");
    for (size_t i = 0; i < N_SERVERS; i++)
        for (int pin = 0; pin <= (int)pinned_too; pin++) {
            const char *arg = servers[i].arg;
            strbuf_printf(&sb,
                          "%s\"%s%s\":{\"command\":\"node\",\"args\":[\"%s/@modelcontextprotocol/"
                          "%s/dist/index.js\"",
                          i || pin ? "," : "", servers[i].name, pin ? "-2025" : "", modules,
                          servers[i].package);
            if (arg)
                strbuf_printf(&sb, ",\"%s\"", streq(arg, "DIR") ? dir : arg);
            strbuf_printf(&sb,
                          "],\"env\":{\"MEMORY_FILE_PATH\":\"%s/memory-%d.json\"},"
                          "\"timeout\":%d%s}",
                          dir, pin, CONNECT_WAIT_MS, pin ? ",\"protocol\":\"2025\"" : "");
        }
    strbuf_puts(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

static void wait_connected(Harness *h, const char *client, bool pinned_too)
{
    mcpc_client *c = h_client(h, client);

    for (size_t i = 0; i < N_SERVERS; i++)
        for (int pin = 0; pin <= (int)pinned_too; pin++) {
            _cleanup_free_ char *name = xasprintf("%s%s", servers[i].name, pin ? "-2025" : "");
            CHECK_MSG(h_wait_state(c, name, "connected", CONNECT_WAIT_MS), "%s never connected",
                      name);
        }
    mcpc_free(c);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;

    return (x > y) - (x < y);
}

static long median(const long *v)
{
    long s[ROUNDS];

    memcpy(s, v, sizeof(s));
    qsort(s, ROUNDS, sizeof(*s), cmp_long);
    return s[ROUNDS / 2];
}

static void round_once(const char *modules, int r)
{
    Harness h;

    h_setup(&h, "bench-first-connect");
    _cleanup_free_ char *cfg = config(modules, h.dir, true);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    wait_connected(&h, "cold", true);
    CHECK(h_stop(&h) == 0);
    _cleanup_free_ char *cold = h_read_file(h.log);
    for (size_t i = 0; i < N_SERVERS; i++) {
        _cleanup_free_ char *pinned = xasprintf("%s-2025", servers[i].name);
        ms[i][0][r] = h_connect_ms(cold, servers[i].name);
        ms[i][1][r] = h_connect_ms(cold, pinned);
    }
    /* The restart: the auto servers only, their era read back from the cache. */
    _cleanup_free_ char *warm_cfg = config(modules, h.dir, false);
    h_write_config(&h, warm_cfg);
    size_t mark = strlen(cold);
    h_start(&h, NULL);
    wait_connected(&h, "warm", false);
    CHECK(h_stop(&h) == 0);
    _cleanup_free_ char *all = h_read_file(h.log);
    for (size_t i = 0; i < N_SERVERS; i++) {
        ms[i][2][r] = h_connect_ms(all + mark, servers[i].name);
        _cleanup_free_ char *who = xasprintf("[%s] ", servers[i].name);
        CHECK_MSG(!h_line_has(all + mark, who, "server/discover"), "%s was probed after a restart",
                  servers[i].name);
    }
    h_teardown(&h);
}

int main(void)
{
    int status = 0;
    /* The pinned packages of bench-ondemand, which has these three among its eight. */
    _cleanup_free_ char *modules = h_npm_modules("tests/bench/ondemand", &status);

    if (!modules)
        return status;
    for (int r = 0; r < ROUNDS; r++)
        round_once(modules, r);
    printf("first connect of a 2025 server, %d rounds, all six started together by one mcpd "
           "(medians, ms): auto (probed) / pinned 2025 (no probe) / auto after a restart "
           "(era cached)\n",
           ROUNDS);
    for (size_t i = 0; i < N_SERVERS; i++) {
        long a = median(ms[i][0]), p = median(ms[i][1]), w = median(ms[i][2]);
        printf("  %-10s %6ld / %6ld / %6ld   auto/pinned %.2f\n", servers[i].name, a, p, w,
               p > 0 ? (double)a / (double)p : 0.0);
    }
    return h_finish("bench-first-connect");
}
