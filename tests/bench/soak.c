// SPDX-License-Identifier: MIT
// soak: many agents calling for a long time while servers are killed at random.

/*
 * mcpd-soak [--duration S] [--agents N] [--servers N] [--seed N]
 *
 * N agent threads (one mcpc connection each) call echo and short sleep tools on random servers
 * until the deadline; a killer thread SIGKILLs a random connected server every 1-3 s. A call
 * may fail only if a server it went to was killed while it was in flight, and then only with
 * an "MCP error:" result; anything else is a violation. At the end every server must be back,
 * mcpd's RSS within SOAK_RSS_GROWTH_KIB of its warmed-up start, its fds at the baseline, and
 * no process left but the servers. Figures go out as a table and one JSON line.
 */

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/include/mcpc.h"
#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* The stated bound on mcpd's RSS growth from the warmed-up start to the end of the soak. */
#define SOAK_RSS_GROWTH_KIB (16 * 1024)
/* mcpd sees a SIGKILLed child within milliseconds; calls sent in this window still hit it. */
#define SOAK_NOTICE_MS 1000
/* The breaker opens at BREAKER_FAILURES in BREAKER_WINDOW_MS: stay below it per server. */
#define SOAK_KILLS_PER_WINDOW 3
#define SOAK_KILL_WINDOW_MS   65000
#define SOAK_MAX_SERVERS      32
#define SOAK_MAX_KILLS        4096
/* Agents warm mcpd up this long before the start RSS is taken. */
#define SOAK_WARMUP_MS 2000

static struct {
    int duration_s, n_agents, n_servers;
    unsigned seed;
} opt = {600, 100, 8, 1};

static Harness h;
static _Atomic uint64_t deadline_ms;
static atomic_bool stop_killer;

/* Kills, appended by the killer, read by agents: the lock keeps the pair (server, time). */
static pthread_mutex_t kill_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int server;
    uint64_t at_ms;
} kills[SOAK_MAX_KILLS];
static size_t n_kills;

typedef struct Agent {
    pthread_t thread;
    int index;
    unsigned rand;
    uint64_t calls, ok, failed, bad;
    char first_bad[256];
} Agent;

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Was server killed while a call to it ran from start to end? */
static bool killed_during(int server, uint64_t start, uint64_t end)
{
    bool hit = false;

    pthread_mutex_lock(&kill_lock);
    for (size_t i = 0; i < n_kills && !hit; i++)
        hit = kills[i].server == server && kills[i].at_ms + SOAK_NOTICE_MS >= start &&
              kills[i].at_ms <= end;
    pthread_mutex_unlock(&kill_lock);
    return hit;
}

static void agent_bad(Agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void agent_bad(Agent *a, const char *fmt, ...)
{
    va_list ap;

    if (a->bad++ == 0) {
        va_start(ap, fmt);
        vsnprintf(a->first_bad, sizeof(a->first_bad), fmt, ap);
        va_end(ap);
    }
}

/* One call: echo (checked) or a short sleep, on a random server. */
static void agent_call(Agent *a, mcpc_client *c)
{
    int server = (int)(rand_r(&a->rand) % (unsigned)opt.n_servers);
    bool sleep = rand_r(&a->rand) % 4 == 0;
    char tool[64], args[96], want[64];
    int is_error = -1;

    snprintf(want, sizeof(want), "agent %d call %" PRIu64, a->index, a->calls);
    snprintf(tool, sizeof(tool), "mcp_s%d_%s", server, sleep ? "sleep" : "echo");
    if (sleep) {
        unsigned ms = rand_r(&a->rand) % 300;
        snprintf(args, sizeof(args), "{\"ms\":%u}", ms);
        snprintf(want, sizeof(want), "slept %u ms", ms);
    } else {
        snprintf(args, sizeof(args), "{\"text\":\"%s\"}", want);
    }
    uint64_t start = mono_ms();
    _cleanup_free_ char *t = h_call_text(c, tool, args, &is_error);
    uint64_t end = mono_ms();
    a->calls++;
    if (is_error == 0 && streq(t, want)) {
        a->ok++;
    } else if (is_error == 1 && startswith(t, "MCP error:") && killed_during(server, start, end)) {
        a->failed++;
    } else {
        agent_bad(a, "%s (%" PRIu64 " ms): isError %d: %.160s", tool, end - start, is_error, t);
    }
}

static void *agent_run(void *arg)
{
    Agent *a = arg;
    mcpc_options o = {.socket_path = h.socket, .client_name = "soak", .timeout_ms = 120000};
    mcpc_client *c = mcpc_new(&o);

    if (mcpc_connect(c) != 0) {
        agent_bad(a, "connect: %s", mcpc_errmsg(c));
        mcpc_free(c);
        return NULL;
    }
    /* Calls before the deadline is set warm mcpd up; only those after it are counted. */
    while (atomic_load(&deadline_ms) == UINT64_MAX)
        agent_call(a, c);
    a->calls = a->ok = 0;
    while (mono_ms() < atomic_load(&deadline_ms))
        agent_call(a, c);
    mcpc_free(c);
    return NULL;
}

/* Kills of server within the breaker window before now. */
static int recent_kills(int server, uint64_t now)
{
    int n = 0;

    for (size_t i = 0; i < n_kills; i++)
        n += kills[i].server == server && kills[i].at_ms + SOAK_KILL_WINDOW_MS > now;
    return n;
}

static void kill_one(mcpc_client *c, unsigned *rnd)
{
    _cleanup_json_ yajl_val st = h_status(c);
    int server = (int)(rand_r(rnd) % (unsigned)opt.n_servers);
    char name[16];
    int64_t pid = 0;

    snprintf(name, sizeof(name), "s%d", server);
    yajl_val s = h_server(st, name);
    if (!streq(json_get_string(s, "state"), "connected") || json_get_int(s, "pid", &pid) < 0 ||
        pid <= 0 || recent_kills(server, mono_ms()) >= SOAK_KILLS_PER_WINDOW ||
        n_kills >= SOAK_MAX_KILLS)
        return;
    pthread_mutex_lock(&kill_lock);
    kills[n_kills].server = server;
    kills[n_kills].at_ms = mono_ms();
    n_kills++;
    pthread_mutex_unlock(&kill_lock);
    kill((pid_t)pid, SIGKILL);
}

static void *killer_run(void *arg)
{
    mcpc_client *c = arg;
    unsigned rnd = opt.seed * 7919u;

    while (!atomic_load(&stop_killer)) {
        h_sleep_ms(1000 + (int)(rand_r(&rnd) % 2000));
        if (!atomic_load(&stop_killer))
            kill_one(c, &rnd);
    }
    return NULL;
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i += 2) { /* each option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int n = v ? atoi(v) : 0;
        if (streq(a, "--duration") && n > 0)
            opt.duration_s = n;
        else if (streq(a, "--agents") && n > 0)
            opt.n_agents = n;
        else if (streq(a, "--servers") && n > 0 && n <= SOAK_MAX_SERVERS)
            opt.n_servers = n;
        else if (streq(a, "--seed") && v)
            opt.seed = (unsigned)n;
        else {
            fprintf(stderr,
                    "usage: mcpd-soak [--duration S] [--agents N] [--servers N<=%d] "
                    "[--seed N]\n",
                    SOAK_MAX_SERVERS);
            exit(2);
        }
    }
}

static char *servers_config(void)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\": {");
    for (int i = 0; i < opt.n_servers; i++)
        strbuf_printf(&sb, "%s\"s%d\": {\"command\": \"%s\", \"args\": [\"--name\", \"s%d\"]}",
                      i ? "," : "", i, h_fake(), i);
    strbuf_puts(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

/* After the agents: every server back, fds at the baseline, nothing stray (bounded wait). */
static void wait_recovered(mcpc_client *c, int *fdsp, int *strayp, int *childrenp)
{
    for (int waited = 0; waited <= H_WAIT_MS; waited += 100) {
        bool all = true;
        for (int i = 0; i < opt.n_servers; i++) {
            char name[16];
            snprintf(name, sizeof(name), "s%d", i);
            _cleanup_json_ yajl_val st = h_status(c);
            all = all && streq(json_get_string(h_server(st, name), "state"), "connected");
        }
        *fdsp = h_mcpd_fds(&h);
        *strayp = h_stray_processes(&h, c, false);
        *childrenp = h_count_tagged(&h);
        if (all && *fdsp <= h.baseline_fds && *strayp == 0)
            return;
        h_sleep_ms(100);
    }
}

int main(int argc, char **argv)
{
    Agent *agents;
    pthread_t killer;
    uint64_t calls = 0, ok = 0, failed = 0, bad = 0;
    int fds = -1, stray = -1, children = -1;
    const char *first_bad = NULL;

    parse_args(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    /* ASan's quarantine would read as RSS growth: keep it small (ignored without ASan). */
    const char *asan = getenv("ASAN_OPTIONS");
    _cleanup_free_ char *asan_opts =
        xasprintf("%s%squarantine_size_mb=8", asan ? asan : "", asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", asan_opts, 1);
    _cleanup_free_ char *cfg = servers_config();
    h_setup(&h, "soak");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "soak-control");
    for (int i = 0; i < opt.n_servers; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%d", i);
        CHECK(h_wait_state(c, name, "connected", H_WAIT_MS));
    }
    h.baseline_fds = h_mcpd_fds(&h);

    agents = xcalloc((size_t)opt.n_agents, sizeof(*agents));
    atomic_store(&deadline_ms, UINT64_MAX);
    for (int i = 0; i < opt.n_agents; i++) {
        agents[i].index = i;
        agents[i].rand = opt.seed * 1000003u + (unsigned)i;
        pthread_create(&agents[i].thread, NULL, agent_run, &agents[i]);
    }
    h_sleep_ms(SOAK_WARMUP_MS);
    long rss_start = h_rss_kib(h.pid);
    uint64_t t0 = mono_ms();
    atomic_store(&deadline_ms, t0 + (uint64_t)opt.duration_s * 1000);
    pthread_create(&killer, NULL, killer_run, c);
    for (int i = 0; i < opt.n_agents; i++) {
        pthread_join(agents[i].thread, NULL);
        calls += agents[i].calls;
        ok += agents[i].ok;
        failed += agents[i].failed;
        bad += agents[i].bad;
        if (agents[i].bad && !first_bad)
            first_bad = agents[i].first_bad;
    }
    atomic_store(&stop_killer, true);
    pthread_join(killer, NULL);
    double secs = (double)(mono_ms() - t0) / 1000.0;
    wait_recovered(c, &fds, &stray, &children);
    long rss_end = h_rss_kib(h.pid);
    mcpc_free(c);

    printf("soak: %d agents x %.0f s, %d servers, %zu kills\n", opt.n_agents, secs, opt.n_servers,
           n_kills);
    printf("  %-28s %" PRIu64 " (%.0f/s)\n", "calls made", calls, (double)calls / secs);
    printf("  %-28s %" PRIu64 "\n", "calls answered", ok);
    printf("  %-28s %" PRIu64 "\n", "calls failed (killed server)", failed);
    printf("  %-28s %" PRIu64 "%s%s\n", "violations", bad, first_bad ? ": " : "",
           first_bad ? first_bad : "");
    printf("  %-28s %ld -> %ld KiB (bound +%d KiB)\n", "mcpd RSS", rss_start, rss_end,
           SOAK_RSS_GROWTH_KIB);
    printf("  %-28s %d (baseline %d)\n", "mcpd fds at the end", fds, h.baseline_fds);
    printf("  %-28s %d (%d servers), %d stray\n", "children at the end", children, opt.n_servers,
           stray);
    printf("{\"agents\":%d,\"seconds\":%.1f,\"servers\":%d,\"kills\":%zu,\"calls\":%" PRIu64
           ",\"ok\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"violations\":%" PRIu64
           ",\"rss_start_kib\":%ld,\"rss_end_kib\":%ld,\"fds_end\":%d,\"fds_baseline\":%d,"
           "\"children_end\":%d,\"stray\":%d}\n",
           opt.n_agents, secs, opt.n_servers, n_kills, calls, ok, failed, bad, rss_start, rss_end,
           fds, h.baseline_fds, children, stray);

    CHECK_MSG(bad == 0, "%" PRIu64 " violations; first: %s", bad, first_bad ? first_bad : "");
    CHECK(ok > 0);
    CHECK_MSG(rss_end - rss_start <= SOAK_RSS_GROWTH_KIB, "RSS grew by %ld KiB",
              rss_end - rss_start);
    CHECK_MSG(fds <= h.baseline_fds, "fds %d, baseline %d", fds, h.baseline_fds);
    CHECK_MSG(stray == 0 && children == opt.n_servers, "children %d, stray %d", children, stray);
    free(agents);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("mcpd-soak");
}
