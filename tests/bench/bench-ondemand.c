// SPDX-License-Identifier: MIT
// bench-ondemand: what lazy start and idle stop save and cost with eight real MCP servers from
// npm (issue 34): the PSS of mcpd and every server when they are idle against when all run, and
// a first call to an idle server against that server's own cold start without mcpd.

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/include/mcpc.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* The idle timeout of the run: long enough for a call's answer, short for the benchmark. */
#define IDLE_MS 1500
/* How long a Node server may take to start under load before the benchmark gives up on it. */
#define CONNECT_WAIT_MS 120000
/* Rounds of first call against cold start, interleaved; the median of each is reported. */
#define ROUNDS 5
/* Targets of the issue: idle PSS at most 15% of running; a first call at most 20 ms slower. */
#define PSS_TARGET_PCT  15
#define FIRST_CALL_PLUS 20
/* The longest line read from a server directly (everything's tools/list is ~20 KiB). */
#define LINE_MAX_BYTES (4 << 20)

/*
 * One pinned server: its package (NULL: mcpd's C fake server, whose cold start of a few ms shows
 * mcpd's own cost of a first call without Node's start-up noise), arguments, environment, and a
 * call it answers offline.
 */
typedef struct Bench {
    const char *name, *package;
    const char *arg;  /* one argument, or NULL ("DIR": the run's directory) */
    const char *env;  /* NAME=VALUE, or NULL */
    const char *tool; /* a tool whose answer needs no network, or NULL: PSS only */
    const char *args; /* its arguments, JSON */
    int64_t mcpd_ms[ROUNDS], direct_ms[ROUNDS];
} Bench;

static Bench benches[] = {
    {"everything", "server-everything", NULL, NULL, "echo", "{\"message\":\"hi\"}", {0}, {0}},
    {"filesystem", "server-filesystem", "DIR", NULL, "list_allowed_directories", "{}", {0}, {0}},
    {"memory",
     "server-memory",
     NULL,
     "MEMORY_FILE_PATH=DIR/memory.json",
     "read_graph",
     "{}",
     {0},
     {0}},
    {"thinking",
     "server-sequential-thinking",
     NULL,
     NULL,
     "sequentialthinking",
     "{\"thought\":\"a\",\"nextThoughtNeeded\":false,\"thoughtNumber\":1,\"totalThoughts\":1}",
     {0},
     {0}},
    /* Arguments its schema refuses: answered at once, without the network. */
    {"github",
     "server-github",
     NULL,
     "GITHUB_PERSONAL_ACCESS_TOKEN=x",
     "get_file_contents",
     "{}",
     {0},
     {0}},
    {"search", "server-brave-search", NULL, "BRAVE_API_KEY=x", "brave_web_search", "{}", {0}, {0}},
    /* Every tool of these two goes to the network: they count in memory only. */
    {"maps", "server-google-maps", NULL, "GOOGLE_MAPS_API_KEY=x", NULL, NULL, {0}, {0}},
    {"everart", "server-everart", NULL, "EVERART_API_KEY=x", NULL, NULL, {0}, {0}},
    {"cfake", NULL, NULL, NULL, "echo", "{\"text\":\"hi\"}", {0}, {0}},
};
#define N_BENCH (sizeof(benches) / sizeof(benches[0]))

static char *modules; /* node_modules of tests/bench/ondemand */
static Harness h;

/* The program and its first argument: node and the package's script, or the fake server. */
static const char *program(const Bench *b, char **scriptp)
{
    *scriptp = b->package
                   ? xasprintf("%s/@modelcontextprotocol/%s/dist/index.js", modules, b->package)
                   : NULL;
    return b->package ? "node" : getenv("FAKE_SERVER");
}

/* "DIR" in a value stands for the run's directory. */
static char *with_dir(const char *v)
{
    const char *at = strstr(v, "DIR");

    return at ? xasprintf("%.*s%s%s", (int)(at - v), v, h.dir, at + 3) : xstrdup(v);
}

static char *bench_config(void)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\":{");
    for (size_t i = 0; i < N_BENCH; i++) {
        const Bench *b = &benches[i];
        _cleanup_free_ char *js = NULL, *arg = b->arg ? with_dir(b->arg) : NULL;
        const char *prog = program(b, &js);
        strbuf_printf(&sb, "%s\"%s\":{\"command\":\"%s\",\"args\":[", i ? "," : "", b->name, prog);
        if (js)
            strbuf_printf(&sb, "\"%s\"%s", js, arg ? "," : "");
        if (arg)
            strbuf_printf(&sb, "\"%s\"", arg);
        strbuf_putc(&sb, ']');
        if (b->env) {
            _cleanup_free_ char *env = with_dir(b->env);
            char *eq = strchr(env, '=');
            *eq = '\0';
            strbuf_printf(&sb, ",\"env\":{\"%s\":\"%s\"}", env, eq + 1);
        }
        strbuf_printf(&sb, ",\"idleTimeoutMs\":%d,\"timeout\":%d}", IDLE_MS, CONNECT_WAIT_MS);
    }
    strbuf_puts(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

/* Pss of a process in KiB, 0 when it is gone. */
static long pss_kib(pid_t pid)
{
    return MAX(h_pss_kib(pid), 0);
}

static pid_t ppid_of(pid_t pid)
{
    char path[64], buf[512];
    FILE *f;
    int ppid = -1;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    if (fgets(buf, sizeof(buf), f)) {
        char *rp = strrchr(buf, ')');
        if (rp && sscanf(rp + 2, "%*c %d", &ppid) != 1)
            ppid = -1;
    }
    fclose(f);
    return ppid;
}

/* PSS of mcpd and every process below it (mcpd is a subreaper: all its servers' trees). */
static long tree_pss_kib(pid_t root, int *np)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    long sum = pss_kib(root);

    *np = 1;
    while (d && (e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name), p = pid;
        if (pid <= 0 || pid == root)
            continue;
        for (int depth = 0; p > 1 && p != root && depth < 64; depth++)
            p = ppid_of(p);
        if (p == root) {
            sum += pss_kib(pid);
            (*np)++;
        }
    }
    if (d)
        closedir(d);
    return sum;
}

/* ---- a server's own cold start: spawn, initialize, tools/list, the call ---- */

typedef struct Direct {
    pid_t pid;
    int in, out;
    StrBuf buf;
} Direct;

static void direct_send(Direct *d, const char *line)
{
    size_t n = strlen(line);

    CHECK(write(d->in, line, n) == (ssize_t)n && write(d->in, "\n", 1) == 1);
}

/* Read lines until the answer to id (false on EOF or after CONNECT_WAIT_MS). */
static bool direct_wait(Direct *d, int id)
{
    char want[32];
    uint64_t deadline = now_ms() + CONNECT_WAIT_MS;

    snprintf(want, sizeof(want), "\"id\":%d", id);
    for (;;) {
        char *nl;
        while ((nl = memchr(d->buf.data ? d->buf.data : "", '\n', d->buf.len))) {
            size_t n = (size_t)(nl - d->buf.data) + 1;
            bool hit = memmem(d->buf.data, n, want, strlen(want)) != NULL;
            memmove(d->buf.data, d->buf.data + n, d->buf.len - n);
            d->buf.len -= n;
            if (hit)
                return true;
        }
        struct pollfd pfd = {d->out, POLLIN, 0};
        if (now_ms() >= deadline || d->buf.len > LINE_MAX_BYTES)
            return false;
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        char chunk[65536];
        ssize_t r = read(d->out, chunk, sizeof(chunk));
        if (r <= 0)
            return false;
        strbuf_append(&d->buf, chunk, (size_t)r);
    }
}

/* Milliseconds from spawn to the answer of b's call, as a client without mcpd sees them. */
static int64_t direct_cold_ms(const Bench *b)
{
    int in[2], out[2];
    _cleanup_free_ char *js = NULL, *arg = b->arg ? with_dir(b->arg) : NULL;
    const char *prog = program(b, &js);
    _cleanup_free_ char *env = b->env ? with_dir(b->env) : NULL;
    _cleanup_free_ char *call = xasprintf("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                                          "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
                                          b->tool, b->args);
    Direct d = {.buf = STRBUF_INIT};
    uint64_t t0 = now_ms();
    bool ok;

    CHECK(pipe(in) == 0 && pipe(out) == 0);
    d.pid = fork();
    if (d.pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        if (env)
            putenv(env);
        if (js)
            execlp(prog, prog, js, arg, (char *)NULL);
        else
            execlp(prog, prog, arg, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    d.in = in[1];
    d.out = out[0];
    direct_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                    "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}");
    ok = direct_wait(&d, 1);
    direct_send(&d, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    direct_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    ok = ok && direct_wait(&d, 2);
    direct_send(&d, call);
    ok = ok && direct_wait(&d, 3);
    int64_t ms = (int64_t)(now_ms() - t0);
    close(d.in);
    close(d.out);
    kill(d.pid, SIGKILL);
    waitpid(d.pid, NULL, 0);
    strbuf_deinit(&d.buf);
    CHECK_MSG(ok, "%s did not answer when run directly", b->name);
    return ok ? ms : -1;
}

/* ---- through mcpd ---- */

static int64_t mcpd_first_call_ms(mcpc_client *c, const Bench *b)
{
    _cleanup_free_ char *tool = xasprintf("mcp_%s_%s", b->name, b->tool), *out = NULL;
    int is_error = 0;
    uint64_t t0 = now_ms();

    CHECK_MSG(mcpc_call_tool(c, tool, b->args, &out, &is_error) == 0, "%s: %s", tool,
              mcpc_errmsg(c));
    return (int64_t)(now_ms() - t0);
}

static void wait_all(mcpc_client *c, const char *state)
{
    for (size_t i = 0; i < N_BENCH; i++)
        CHECK_MSG(h_wait_state(c, benches[i].name, state, CONNECT_WAIT_MS), "%s never %s",
                  benches[i].name, state);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static int64_t minimum(const int64_t *v)
{
    int64_t m = v[0];

    for (int i = 1; i < ROUNDS; i++)
        m = MIN(m, v[i]);
    return m;
}

static int64_t median(int64_t *v)
{
    int64_t s[ROUNDS];

    memcpy(s, v, sizeof(s));
    qsort(s, ROUNDS, sizeof(*s), cmp64);
    return s[ROUNDS / 2];
}

static void pin(mcpc_client *c, const char *name, bool on)
{
    _cleanup_free_ char *params =
        xasprintf("{\"server\":\"%s\",\"pinned\":%s}", name, on ? "true" : "false");
    _cleanup_free_ char *out = NULL;

    CHECK_MSG(mcpc_request(c, "mcpd/pin", params, &out) == 0, "pin %s: %s", name, mcpc_errmsg(c));
}

/* Every server running (pinned up, each called once), then every one idle: PSS of the tree. */
static void bench_memory(mcpc_client *c)
{
    int n_running, n_idle;

    for (size_t i = 0; i < N_BENCH; i++)
        pin(c, benches[i].name, true);
    wait_all(c, "connected");
    for (size_t i = 0; i < N_BENCH; i++)
        if (benches[i].tool)
            mcpd_first_call_ms(c, &benches[i]);
    h_sleep_ms(500);
    long running = tree_pss_kib(h.pid, &n_running);
    for (size_t i = 0; i < N_BENCH; i++)
        pin(c, benches[i].name, false);
    wait_all(c, "idle");
    h_sleep_ms(500);
    long idle = tree_pss_kib(h.pid, &n_idle);
    double pct = running > 0 ? 100.0 * (double)idle / (double)running : 0;
    printf("PSS, mcpd and its servers: all %zu running %.1f MiB (%d processes), all idle %.1f MiB "
           "(%d processes): %.1f%% (target <= %d%%) %s\n",
           N_BENCH, (double)running / 1024, n_running, (double)idle / 1024, n_idle, pct,
           PSS_TARGET_PCT, pct <= PSS_TARGET_PCT ? "met" : "MISSED");
}

/*
 * First call to an idle server through mcpd against its own cold start. Rounds interleave the
 * two, in turn first, each with nothing else of the benchmark running (the server mcpd started
 * has gone idle again), so that the machine's load falls on both alike.
 */
static void bench_first_call(mcpc_client *c)
{
    for (int r = 0; r < ROUNDS; r++)
        for (size_t i = 0; i < N_BENCH; i++) {
            Bench *b = &benches[i];
            if (!b->tool)
                continue;
            if (r % 2)
                b->direct_ms[r] = direct_cold_ms(b);
            CHECK(h_wait_state(c, b->name, "idle", CONNECT_WAIT_MS));
            b->mcpd_ms[r] = mcpd_first_call_ms(c, b);
            CHECK(h_wait_state(c, b->name, "idle", CONNECT_WAIT_MS));
            if (!(r % 2))
                b->direct_ms[r] = direct_cold_ms(b);
        }
    printf("first call to an idle server vs the server's own cold start (spawn, initialize, "
           "tools/list, the call), %d rounds:\n",
           ROUNDS);
    for (size_t i = 0; i < N_BENCH; i++) {
        Bench *b = &benches[i];
        if (!b->tool)
            continue;
        int64_t m = median(b->mcpd_ms), d = median(b->direct_ms);
        int64_t mmin = minimum(b->mcpd_ms), dmin = minimum(b->direct_ms);
        printf("  %-10s median: through mcpd %5" PRId64 " ms, direct %5" PRId64 " ms, %+5" PRId64
               " ms; best: %5" PRId64 " vs %5" PRId64 " ms, %+5" PRId64
               " ms (target <= +%d ms) %s\n",
               b->name, m, d, m - d, mmin, dmin, mmin - dmin, FIRST_CALL_PLUS,
               m - d <= FIRST_CALL_PLUS ? "met" : "MISSED");
    }
}

int main(void)
{
    int status = 0;

    if (!(modules = h_npm_modules("tests/bench/ondemand", &status)))
        return status;
    h_setup(&h, "bench-ondemand");
    _cleanup_free_ char *cfg = bench_config();
    h_write_config(&h, cfg);

    /* First run: no cache, so every server starts once to fill it. */
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "bench");
    bench_memory(c);
    bench_first_call(c);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    free(modules);
    return h_finish("bench-ondemand");
}
