// SPDX-License-Identifier: MIT
// bench: mcpd's cost on every call, measured against a direct baseline in the same run.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/include/mcpc.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/bench/cpu.h"
#include "tests/integration/harness.h"

#if BENCH_HTTP
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#endif

static bool short_mode;
/* --blocking-reads: clients wait in read(2) instead of poll(2), the model of earlier runs. */
static bool blocking_reads;
/* --cpu N: the benchmark and everything it starts (mcpd, servers, relay) on one CPU. */
static int pin_cpu = -1;
/* The null relay (null-relay.c): one extra hop, nothing parsed; NULL leaves it out. */
static const char *relay_path;
static StrBuf json_out = STRBUF_INIT;

static void result(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(const char *key, const char *fmt, ...)
{
    va_list ap;

    strbuf_printf(&json_out, "%s\"%s\":", json_out.len > 1 ? "," : "", key);
    va_start(ap, fmt);
    strbuf_vprintf(&json_out, fmt, ap);
    va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, double p)
{
    qsort(v, n, sizeof(*v), cmp_u64);
    return v[(size_t)((double)(n - 1) * p)];
}

/* ---- a direct NDJSON client over a child's pipes: the baseline ---- */

typedef struct Direct {
    pid_t pid;
    int in, out;
    Framer f;
    uint64_t next_id;
} Direct;

/*
 * A server started by the benchmark itself belongs to no mcpd: without this it would carry the
 * tag of the last harness set up (the baseline's, with $MCPD_BASELINE), whose stop would then
 * count it as a process that outlived its mcpd.
 */
static void direct_untag(void)
{
    unsetenv("MCPD_TEST_TAG");
}

static void direct_start(Direct *d, const char *const *argv)
{
    int to[2], from[2];

    if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
        exit(99);
    d->pid = fork();
    if (d->pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 2);
        direct_untag();
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    d->in = to[1];
    d->out = from[0];
    framer_init(&d->f, JSONRPC_MAX_LINE_DEFAULT);
}

/*
 * The child on one end of a unix stream socket (its stdin and stdout), we on the other: the
 * null relay's front, the same transport agents use to reach mcpd, so the floor pays what
 * mcpd's hop pays (a unix socket wakes its reader differently from a pipe).
 */
static void direct_start_socket(Direct *d, const char *const *argv)
{
    int sv[2];

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        exit(99);
    d->pid = fork();
    if (d->pid == 0) {
        dup2(sv[1], 0);
        dup2(sv[1], 1);
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 2);
        direct_untag();
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(sv[1]);
    d->in = d->out = sv[0];
    framer_init(&d->f, JSONRPC_MAX_LINE_DEFAULT);
}

/* Read one response line (skipping notifications); returns its id. */
static int64_t direct_read(Direct *d)
{
    char *line;
    size_t len;

    for (;;) {
        while (framer_next(&d->f, &line, &len) == 0) {
            const char *p = strstr(line, "\"id\":");
            if (p && !strstr(line, "\"method\""))
                return strtoll(p + 5, NULL, 10);
        }
        /*
         * Wait for input as agents do (an event loop; libmcpc polls), not in a blocking read: a
         * reader blocked in read(2) is also woken each time its peer drains what it wrote, a
         * wake-up real agents never cause and whose cost lands on mcpd's (or the relay's) CPU.
         */
        struct pollfd pfd = {.fd = d->out, .events = POLLIN};
        if (!blocking_reads && poll(&pfd, 1, -1) < 0 && errno != EINTR)
            return -1;
        if (framer_read_fd(&d->f, d->out) <= 0)
            return -1;
    }
}

static void direct_send(Direct *d, const char *method, const char *params)
{
    _cleanup_free_ char *line =
        xasprintf("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"method\":\"%s\",\"params\":%s}\n",
                  ++d->next_id, method, params);
    fd_write_all(d->in, line, strlen(line));
}

static void direct_init(Direct *d)
{
    direct_send(d, "initialize",
                "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
                "{\"name\":\"bench\",\"version\":\"1\"}}");
    direct_read(d);
    static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    fd_write_all(d->in, note, sizeof(note) - 1);
}

/* Reap a child that should be exiting; SIGKILL it after 10 s. */
static void reap(pid_t pid)
{
    for (int waited = 0; waitpid(pid, NULL, WNOHANG) != pid; waited += 10) {
        if (waited == 10000) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return;
        }
        h_sleep_ms(10);
    }
}

/* Close the pipes and reap the child (it exits on EOF). */
static void direct_stop(Direct *d)
{
    close(d->in);
    if (d->out != d->in)
        close(d->out);
    reap(d->pid);
    framer_deinit(&d->f);
}

/* ---- a raw socket client to mcpd, for pipelined load ---- */

static int sock_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void sock_as_direct(Direct *d, int fd)
{
    memset(d, 0, sizeof(*d));
    d->in = d->out = fd;
    d->pid = -1;
    framer_init(&d->f, JSONRPC_MAX_LINE_DEFAULT);
}

static const char ECHO_ARGS[] = "{\"name\":\"%s\",\"arguments\":{\"text\":\"hello\"}}";

/* ---- workload 1: call overhead ---- */

/* One way to reach an echo tool: a JSON-RPC stream (a child's pipes, an mcpd socket) or the
 * peer hub's HTTP API (workload 7). */
typedef struct Path {
    void (*call)(struct Path *p);
    Direct *d;
    void *http;
    char *params;
    int settle_ms; /* pause after each round of this path, before the next path's round */
} Path;

static void call_stream(Path *p)
{
    direct_send(p->d, "tools/call", p->params);
    direct_read(p->d);
}

static Path stream_path(Direct *d, const char *tool)
{
    return (Path){.call = call_stream, .d = d, .params = xasprintf(ECHO_ARGS, tool)};
}

/*
 * n sequential calls on one path, each call's time into lat in ns. A hop adds some 20 us, which
 * whole microseconds at both ends would round by up to 5 % each way: a ratio of two added
 * latencies would move by a tenth from rounding alone.
 */
static void measure_sequential_ns(Path *p, uint64_t *lat, size_t n)
{
    struct timespec t0, t1;

    for (size_t i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        p->call(p);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        lat[i] = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec));
    }
}

/* The same in whole us, for the workloads that print whole us. */
static void measure_sequential(Path *p, uint64_t *lat, size_t n)
{
    measure_sequential_ns(p, lat, n);
    for (size_t i = 0; i < n; i++)
        lat[i] /= 1000;
}

/* n sequential calls (a multiple of 10) on every path into lat[k] (ns), in alternating rounds
 * after one warm-up round each, so all paths see the same machine (frequency, other load). */
/* Rounds of workload 1: each path runs n / N_ROUNDS calls per round, the paths in turn. */
#define N_ROUNDS 10

static void measure_rounds(Path *paths, size_t k, uint64_t **lat, size_t n)
{
    size_t round = n / N_ROUNDS;

    /* Pass 0 is the warm-up; pass 1 measures over its figures. */
    for (size_t pass = 0; pass <= N_ROUNDS; pass++)
        for (size_t j = 0; j < k; j++) {
            measure_sequential_ns(&paths[j], lat[j] + (pass ? pass - 1 : 0) * round, round);
            h_sleep_ms(paths[j].settle_ms);
        }
}

/*
 * mcpd's added p50 over the relay's, per round (the three paths ran back to back in it), then
 * the median of the rounds: the machine's load drifts between rounds, much less within one.
 * 0 when the relay added nothing in some round. Sorts each round's latencies in place.
 */
static double median_round_ratio(uint64_t *const lat[3], size_t n)
{
    size_t round = n / N_ROUNDS;
    double ratio[N_ROUNDS];

    for (size_t r = 0; r < N_ROUNDS; r++) {
        uint64_t d = pct(lat[0] + r * round, round, 0.5), m = pct(lat[1] + r * round, round, 0.5);
        uint64_t x = pct(lat[2] + r * round, round, 0.5);
        if (x <= d)
            return 0;
        ratio[r] = ((double)m - (double)d) / (double)(x - d);
    }
    qsort(ratio, N_ROUNDS, sizeof(ratio[0]), cmp_double);
    return (ratio[N_ROUNDS / 2 - 1] + ratio[N_ROUNDS / 2]) / 2;
}

static pid_t parent_of(pid_t pid);

/* Whether pid is root or below it (children and grandchildren alike). */
static bool in_tree(pid_t pid, pid_t root)
{
    for (int depth = 0; pid > 1 && pid != root && depth < 64; depth++)
        pid = parent_of(pid);
    return pid == root;
}

/* Every thread of root and of its descendants onto the CPUs of set (children started later
 * inherit it). */
static void set_tree_cpus(pid_t root, const cpu_set_t *set)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        char path[64];
        DIR *t;
        struct dirent *te;
        if (pid <= 0 || !in_tree(pid, root))
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        if (!(t = opendir(path)))
            continue;
        while ((te = readdir(t)))
            if (atoi(te->d_name) > 0)
                (void)sched_setaffinity((pid_t)atoi(te->d_name), sizeof(*set), set);
        closedir(t);
    }
    closedir(d);
}

/* ns as us, for the figures of workload 1 (measure_rounds counts ns). */
static double us_of(int64_t ns)
{
    return (double)ns / 1000.0;
}

/* The p50 and p90 of mcpd's and the relay's added latency over direct, and their ratio. */
static void print_added(const char *what, const char *key, uint64_t **lat, size_t n)
{
    uint64_t dp50 = pct(lat[0], n, 0.5), dp90 = pct(lat[0], n, 0.9);
    int64_t m50 = (int64_t)(pct(lat[1], n, 0.5) - dp50),
            m90 = (int64_t)(pct(lat[1], n, 0.9) - dp90);
    int64_t r50 = (int64_t)(pct(lat[2], n, 0.5) - dp50),
            r90 = (int64_t)(pct(lat[2], n, 0.9) - dp90);
    double q50 = r50 > 0 ? (double)m50 / (double)r50 : 0,
           q90 = r90 > 0 ? (double)m90 / (double)r90 : 0;

    printf("   %s: direct p50 %.1f us; added p50/p90: mcpd %.1f/%.1f us, relay %.1f/%.1f us; "
           "mcpd / relay p50 %.2f, p90 %.2f\n",
           what, us_of((int64_t)dp50), us_of(m50), us_of(m90), us_of(r50), us_of(r90), q50, q90);
    result(key,
           "{\"directP50Us\":%.1f,\"mcpdAddedP50Us\":%.1f,\"mcpdAddedP90Us\":%.1f"
           ",\"relayAddedP50Us\":%.1f,\"relayAddedP90Us\":%.1f"
           ",\"mcpdOverRelay\":%.3f,\"mcpdOverRelayP90\":%.3f}",
           us_of((int64_t)dp50), us_of(m50), us_of(m90), us_of(r50), us_of(r90), q50, q90);
}

/*
 * Workload 1 again with everything on one CPU (this thread, mcpd, the relay, the servers):
 * every hop is then a switch on that CPU, never the wake-up of an idle one, whose cost on a VM
 * (tens of microseconds) decides the unpinned figures more than the hops' own work.
 */
/* CPU per call of mcpd and of the relay over the pinned pass, in microseconds. */
static double pinned_mcpd_us, pinned_relay_us;
/* With $MCPD_BASELINE: that build, a fourth path in the pinned pass, and its CPU per call. */
static const Harness *pinned_base;
static double pinned_base_us;

static void start_baseline(Harness *hb, const char *baseline);

static int overhead_pinned(Harness *h, Direct *d, Direct *r, Path *paths, uint64_t **lat, size_t n)
{
    cpu_set_t all, one;
    int cpu = -1;

    if (sched_getaffinity(0, sizeof(all), &all) < 0 || CPU_COUNT(&all) < 2)
        return -1; /* already on one CPU: the figures above are the pinned ones */
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &all))
            cpu = i;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof(one), &one);
    set_tree_cpus(h->pid, &one);
    set_tree_cpus(d->pid, &one);
    set_tree_cpus(r->pid, &one);
    if (pinned_base)
        set_tree_cpus(pinned_base->pid, &one);
    uint64_t m0 = cpu_ns(h->pid), r0 = cpu_ns(r->pid),
             b0 = pinned_base ? cpu_ns(pinned_base->pid) : 0;
    measure_rounds(paths, pinned_base ? 4 : 3, lat, n);
    /* The rounds include a warm-up pass: n / N_ROUNDS more calls on each path. */
    double calls = (double)n * (N_ROUNDS + 1) / N_ROUNDS;
    pinned_mcpd_us = (double)(cpu_ns(h->pid) - m0) / 1e3 / calls;
    pinned_relay_us = (double)(cpu_ns(r->pid) - r0) / 1e3 / calls;
    if (pinned_base) {
        pinned_base_us = (double)(cpu_ns(pinned_base->pid) - b0) / 1e3 / calls;
        set_tree_cpus(pinned_base->pid, &all);
    }
    sched_setaffinity(0, sizeof(all), &all);
    set_tree_cpus(h->pid, &all);
    return cpu;
}

static void bench_overhead(Harness *h)
{
    size_t n = short_mode ? 2000 : 20000, k = relay_path ? 3 : 2;
    uint64_t *lat[3] = {xcalloc(n, sizeof(uint64_t)), xcalloc(n, sizeof(uint64_t)),
                        xcalloc(n, sizeof(uint64_t))};
    const char *argv[] = {h_fake(), NULL}, *relay_argv[] = {relay_path, h_fake(), NULL};
    const char *baseline = relay_path ? getenv("MCPD_BASELINE") : NULL;
    Direct d, s, r, b;
    Harness hb;

    if (baseline && *baseline) {
        start_baseline(&hb, baseline);
        sock_as_direct(&b, sock_connect(hb.socket));
        direct_init(&b);
        pinned_base = &hb;
    }

    direct_start(&d, argv);
    direct_init(&d);
    sock_as_direct(&s, sock_connect(h->socket));
    direct_init(&s);
    if (relay_path) {
        direct_start_socket(&r, relay_argv);
        direct_init(&r);
    }
    Path paths[4] = {stream_path(&d, "echo"), stream_path(&s, "mcp_echo1_echo"),
                     relay_path ? stream_path(&r, "echo") : (Path){0},
                     pinned_base ? stream_path(&b, "mcp_echo1_echo") : (Path){0}};
    measure_rounds(paths, k, lat, n);
    double round_ratio = relay_path ? median_round_ratio(lat, n) : 0;
    uint64_t *pinned[4] = {xcalloc(n, sizeof(uint64_t)), xcalloc(n, sizeof(uint64_t)),
                           xcalloc(n, sizeof(uint64_t)), xcalloc(n, sizeof(uint64_t))};
    int cpu = relay_path ? overhead_pinned(h, &d, &r, paths, pinned, n) : -1;
    direct_stop(&d);
    if (relay_path)
        direct_stop(&r);
    close(s.in);
    framer_deinit(&s.f);
    if (pinned_base) {
        close(b.in);
        framer_deinit(&b.f);
    }
    uint64_t dp50 = pct(lat[0], n, 0.5), dp90 = pct(lat[0], n, 0.9), dp99 = pct(lat[0], n, 0.99);
    uint64_t mp50 = pct(lat[1], n, 0.5), mp90 = pct(lat[1], n, 0.9), mp99 = pct(lat[1], n, 0.99);
    int64_t added = (int64_t)(mp50 - dp50), added90 = (int64_t)(mp90 - dp90);
    printf("1. call overhead (%zu sequential echo calls each, in %d alternating rounds)\n"
           "   direct  p50 %6.1f us  p90 %6.1f us  p99 %6.1f us\n"
           "   mcpd    p50 %6.1f us  p90 %6.1f us  p99 %6.1f us   added p50 %.1f us, p90 %.1f us\n",
           n, N_ROUNDS, us_of((int64_t)dp50), us_of((int64_t)dp90), us_of((int64_t)dp99),
           us_of((int64_t)mp50), us_of((int64_t)mp90), us_of((int64_t)mp99), us_of(added),
           us_of(added90));
    result("overhead",
           "{\"calls\":%zu,\"directP50Us\":%.1f,\"directP99Us\":%.1f,\"mcpdP50Us\":%.1f"
           ",\"mcpdP99Us\":%.1f,\"addedP50Us\":%.1f}",
           n, us_of((int64_t)dp50), us_of((int64_t)dp99), us_of((int64_t)mp50),
           us_of((int64_t)mp99), us_of(added));
    if (relay_path) {
        uint64_t rp50 = pct(lat[2], n, 0.5), rp90 = pct(lat[2], n, 0.9),
                 rp99 = pct(lat[2], n, 0.99);
        int64_t relay_added = (int64_t)(rp50 - dp50), relay_added90 = (int64_t)(rp90 - dp90);
        double q50 = relay_added > 0 ? (double)added / (double)relay_added : 0.0,
               q90 = relay_added90 > 0 ? (double)added90 / (double)relay_added90 : 0.0;
        printf("   relay   p50 %6.1f us  p90 %6.1f us  p99 %6.1f us   added p50 %.1f us, p90 %.1f"
               " us (a null relay on a unix socket: one extra hop, nothing parsed)\n"
               "   mcpd's added latency / the null relay's: p50 %.2f, p90 %.2f; median of the "
               "rounds' p50 ratios %.2f\n",
               us_of((int64_t)rp50), us_of((int64_t)rp90), us_of((int64_t)rp99), us_of(relay_added),
               us_of(relay_added90), q50, q90, round_ratio);
        result("relay",
               "{\"p50Us\":%.1f,\"p90Us\":%.1f,\"p99Us\":%.1f,\"addedP50Us\":%.1f"
               ",\"mcpdOverRelay\":%.3f,\"mcpdOverRelayP90\":%.3f,\"mcpdOverRelayRounds\":%.3f}",
               us_of((int64_t)rp50), us_of((int64_t)rp90), us_of((int64_t)rp99), us_of(relay_added),
               q50, q90, round_ratio);
    }
    if (cpu >= 0) {
        char what[64];
        snprintf(what, sizeof(what), "the same, all on CPU %d", cpu);
        print_added(what, "overheadPinned", pinned, n);
        printf("   CPU per call in that pass: mcpd %.2f us, relay %.2f us (ratio %.2f)\n",
               pinned_mcpd_us, pinned_relay_us,
               pinned_relay_us > 0 ? pinned_mcpd_us / pinned_relay_us : 0.0);
        result("overheadPinnedCpu", "{\"mcpdUsPerCall\":%.3f,\"relayUsPerCall\":%.3f}",
               pinned_mcpd_us, pinned_relay_us);
        if (pinned_base) {
            printf("   baseline %s in that pass (a fourth path, same rounds): %.2f us per call; "
                   "now/baseline %.3f\n",
                   baseline, pinned_base_us, pinned_mcpd_us / pinned_base_us);
            result("overheadPinnedBaselineCpu",
                   "{\"baselineUsPerCall\":%.3f,\"mcpdOverBaseline\":%.3f}", pinned_base_us,
                   pinned_mcpd_us / pinned_base_us);
        }
    }
    if (pinned_base) {
        free(paths[3].params);
        h_stop(&hb);
        h_teardown(&hb);
        pinned_base = NULL;
    }
    for (size_t j = 0; j < k; j++) {
        free(paths[j].params);
        free(lat[j]);
    }
    for (size_t j = 0; j < 4; j++)
        free(pinned[j]);
}

/* The fields of /proc/<pid>/stat after "pid (comm) ", read into buf; NULL when gone. */
static const char *proc_stat(pid_t pid, char *buf, size_t size)
{
    char path[64];
    const char *p = NULL;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return NULL;
    if (fgets(buf, (int)size, f) && (p = strrchr(buf, ')')))
        p += 2;
    fclose(f);
    return p;
}

static uint64_t cpu_ticks(pid_t pid)
{
    char buf[1024];
    unsigned long long ut = 0, st = 0;
    const char *p = proc_stat(pid, buf, sizeof(buf));

    if (p)
        sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
    return ut + st;
}

/* Context switches of a process, voluntary and not (/proc/PID/status); -1 when unreadable. */
static double ctx_switches(pid_t pid)
{
    char path[64], line[256];
    double n = -1;
    unsigned long long v;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
            sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
            n = (n < 0 ? 0 : n) + (double)v;
    fclose(f);
    return n;
}

typedef struct ProcTree {
    int procs;
    long rss_kib;
    uint64_t cpu_ticks;
} ProcTree;

static pid_t parent_of(pid_t pid)
{
    char buf[1024];
    int ppid = 0;
    const char *p = proc_stat(pid, buf, sizeof(buf));

    if (p)
        sscanf(p, "%*c %d", &ppid);
    return (pid_t)ppid;
}

/* Count root's descendants (and root itself when self), children and grandchildren alike
 * (an npx-style launcher's node), and add up their RSS and CPU time. */
static void proc_tree_add(ProcTree *t, pid_t root, bool self)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0 || (pid == root && !self))
            continue;
        if (in_tree(pid, root)) {
            t->procs++;
            t->rss_kib += h_rss_kib(pid);
            t->cpu_ticks += cpu_ticks(pid);
        }
    }
    closedir(d);
}

/* Where a load's CPU time goes: our client threads, the servers (every other process below
 * us), mcpd; and how busy the whole machine was, other users' work included. */
typedef struct CpuUse {
    double clients, servers, mcpd, busy;
    double client_io, mcpd_io; /* read and write system calls */
} CpuUse;

/* read and write system calls so far (syscr + syscw of /proc/<pid>/io: the file layer's
 * count, which leaves out send and recv on a socket). */
static double io_calls(pid_t pid)
{
    char path[64], line[128];
    unsigned long long v, sum = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "syscr: %llu", &v) == 1 || sscanf(line, "syscw: %llu", &v) == 1)
            sum += v;
    fclose(f);
    return (double)sum;
}

static void cpu_sample(CpuUse *u, pid_t mcpd)
{
    struct rusage ru;
    ProcTree t = {0};
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");

    getrusage(RUSAGE_SELF, &ru);
    u->clients = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    proc_tree_add(&t, getpid(), false);
    double tick = 1.0 / (double)sysconf(_SC_CLK_TCK);
    u->mcpd = (double)cpu_ticks(mcpd) * tick;
    u->servers = (double)t.cpu_ticks * tick - u->mcpd;
    u->client_io = io_calls(getpid());
    u->mcpd_io = mcpd > 0 ? io_calls(mcpd) : 0;
    if (f) {
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) != 8)
            memset(v, 0, sizeof(v));
        fclose(f);
    }
    /* busy = everything but idle and iowait, over the wall time of all CPUs (seconds). */
    u->busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * tick;
}

/* The CPU use between two samples, per call in microseconds (busy: share of all cores). */
static CpuUse cpu_per_call(const CpuUse *a, const CpuUse *b, size_t calls, double wall_s)
{
    double k = 1e6 / (double)calls;
    return (CpuUse){.clients = (b->clients - a->clients) * k,
                    .servers = (b->servers - a->servers) * k,
                    .mcpd = (b->mcpd - a->mcpd) * k,
                    .busy = (b->busy - a->busy) / (wall_s * (double)sysconf(_SC_NPROCESSORS_ONLN)),
                    .client_io = (b->client_io - a->client_io) / (double)calls,
                    .mcpd_io = (b->mcpd_io - a->mcpd_io) / (double)calls};
}

/* ---- workload 2: throughput ---- */

typedef struct Load {
    Direct d;
    const char *tool;
    size_t calls, window;
} Load;

static void *load_run(void *arg)
{
    Load *l = arg;
    _cleanup_free_ char *params = xasprintf(ECHO_ARGS, l->tool);
    size_t sent = 0, got = 0;

    for (; sent < l->window && sent < l->calls; sent++)
        direct_send(&l->d, "tools/call", params);
    while (got < l->calls) {
        if (direct_read(&l->d) < 0)
            break;
        got++;
        if (sent < l->calls) {
            direct_send(&l->d, "tools/call", params);
            sent++;
        }
    }
    return NULL;
}

/* Run the loads to the end; calls per second, and the CPU use per call into *use (with mcpd
 * the daemon's pid, or -1). */
static double run_loads(Load *loads, size_t n, pid_t mcpd, CpuUse *use)
{
    pthread_t *t = xcalloc(n, sizeof(pthread_t));
    uint64_t total = 0;
    CpuUse a, b;

    cpu_sample(&a, mcpd);
    uint64_t t0 = now_us();
    for (size_t i = 0; i < n; i++)
        pthread_create(&t[i], NULL, load_run, &loads[i]);
    for (size_t i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        total += loads[i].calls;
    }
    double wall = (double)(now_us() - t0) / 1e6;
    cpu_sample(&b, mcpd);
    free(t);
    *use = cpu_per_call(&a, &b, total, wall);
    return (double)total / wall;
}

enum { AGENTS = 32, UPSTREAMS = 4, WINDOW = 8 };

static size_t per_agent_calls(void)
{
    return short_mode ? 200 : 3000;
}

/* `servers` fake servers of our own, each to be driven by one thread with `window` calls in
 * flight; AGENTS x per_agent_calls() calls in all. */
static Load *direct_loads(int servers, size_t window)
{
    const char *argv[] = {h_fake(), NULL};
    Load *l = xcalloc((size_t)servers, sizeof(Load));

    for (int i = 0; i < servers; i++) {
        direct_start(&l[i].d, argv);
        direct_init(&l[i].d);
        l[i].tool = "echo";
        l[i].calls = per_agent_calls() * AGENTS / (size_t)servers;
        l[i].window = window;
    }
    return l;
}

/* AGENTS socket clients of mcpd, WINDOW calls in flight each, spread over the UPSTREAMS
 * servers echo1... */
static Load *mcpd_loads(Harness *h)
{
    Load *via = xcalloc(AGENTS, sizeof(Load));
    static char tools[UPSTREAMS][32];

    for (int i = 0; i < AGENTS; i++) {
        snprintf(tools[i % UPSTREAMS], sizeof(tools[0]), "mcp_echo%d_echo", i % UPSTREAMS + 1);
        sock_as_direct(&via[i].d, sock_connect(h->socket));
        direct_init(&via[i].d);
        via[i].tool = tools[i % UPSTREAMS];
        via[i].calls = per_agent_calls();
        via[i].window = WINDOW;
    }
    return via;
}

static void loads_free(Load *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (l[i].d.pid > 0) {
            direct_stop(&l[i].d);
        } else {
            close(l[i].d.in);
            framer_deinit(&l[i].d.f);
        }
    }
    free(l);
}

static void print_load(const char *what, double rate, const CpuUse *u, bool mcpd)
{
    printf("   %-44s %8.0f calls/s\n"
           "      CPU us/call: clients %4.1f, servers %4.1f, mcpd %4.1f; machine %3.0f%% busy; "
           "read/write calls per call (/proc/PID/io: not send or recv): clients %.2f",
           what, rate, u->clients, u->servers, u->mcpd, u->busy * 100, u->client_io);
    if (mcpd)
        printf(", mcpd %.2f", u->mcpd_io);
    putchar('\n');
}

/* The three loads of workload 2, in alternating rounds so that all see the same machine. */
enum { PER_AGENT, POOLED, VIA_MCPD, N_LOADS };

static void bench_throughput(Harness *h)
{
    int rounds = short_mode ? 1 : 5;
    /* Two baselines, both with AGENTS x WINDOW calls in flight: the same clients and windows
     * as through mcpd, each agent with a server of its own (what agents do without mcpd);
     * and mcpd's own upstream shape, UPSTREAMS pipes with deep windows and few threads,
     * which batches far more per system call than the agents can. */
    Load *l[N_LOADS] = {direct_loads(AGENTS, WINDOW),
                        direct_loads(UPSTREAMS, (size_t)WINDOW * AGENTS / UPSTREAMS),
                        mcpd_loads(h)};
    size_t n[N_LOADS] = {AGENTS, UPSTREAMS, AGENTS};
    double rate[N_LOADS][5];
    CpuUse sum[N_LOADS] = {0}, u;
    char what[2][64];

    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < N_LOADS; k++) {
            rate[k][r] = run_loads(l[k], n[k], h->pid, &u);
            sum[k].clients += u.clients / rounds;
            sum[k].servers += u.servers / rounds;
            sum[k].mcpd += u.mcpd / rounds;
            sum[k].busy += u.busy / rounds;
            sum[k].client_io += u.client_io / rounds;
            sum[k].mcpd_io += u.mcpd_io / rounds;
        }
    for (int k = 0; k < N_LOADS; k++) {
        loads_free(l[k], n[k]);
        qsort(rate[k], (size_t)rounds, sizeof(double), cmp_double);
    }
    double per_agent = rate[PER_AGENT][rounds / 2], pooled = rate[POOLED][rounds / 2],
           via_rate = rate[VIA_MCPD][rounds / 2];
    snprintf(what[0], sizeof(what[0]), "direct, a server per agent (%d x window %d)", AGENTS,
             WINDOW);
    snprintf(what[1], sizeof(what[1]), "direct, %d servers (%d threads x window %d)", UPSTREAMS,
             UPSTREAMS, WINDOW * AGENTS / UPSTREAMS);
    printf("2. throughput (%d agents x window %d, %zu calls each; median of %d alternating "
           "rounds)\n",
           AGENTS, WINDOW, per_agent_calls(), rounds);
    print_load(what[0], per_agent, &sum[PER_AGENT], false);
    print_load(what[1], pooled, &sum[POOLED], false);
    print_load("mcpd, 4 upstreams", via_rate, &sum[VIA_MCPD], true);
    printf("   ratio mcpd / direct %.2f (%.2f of the %d-server baseline)\n", via_rate / per_agent,
           via_rate / pooled, UPSTREAMS);
    result("throughput",
           "{\"rounds\":%d,\"directPerSec\":%.0f,\"directPooledPerSec\":%.0f,"
           "\"mcpdPerSec\":%.0f,\"ratio\":%.3f,\"ratioPooled\":%.3f,"
           "\"mcpdCpuUsPerCall\":%.2f,\"clientCpuUsPerCall\":{\"direct\":%.2f,\"mcpd\":%.2f},"
           "\"serverCpuUsPerCall\":{\"direct\":%.2f,\"mcpd\":%.2f}}",
           rounds, per_agent, pooled, via_rate, via_rate / per_agent, via_rate / pooled,
           sum[VIA_MCPD].mcpd, sum[PER_AGENT].clients, sum[VIA_MCPD].clients,
           sum[PER_AGENT].servers, sum[VIA_MCPD].servers);
}

static char *echo_servers_config(int n, const char *extra_args)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\":{");
    for (int i = 1; i <= n; i++)
        strbuf_printf(&sb, "%s\"echo%d\":{\"command\":\"%s\",\"args\":[%s]}", i > 1 ? "," : "", i,
                      h_fake(), extra_args);
    strbuf_puts(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

static void wait_all_connected(mcpc_client *c, int n)
{
    for (int i = 1; i <= n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "echo%d", i);
        h_wait_state(c, name, "connected", 60000);
    }
}

/* ---- workload 3: tools/list of 1000 tools; workload 5: memory ---- */

static void bench_list_and_memory(void)
{
    Harness h;
    _cleanup_free_ char *cfg = echo_servers_config(20, "\"--only-generic\",\"--tools\",\"50\"");
    size_t n = short_mode ? 100 : 2000;
    uint64_t *lat = xcalloc(n, sizeof(uint64_t));
    size_t bytes = 0;

    h_setup(&h, "bench-list");
    h_write_config(&h, "{\"mcpServers\":{}}");
    h_start(&h, NULL);
    h_sleep_ms(200);
    long rss_idle = h_rss_kib(h.pid);
    h_stop(&h);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "bench");
    wait_all_connected(c, 20);
    Direct raw;
    sock_as_direct(&raw, sock_connect(h.socket));
    direct_init(&raw);
    for (size_t i = 0; i < n; i++) {
        char *line;
        uint64_t t0 = now_us();
        direct_send(&raw, "tools/list", "{}");
        while (framer_next(&raw.f, &line, &bytes) != 0)
            framer_read_fd(&raw.f, raw.out);
        lat[i] = now_us() - t0;
    }
    close(raw.in);
    framer_deinit(&raw.f);
    uint64_t p50 = pct(lat, n, 0.5), p99 = pct(lat, n, 0.99);
    long rss_servers = h_rss_kib(h.pid);
    printf("3. tools/list, 20 servers x 50 tools (1000 tools, %zu bytes)\n"
           "   warm list p50 %" PRIu64 " us, p99 %" PRIu64 " us (request to last byte)\n",
           bytes, p50, p99);
    result("toolsList",
           "{\"tools\":1000,\"bytes\":%zu,\"p50Us\":%" PRIu64 ",\"p99Us\":%" PRIu64 "}", bytes, p50,
           p99);

    int n_agents = short_mode ? 100 : 1000;
    int *fds = xcalloc((size_t)n_agents, sizeof(int));
    for (int i = 0; i < n_agents; i++) {
        Direct d;
        fds[i] = sock_connect(h.socket);
        sock_as_direct(&d, fds[i]);
        direct_init(&d);
        framer_deinit(&d.f);
    }
    h_sleep_ms(200);
    long rss_agents = h_rss_kib(h.pid);
    double per_agent = (double)(rss_agents - rss_servers) * 1024.0 / n_agents;
    for (int i = 0; i < n_agents; i++)
        close(fds[i]);
    free(fds);
    printf("5. memory (RSS of mcpd)\n"
           "   idle, no servers     %6ld KiB\n"
           "   20 servers, 1000 tools %4ld KiB\n"
           "   + %d idle agents     %6ld KiB   = %.0f bytes per agent\n",
           rss_idle, rss_servers, n_agents, rss_agents, per_agent);
    result("memory",
           "{\"idleKiB\":%ld,\"servers20KiB\":%ld,\"agents\":%d,\"agentsKiB\":%ld,"
           "\"bytesPerAgent\":%.0f}",
           rss_idle, rss_servers, n_agents, rss_agents, per_agent);
    mcpc_free(c);
    h_stop(&h);
    h_teardown(&h);
    free(lat);
}

/* ---- workload 4: start-up with 10 slow servers; and crash to status ---- */

static int64_t startup_ms(Harness *h)
{
    uint64_t t0 = now_ms();
    mcpc_client *c;
    char *out = NULL;

    h_start(h, NULL);
    c = h_client(h, "bench");
    mcpc_list_tools(c, &out);
    int64_t ms = (int64_t)(now_ms() - t0);
    mcpc_string_free(out);
    mcpc_free(c);
    return ms;
}

static void bench_startup(void)
{
    Harness h;
    _cleanup_free_ char *cfg = echo_servers_config(10, "\"--init-delay-ms\",\"2000\"");

    h_setup(&h, "bench-start");
    h_write_config(&h, cfg);
    int64_t cold = startup_ms(&h);
    h_stop(&h);
    int64_t warm = startup_ms(&h);
    /* Crash to status: kill one server and poll until status leaves "connected". */
    mcpc_client *c = h_client(&h, "crash");
    wait_all_connected(c, 10);
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t pid = 0;
    json_get_int(h_server(st, "echo1"), "pid", &pid);
    uint64_t t0 = now_us();
    kill((pid_t)pid, SIGKILL);
    while (h_wait_state(c, "echo1", "connected", 0))
        ;
    uint64_t crash_us = now_us() - t0;
    mcpc_free(c);
    h_stop(&h);
    h_teardown(&h);
    printf("4. start-up, 10 servers that take 2 s to initialize: daemon start to first tools/list\n"
           "   no cache   %5" PRId64 " ms\n"
           "   warm cache %5" PRId64 " ms   (cached servers are listed at once)\n"
           "   crash to status change: %" PRIu64
           " us (SIGKILL to a status without \"connected\")\n",
           cold, warm, crash_us);
    result("startup",
           "{\"coldMs\":%" PRId64 ",\"warmMs\":%" PRId64 ",\"crashToStatusUs\":%" PRIu64 "}", cold,
           warm, crash_us);
}

/* ---- workload 6: process count with server-everything ---- */

/* Whether an executable named prog is on $PATH. */
static bool on_path(const char *prog)
{
    _cleanup_free_ char *path = xstrdup(getenv("PATH") ?: "");
    char *save = NULL;

    for (char *dir = strtok_r(path, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        _cleanup_free_ char *file = xasprintf("%s/%s", dir, prog);
        if (access(file, X_OK) == 0)
            return true;
    }
    return false;
}

static const char EVERYTHING_ECHO[] = "{\"name\":\"%s\",\"arguments\":{\"message\":\"hello\"}}";

/* One echo call on an initialized stream; whether it was answered. */
static bool stream_echo(Direct *d, const char *tool)
{
    _cleanup_free_ char *params = xasprintf(EVERYTHING_ECHO, tool);

    direct_send(d, "tools/call", params);
    return direct_read(d) == (int64_t)d->next_id;
}

static void bench_processes(void)
{
    const char *js = getenv("EVERYTHING_JS");
    int agents = short_mode ? 3 : 10, servers = short_mode ? 2 : 5;

    if (!on_path("node")) {
        printf("6. process count: SKIPPED: node is not installed\n");
        result("processes", "null");
        return;
    }
    if (!js || access(js, R_OK) != 0) {
        printf("6. process count: SKIPPED: server-everything is not installed (EVERYTHING_JS "
               "unset; tests/bench/run.sh sets it up when node and npm are installed)\n");
        result("processes", "null");
        return;
    }
    /* With mcpd: one daemon owns the servers; every agent connects and calls one. */
    Harness h;
    StrBuf cfg = STRBUF_INIT;
    strbuf_puts(&cfg, "{\"mcpServers\":{");
    for (int i = 1; i <= servers; i++)
        strbuf_printf(&cfg,
                      "%s\"every%d\":{\"command\":\"node\",\"args\":[\"%s\",\"stdio\"],"
                      "\"timeout\":60000}",
                      i > 1 ? "," : "", i, js);
    strbuf_puts(&cfg, "}}");
    h_setup(&h, "bench-procs");
    h_write_config(&h, strbuf_str(&cfg));
    strbuf_deinit(&cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "bench");
    for (int i = 1; i <= servers; i++) {
        char name[32];
        snprintf(name, sizeof(name), "every%d", i);
        CHECK_MSG(h_wait_state(c, name, "connected", 120000), "%s did not connect", name);
    }
    mcpc_free(c);
    Direct *ag = xcalloc((size_t)agents, sizeof(Direct));
    int answered = 0;
    for (int i = 0; i < agents; i++) {
        char tool[64];
        snprintf(tool, sizeof(tool), "mcp_every%d_echo", i % servers + 1);
        sock_as_direct(&ag[i], sock_connect(h.socket));
        direct_init(&ag[i]);
        answered += stream_echo(&ag[i], tool);
    }
    h_sleep_ms(500);
    ProcTree with = {0};
    proc_tree_add(&with, h.pid, false);
    long mcpd_rss = h_rss_kib(h.pid);
    for (int i = 0; i < agents; i++) {
        close(ag[i].in);
        framer_deinit(&ag[i].f);
    }
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);

    /* Without mcpd: every agent spawns its own servers and does the MCP handshake itself. */
    size_t n = (size_t)(agents * servers);
    Direct *own = xcalloc(n, sizeof(Direct));
    const char *argv[] = {"node", js, "stdio", NULL};
    for (size_t i = 0; i < n; i++)
        direct_start(&own[i], argv);
    for (size_t i = 0; i < n; i++) {
        direct_init(&own[i]);
        answered += stream_echo(&own[i], "echo");
    }
    h_sleep_ms(500);
    ProcTree without = {0};
    for (size_t i = 0; i < n; i++)
        proc_tree_add(&without, own[i].pid, true);
    for (size_t i = 0; i < n; i++)
        direct_stop(&own[i]);
    CHECK_MSG(answered == agents + (int)n, "%d of %zu echo calls answered", answered,
              (size_t)agents + n);
    printf("6. process count, %d agents x %d server-everything servers (each agent calls echo)\n"
           "   with mcpd     %3d processes, %7ld KiB RSS (servers; + mcpd's own %ld KiB)\n"
           "   without mcpd  %3d processes, %7ld KiB RSS (every agent spawns its own)\n",
           agents, servers, with.procs, with.rss_kib, mcpd_rss, without.procs, without.rss_kib);
    result("processes",
           "{\"agents\":%d,\"servers\":%d,\"mcpdProcs\":%d,\"mcpdChildrenKiB\":%ld,"
           "\"mcpdKiB\":%ld,\"directProcs\":%d,\"directKiB\":%ld}",
           agents, servers, with.procs, with.rss_kib, mcpd_rss, without.procs, without.rss_kib);
    free(ag);
    free(own);
}

/* ---- workload 7: the peer hub mcp-hub (Node), through its REST tool-call API ---- */

#if BENCH_HTTP
typedef struct Http {
    CURL *c;
    struct curl_slist *hdr;
    StrBuf body;
    char *payload;
} Http;

static size_t http_body(char *p, size_t size, size_t n, void *ud)
{
    strbuf_append(ud, p, size * n);
    return size * n;
}

/* A keep-alive handle for url: a GET, or a JSON POST of payload. */
static void http_init(Http *x, const char *url, const char *payload)
{
    memset(x, 0, sizeof(*x));
    x->c = curl_easy_init();
    x->hdr = curl_slist_append(NULL, "Content-Type: application/json");
    x->hdr = curl_slist_append(x->hdr, "Expect:");
    curl_easy_setopt(x->c, CURLOPT_URL, url);
    curl_easy_setopt(x->c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(x->c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->c, CURLOPT_TIMEOUT_MS, 60000L);
    curl_easy_setopt(x->c, CURLOPT_HTTPHEADER, x->hdr);
    curl_easy_setopt(x->c, CURLOPT_WRITEFUNCTION, http_body);
    curl_easy_setopt(x->c, CURLOPT_WRITEDATA, &x->body);
    curl_easy_setopt(x->c, CURLOPT_PRIVATE, x);
    if (payload) {
        x->payload = xstrdup(payload);
        curl_easy_setopt(x->c, CURLOPT_POSTFIELDS, x->payload);
    }
}

static void http_deinit(Http *x)
{
    curl_easy_cleanup(x->c);
    curl_slist_free_all(x->hdr);
    strbuf_deinit(&x->body);
    free(x->payload);
}

/* Whether the finished transfer was a 200 whose body holds want; clears the body. */
static bool http_done(Http *x, CURLcode rc, const char *want)
{
    long code = 0;

    curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &code);
    bool ok = rc == CURLE_OK && code == 200 && strstr(strbuf_str(&x->body), want);
    strbuf_reset(&x->body);
    return ok;
}

static const char HUB_ECHO_OK[] = "\"text\":\"hello\"";
static size_t hub_failures;

static void call_http(Path *p)
{
    Http *x = p->http;
    if (!http_done(x, curl_easy_perform(x->c), HUB_ECHO_OK))
        hub_failures++;
}

typedef struct Hub {
    pid_t pid;
    char base[64];
    char log[400];
} Hub;

static int free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        exit(99);
    close(fd);
    return ntohs(sa.sin_port);
}

/* Whether the hub's /api/health says it is ready with all n servers connected. */
static bool hub_ready(Hub *hub, int n)
{
    _cleanup_free_ char *url = xasprintf("%s/api/health", hub->base);
    Http x;
    bool ok = false;

    http_init(&x, url, NULL);
    if (curl_easy_perform(x.c) == CURLE_OK) {
        _cleanup_json_ yajl_val v = json_parse(strbuf_str(&x.body), NULL);
        yajl_val servers = json_get_array(v, "servers");
        int connected = 0;
        for (size_t i = 0; i < json_array_len(servers); i++)
            connected +=
                streq(json_get_string(json_array_at(servers, i), "status") ?: "", "connected");
        ok = streq(json_get_string(v, "state") ?: "", "ready") && connected == n;
    }
    http_deinit(&x);
    return ok;
}

/* Start mcp-hub on 127.0.0.1 with the mcp.json cfg (written into h's tree) and wait until all
 * n servers are connected. Returns false, with the hub's log printed, when it does not come up. */
static bool hub_start(Hub *hub, Harness *h, const char *cfg, int n)
{
    const char *js = getenv("MCP_HUB_JS"), *loopback = getenv("MCP_HUB_PRELOAD");
    _cleanup_free_ char *path = xasprintf("%s/hub.json", h->dir);
    _cleanup_free_ char *state = xasprintf("%s/state", h->dir);
    char port[16];
    FILE *f = fopen(path, "w");

    if (!f)
        exit(99);
    fputs(cfg, f);
    fclose(f);
    snprintf(port, sizeof(port), "%d", free_port());
    snprintf(hub->base, sizeof(hub->base), "http://127.0.0.1:%s", port);
    snprintf(hub->log, sizeof(hub->log), "%s/hub.log", h->dir);
    int fd = open(hub->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    hub->pid = fork();
    if (hub->pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        dup2(nul, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("XDG_STATE_HOME", state, 1);
        /* mcp-hub listens on every interface; the preload makes it bind 127.0.0.1 only. */
        execlp("node", "node", "--require", loopback, js, "--port", port, "--config", path,
               (char *)NULL);
        _exit(127);
    }
    close(fd);
    for (int waited = 0; waited < 120000; waited += 100) {
        if (waitpid(hub->pid, NULL, WNOHANG) == hub->pid) {
            hub->pid = 0;
            break;
        }
        if (hub_ready(hub, n))
            return true;
        h_sleep_ms(100);
    }
    _cleanup_free_ char *log = h_read_file(hub->log);
    fprintf(stderr, "mcp-hub did not get its %d servers connected; its log:\n%s\n", n,
            log ?: "(none)");
    return false;
}

/* SIGTERM (mcp-hub then stops its servers), SIGKILL after 10 s. */
static void hub_stop(Hub *hub)
{
    if (hub->pid <= 0)
        return;
    kill(hub->pid, SIGTERM);
    reap(hub->pid);
}

static char *hub_payload(int server)
{
    return xasprintf("{\"server_name\":\"echo%d\",\"tool\":\"echo\","
                     "\"arguments\":{\"text\":\"hello\"}}",
                     server);
}

/* Calls per second through the hub with `inflight` concurrent keep-alive connections from one
 * curl multi handle, total calls spread over the servers echo1..echo<servers>. */
static double hub_load(Hub *hub, size_t inflight, size_t total, int servers)
{
    _cleanup_free_ char *url = xasprintf("%s/api/servers/tools", hub->base);
    CURLM *m = curl_multi_init();
    Http *x = xcalloc(inflight, sizeof(Http));
    size_t started = 0, done = 0;

    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)inflight);
    uint64_t t0 = now_us();
    for (size_t i = 0; i < inflight && started < total; i++, started++) {
        _cleanup_free_ char *payload = hub_payload((int)(i % (size_t)servers) + 1);
        http_init(&x[i], url, payload);
        curl_multi_add_handle(m, x[i].c);
    }
    while (done < started) {
        int running, left;
        CURLMsg *msg;
        curl_multi_perform(m, &running);
        while ((msg = curl_multi_info_read(m, &left))) {
            Http *y;
            if (msg->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&y);
            if (!http_done(y, msg->data.result, HUB_ECHO_OK))
                hub_failures++;
            done++;
            curl_multi_remove_handle(m, y->c);
            if (started < total) {
                curl_multi_add_handle(m, y->c);
                started++;
            }
        }
        if (done < started)
            curl_multi_poll(m, NULL, 0, 1000, NULL);
    }
    double rate = (double)done * 1e6 / (double)(now_us() - t0);
    for (size_t i = 0; i < inflight && i < total; i++)
        http_deinit(&x[i]);
    free(x);
    curl_multi_cleanup(m);
    return rate;
}

static double ratio_or_zero(double num, double den)
{
    return den > 0 ? num / den : 0;
}

static void bench_peer(void)
{
    const char *js = getenv("MCP_HUB_JS");
    Harness h;
    Hub hub;

    if (!on_path("node")) {
        printf("7. peer hub mcp-hub: SKIPPED: node is not installed\n");
        result("peer", "null");
        return;
    }
    if (!js || access(js, R_OK) != 0 || !getenv("MCP_HUB_PRELOAD")) {
        printf("7. peer hub mcp-hub: SKIPPED: mcp-hub is not installed (MCP_HUB_JS unset; "
               "tests/bench/run.sh sets it up when node and npm are installed)\n");
        result("peer", "null");
        return;
    }
    /* Both hubs get the same UPSTREAMS fake servers. */
    _cleanup_free_ char *cfg = echo_servers_config(UPSTREAMS, "");
    h_setup(&h, "bench-peer");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "bench");
    wait_all_connected(c, UPSTREAMS);
    mcpc_free(c);
    if (!hub_start(&hub, &h, cfg, UPSTREAMS)) {
        CHECK_MSG(false, "mcp-hub did not start");
        hub_stop(&hub);
        h_stop(&h);
        h_teardown(&h);
        return;
    }

    /* Sequential calls: direct, mcpd and mcp-hub in alternating rounds. */
    size_t n = short_mode ? 300 : 5000;
    uint64_t *lat[3];
    const char *argv[] = {h_fake(), NULL};
    _cleanup_free_ char *url = xasprintf("%s/api/servers/tools", hub.base);
    _cleanup_free_ char *payload = hub_payload(1);
    Direct d, s;
    Http one;

    for (int j = 0; j < 3; j++)
        lat[j] = xcalloc(n, sizeof(uint64_t));
    direct_start(&d, argv);
    direct_init(&d);
    sock_as_direct(&s, sock_connect(h.socket));
    direct_init(&s);
    http_init(&one, url, payload);
    Path paths[3] = {stream_path(&d, "echo"),
                     stream_path(&s, "mcp_echo1_echo"),
                     /* Node compiles and collects on helper threads after a burst: let
                      * that finish before the other paths' rounds. */
                     {.call = call_http, .http = &one, .settle_ms = 200}};
    measure_rounds(paths, 3, lat, n);
    direct_stop(&d);
    close(s.in);
    framer_deinit(&s.f);
    http_deinit(&one);
    uint64_t p50[3], p99[3];
    for (int j = 0; j < 3; j++) {
        p50[j] = pct(lat[j], n, 0.5) / 1000; /* measure_rounds counts ns */
        p99[j] = pct(lat[j], n, 0.99) / 1000;
        free(lat[j]);
        free(paths[j].params);
    }
    int64_t madd = (int64_t)(p50[1] - p50[0]), hadd = (int64_t)(p50[2] - p50[0]);

    /* Throughput with AGENTS x WINDOW calls in flight on both: mcpd's agents pipeline on
     * their sockets, HTTP/1.1 has one call in flight per connection. */
    CpuUse use;
    Load *via = mcpd_loads(&h);
    double hub_cpu, mcpd_rate = run_loads(via, AGENTS, h.pid, &use), mcpd_cpu = use.mcpd;
    loads_free(via, AGENTS);
    size_t total = per_agent_calls() * AGENTS / (short_mode ? 2 : 10);
    uint64_t cpu0 = cpu_ticks(hub.pid);
    double hub_rate = hub_load(&hub, (size_t)AGENTS * WINDOW, total, UPSTREAMS);
    hub_cpu =
        (double)(cpu_ticks(hub.pid) - cpu0) * 1e6 / (double)sysconf(_SC_CLK_TCK) / (double)total;
    long mcpd_rss = h_rss_kib(h.pid), hub_rss = h_rss_kib(hub.pid);
    hub_stop(&hub);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    CHECK_MSG(hub_failures == 0, "%zu calls through mcp-hub failed", hub_failures);

    double lat_ratio = ratio_or_zero((double)hadd, (double)madd);
    char ratio_text[80];
    if (madd > 0)
        snprintf(ratio_text, sizeof(ratio_text), "%.0f", lat_ratio);
    else
        snprintf(ratio_text, sizeof(ratio_text), "n/a (mcpd's added p50 is within the noise)");
    double p50_ratio = ratio_or_zero((double)p50[2], (double)p50[1]);
    printf("7. peer hub mcp-hub (Node, REST POST /api/servers/tools), both with %d fake servers\n"
           "   sequential echo, %zu calls each in alternating rounds\n"
           "   direct   p50 %6" PRIu64 " us  p99 %6" PRIu64 " us\n"
           "   mcpd     p50 %6" PRIu64 " us  p99 %6" PRIu64 " us   added p50 %" PRId64 " us\n"
           "   mcp-hub  p50 %6" PRIu64 " us  p99 %6" PRIu64 " us   added p50 %" PRId64 " us\n"
           "   mcp-hub / mcpd: added latency p50 %s, latency p50 %.1f\n"
           "   throughput, %d calls in flight (mcpd: %d agents x window %d; mcp-hub: %d "
           "keep-alive connections)\n"
           "   mcpd     %9.0f calls/s, CPU %6.1f us/call\n"
           "   mcp-hub  %9.0f calls/s, CPU %6.1f us/call\n"
           "   mcp-hub / mcpd: time per call %.0f, CPU per call %.0f\n"
           "   RSS after the load: mcpd %ld KiB, mcp-hub %ld KiB (own process, servers apart)\n",
           UPSTREAMS, n, p50[0], p99[0], p50[1], p99[1], madd, p50[2], p99[2], hadd, ratio_text,
           p50_ratio, AGENTS * WINDOW, AGENTS, WINDOW, AGENTS * WINDOW, mcpd_rate, mcpd_cpu,
           hub_rate, hub_cpu, ratio_or_zero(mcpd_rate, hub_rate), ratio_or_zero(hub_cpu, mcpd_cpu),
           mcpd_rss, hub_rss);
    result("peer",
           "{\"calls\":%zu,\"directP50Us\":%" PRIu64 ",\"mcpdP50Us\":%" PRIu64
           ",\"hubP50Us\":%" PRIu64 ",\"hubP99Us\":%" PRIu64 ",\"mcpdAddedP50Us\":%" PRId64
           ",\"hubAddedP50Us\":%" PRId64 ",\"addedRatio\":%.1f,\"p50Ratio\":%.1f,"
           "\"mcpdPerSec\":%.0f,"
           "\"hubPerSec\":%.0f,\"timePerCallRatio\":%.1f,\"mcpdCpuUsPerCall\":%.2f,"
           "\"hubCpuUsPerCall\":%.2f,\"mcpdKiB\":%ld,\"hubKiB\":%ld}",
           n, p50[0], p50[1], p50[2], p99[2], madd, hadd, lat_ratio, p50_ratio, mcpd_rate, hub_rate,
           ratio_or_zero(mcpd_rate, hub_rate), mcpd_cpu, hub_cpu, mcpd_rss, hub_rss);
}
#else
static void bench_peer(void)
{
    printf("7. peer hub mcp-hub: SKIPPED: built without libcurl (-Dhttp=disabled)\n");
    result("peer", "null");
}
#endif

/* ---- workload 8: 100 agents, one shared upstream ---- */

/*
 * Rounds of workload 8: each build runs n / AGENT_ROUNDS calls per agent per round, the builds
 * in turn (this one, the baseline, then the baseline first in the next round), so that both
 * see the same machine; five rounds give a median and a spread while a round still lasts long
 * enough (20 000 calls) for the scheduler clock to be exact to well under 1%.
 */
#define AGENT_ROUNDS 5

typedef struct Seq {
    Direct d;
    const char *tool;
    uint64_t *lat;
    size_t n;
} Seq;

static void *seq_run(void *arg)
{
    Seq *q = arg;
    Path p = stream_path(&q->d, q->tool);

    measure_sequential(&p, q->lat, q->n);
    free(p.params);
    return NULL;
}

/* Run every agent's sequential calls at once; calls per second; latencies into all. */
static double run_seqs(Seq *q, size_t k, uint64_t *all)
{
    pthread_t *t = xcalloc(k, sizeof(pthread_t));
    uint64_t t0 = now_us();

    for (size_t i = 0; i < k; i++)
        pthread_create(&t[i], NULL, seq_run, &q[i]);
    for (size_t i = 0; i < k; i++)
        pthread_join(t[i], NULL);
    double wall = (double)(now_us() - t0) / 1e6;
    for (size_t i = 0; i < k; i++)
        memcpy(all + i * q[i].n, q[i].lat, q[i].n * sizeof(uint64_t));
    free(t);
    return (double)(k * q[0].n) / wall;
}

/* One mcpd build under workload 8: its agents and its figures per round. */
typedef struct AgentSide {
    const char *what;
    pid_t pid;
    Seq *via;
    uint64_t *all; /* every call's latency, all rounds */
    double cpu_us[AGENT_ROUNDS], rate[AGENT_ROUNDS];
    double io, cs; /* read+write calls and context switches of mcpd, all rounds */
} AgentSide;

static void agent_side_init(AgentSide *s, const char *what, const Harness *h, size_t k, size_t n)
{
    *s = (AgentSide){.what = what,
                     .pid = h->pid,
                     .via = xcalloc(k, sizeof(Seq)),
                     .all = xcalloc(k * n, sizeof(uint64_t))};
    for (size_t i = 0; i < k; i++) {
        sock_as_direct(&s->via[i].d, sock_connect(h->socket));
        direct_init(&s->via[i].d);
        s->via[i].tool = "mcp_echo1_echo";
        s->via[i].n = n / AGENT_ROUNDS;
        s->via[i].lat = xcalloc(n / AGENT_ROUNDS, sizeof(uint64_t));
    }
}

static void agent_side_deinit(AgentSide *s, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        close(s->via[i].d.in);
        framer_deinit(&s->via[i].d.f);
        free(s->via[i].lat);
    }
    free(s->via);
    free(s->all);
}

/* One round of one build: its agents' calls, with mcpd's CPU (user + system) per call. */
static void agent_round(AgentSide *s, size_t k, size_t round)
{
    size_t per = s->via[0].n;
    uint64_t ns0 = cpu_ns(s->pid);
    double io0 = io_calls(s->pid), cs0 = ctx_switches(s->pid);

    s->rate[round] = run_seqs(s->via, k, s->all + round * k * per);
    s->cpu_us[round] = (double)(cpu_ns(s->pid) - ns0) / 1e3 / (double)(k * per);
    s->io += io_calls(s->pid) - io0;
    s->cs += ctx_switches(s->pid) - cs0;
}

typedef struct Spread {
    double median, min, max;
} Spread;

static Spread spread_of(const double *v, size_t n)
{
    double *s = xcalloc(n, sizeof(double));

    memcpy(s, v, n * sizeof(double));
    qsort(s, n, sizeof(double), cmp_double);
    Spread r = {n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2, s[0], s[n - 1]};
    free(s);
    return r;
}

/* The first line `BINARY --version` prints (to free), or "unknown". */
static char *binary_version(const char *path)
{
    char line[256] = "unknown";
    _cleanup_free_ char *cmd = xasprintf("'%s' --version 2>/dev/null", path);
    FILE *f = strchr(path, '\'') ? NULL : popen(cmd, "r");

    if (f) {
        if (!fgets(line, sizeof(line), f))
            snprintf(line, sizeof(line), "unknown");
        pclose(f);
    }
    line[strcspn(line, "\n")] = '\0';
    return xstrdup(line);
}

/* Start the baseline build ($MCPD_BASELINE) on a tree of its own, with the same servers. */
static void start_baseline(Harness *hb, const char *baseline)
{
    _cleanup_free_ char *self = xstrdup(getenv("MCPD_BINARY"));
    _cleanup_free_ char *cfg = echo_servers_config(4, "");

    h_setup(hb, "bench-base");
    h_write_config(hb, cfg);
    setenv("MCPD_BINARY", baseline, 1);
    h_start(hb, NULL);
    setenv("MCPD_BINARY", self, 1);
    mcpc_client *c = h_client(hb, "bench");
    wait_all_connected(c, 4);
    mcpc_free(c);
}

static void print_side(const AgentSide *s, size_t calls)
{
    Spread c = spread_of(s->cpu_us, AGENT_ROUNDS), r = spread_of(s->rate, AGENT_ROUNDS);

    printf("   %-8s CPU per call %.2f us (min %.2f, max %.2f); %8.0f calls/s (min %.0f, max "
           "%.0f); p50 %" PRIu64 " us, p99 %" PRIu64 " us\n",
           s->what, c.median, c.min, c.max, r.median, r.min, r.max, pct(s->all, calls, 0.5),
           pct(s->all, calls, 0.99));
}

static void bench_agents(Harness *h)
{
    enum { K = 100 };
    size_t n = short_mode ? 50 : 1000;
    const char *argv[] = {h_fake(), NULL}, *baseline = getenv("MCPD_BASELINE");
    Seq *direct = xcalloc(K, sizeof(Seq));
    uint64_t *all_d = xcalloc(K * n, sizeof(uint64_t));
    AgentSide me, base;
    Harness hb;

    if (baseline && !*baseline)
        baseline = NULL;
    if (baseline)
        start_baseline(&hb, baseline);
    for (size_t i = 0; i < K; i++) {
        /* Baseline: every agent with a server of its own, as without mcpd. */
        direct_start(&direct[i].d, argv);
        direct_init(&direct[i].d);
        direct[i].tool = "echo";
        direct[i].n = n;
        direct[i].lat = xcalloc(n, sizeof(uint64_t));
    }
    agent_side_init(&me, "mcpd", h, K, n);
    if (baseline)
        agent_side_init(&base, "baseline", &hb, K, n);
    double rd = run_seqs(direct, K, all_d);
    for (size_t r = 0; r < AGENT_ROUNDS; r++) {
        /* The builds in turn, the one that went second going first in the next round. */
        bool base_first = baseline && r % 2 == 1;
        if (base_first)
            agent_round(&base, K, r);
        agent_round(&me, K, r);
        if (baseline && !base_first)
            agent_round(&base, K, r);
    }
    size_t calls = K * (n / AGENT_ROUNDS) * AGENT_ROUNDS;
    double io_per_call = me.io / (double)calls, cs_per_call = me.cs / (double)calls;
    Spread cpu = spread_of(me.cpu_us, AGENT_ROUNDS), rate = spread_of(me.rate, AGENT_ROUNDS);
    uint64_t dp50 = pct(all_d, K * n, 0.5), dp99 = pct(all_d, K * n, 0.99);
    uint64_t mp50 = pct(me.all, calls, 0.5), mp99 = pct(me.all, calls, 0.99);
    printf("8. %d agents at once, sequential echo calls (%zu each, mcpd's in %d rounds)\n"
           "   direct, a server per agent (%d servers) %8.0f calls/s  p50 %5" PRIu64
           " us  p99 %6" PRIu64 " us\n"
           "   mcpd, all on one upstream (1 server)    %8.0f calls/s  p50 %5" PRIu64
           " us  p99 %6" PRIu64 " us   ratio %.2f (median round)\n",
           K, n, AGENT_ROUNDS, K, rd, dp50, dp99, rate.median, mp50, mp99, rate.median / rd);
    printf("   mcpd CPU per call at %d agents: %.2f us (user + system; median of the rounds, min "
           "%.2f, max %.2f); read/write calls per call %.2f (as /proc/PID/io counts: not send or "
           "recv); context switches per call %.2f\n",
           K, cpu.median, cpu.min, cpu.max, io_per_call, cs_per_call);
    result("agentsCpu",
           "{\"agents\":%d,\"mcpdCpuUsPerCall\":%.3f,\"mcpdCpuUsMin\":%.3f,\"mcpdCpuUsMax\":%.3f,"
           "\"mcpdIoPerCall\":%.3f,\"mcpdCtxSwitchesPerCall\":%.3f}",
           K, cpu.median, cpu.min, cpu.max, io_per_call, cs_per_call);
    result("agents",
           "{\"agents\":%d,\"callsEach\":%zu,\"directPerSec\":%.0f,\"directP50Us\":%" PRIu64
           ",\"directP99Us\":%" PRIu64 ",\"mcpdPerSec\":%.0f,\"mcpdP50Us\":%" PRIu64
           ",\"mcpdP99Us\":%" PRIu64 ",\"ratio\":%.3f}",
           K, n, rd, dp50, dp99, rate.median, mp50, mp99, rate.median / rd);
    if (baseline) {
        _cleanup_free_ char *v_me = binary_version(getenv("MCPD_BINARY"));
        _cleanup_free_ char *v_base = binary_version(baseline);
        Spread bcpu = spread_of(base.cpu_us, AGENT_ROUNDS),
               brate = spread_of(base.rate, AGENT_ROUNDS);
        double cpu_ratio = cpu.median / bcpu.median, rate_ratio = rate.median / brate.median;
        printf("   this build and the baseline in %d interleaved rounds of %zu calls each:\n"
               "   mcpd     = %s (%s)\n   baseline = %s (%s)\n",
               AGENT_ROUNDS, K * (n / AGENT_ROUNDS), getenv("MCPD_BINARY"), v_me, baseline, v_base);
        print_side(&me, calls);
        print_side(&base, calls);
        printf("   now/baseline: CPU per call %.3f (%+.1f%%), calls/s %.3f\n", cpu_ratio,
               (cpu_ratio - 1) * 100, rate_ratio);
        StrBuf path = STRBUF_INIT, ver = STRBUF_INIT;
        json_write_string(&path, baseline, strlen(baseline));
        json_write_string(&ver, v_base, strlen(v_base));
        result("agentsBaseline",
               "{\"baseline\":%s,\"baselineVersion\":%s,\"rounds\":%d,"
               "\"mcpdCpuUsPerCall\":%.3f,\"baselineCpuUsPerCall\":%.3f,\"baselineCpuUsMin\":%.3f,"
               "\"baselineCpuUsMax\":%.3f,\"mcpdPerSec\":%.0f,\"baselinePerSec\":%.0f,"
               "\"cpuRatio\":%.3f,\"rateRatio\":%.3f}",
               strbuf_str(&path), strbuf_str(&ver), AGENT_ROUNDS, cpu.median, bcpu.median, bcpu.min,
               bcpu.max, rate.median, brate.median, cpu_ratio, rate_ratio);
        strbuf_deinit(&path);
        strbuf_deinit(&ver);
        agent_side_deinit(&base, K);
        h_stop(&hb);
        h_teardown(&hb);
    }
    for (size_t i = 0; i < K; i++) {
        direct_stop(&direct[i].d);
        free(direct[i].lat);
    }
    agent_side_deinit(&me, K);
    free(direct);
    free(all_d);
}

static const char *only;

/* Whether workload k runs: all of them unless --only names a list such as "2,7". */
static bool selected(int k)
{
    char digit[2] = {(char)('0' + k), '\0'};
    return !only || strstr(only, digit);
}

int main(int argc, char **argv)
{
    Harness h;

    short_mode = getenv("MCPD_BENCH_SHORT") != NULL;
    for (int i = 1; i < argc; i++) {
        if (streq(argv[i], "--short"))
            short_mode = true;
        else if (streq(argv[i], "--blocking-reads"))
            blocking_reads = true;
        else if (streq(argv[i], "--cpu") && i + 1 < argc)
            pin_cpu = atoi(argv[++i]);
        else if (streq(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (streq(argv[i], "--relay") && i + 1 < argc)
            relay_path = argv[++i];
        else {
            fprintf(stderr,
                    "usage: mcpd-bench [--short] [--blocking-reads] [--cpu N] [--only 1,2,...,8] "
                    "[--relay NULL-RELAY]\n");
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    if (pin_cpu >= 0) {
        /*
         * One CPU for all: every hop is a switch on that CPU, never a wake-up of an idle one,
         * whose cost on a VM (an interrupt to a halted virtual CPU, tens of microseconds) swamps
         * the microseconds a hop's own work takes. Children inherit the mask.
         */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(pin_cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0) {
            perror("mcpd-bench: --cpu");
            return 2;
        }
    }
#if BENCH_HTTP
    curl_global_init(CURL_GLOBAL_DEFAULT);
#endif
    strbuf_putc(&json_out, '{');
    printf("mcpd benchmarks%s (every figure with its baseline from this run)\n\n",
           short_mode ? ", short mode" : "");
    if (selected(1) || selected(2) || selected(8)) {
        h_setup(&h, "bench");
        _cleanup_free_ char *cfg = echo_servers_config(4, "");
        h_write_config(&h, cfg);
        h_start(&h, NULL);
        mcpc_client *c = h_client(&h, "bench");
        wait_all_connected(c, 4);
        mcpc_free(c);
        if (selected(1))
            bench_overhead(&h);
        if (selected(2))
            bench_throughput(&h);
        if (selected(8))
            bench_agents(&h);
        long rss_after = h_rss_kib(h.pid);
        h_stop(&h);
        h_teardown(&h);
        printf("   RSS after the load: %ld KiB\n", rss_after);
        result("rssAfterThroughputKiB", "%ld", rss_after);
    }
    if (selected(3) || selected(5))
        bench_list_and_memory();
    if (selected(4))
        bench_startup();
    if (selected(6))
        bench_processes();
    if (selected(7))
        bench_peer();
    strbuf_putc(&json_out, '}');
    printf("\n%s\n", strbuf_str(&json_out));
    return h_failures ? 1 : 0;
}
