// SPDX-License-Identifier: MIT
// bench-mem: mcpd's memory with 10 000 tools and its warm start, against a baseline build.

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/include/mcpc.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* 10 servers x 1000 tools: the 10 000 tools of the memory target. */
#define BIG_SERVERS      10
#define TOOLS_PER_SERVER 1000
/* tools/list answers asked for after the connect: a copy per answer would show in the RSS. */
#define N_LISTS 50
/* Slow servers of the warm start, and how long each takes to answer initialize. */
#define SLOW_SERVERS 10
#define SLOW_INIT_MS 2000
/* Warm starts per build: the median is reported. */
#define N_STARTS 5
/* How long a server may take to connect under load before the benchmark gives up on it. */
#define CONNECT_WAIT_MS 120000

typedef struct Figures {
    long rss_kib, pss_kib;  /* after connect and N_LISTS lists */
    long rss_connected_kib; /* after connect, before any list */
    int64_t warm_ms;        /* median daemon start to first tools/list */
    int64_t warm_min_ms, warm_max_ms;
    size_t view_bytes; /* the tools/list result */
    int n_lists;
} Figures;

static char *servers_config(int n, const char *args)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\":{");
    for (int i = 1; i <= n; i++)
        strbuf_printf(&sb, "%s\"s%d\":{\"command\":\"%s\",\"args\":[%s]}", i > 1 ? "," : "", i,
                      h_fake(), args);
    strbuf_puts(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

static void wait_connected(mcpc_client *c, int n)
{
    for (int i = 1; i <= n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "s%d", i);
        if (!h_wait_state(c, name, "connected", CONNECT_WAIT_MS))
            fprintf(stderr, "bench-mem: %s did not connect\n", name);
    }
}

static void measure_tools(Figures *f, int n_lists)
{
    Harness h;
    _cleanup_free_ char *args =
        xasprintf("\"--only-generic\",\"--tools\",\"%d\"", TOOLS_PER_SERVER);
    _cleanup_free_ char *cfg = servers_config(BIG_SERVERS, args);

    h_setup(&h, "bench-mem");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "bench");
    wait_connected(c, BIG_SERVERS);
    h_sleep_ms(500); /* the coalesced view rebuild and the cache writes */
    f->rss_connected_kib = h_rss_kib(h.pid);
    f->n_lists = n_lists;
    for (int i = 0; i < n_lists; i++) {
        char *out = NULL;
        if (mcpc_list_tools(c, &out) != 0)
            fprintf(stderr, "bench-mem: tools/list failed\n");
        f->view_bytes = out ? strlen(out) : 0;
        mcpc_string_free(out);
    }
    /* BENCH_MEM_PAUSE: hold mcpd here, to look at it (smaps, massif) before it stops. */
    if (getenv("BENCH_MEM_PAUSE")) {
        fprintf(stderr, "mcpd pid %d: press enter\n", (int)h.pid);
        getchar();
    }
    f->rss_kib = h_rss_kib(h.pid);
    f->pss_kib = h_pss_kib(h.pid);
    mcpc_free(c);
    h_stop(&h);
    h_teardown(&h);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static void measure_warm(Figures *f, int n_starts)
{
    Harness h;
    _cleanup_free_ char *args = xasprintf("\"--init-delay-ms\",\"%d\"", SLOW_INIT_MS);
    _cleanup_free_ char *cfg = servers_config(SLOW_SERVERS, args);
    int64_t ms[N_STARTS];
    mcpc_client *c;

    h_setup(&h, "bench-warm");
    h_write_config(&h, cfg);
    h_start(&h, NULL); /* cold: fills the cache */
    c = h_client(&h, "cold");
    wait_connected(c, SLOW_SERVERS);
    mcpc_free(c);
    h_stop(&h);
    for (int i = 0; i < n_starts; i++) {
        char *out = NULL;
        uint64_t t0 = now_ms();
        h_start(&h, NULL);
        c = h_client(&h, "warm");
        mcpc_list_tools(c, &out);
        ms[i] = (int64_t)(now_ms() - t0);
        mcpc_string_free(out);
        mcpc_free(c);
        h_stop(&h);
    }
    h_teardown(&h);
    qsort(ms, (size_t)n_starts, sizeof(ms[0]), cmp_i64);
    f->warm_ms = ms[n_starts / 2];
    f->warm_min_ms = ms[0];
    f->warm_max_ms = ms[n_starts - 1];
}

static void measure(const char *binary, Figures *f, bool short_mode)
{
    setenv("MCPD_BINARY", binary, 1);
    measure_tools(f, short_mode ? 5 : N_LISTS);
    measure_warm(f, short_mode ? 1 : N_STARTS);
}

static void print(const char *what, const Figures *f)
{
    printf("   %-9s %7ld KiB RSS connected, %7ld KiB RSS / %7ld KiB PSS after %d lists of %zu "
           "KiB; warm start %" PRId64 " ms (min %" PRId64 ", max %" PRId64 ")\n",
           what, f->rss_connected_kib, f->rss_kib, f->pss_kib, f->n_lists, f->view_bytes / 1024,
           f->warm_ms, f->warm_min_ms, f->warm_max_ms);
}

/*
 * usage: mcpd-bench-mem [--short] [--baseline PATH-TO-OTHER-MCPD]. $MCPD_BINARY is the build
 * under test; the baseline (e.g. main's release build; or $MCPD_BASELINE) is measured in the
 * same run, after it.
 */
int main(int argc, char **argv)
{
    const char *self = getenv("MCPD_BINARY"), *baseline = getenv("MCPD_BASELINE");
    bool short_mode = false;
    Figures mine = {0}, base = {0};

    for (int i = 1; i < argc; i++) {
        if (streq(argv[i], "--short"))
            short_mode = true;
        else if (streq(argv[i], "--baseline") && i + 1 < argc)
            baseline = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--short] [--baseline MCPD]\n", argv[0]);
            return 2;
        }
    }
    if (!self) {
        fprintf(stderr, "bench-mem: MCPD_BINARY is not set\n");
        return 2;
    }
    _cleanup_free_ char *self_copy = xstrdup(self);
    measure(self_copy, &mine, short_mode);
    printf("8. memory with %d tools (%d servers x %d), and warm start (%d cached servers that "
           "take %d ms to initialize)\n",
           BIG_SERVERS * TOOLS_PER_SERVER, BIG_SERVERS, TOOLS_PER_SERVER, SLOW_SERVERS,
           SLOW_INIT_MS);
    print("this", &mine);
    if (baseline) {
        measure(baseline, &base, short_mode);
        print("baseline", &base);
        printf("   ratio this/baseline: RSS %.2f, PSS %.2f, warm start %.2f\n",
               (double)mine.rss_kib / (double)base.rss_kib,
               (double)mine.pss_kib / (double)base.pss_kib,
               (double)mine.warm_ms / (double)(base.warm_ms ? base.warm_ms : 1));
        setenv("MCPD_BINARY", self_copy, 1);
    }
    bool ok = mine.rss_kib > 0 && mine.pss_kib > 0 && mine.warm_ms >= 0;
    return ok ? 0 : 1;
}
