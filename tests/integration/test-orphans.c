// SPDX-License-Identifier: MIT
// test-orphans: no process outlives mcpd's intent (stop, reload, kill -9); EMFILE is transient.

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/sys/procs.h"
#include "tests/integration/harness.h"
#include "tests/integration/procset.h"

/* mcpd crashes in a row in the kill -9 scenario (the issue saw 10 strays after 3). */
#define CRASHES 3
/* Processes one wrapper server makes: sh, fake-server, its helper, the TERM-proof and the setsid
 * sleeps. */
#define WRAP_PROCS  5
#define MAX_TRACKED PROCSET_MAX
/* fds left free in mcpd above those in use when the EMFILE scenario lowers its limit. */
#define EMFILE_SPARE 6
/* Agent connections opened to exhaust them: many more than the spare slots. */
#define EMFILE_CONNS 64
/* Start failures at the limit to see before the fds come back: with the crash that began it,
 * five failures, which the breaker (5 within 60 s) would have turned into "failed". */
#define EMFILE_FAILURES 4

/* Every live process carrying this harness's tag but mcpd, the test and those in skip. */
static void tagged(const Harness *h, const Procs *skip, Procs *out)
{
    _cleanup_free_ char *tag = xasprintf("MCPD_TEST_TAG=%s", h->dir);
    DIR *d = opendir("/proc");
    struct dirent *e;

    out->n = 0;
    while (d && (e = readdir(d)) && out->n < MAX_TRACKED) {
        pid_t pid = (pid_t)atoi(e->d_name);
        ProcInfo pi;
        bool skipped = false;
        if (pid <= 0 || pid == getpid() || pid == h->pid || procs_read_info(pid, &pi) < 0 ||
            pi.state == 'Z' || !procs_env_has(pid, tag, false))
            continue;
        for (size_t i = 0; skip && i < skip->n && !skipped; i++)
            skipped = skip->p[i].pid == pid;
        if (!skipped)
            out->p[out->n++] = (ProcId){pid, pi.start};
    }
    if (d)
        closedir(d);
}

static int64_t server_pid(mcpc_client *c, const char *name)
{
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t pid = -1;

    json_get_int(h_server(st, name), "pid", &pid);
    return pid;
}

/* Wait for the wrapper's whole tree: n processes besides those in skip (the other servers). */
static bool wait_tree(const Harness *h, const Procs *skip, Procs *out, size_t n)
{
    for (int waited = 0; waited < H_WAIT_MS; waited += 50) {
        tagged(h, skip, out);
        if (out->n == n)
            return true;
        h_sleep_ms(50);
    }
    fprintf(stderr, "test-orphans: %zu processes, want %zu\n", out->n, n);
    return false;
}

/*
 * A wrapper like npx: sh stays the parent of the real server, and leaves (a) a grandchild that
 * ignores stdin EOF and SIGTERM, (c) a setsid grandchild (its own session and group); the
 * server itself (b) forks a helper.
 */
static char *config(const Harness *h, bool with_wrap)
{
    _cleanup_free_ char *wrap =
        xasprintf(", \"wrap\": {\"command\": \"/bin/sh\", \"args\": [\"-c\", "
                  "\"sh -c 'trap \\\"\\\" TERM; exec sleep 1000001' & setsid sleep 1000003 & "
                  "'%s' --name wrap --fork-grandchild; echo wrapper done >&2\"]}",
                  h_fake());
    return xasprintf("{\"mcpServers\": {\"echo\": {\"command\": \"%s\"}%s}}", h_fake(),
                     with_wrap ? wrap : "");
}

static void echo_only(const Harness *h, mcpc_client *c, Procs *echo)
{
    int64_t pid = server_pid(c, "echo");
    ProcInfo pi;

    (void)h;
    echo->n = 0;
    if (pid > 0 && procs_read_info((pid_t)pid, &pi) == 0)
        echo->p[echo->n++] = (ProcId){(pid_t)pid, pi.start};
}

/* mcpctl disconnect, and removal by reload: nothing of the wrapper is left either way. */
static void test_stop_server(void)
{
    Harness h;
    _cleanup_free_ char *with = NULL, *without = NULL, *out = NULL, *cmd = NULL;
    Procs echo, tree;

    h_setup(&h, "orphans-stop");
    with = config(&h, true);
    without = config(&h, false);
    h_write_config(&h, with);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "test");
    CHECK(h_wait_state(c, "wrap", "connected", H_WAIT_MS));
    h_settle(&h, c, "echo", NULL);
    echo_only(&h, c, &echo);
    CHECK(wait_tree(&h, &echo, &tree, WRAP_PROCS));
    cmd = xasprintf("'%s' --socket '%s' disconnect wrap >/dev/null", getenv("MCPCTL_BINARY"),
                    h.socket);
    CHECK(system(cmd) == 0);
    size_t left = procset_wait_gone(&tree);
    CHECK_MSG(left == 0, "mcpctl disconnect left %zu of the wrapper's processes", left);
    h_check_healthy(&h, "disconnect", "mcp_echo_echo");

    CHECK(mcpc_request(c, "mcpd/connect", "{\"server\":\"wrap\"}", &out) == 0);
    mcpc_string_free(out);
    out = NULL;
    CHECK(h_wait_state(c, "wrap", "connected", H_WAIT_MS));
    CHECK(wait_tree(&h, &echo, &tree, WRAP_PROCS));
    h_write_config(&h, without);
    CHECK(mcpc_request(c, "mcpd/reload", NULL, &out) == 0);
    CHECK_MSG(out && strstr(out, "\"wrap\":\"removed\""), "reload gave %s", out ? out : "-");
    left = procset_wait_gone(&tree);
    CHECK_MSG(left == 0, "reload left %zu of the removed wrapper's processes", left);
    h_check_healthy(&h, "reload-removal", "mcp_echo_echo");

    /* A graceful stop ends the rest (teardown checks) and removes the record. */
    h_write_config(&h, with);
    mcpc_string_free(out);
    out = NULL;
    CHECK(mcpc_request(c, "mcpd/reload", NULL, &out) == 0);
    CHECK(h_wait_state(c, "wrap", "connected", H_WAIT_MS));
    CHECK(wait_tree(&h, &echo, &tree, WRAP_PROCS));
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    left = procset_wait_gone(&tree);
    CHECK_MSG(left == 0, "mcpd's stop left %zu of the wrapper's processes", left);
    char procs_dir[400];
    snprintf(procs_dir, sizeof(procs_dir), "%s/run/mcpd/procs", h.dir);
    DIR *d = opendir(procs_dir);
    int files = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        files += e->d_name[0] != '.';
    if (d)
        closedir(d);
    CHECK_MSG(files == 0, "%d records left in %s after a clean stop", files, procs_dir);
    h_teardown(&h);
}

/* A process of the user that mcpd never started: pid and start time. */
static ProcId start_decoy(const char *seconds)
{
    pid_t pid = fork();
    ProcInfo pi = {0};

    if (pid == 0) {
        /* Not the harness's either: its health check would count it as a stray of mcpd's. */
        unsetenv("MCPD_TEST_TAG");
        execlp("sleep", "sleep", seconds, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && (procs_read_info(pid, &pi) < 0 || pi.state == 0); i++)
        h_sleep_ms(10);
    return (ProcId){pid, pi.start};
}

static void end_decoy(const ProcId *d)
{
    kill(d->pid, SIGKILL);
    waitpid(d->pid, NULL, 0);
}

static void write_record(const Harness *h, const char *name, const char *text)
{
    char path[400];
    FILE *f;

    snprintf(path, sizeof(path), "%s/run/mcpd/procs", h->dir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/run/mcpd/procs/%s", h->dir, name);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static bool record_exists(const Harness *h, const char *name)
{
    char path[400];
    snprintf(path, sizeof(path), "%s/run/mcpd/procs/%s", h->dir, name);
    return access(path, F_OK) == 0;
}

/*
 * Stale records planted before a start: one of a dead mcpd naming a decoy by pid with a wrong
 * start time (reused pid: never killed), one of a live "mcpd" (left alone, as is its child).
 */
static void plant_records(const Harness *h, const ProcId *decoy, const ProcId *live_daemon,
                          const ProcId *live_child)
{
    const char *boot = procs_boot_id();
    char text[512];
    pid_t dead = fork();

    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    snprintf(text, sizeof(text), "mcpd-procs 1\nboot %s\ndaemon %d 1\nchild %d %llu\n", boot,
             (int)dead, (int)decoy->pid, (unsigned long long)decoy->start + 1);
    write_record(h, "0123456789abcdef0123456789abcdef", text);
    snprintf(text, sizeof(text), "mcpd-procs 1\nboot %s\ndaemon %d %llu\nchild %d %llu\n", boot,
             (int)live_daemon->pid, (unsigned long long)live_daemon->start, (int)live_child->pid,
             (unsigned long long)live_child->start);
    write_record(h, "fedcba9876543210fedcba9876543210", text);
}

static void test_kill9(void)
{
    Harness h;
    _cleanup_free_ char *cfg = NULL, *out = NULL;
    Procs echo, tree, earlier = {0};
    size_t left_by_crash = 0;

    h_setup(&h, "orphans-kill9");
    cfg = config(&h, true);
    h_write_config(&h, cfg);
    ProcId decoy = start_decoy("1000007"), live_daemon = start_decoy("1000008"),
           live_child = start_decoy("1000009");
    Procs decoys = {{decoy, live_daemon, live_child}, 3};
    for (int i = 0; i <= CRASHES; i++) {
        if (i == CRASHES)
            plant_records(&h, &decoy, &live_daemon, &live_child);
        h_start(&h, NULL);
        mcpc_client *c = h_client(&h, "test");
        CHECK(h_wait_state(c, "wrap", "connected", H_WAIT_MS));
        CHECK(h_wait_state(c, "echo", "connected", H_WAIT_MS));
        echo_only(&h, c, &echo);
        /* Earlier instances' processes and the decoys are not part of this one. */
        for (size_t j = 0; j < earlier.n; j++)
            echo.p[echo.n++] = earlier.p[j];
        for (size_t j = 0; j < decoys.n; j++)
            echo.p[echo.n++] = decoys.p[j];
        /* Only this instance's wrapper: anything of an earlier one would make the count wrong. */
        CHECK_MSG(wait_tree(&h, &echo, &tree, WRAP_PROCS), "crash %d: the wrapper's tree", i);
        size_t stale = procset_count_alive(&earlier);
        CHECK_MSG(stale == 0, "start %d: %zu processes of crashed instances still run", i, stale);
        if (i == CRASHES) {
            mcpc_free(c);
            c = NULL;
            break;
        }
        for (size_t j = 0; j < tree.n && earlier.n < MAX_TRACKED; j++)
            earlier.p[earlier.n++] = tree.p[j];
        int64_t echo_pid = server_pid(c, "echo");
        if (echo_pid > 0 && earlier.n < MAX_TRACKED)
            earlier.p[earlier.n++] = echo.p[0];
        mcpc_free(c);
        left_by_crash += procset_crash_mcpd(&h, &earlier);
    }
    printf("test-orphans: %zu processes outlived %d kills of mcpd until the next start\n",
           left_by_crash, CRASHES);
    CHECK_MSG(left_by_crash > 0, "kill -9 left nothing: the scenario did not test anything");
    size_t left = procset_wait_gone(&earlier);
    CHECK_MSG(left == 0, "%zu processes of crashed instances survived the restart", left);
    CHECK_MSG(procset_alive(&decoy), "the decoy named by pid in a stale record was killed");
    CHECK_MSG(procset_alive(&live_child), "the child of a live mcpd's record was killed");
    CHECK(!record_exists(&h, "0123456789abcdef0123456789abcdef"));
    CHECK(record_exists(&h, "fedcba9876543210fedcba9876543210"));

    /* The wrapper's tree would be strays to the health check: remove it first. */
    mcpc_client *c = h_client(&h, "test");
    h_settle(&h, c, "echo", NULL);
    CHECK(mcpc_request(c, "mcpd/disconnect", "{\"server\":\"wrap\"}", &out) == 0);
    CHECK(procset_wait_gone(&tree) == 0);
    h_check_healthy(&h, "kill -9 x3", "mcp_echo_echo");
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    CHECK_MSG(procset_alive(&decoy) && procset_alive(&live_child), "a decoy died with mcpd's stop");
    end_decoy(&decoy);
    end_decoy(&live_daemon);
    end_decoy(&live_child);
    h_teardown(&h);
}

/* Count occurrences of needle in mcpd's log. */
static int log_count(const Harness *h, const char *needle)
{
    _cleanup_free_ char *text = h_read_file(h->log);
    int n = 0;

    for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The highest fd mcpd has open. */
static int mcpd_max_fd(const Harness *h)
{
    char path[64];
    DIR *d;
    int max = -1;

    snprintf(path, sizeof(path), "/proc/%d/fd", (int)h->pid);
    if (!(d = opendir(path)))
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            max = MAX(max, atoi(e->d_name));
    closedir(d);
    return max;
}

static void test_emfile(void)
{
    Harness h;
    _cleanup_free_ char *cfg = NULL;
    int conns[EMFILE_CONNS], n_conns = 0;
    struct rlimit old, low;
    const char *need = "cannot create pipes: Too many open files";
    /* One such line per failed start (the state change that reports it). */
    const char *attempt = "connecting -> backoff: cannot create pipes: Too many open files";

    h_setup(&h, "orphans-emfile");
    cfg = xasprintf("{\"mcpServers\": {\"echo\": {\"command\": \"%s\"}}}", h_fake());
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "test");
    h_settle(&h, c, "echo", NULL);
    CHECK(prlimit(h.pid, RLIMIT_NOFILE, NULL, &old) == 0);
    /* The soft limit only: raising a hard limit again would take privilege. */
    low.rlim_cur = (rlim_t)(mcpd_max_fd(&h) + 1 + EMFILE_SPARE);
    low.rlim_max = old.rlim_max;
    CHECK(prlimit(h.pid, RLIMIT_NOFILE, &low, NULL) == 0);
    for (int i = 0; i < EMFILE_CONNS; i++)
        if ((conns[n_conns] = h_raw_connect(&h)) >= 0)
            n_conns++;
    for (int waited = 0; waited < H_WAIT_MS && !log_count(&h, "out of file descriptors");
         waited += 50)
        h_sleep_ms(50);
    CHECK_MSG(log_count(&h, "out of file descriptors") > 0, "mcpd never ran out of fds");

    int64_t pid = server_pid(c, "echo");
    CHECK(pid > 0);
    kill((pid_t)pid, SIGKILL);
    bool failed = false;
    for (int waited = 0; waited < 2 * H_WAIT_MS && log_count(&h, attempt) < EMFILE_FAILURES;
         waited += 50) {
        _cleanup_json_ yajl_val st = h_status(c);
        failed = failed || streq(json_get_string(h_server(st, "echo"), "state"), "failed");
        h_sleep_ms(50);
    }
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val s = h_server(st, "echo");
    const char *err = json_get_string(s, "lastError");
    CHECK_MSG(log_count(&h, attempt) >= EMFILE_FAILURES, "%d start failures at the limit",
              log_count(&h, attempt));
    CHECK_MSG(!failed && streq(json_get_string(s, "state"), "backoff"),
              "at the fd limit the server is %s", json_get_string(s, "state"));
    CHECK_MSG(err && strstr(err, need) && strstr(err, "limit of open files"), "lastError: %s",
              err ? err : "-");
    printf("test-orphans: at the fd limit: %s (%s)\n", json_get_string(s, "state"),
           err ? err : "-");

    for (int i = 0; i < n_conns; i++)
        close(conns[i]);
    CHECK_MSG(h_wait_state(c, "echo", "connected", 2 * H_WAIT_MS),
              "the server did not come back once fds were free");
    CHECK(prlimit(h.pid, RLIMIT_NOFILE, &old, NULL) == 0);
    h_check_healthy(&h, "EMFILE at restart", "mcp_echo_echo");
    mcpc_free(c);
    h_teardown(&h);
}

int main(void)
{
    test_stop_server();
    test_kill9();
    /*
     * Under valgrind (MCPD_WRAPPER) the tool keeps fds of its own just under the hard limit, so
     * mcpd's highest fd leaves no soft limit to lower it to, and the tool enforces its own copy
     * of the limit besides: the fd-limit case runs in the sanitizer builds only.
     */
    if (getenv("MCPD_WRAPPER"))
        printf("test-orphans: the fd-limit case is skipped under %s\n", getenv("MCPD_WRAPPER"));
    else
        test_emfile();
    return h_finish("test-orphans");
}
