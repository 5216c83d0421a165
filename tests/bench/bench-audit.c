// SPDX-License-Identifier: MIT
// bench-audit: what the call audit costs (docs/audit.md): mcpd's CPU time per tool call from 100
// agents with "audit": "off" and with "audit": "file", in alternating rounds of one run against
// one daemon (the setting reloaded between rounds), and their ratio. Prints figures, asserts
// none; --short runs two small rounds to prove it works.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/bench/cpu.h"
#include "tests/integration/harness.h"
#include "tests/integration/raw.h"

#define AGENTS     100
#define MAX_ROUNDS 40

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Set "audit" and wait until mcpd has reloaded it (its log says so once more). */
static void set_audit(Harness *h, const char *mode)
{
    _cleanup_free_ char *json = xasprintf("{\"audit\": \"%s\"}", mode);
    int before = h_count_in_file(h->log, "reloading configuration");

    h_write_settings(h, json);
    for (int waited = 0; waited < H_WAIT_MS; waited += 20) {
        if (h_count_in_file(h->log, "reloading configuration") > before)
            return;
        h_sleep_ms(20);
    }
    fprintf(stderr, "bench-audit: mcpd did not reload its settings\n");
    exit(99);
}

/* calls per agent, pipelined; mcpd's CPU ns per call. */
static double round_ns(Harness *h, Raw *agents, int calls, int round)
{
    uint64_t c0 = cpu_ns(h->pid), c1;
    int answered = 0;

    for (int a = 0; a < AGENTS; a++)
        for (int i = 0; i < calls; i++)
            raw_send(&agents[a],
                     "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"mcp_fake_add\",\"arguments\":{\"a\":%d,\"b\":%d}}}",
                     round * 100000 + i, a, i);
    for (int a = 0; a < AGENTS; a++)
        for (int i = 0; i < calls;) {
            _cleanup_json_ yajl_val m = raw_read(&agents[a], H_WAIT_MS);
            if (!m)
                break;
            if (!json_get(m, "id"))
                continue;
            answered += json_get(m, "result") != NULL;
            i++;
        }
    c1 = cpu_ns(h->pid);
    if (answered != AGENTS * calls) {
        fprintf(stderr, "bench-audit: %d of %d calls answered\n", answered, AGENTS * calls);
        exit(1);
    }
    return (double)(c1 - c0) / (AGENTS * calls);
}

int main(int argc, char **argv)
{
    bool is_short = argc > 1 && streq(argv[1], "--short");
    int rounds = is_short ? 2 : MAX_ROUNDS, calls = is_short ? 10 : 50, n_off = 0, n_on = 0;
    double off[MAX_ROUNDS], on[MAX_ROUNDS], ratio[MAX_ROUNDS];
    static Raw agents[AGENTS];
    Harness h;

    h_setup(&h, "bench-audit");
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"fake\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *audit = paths_join(h.dir, "state/mcpd/audit.jsonl");
    h_write_config(&h, cfg);
    h_write_settings(&h, "{\"audit\": \"off\"}");
    h_start(&h, "--log-level", "notice", NULL);
    mcpc_client *c = h_client(&h, "control");
    if (!h_wait_state(c, "fake", "connected", H_WAIT_MS))
        return 99;
    for (int a = 0; a < AGENTS; a++) {
        char name[32];
        snprintf(name, sizeof(name), "bench-%d", a);
        raw_init(&agents[a], &h, name, NULL);
    }
    round_ns(&h, agents, calls, 0); /* warm-up: pools, buffers, the server's first calls */
    for (int r = 1; r <= rounds; r++) {
        /* Alternating, so a change of the machine's load falls on both alike. */
        bool audit_on = r % 2 == 0;
        set_audit(&h, audit_on ? "file" : "off");
        double ns = round_ns(&h, agents, calls, r);
        if (audit_on) {
            ratio[n_on] = ns / off[n_off - 1]; /* against the round just before it */
            on[n_on++] = ns;
        } else {
            off[n_off++] = ns;
        }
    }
    /* The file's entries are written within AUDIT_FLUSH_MS (1 s). */
    int entries = 0;
    for (int waited = 0; waited < H_WAIT_MS && entries < n_on * AGENTS * calls; waited += 100) {
        h_sleep_ms(100);
        entries = h_count_in_file(audit, "\"outcome\":\"ok\"");
    }
    double m_off = median(off, n_off), m_on = median(on, n_on), m_ratio = median(ratio, n_on);
    printf("bench-audit: %d agents x %d calls a round, %d rounds each, alternating; median mcpd "
           "CPU per call: audit off %.2f us, audit file %.2f us; median ratio of each audited "
           "round to the round before it %.3f (%d entries written)\n",
           AGENTS, calls, n_off, m_off / 1000, m_on / 1000, m_ratio, entries);
    for (int a = 0; a < AGENTS; a++)
        raw_close(&agents[a]);
    mcpc_free(c);
    h_stop(&h);
    h_teardown(&h);
    return entries == n_on * AGENTS * calls ? 0 : 1;
}
