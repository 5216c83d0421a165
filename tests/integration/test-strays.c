// SPDX-License-Identifier: MIT
// test-strays: what a server leaves without its tag or its group dies with mcpd, crash or not.

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/sys/procs.h"
#include "tests/integration/harness.h"
#include "tests/integration/procset.h"

/* mcpd crashes in a row, as in the issue (one stray was left after three and a restart). */
#define CRASHES 3
/* The sleeps one stray tree makes: the EOF-ignoring child, the helper, the daemon. */
#define TREE_SLEEPS 3
/* The argument of their sleeps: no other test uses it, so the command line finds them. */
#define SLEEP_ARG   "1000041"
#define MAX_TRACKED PROCSET_MAX

static bool listed(const Procs *ps, pid_t pid)
{
    for (size_t i = 0; i < ps->n; i++)
        if (ps->p[i].pid == pid)
            return true;
    return false;
}

/* Say which of ps still run, and how they hang together, for a failure's message. */
static void print_alive(const char *what, const Procs *ps)
{
    for (size_t i = 0; i < ps->n; i++) {
        ProcInfo pi;
        if (procset_alive(&ps->p[i]) && procs_read_info(ps->p[i].pid, &pi) == 0)
            fprintf(stderr, "test-strays: %s: pid %d start %llu ppid %d pgid %d sid %d\n", what,
                    (int)pi.pid, (unsigned long long)pi.start, (int)pi.ppid, (int)pi.pgid,
                    (int)pi.sid);
    }
}

/* Is pid running `sleep SLEEP_ARG`? (An empty environment leaves only the command line.) */
static bool is_tree_sleep(pid_t pid)
{
    char path[64], buf[64] = "";
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    if (!(f = fopen(path, "re")))
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    return n == sizeof("sleep\0" SLEEP_ARG) && memcmp(buf, "sleep\0" SLEEP_ARG, n) == 0;
}

/* The live tree sleeps not in skip (decoys, earlier generations). */
static void tree_sleeps(const Procs *skip, Procs *out)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    out->n = 0;
    while (d && (e = readdir(d)) && out->n < MAX_TRACKED) {
        pid_t pid = (pid_t)atoi(e->d_name);
        ProcInfo pi;
        if (pid <= 0 || listed(skip, pid) || !is_tree_sleep(pid) || procs_read_info(pid, &pi) < 0 ||
            pi.state == 'Z')
            continue;
        out->p[out->n++] = (ProcId){pid, pi.start};
    }
    if (d)
        closedir(d);
}

static bool wait_tree(const Procs *skip, Procs *out)
{
    for (int waited = 0; waited < H_WAIT_MS; waited += 50) {
        tree_sleeps(skip, out);
        if (out->n == TREE_SLEEPS)
            return true;
        h_sleep_ms(50);
    }
    fprintf(stderr, "test-strays: %zu tree sleeps, want %d\n", out->n, TREE_SLEEPS);
    return false;
}

/* Does some process record of this runtime dir name every process of ps? */
static bool recorded(const Harness *h, const Procs *ps)
{
    char dir[400];
    DIR *d;
    size_t found = 0;

    snprintf(dir, sizeof(dir), "%s/run/mcpd/procs", h->dir);
    if (!(d = opendir(dir)))
        return false;
    for (struct dirent *e; (e = readdir(d));) {
        char path[700];
        /* Not a temp file: a crash before its rename leaves the record as it was. */
        if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp"))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        _cleanup_free_ char *text = h_read_file(path);
        for (size_t i = 0; text && i < ps->n; i++) {
            char line[64];
            snprintf(line, sizeof(line), "\n%d %llu\n", (int)ps->p[i].pid,
                     (unsigned long long)ps->p[i].start);
            /* "desc PID START" or "child PID START": the pid and start time identify it. */
            found += strstr(text, line + 1) != NULL;
        }
    }
    closedir(d);
    return found >= ps->n;
}

/*
 * Processes of the user with the very command line of the tree, that mcpd never started:
 * own session, no tag (like an unrelated program's). They must outlive every restart.
 */
static ProcId start_decoy(bool empty_env)
{
    pid_t pid = fork();
    ProcInfo pi = {0};

    if (pid == 0) {
        char *argv[] = {"sleep", SLEEP_ARG, NULL}, *empty[] = {NULL};
        setsid();
        unsetenv("MCPD_TEST_TAG");
        if (empty_env)
            execve("/bin/sleep", argv, empty);
        else
            execv("/bin/sleep", argv);
        _exit(127);
    }
    for (int i = 0; i < 200 && (procs_read_info(pid, &pi) < 0 || !is_tree_sleep(pid)); i++)
        h_sleep_ms(10);
    return (ProcId){pid, pi.start};
}

static void kill_all(const Procs *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        if (procset_alive(&ps->p[i]))
            kill(ps->p[i].pid, SIGKILL);
}

static char *config(void)
{
    return xasprintf("{\"mcpServers\": {\"echo\": {\"command\": \"%s\"}, "
                     "\"strays\": {\"command\": \"%s\", \"args\": [\"--name\", \"strays\", "
                     "\"--stray-tree\", \"" SLEEP_ARG "\"]}}}",
                     h_fake(), h_fake());
}

static void test_crashes(void)
{
    Harness h;
    _cleanup_free_ char *cfg = config();
    Procs skip = {0}, tree, earlier = {0}, decoys = {0};
    size_t left_by_crash = 0;

    h_setup(&h, "strays");
    h_write_config(&h, cfg);
    decoys.p[decoys.n++] = start_decoy(true);
    decoys.p[decoys.n++] = start_decoy(false);
    for (int i = 0; i <= CRASHES; i++) {
        skip = decoys;
        for (size_t j = 0; j < earlier.n; j++)
            skip.p[skip.n++] = earlier.p[j];
        h_start(&h, NULL);
        mcpc_client *c = h_client(&h, "test");
        CHECK(h_wait_state(c, "strays", "connected", H_WAIT_MS));
        size_t stale = procset_count_alive(&earlier);
        CHECK_MSG(stale == 0, "start %d: %zu processes of crashed instances still run", i, stale);
        print_alive("still running", &earlier);
        CHECK_MSG(wait_tree(&skip, &tree), "start %d: the stray tree", i);
        if (i == CRASHES) {
            mcpc_free(c);
            break;
        }
        /* The walk after the spawn writes them into the record; the crash comes after that. */
        bool rec = false;
        for (int waited = 0; !rec && waited < H_WAIT_MS; waited += 50) {
            rec = recorded(&h, &tree);
            if (!rec)
                h_sleep_ms(50);
        }
        CHECK_MSG(rec, "start %d: the stray tree never reached the process record", i);
        for (size_t j = 0; j < tree.n && earlier.n < MAX_TRACKED - TREE_SLEEPS; j++)
            earlier.p[earlier.n++] = tree.p[j];
        mcpc_free(c);
        left_by_crash += procset_crash_mcpd(&h, &earlier);
    }
    printf("test-strays: %zu processes outlived %d kills of mcpd until the next start\n",
           left_by_crash, CRASHES);
    CHECK_MSG(left_by_crash > 0, "kill -9 left nothing: the scenario tested nothing");
    size_t left = procset_wait_gone(&earlier);
    CHECK_MSG(left == 0, "%zu processes of crashed instances survived %d crashes and a restart",
              left, CRASHES);
    print_alive("survivor", &earlier);
    CHECK_MSG(procset_count_alive(&decoys) == decoys.n,
              "a decoy with the same command line was killed");

    /* A clean stop ends this instance's tree, the adopted daemon without a tag too. */
    mcpc_client *c = h_client(&h, "test");
    h_settle(&h, c, "echo", NULL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    left = procset_wait_gone(&tree);
    CHECK_MSG(left == 0, "mcpd's stop left %zu of the stray tree", left);
    CHECK_MSG(procset_count_alive(&decoys) == decoys.n, "a decoy died with mcpd's stop");
    kill_all(&earlier);
    kill_all(&tree);
    kill_all(&decoys);
    for (size_t i = 0; i < decoys.n; i++)
        waitpid(decoys.p[i].pid, NULL, 0);
    h_teardown(&h);
}

/* Stopping the server alone ends what it left in its tree, found by the walk. */
static void test_disconnect(void)
{
    Harness h;
    _cleanup_free_ char *cfg = config(), *cmd = NULL;
    Procs none = {0}, tree, helper = {0};

    h_setup(&h, "strays-stop");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "test");
    CHECK(h_wait_state(c, "strays", "connected", H_WAIT_MS));
    CHECK(wait_tree(&none, &tree));
    /* Wait for the walk to see the tree: the server's processes in status. */
    int64_t procs = 0;
    for (int waited = 0; procs < 3 && waited < H_WAIT_MS; waited += 100) {
        _cleanup_json_ yajl_val st = h_status(c);
        yajl_val pt = json_get(h_server(st, "strays"), "processTree");
        procs = 0;
        json_get_int(pt, "processes", &procs);
        if (procs < 3)
            h_sleep_ms(100);
    }
    /*
     * fake-server, its EOF-ignoring child and its helper; and the daemon and its middle process
     * when a walk saw them while the middle lived (else the daemon has no known server: no tag,
     * mcpd adopted it; it is ended with mcpd).
     */
    CHECK_MSG(procs >= 3 && procs <= 5, "status counts %lld processes of the stray server",
              (long long)procs);
    /* The daemon's middle process exits at once: wait until mcpd has adopted the daemon. */
    for (int waited = 0; waited < H_WAIT_MS; waited += 50) {
        size_t below = 0, adopted = 0;
        helper.n = 0;
        for (size_t i = 0; i < tree.n; i++) {
            ProcInfo pi;
            if (procs_read_info(tree.p[i].pid, &pi) < 0)
                continue;
            adopted += pi.ppid == h.pid;
            below += pi.ppid != h.pid;
            if (pi.ppid != h.pid)
                helper.p[helper.n++] = tree.p[i];
        }
        if (below == 2 && adopted == 1)
            break;
        h_sleep_ms(50);
    }
    CHECK_MSG(helper.n == 2, "%zu of the tree are below the server", helper.n);
    cmd = xasprintf("'%s' --socket '%s' disconnect strays >/dev/null", getenv("MCPCTL_BINARY"),
                    h.socket);
    CHECK(system(cmd) == 0);
    size_t left = procset_wait_gone(&helper);
    CHECK_MSG(left == 0, "mcpctl disconnect left %zu of the server's processes", left);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    left = procset_wait_gone(&tree);
    CHECK_MSG(left == 0, "mcpd's stop left %zu of the stray tree", left);
    kill_all(&tree);
    h_teardown(&h);
}

int main(void)
{
    test_disconnect();
    test_crashes();
    return h_finish("test-strays");
}
