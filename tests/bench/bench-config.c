// SPDX-License-Identifier: MIT
// bench-config: how long mcpd takes to read the largest config files it accepts (issue 39 item
// 7), in process and in the daemon, and how long another agent's ping waits meanwhile.

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/config.h"
#include "tests/integration/bigconfig.h"
#include "tests/integration/harness.h"

/* Reads per shape in process: the median is printed, with the fastest and slowest. */
#define N_ROUNDS 5

static double cpu_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Discovery of root (its .mcp.json) in this process, N_ROUNDS times: wall and CPU time. */
static void in_process(const char *root, const char *what, size_t bytes)
{
    double wall[N_ROUNDS], cpu[N_ROUNDS];
    Settings s;
    size_t n_problems = 0;

    settings_init(&s);
    for (int i = 0; i < N_ROUNDS; i++) {
        DiscoverOptions opt = {NULL, root};
        ConfigSet set;
        uint64_t t0 = now_us();
        double c0 = cpu_ms();
        config_discover_quiet(&set, &opt, &s);
        cpu[i] = cpu_ms() - c0;
        wall[i] = (double)(now_us() - t0) / 1e3;
        n_problems = set.n_problems;
        config_set_deinit(&set);
    }
    qsort(wall, N_ROUNDS, sizeof(double), cmp_double);
    qsort(cpu, N_ROUNDS, sizeof(double), cmp_double);
    printf("in process  %-26s %7zu bytes: wall %7.1f ms (%.1f-%.1f), cpu %7.1f ms (%.1f-%.1f); "
           "%zu problems\n",
           what, bytes, wall[N_ROUNDS / 2], wall[0], wall[N_ROUNDS - 1], cpu[N_ROUNDS / 2], cpu[0],
           cpu[N_ROUNDS - 1], n_problems);
}

/* The daemon: an agent initializes in root while another pings. */
static void in_daemon(Harness *h, const char *root, const char *what)
{
    BigPinger p;
    mcpc_client *agent = NULL;

    big_pinger_start(&p, h_client(h, "pinger"));
    int64_t init_ms = big_initialize_in(h, root, &agent);
    big_pinger_stop(&p);
    printf("mcpd        %-26s initialize + tools/list %6" PRId64
           " ms; slowest ping meanwhile %6.1f ms "
           "(%" PRIu64 " pings)\n",
           what, init_ms, (double)atomic_load(&p.max_us) / 1e3, (uint64_t)atomic_load(&p.n_pings));
    mcpc_free(p.c);
    mcpc_free(agent);
}

int main(int argc, char **argv)
{
    bool short_run = argc > 1 && streq(argv[1], "--short");
    /* --short proves the benchmark works (the suite runs it); it asserts no times. */
    size_t n_keys = short_run ? BIG_ENV_KEYS / 20 : BIG_ENV_KEYS;
    size_t n_servers = short_run ? BIG_SERVERS / 20 : BIG_SERVERS;
    Harness h;
    struct {
        const char *what;
        char *text;
        char *root;
    } shapes[3];

    log_set_level(LOG_ERR);
    h_setup(&h, "bench-config");
    shapes[0].what = "1 server, env keys";
    shapes[0].text = big_env_file(n_keys);
    shapes[1].what = "1 server, env keys / 8";
    shapes[1].text = big_env_file(n_keys / 8);
    shapes[2].what = "servers, nested objects";
    shapes[2].text = big_servers_file(n_servers);
    printf("bench-config: %zu env keys, %zu servers%s\n", n_keys, n_servers,
           short_run ? " (short run)" : "");
    for (size_t i = 0; i < N_ELEMENTS(shapes); i++) {
        shapes[i].root = xasprintf("%s/project-%zu", h.dir, i);
        big_write_mcp_json(shapes[i].root, shapes[i].text);
        in_process(shapes[i].root, shapes[i].what, strlen(shapes[i].text));
    }
    h_write_config(&h, "{\"mcpServers\":{}}");
    h_start(&h, NULL);
    for (size_t i = 0; i < N_ELEMENTS(shapes); i++)
        in_daemon(&h, shapes[i].root, shapes[i].what);
    CHECK_INTEQ(h_stop(&h), 0);
    h_teardown(&h);
    for (size_t i = 0; i < N_ELEMENTS(shapes); i++) {
        free(shapes[i].text);
        free(shapes[i].root);
    }
    return h_finish("bench-config");
}
