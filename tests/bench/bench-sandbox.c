// SPDX-License-Identifier: MIT
// bench-sandbox: what a sandbox adds to a stdio server's start (issue 37: at most +20 ms). The
// same probe server, unconfined and contained ("project-write"), each started through the real
// mcpd in alternating rounds: mcpd/connect to connected (mcpd/wait), spawn and handshake; wall
// time and CPU time, with mcpd's own namespaces and then with bubblewrap.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Rounds per server; the median is compared (a shared machine has outliers). */
#define N_ROUNDS       25
#define N_ROUNDS_SHORT 3
/* The target: what containment may add to one start. */
#define TARGET_EXTRA_MS 20.0

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Milliseconds of CPU one process used: its threads' run time (ns, schedstat). */
static double proc_cpu_ms(pid_t pid)
{
    _cleanup_free_ char *dir = xasprintf("/proc/%d/task", (int)pid);
    _cleanup_free_ char *out = NULL;
    int st;
    double ms = 0;

    out = h_shell(&st, "cat %s/*/schedstat 2>/dev/null", dir);
    for (char *line = out; line && *line;) {
        ms += strtod(line, NULL) / 1e6;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return ms;
}

/*
 * Milliseconds of CPU a process tree used: each live member's (bubblewrap's monitor, its init,
 * the server), and what members it reaped used (cutime + cstime, in clock ticks).
 */
static double tree_cpu_ms(pid_t pid)
{
    _cleanup_free_ char *kids = NULL, *stat = NULL;
    double ms = proc_cpu_ms(pid);
    unsigned long cut = 0, cst = 0;
    int st;

    stat = h_shell(&st, "cat /proc/%d/stat 2>/dev/null", (int)pid);
    char *p = strrchr(stat, ')');
    /* After "(comm)": state is field 3; cutime and cstime are fields 16 and 17. */
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %lu %lu", &cut,
                    &cst) == 2)
        ms += (double)(cut + cst) * 1e3 / (double)sysconf(_SC_CLK_TCK);
    kids = h_shell(&st, "cat /proc/%d/task/*/children 2>/dev/null", (int)pid);
    for (char *k = kids, *end; k && *k; k = end) {
        long child = strtol(k, &end, 10);
        if (end == k)
            break;
        ms += tree_cpu_ms((pid_t)child);
    }
    return ms;
}

/* One start's figures: wall (connect to connected) and CPU (the server's tree and mcpd's). */
typedef struct Start {
    double wall_ms, cpu_ms;
} Start;

/* One start of server: disconnected first, then connect and wait for it. */
static Start one_start(Harness *h, mcpc_client *c, const char *server)
{
    _cleanup_free_ char *p = xasprintf("{\"server\": \"%s\"}", server);
    _cleanup_free_ char *w = xasprintf("{\"server\": \"%s\", \"timeoutMs\": 30000}", server);
    char *out = NULL;
    uint64_t t0;
    double mcpd0;
    Start s;

    if (mcpc_request(c, "mcpd/disconnect", p, &out) != 0) {
        fprintf(stderr, "bench-sandbox: disconnect %s failed\n", server);
        exit(1);
    }
    free(out);
    h_sleep_ms(50); /* the old process gone, not competing with the new one */
    mcpd0 = proc_cpu_ms(h->pid);
    t0 = now_us();
    if (mcpc_request(c, "mcpd/connect", p, &out) != 0) {
        fprintf(stderr, "bench-sandbox: connect %s failed\n", server);
        exit(1);
    }
    free(out);
    if (mcpc_request(c, "mcpd/wait", w, &out) != 0 || !strstr(out ?: "", "connected")) {
        fprintf(stderr, "bench-sandbox: %s did not connect: %s\n", server, out ?: "");
        exit(1);
    }
    free(out);
    s.wall_ms = (double)(now_us() - t0) / 1e3;
    s.cpu_ms = proc_cpu_ms(h->pid) - mcpd0 + tree_cpu_ms((pid_t)h_server_int(c, server, "pid"));
    return s;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return v[n / 2];
}

static double mean(const double *v, int n)
{
    double sum = 0;

    for (int i = 0; i < n; i++)
        sum += v[i];
    return sum / n;
}

/*
 * Alternating rounds of the unconfined and the contained server against one mcpd, started
 * with MCPD_SANDBOX=backend (NULL: mcpd's own namespaces). The figures, and whether the
 * contained start met the target.
 */
static bool run_phase(Harness *h, const char *backend, int rounds)
{
    double ow[N_ROUNDS], bw[N_ROUNDS], oc[N_ROUNDS], bc[N_ROUNDS];
    const char *label = backend ? backend : "namespaces";
    int st;

    if (backend)
        setenv("MCPD_SANDBOX", backend, 1);
    else
        unsetenv("MCPD_SANDBOX");
    h_start(h, NULL);
    mcpc_client *c = h_client(h, "bench");
    if (!h_wait_state(c, "open", "connected", H_WAIT_MS) ||
        !h_wait_state(c, "boxed", "connected", H_WAIT_MS)) {
        fprintf(stderr, "bench-sandbox: the servers did not connect\n");
        exit(1);
    }
    _cleanup_free_ char *by = h_server_str(c, "boxed", "sandboxedBy");
    if (!by || !streq(by, label)) {
        fprintf(stderr, "bench-sandbox: contained by %s, not %s\n", by ?: "nothing", label);
        exit(1);
    }
    for (int i = 0; i < rounds; i++) {
        /* Alternating which goes first, so neither always meets a warmer cache. */
        Start o, b;
        if (i % 2) {
            b = one_start(h, c, "boxed");
            o = one_start(h, c, "open");
        } else {
            o = one_start(h, c, "open");
            b = one_start(h, c, "boxed");
        }
        ow[i] = o.wall_ms, oc[i] = o.cpu_ms, bw[i] = b.wall_ms, bc[i] = b.cpu_ms;
    }
    mcpc_free(c);
    if (h_stop(h) != 0)
        exit(1);
    _cleanup_free_ char *load = h_shell(&st, "cut -d' ' -f1 /proc/loadavg");
    load[strcspn(load, "\n")] = '\0';
    double cpu_o = mean(oc, rounds), cpu_b = mean(bc, rounds);
    double om = median(ow, rounds), bm = median(bw, rounds);
    printf("%s (load average %s), %d rounds each; wall: median [min, max]; CPU: mean of the\n"
           "server's process tree until connected plus mcpd's own during the start:\n",
           label, load, rounds);
    printf("  unconfined:   wall %7.2f ms [%.2f, %.2f]  CPU %6.2f ms\n", om, ow[0], ow[rounds - 1],
           cpu_o);
    printf("  contained:    wall %7.2f ms [%.2f, %.2f]  CPU %6.2f ms\n", bm, bw[0], bw[rounds - 1],
           cpu_b);
    printf("  added by the sandbox (%s): wall %+.2f ms (ratio %.2f), CPU %+.2f ms (ratio %.2f); "
           "target <= +%.0f ms: %s\n",
           label, bm - om, om > 0 ? bm / om : 0.0, cpu_b - cpu_o, cpu_o > 0 ? cpu_b / cpu_o : 0.0,
           TARGET_EXTRA_MS, bm - om <= TARGET_EXTRA_MS ? "met" : "MISSED");
    return bm - om <= TARGET_EXTRA_MS;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 && streq(argv[1], "--short") ? N_ROUNDS_SHORT : N_ROUNDS;
    char dir[] = "/var/tmp/mcpd-bench-sandbox-XXXXXX";
    const char *probe = getenv("PROBE_SERVER");
    Harness h;

    if (!probe) {
        fprintf(stderr, "bench-sandbox: PROBE_SERVER is not set (run through meson)\n");
        return 99;
    }
    h_setup(&h, "bench-sandbox");
    if (!mkdtemp(dir))
        return 99;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"open\": {\"command\": \"%s\", \"cwd\": \"%s\"}, \"boxed\": "
                  "{\"command\": \"%s\", \"cwd\": \"%s\", \"sandbox\": \"project-write\"}}}",
                  probe, dir, probe, dir);
    h_write_config(&h, cfg);
    printf(
        "server start through mcpd (connect to connected), unconfined and in \"project-write\"\n");
    run_phase(&h, NULL, rounds);
    run_phase(&h, "bubblewrap", rounds);
    h_teardown(&h);
    h_sh("rm -rf '%s'", dir);
    return h_finish("bench-sandbox");
}
