// SPDX-License-Identifier: MIT
// bench: mcpd's cost on every call, measured against a direct baseline in the same run.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/include/mcpc.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

static bool short_mode;
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
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    d->in = to[1];
    d->out = from[0];
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

static void direct_stop(Direct *d)
{
    close(d->in);
    close(d->out);
    waitpid(d->pid, NULL, 0);
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

static void measure_sequential(Direct *d, const char *tool, uint64_t *lat, size_t n)
{
    _cleanup_free_ char *params = xasprintf(ECHO_ARGS, tool);

    for (size_t i = 0; i < n; i++) {
        uint64_t t0 = now_us();
        direct_send(d, "tools/call", params);
        direct_read(d);
        lat[i] = now_us() - t0;
    }
}

static void bench_overhead(Harness *h)
{
    size_t n = short_mode ? 2000 : 20000, round = n / 10;
    uint64_t *a = xcalloc(n, sizeof(uint64_t)), *b = xcalloc(n, sizeof(uint64_t));
    const char *argv[] = {h_fake(), NULL};
    Direct d, s;

    direct_start(&d, argv);
    direct_init(&d);
    sock_as_direct(&s, sock_connect(h->socket));
    direct_init(&s);
    measure_sequential(&d, "echo", a, round); /* warm up both paths */
    measure_sequential(&s, "mcp_echo1_echo", b, round);
    /* Alternate rounds, so both paths see the same machine (frequency, other load). */
    for (size_t off = 0; off < n; off += round) {
        measure_sequential(&d, "echo", a + off, round);
        measure_sequential(&s, "mcp_echo1_echo", b + off, round);
    }
    direct_stop(&d);
    close(s.in);
    framer_deinit(&s.f);
    uint64_t dp50 = pct(a, n, 0.5), dp99 = pct(a, n, 0.99);
    uint64_t mp50 = pct(b, n, 0.5), mp99 = pct(b, n, 0.99);
    printf("1. call overhead (%zu sequential echo calls each, in alternating rounds)\n"
           "   direct  p50 %6" PRIu64 " us  p99 %6" PRIu64 " us\n"
           "   mcpd    p50 %6" PRIu64 " us  p99 %6" PRIu64 " us   added p50 %" PRId64
           " us, p99 %" PRId64 " us\n",
           n, dp50, dp99, mp50, mp99, (int64_t)(mp50 - dp50), (int64_t)(mp99 - dp99));
    result("overhead",
           "{\"calls\":%zu,\"directP50Us\":%" PRIu64 ",\"directP99Us\":%" PRIu64
           ",\"mcpdP50Us\":%" PRIu64 ",\"mcpdP99Us\":%" PRIu64 ",\"addedP50Us\":%" PRId64 "}",
           n, dp50, dp99, mp50, mp99, (int64_t)(mp50 - dp50));
    free(a);
    free(b);
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

static double run_loads(Load *loads, size_t n)
{
    pthread_t *t = xcalloc(n, sizeof(pthread_t));
    uint64_t t0 = now_us(), total = 0;

    for (size_t i = 0; i < n; i++)
        pthread_create(&t[i], NULL, load_run, &loads[i]);
    for (size_t i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        total += loads[i].calls;
    }
    free(t);
    return (double)total * 1e6 / (double)(now_us() - t0);
}

static uint64_t cpu_ticks(pid_t pid)
{
    char path[64], buf[1024];
    unsigned long long ut = 0, st = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    if (fgets(buf, sizeof(buf), f)) {
        char *p = strrchr(buf, ')');
        if (p)
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
    }
    fclose(f);
    return ut + st;
}

static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static void bench_throughput(Harness *h)
{
    enum { AGENTS = 32, UPSTREAMS = 4, WINDOW = 8 };
    size_t per_agent = short_mode ? 200 : 3000;
    const char *argv[] = {h_fake(), NULL};
    Load direct[UPSTREAMS], via[AGENTS];
    static char tools[UPSTREAMS][32];

    for (int i = 0; i < UPSTREAMS; i++) {
        direct_start(&direct[i].d, argv);
        direct_init(&direct[i].d);
        direct[i].tool = "echo";
        direct[i].calls = per_agent * AGENTS / UPSTREAMS;
        direct[i].window = WINDOW * AGENTS / UPSTREAMS;
    }
    double direct_rate = run_loads(direct, UPSTREAMS);
    for (int i = 0; i < UPSTREAMS; i++)
        direct_stop(&direct[i].d);
    for (int i = 0; i < AGENTS; i++) {
        snprintf(tools[i % UPSTREAMS], sizeof(tools[0]), "mcp_echo%d_echo", i % UPSTREAMS + 1);
        sock_as_direct(&via[i].d, sock_connect(h->socket));
        direct_init(&via[i].d);
        via[i].tool = tools[i % UPSTREAMS];
        via[i].calls = per_agent;
        via[i].window = WINDOW;
    }
    uint64_t cpu0 = cpu_ticks(h->pid);
    double via_rate = run_loads(via, AGENTS);
    uint64_t cpu = cpu_ticks(h->pid) - cpu0;
    for (int i = 0; i < AGENTS; i++) {
        close(via[i].d.in);
        framer_deinit(&via[i].d.f);
    }
    double us_per_call =
        (double)cpu * 1e6 / (double)sysconf(_SC_CLK_TCK) / (double)(per_agent * AGENTS);
    printf("2. throughput (%d agents x %d upstreams, window %d)\n"
           "   direct %9.0f calls/s\n"
           "   mcpd   %9.0f calls/s   ratio %.2f, mcpd CPU %.1f us/call\n",
           AGENTS, UPSTREAMS, WINDOW, direct_rate, via_rate, via_rate / direct_rate, us_per_call);
    result("throughput",
           "{\"directPerSec\":%.0f,\"mcpdPerSec\":%.0f,\"ratio\":%.3f,"
           "\"mcpdCpuUsPerCall\":%.2f}",
           direct_rate, via_rate, via_rate / direct_rate, us_per_call);
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
    long rss_idle = rss_kib(h.pid);
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
    long rss_servers = rss_kib(h.pid);
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
    long rss_agents = rss_kib(h.pid);
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
           "   warm cache %5" PRId64 " ms   (start-up gate 250 ms)\n"
           "   crash to status change: %" PRIu64
           " us (SIGKILL to a status without \"connected\")\n",
           cold, warm, crash_us);
    result("startup",
           "{\"coldMs\":%" PRId64 ",\"warmMs\":%" PRId64 ",\"crashToStatusUs\":%" PRIu64 "}", cold,
           warm, crash_us);
}

int main(int argc, char **argv)
{
    Harness h;

    short_mode = (argc > 1 && streq(argv[1], "--short")) || getenv("MCPD_BENCH_SHORT");
    signal(SIGPIPE, SIG_IGN);
    strbuf_putc(&json_out, '{');
    printf("mcpd benchmarks%s (every figure with its baseline from this run)\n\n",
           short_mode ? ", short mode" : "");
    h_setup(&h, "bench");
    _cleanup_free_ char *cfg = echo_servers_config(4, "");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "bench");
    wait_all_connected(c, 4);
    mcpc_free(c);
    bench_overhead(&h);
    bench_throughput(&h);
    long rss_after = rss_kib(h.pid);
    h_stop(&h);
    h_teardown(&h);
    printf("   RSS after the throughput run: %ld KiB\n", rss_after);
    result("rssAfterThroughputKiB", "%ld", rss_after);
    bench_list_and_memory();
    bench_startup();
    strbuf_putc(&json_out, '}');
    printf("\n%s\n", strbuf_str(&json_out));
    return h_failures ? 1 : 0;
}
