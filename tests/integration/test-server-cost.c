// SPDX-License-Identifier: MIT
// test-server-cost: what status says a server's process tree costs matches /proc's own figures.

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/sys/procs.h"
#include "tests/integration/harness.h"

/* Memory the server touches: far above the noise of an idle fake-server (a few MiB). */
#define TOUCH_MB 48
/* The bound: status within 10% of what /proc reports for the same tree. */
#define TOLERANCE_PCT 10
/* The sleep tool's duration, for its percentiles. */
#define SLEEP_MS 50
#define STR_(x)  #x
#define STR(x)   STR_(x)
/* Processes of the tree: fake-server and the child it forks. */
#define TREE_PROCS 2

/* PSS of one process from smaps_rollup, in bytes; 0 if unreadable. */
static int64_t pss_of(pid_t pid)
{
    char path[64];
    _cleanup_free_ char *text = NULL;
    const char *p;

    snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
    text = h_read_file(path);
    p = text ? strstr(text, "\nPss:") : NULL;
    return p ? strtoll(p + 5, NULL, 10) * 1024 : 0;
}

/* PSS summed over root and its descendants (by parent pid), as smem would count the tree. */
static int64_t tree_pss(pid_t root, int *np)
{
    pid_t tree[64] = {root};
    int n = 1;
    int64_t sum = 0;
    bool grew = true;

    while (grew && n < 64) {
        DIR *d = opendir("/proc");
        grew = false;
        for (struct dirent *e; d && (e = readdir(d)) && n < 64;) {
            ProcInfo pi;
            pid_t pid = (pid_t)atoi(e->d_name);
            bool known = false, child = false;
            if (pid <= 0 || procs_read_info(pid, &pi) < 0 || pi.state == 'Z')
                continue;
            for (int i = 0; i < n; i++) {
                known = known || tree[i] == pid;
                child = child || tree[i] == pi.ppid;
            }
            if (child && !known) {
                tree[n++] = pid;
                grew = true;
            }
        }
        if (d)
            closedir(d);
    }
    for (int i = 0; i < n; i++)
        sum += pss_of(tree[i]);
    *np = n;
    return sum;
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg = NULL, *text = NULL;
    int64_t procs = 0, mem = 0, pid = 0, running = -1;
    int status = 0, n_tree = 0;

    h_setup(&h, "server-cost");
    cfg = xasprintf("{\"mcpServers\": {\"big\": {\"command\": \"%s\", \"args\": [\"--name\", "
                    "\"big\", \"--touch-mb\", \"%d\", \"--fork-grandchild\"]}}}",
                    h_fake(), TOUCH_MB);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "test");
    CHECK(h_wait_state(c, "big", "connected", H_WAIT_MS));
    /* Its tree in status once a walk has seen both processes with the memory touched. */
    for (int waited = 0; waited < H_WAIT_MS; waited += 100) {
        _cleanup_json_ yajl_val st = h_status(c);
        yajl_val s = h_server(st, "big"), pt = json_get(s, "processTree");
        json_get_int(s, "pid", &pid);
        json_get_int(pt, "processes", &procs);
        json_get_int(pt, "memoryBytes", &mem);
        json_get_int(pt, "runningMs", &running);
        if (procs == TREE_PROCS && mem > (int64_t)TOUCH_MB * 1024 * 1024)
            break;
        h_sleep_ms(100);
    }
    CHECK_MSG(procs == TREE_PROCS, "status counts %lld processes, want %d", (long long)procs,
              TREE_PROCS);
    CHECK(running >= 0);
    int64_t want = tree_pss((pid_t)pid, &n_tree);
    printf("test-server-cost: status %lld bytes, smaps_rollup %lld bytes over %d processes\n",
           (long long)mem, (long long)want, n_tree);
    CHECK(n_tree == TREE_PROCS);
    CHECK_MSG(want > 0 && llabs(mem - want) * 100 <= want * TOLERANCE_PCT,
              "status says %lld bytes, /proc %lld (more than %d%% apart)", (long long)mem,
              (long long)want, TOLERANCE_PCT);

    /* Per tool: calls, errors (a JSON-RPC error is one), and durations. */
    for (int i = 0; i < 3; i++)
        free(h_call_text(c, "mcp_big_echo", "{\"text\":\"x\"}", NULL));
    for (int i = 0; i < 2; i++)
        free(h_call_text(c, "mcp_big_fail", NULL, NULL));
    free(h_call_text(c, "mcp_big_sleep", "{\"ms\":" STR(SLEEP_MS) "}", NULL));
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val ts = json_get(h_server(st, "big"), "toolStats");
    int64_t calls = 0, errors = -1, p50 = 0, p99 = 0;
    CHECK(json_get_int(json_get(ts, "echo"), "calls", &calls) == 0 && calls == 3);
    CHECK(json_get_int(json_get(ts, "echo"), "errors", &errors) == 0 && errors == 0);
    CHECK(json_get_int(json_get(ts, "fail"), "calls", &calls) == 0 && calls == 2);
    CHECK(json_get_int(json_get(ts, "fail"), "errors", &errors) == 0 && errors == 2);
    CHECK(json_get_int(json_get(ts, "sleep"), "p50Ms", &p50) == 0);
    CHECK(json_get_int(json_get(ts, "sleep"), "p99Ms", &p99) == 0);
    /* The bucket's middle: within 12.5% below; above, whatever a loaded machine adds. */
    CHECK_MSG(p50 >= SLEEP_MS * 7 / 8 && p50 == p99, "a %d ms sleep: p50 %lld, p99 %lld", SLEEP_MS,
              (long long)p50, (long long)p99);

    /* The text form says it too. */
    text = h_shell(&status, "'%s' --socket '%s' status", getenv("MCPCTL_BINARY"), h.socket);
    CHECK_MSG(status == 0 && text && strstr(text, "cost: 2 processes, ") &&
                  strstr(text, " MiB PSS"),
              "mcpctl status: %s", text ? text : "-");
    mcpc_free(c);
    h_teardown(&h);
    return h_finish("test-server-cost");
}
