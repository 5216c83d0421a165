// SPDX-License-Identifier: MIT
// bench-handoff: what `mcpctl bridge` adds over mcpd's socket now that it hands its host's pipes
// to mcpd (issue 36): added latency, the bridge's CPU and memory, a 10 000-tool tools/list,
// each against the socket path (and the bridge relaying, MCPD_BRIDGE_HANDOFF=0) in the same run,
// then all of it again with every process on one CPU (pinned).

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Sequential echo calls per round, and rounds per path (alternating, so drift hits all). */
#define N_CALLS  4000
#define N_ROUNDS 6
/* Servers x tools of the big tools/list (the 10 000), and the lists timed per path. */
#define BIG_SERVERS 10
#define BIG_TOOLS   1000
#define N_LISTS     15

#define INIT                                                                                       \
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"     \
    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n"

typedef enum { PATH_DIRECT, PATH_SOCKET, PATH_HANDOFF, PATH_RELAY, N_PATHS } Path;
static const char *const path_names[N_PATHS] = {"direct (no mcpd)", "socket", "bridge (handed off)",
                                                "bridge (relaying)"};

/* A client: what it writes to (wfd) and reads from (rfd); the bridge's pid or 0. */
typedef struct Client {
    int wfd, rfd;
    pid_t bridge;
    StrBuf in;
} Client;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void client_open(Harness *h, Client *c, Path path)
{
    *c = (Client){0};
    if (path == PATH_SOCKET) {
        c->wfd = c->rfd = h_raw_connect(h);
        return;
    }
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        abort();
    c->bridge = fork();
    if (c->bridge == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        if (path == PATH_DIRECT) { /* the baseline: the server itself, as a host starts it */
            execl(h_fake(), "fake-server", (char *)NULL);
            _exit(127);
        }
        if (path == PATH_RELAY)
            setenv("MCPD_BRIDGE_HANDOFF", "0", 1);
        execl(getenv("MCPCTL_BINARY"), "mcpctl", "--socket", h->socket, "bridge", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c->wfd = in[1];
    c->rfd = out[0];
}

/* Read until the buffer holds a whole line; drop it. */
static void read_line(Client *c)
{
    char *nl;

    while (!(nl = c->in.len ? memchr(c->in.data, '\n', c->in.len) : NULL)) {
        struct pollfd pfd = {c->rfd, POLLIN, 0};
        poll(&pfd, 1, -1); /* as agents wait: in poll(2) */
        strbuf_reserve(&c->in, 1 << 20);
        ssize_t n = read(c->rfd, c->in.data + c->in.len, 1 << 20);
        if (n <= 0) {
            fprintf(stderr, "bench-handoff: the connection ended\n");
            exit(1);
        }
        c->in.len += (size_t)n;
    }
    size_t used = (size_t)(nl - c->in.data) + 1;
    memmove(c->in.data, nl + 1, c->in.len - used);
    c->in.len -= used;
}

static void request(Client *c, const char *line)
{
    if (fd_write_all(c->wfd, line, strlen(line)) < 0)
        exit(1);
    read_line(c);
}

static void client_close(Client *c)
{
    close(c->wfd);
    if (c->rfd != c->wfd)
        close(c->rfd);
    if (c->bridge)
        waitpid(c->bridge, NULL, 0);
    strbuf_deinit(&c->in);
}

/* The bridge's CPU time so far, in ns (schedstat: time on a CPU). */
static uint64_t cpu_ns(pid_t pid)
{
    char path[64];
    unsigned long long ns = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
    if ((f = fopen(path, "r"))) {
        if (fscanf(f, "%llu", &ns) != 1)
            ns = 0;
        fclose(f);
    }
    return ns;
}

/* pid's proportional set size in KiB (/proc/PID/smaps_rollup), or -1. */
static long pss_kib(pid_t pid)
{
    _cleanup_free_ char *path = xasprintf("/proc/%d/smaps_rollup", (int)pid);
    _cleanup_free_ char *text = h_read_file(path);
    const char *at = text ? strstr(text, "\nPss:") : NULL;

    return at ? strtol(at + 5, NULL, 10) : -1;
}

/*
 * Until the bridge has become mcpctl-bridge-wait (at most 5 s): on one CPU its exec may run
 * only after the first calls, and is the hand-off's one-time cost, not a call's.
 */
static void wait_waiter(pid_t pid)
{
    _cleanup_free_ char *link = xasprintf("/proc/%d/exe", (int)pid);
    char exe[4096];

    for (int i = 0; i < 500; i++) {
        ssize_t n = readlink(link, exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = '\0';
        if (strstr(exe, "mcpctl-bridge-wait"))
            return;
        h_sleep_ms(10);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, size_t n, double p)
{
    qsort(v, n, sizeof(*v), cmp_u64);
    return (double)v[(size_t)(p * (double)(n - 1))] / 1000.0;
}

typedef struct Figures {
    uint64_t *lat[N_PATHS];
    size_t n_lat[N_PATHS];
    double cpu_per_call[N_PATHS]; /* the bridge's, ns */
    long rss_kib[N_PATHS];        /* the bridge's, after the calls */
    long pss_kib[N_PATHS];        /* the same as its proportional share (smaps_rollup) */
    uint64_t *list[N_PATHS];
} Figures;

static void round_calls(Harness *h, Figures *f, Path path, int n_calls)
{
    Client c;
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
                       "\"name\":\"mcp_s0_echo\",\"arguments\":{\"text\":\"hi\"}}}\n";
    const char *direct = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
                         "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}\n";

    if (path == PATH_DIRECT)
        call = direct;
    client_open(h, &c, path);
    request(&c, INIT);
    for (int i = 0; i < 50; i++) /* warm up */
        request(&c, call);
    if (path == PATH_HANDOFF)
        wait_waiter(c.bridge);
    uint64_t cpu0 = c.bridge ? cpu_ns(c.bridge) : 0;
    for (int i = 0; i < n_calls; i++) {
        uint64_t t0 = now_ns();
        request(&c, call);
        f->lat[path][f->n_lat[path]++] = now_ns() - t0;
    }
    if (c.bridge && path != PATH_DIRECT) {
        f->cpu_per_call[path] = (double)(cpu_ns(c.bridge) - cpu0) / n_calls;
        f->rss_kib[path] = h_rss_kib(c.bridge);
        f->pss_kib[path] = pss_kib(c.bridge);
    }
    client_close(&c);
}

static void lists(Harness *h, Figures *f, Path path, int n)
{
    Client c;

    client_open(h, &c, path);
    request(&c, INIT);
    request(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n");
    for (int i = 0; i < n; i++) {
        uint64_t t0 = now_ns();
        request(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
        f->list[path][i] = now_ns() - t0;
    }
    client_close(&c);
}

/* pid, its threads and its descendants onto the CPUs of set (best effort: one may just end). */
static void set_tree_cpus(pid_t pid, const cpu_set_t *set)
{
    _cleanup_free_ char *path = xasprintf("/proc/%d/task/%d/children", (int)pid, (int)pid);
    _cleanup_free_ char *kids = h_read_file(path);
    _cleanup_free_ char *tasks = xasprintf("/proc/%d/task", (int)pid);
    DIR *d = opendir(tasks);
    struct dirent *e;

    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            sched_setaffinity(atoi(e->d_name), sizeof(*set), set);
    if (d)
        closedir(d);
    for (char *k = kids, *save = NULL; (k = strtok_r(k, " \n", &save)); k = NULL)
        set_tree_cpus(atoi(k), set);
}

static void figures_init(Figures *f, int n_calls, int n_rounds, int n_lists)
{
    *f = (Figures){0};
    for (int p = 0; p < N_PATHS; p++) {
        f->lat[p] = xcalloc((size_t)(n_calls * n_rounds), sizeof(uint64_t));
        f->list[p] = xcalloc((size_t)n_lists, sizeof(uint64_t));
    }
}

static void figures_deinit(Figures *f)
{
    for (int p = 0; p < N_PATHS; p++) {
        free(f->lat[p]);
        free(f->list[p]);
    }
}

/* Every path's calls in alternating rounds, then the big tools/list on the mcpd paths. */
static void run_pass(Harness *h, Figures *f, int n_calls, int n_rounds, int n_lists)
{
    for (int r = 0; r < n_rounds; r++)
        for (int p = 0; p < N_PATHS; p++)
            round_calls(h, f, (Path)((p + r) % N_PATHS), n_calls);
    for (int p = PATH_SOCKET; p < N_PATHS; p++)
        lists(h, f, (Path)p, n_lists);
}

/* One pass's table and its JSON object (label: its key) after the comma-separated json. */
static void report(const char *label, Figures *f, int n_lists, StrBuf *json)
{
    double p50[N_PATHS], p90[N_PATHS], l50[N_PATHS];

    printf("%s:\n", label);
    for (int p = 0; p < N_PATHS; p++) {
        p50[p] = pct(f->lat[p], f->n_lat[p], 0.5);
        p90[p] = pct(f->lat[p], f->n_lat[p], 0.9);
        l50[p] = p == PATH_DIRECT ? 0 : pct(f->list[p], (size_t)n_lists, 0.5) / 1000.0;
        printf("  %-20s p50 %7.1f us  p90 %7.1f us", path_names[p], p50[p], p90[p]);
        if (p != PATH_DIRECT)
            printf("  added p50 %6.1f us", p50[p] - p50[PATH_DIRECT]);
        if (p == PATH_HANDOFF || p == PATH_RELAY)
            printf("  bridge CPU %.3f us/call  bridge RSS %ld KiB PSS %ld KiB",
                   f->cpu_per_call[p] / 1000.0, f->rss_kib[p], f->pss_kib[p]);
        printf("\n");
    }
    double added = p50[PATH_SOCKET] - p50[PATH_DIRECT];
    printf("  added p50 through the bridge / on the socket: handed off %.3f, relaying %.3f\n",
           (p50[PATH_HANDOFF] - p50[PATH_DIRECT]) / added,
           (p50[PATH_RELAY] - p50[PATH_DIRECT]) / added);
    printf("  tools/list of %d tools, request to last byte, median of %d: socket %.2f ms, "
           "handed off %.2f ms (%.3f), relaying %.2f ms (%.3f)\n",
           BIG_SERVERS * BIG_TOOLS, n_lists, l50[PATH_SOCKET], l50[PATH_HANDOFF],
           l50[PATH_HANDOFF] / l50[PATH_SOCKET], l50[PATH_RELAY],
           l50[PATH_RELAY] / l50[PATH_SOCKET]);
    strbuf_printf(json,
                  "%s\"%s\":{\"directP50Us\":%.1f,\"handoffP50Us\":%.1f,\"socketP50Us\":%.1f,"
                  "\"relayP50Us\":%.1f,\"handoffBridgeCpuNsPerCall\":%.1f,"
                  "\"handoffBridgeRssKiB\":%ld,\"handoffBridgePssKiB\":%ld,"
                  "\"relayBridgeRssKiB\":%ld,\"list10kMs\":{\"socket\":%.2f,\"handoff\":%.2f,"
                  "\"relay\":%.2f}}",
                  json->len > 1 ? "," : "", label, p50[PATH_DIRECT], p50[PATH_HANDOFF],
                  p50[PATH_SOCKET], p50[PATH_RELAY], f->cpu_per_call[PATH_HANDOFF],
                  f->rss_kib[PATH_HANDOFF], f->pss_kib[PATH_HANDOFF], f->rss_kib[PATH_RELAY],
                  l50[PATH_SOCKET], l50[PATH_HANDOFF], l50[PATH_RELAY]);
}

int main(int argc, char **argv)
{
    bool short_mode = argc > 1 && streq(argv[1], "--short");
    int n_calls = short_mode ? 200 : N_CALLS, n_rounds = short_mode ? 2 : N_ROUNDS;
    int n_lists = short_mode ? 3 : N_LISTS;
    Figures f, fp;
    Harness h;
    StrBuf cfg = STRBUF_INIT, json = STRBUF_INIT;
    cpu_set_t all, one;

    signal(SIGPIPE, SIG_IGN);
    strbuf_puts(&cfg, "{\"mcpServers\":{");
    for (int i = 0; i < BIG_SERVERS; i++)
        strbuf_printf(&cfg, "%s\"s%d\":{\"command\":\"%s\",\"args\":[\"--tools\",\"%d\"]}",
                      i ? "," : "", i, h_fake(), BIG_TOOLS);
    strbuf_puts(&cfg, "}}");
    h_setup(&h, "bench-handoff");
    h_write_config(&h, cfg.data);
    h_start(&h, NULL);
    mcpc_client *mc = h_client(&h, "bench");
    for (int i = 0; i < BIG_SERVERS; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%d", i);
        h_wait_state(mc, name, "connected", H_WAIT_MS);
    }
    printf("bench-handoff: sequential tools/call echo, %d calls x %d rounds per path, "
           "alternating; clients wait in poll(2)\n",
           n_calls, n_rounds);
    strbuf_puts(&json, "{");
    figures_init(&f, n_calls, n_rounds, n_lists);
    run_pass(&h, &f, n_calls, n_rounds, n_lists);
    report("unpinned", &f, n_lists, &json);
    /* Pinned: this process (and so every client and bridge it starts), mcpd and its servers
     * on the last CPU: every hop a switch on one CPU, not the wake-up of an idle one. */
    if (sched_getaffinity(0, sizeof(all), &all) == 0 && CPU_COUNT(&all) > 1) {
        int cpu = -1;
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &all))
                cpu = i;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof(one), &one);
        set_tree_cpus(h.pid, &one);
        figures_init(&fp, n_calls, n_rounds, n_lists);
        run_pass(&h, &fp, n_calls, n_rounds, n_lists);
        report("pinned", &fp, n_lists, &json);
        figures_deinit(&fp);
        sched_setaffinity(0, sizeof(all), &all);
        set_tree_cpus(h.pid, &all);
    } else {
        printf("pinned: skipped (one CPU: the figures above are the pinned ones)\n");
    }
    strbuf_puts(&json, "}");
    printf("%s\n", json.data);
    figures_deinit(&f);
    mcpc_free(mc);
    h_stop(&h);
    h_teardown(&h);
    strbuf_deinit(&cfg);
    strbuf_deinit(&json);
    return 0;
}
