// SPDX-License-Identifier: MIT
// test-procs: reading /proc, choosing a child's descendants, and reaping stale records.

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "common/util.h"
#include "daemon/sys/procs.h"
#include "tests/unit/test.h"

/* How long a started process may take to appear as expected; generous for a loaded machine. */
#define APPEAR_MS 20000
#define STEP_MS   10

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/*
 * Run sh -c script with env_entry ("NAME=value", or NULL) in its environment, named comm (or
 * not), in a process group of its own when comm is "group" (as mcpd starts servers).
 */
/* Whether pid runs sleep (its comm), after the exec of sh's "exec sleep". */
static bool is_sleep(pid_t pid)
{
    _cleanup_free_ char *path = xasprintf("/proc/%d/comm", (int)pid);
    char comm[32] = "";
    FILE *f = fopen(path, "re");

    if (f) {
        if (!fgets(comm, sizeof(comm), f))
            comm[0] = '\0';
        fclose(f);
    }
    return streq(comm, "sleep\n");
}

static ProcId spawn_sh(const char *script, const char *env_entry, const char *comm)
{
    ProcInfo pi = {0};
    pid_t pid = fork();

    if (pid == 0) {
        if (env_entry)
            putenv((char *)env_entry);
        if (comm && streq(comm, "group"))
            setpgid(0, 0);
        else if (comm)
            prctl(PR_SET_NAME, comm);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < APPEAR_MS / STEP_MS && procs_read_info(pid, &pi) < 0; i++)
        sleep_ms(STEP_MS);
    /* "exec sleep": until that last exec is done. The entry shows in sh too, but while sh
     * execs sleep the environment is briefly not there to read (the new program's name comes
     * before it), and a test that looks for the entry then would not find it. */
    for (int i = 0; startswith(script, "exec sleep") && i < APPEAR_MS / STEP_MS &&
                    !(is_sleep(pid) && (!env_entry || procs_env_has(pid, env_entry, false)));
         i++)
        sleep_ms(STEP_MS);
    return (ProcId){pid, pi.start};
}

static bool alive(const ProcId *id)
{
    ProcInfo pi;
    return procs_read_info(id->pid, &pi) == 0 && pi.start == id->start && pi.state != 'Z';
}

/* Reap what died: our children and, as a subreaper, orphans of theirs. */
static void reap(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

static bool wait_dead(const ProcId *id)
{
    for (int i = 0; i < APPEAR_MS / STEP_MS; i++) {
        reap();
        if (!alive(id))
            return true;
        sleep_ms(STEP_MS);
    }
    return false;
}

/* The process whose command line is "sleep <secs>" (each test uses its own numbers). */
static ProcId find_sleep(const char *secs)
{
    char path[64], buf[256], want[64];

    snprintf(want, sizeof(want), "sleep%c%s", '\0', secs);
    for (int i = 0; i < APPEAR_MS / STEP_MS; i++) {
        DIR *d = opendir("/proc");
        for (struct dirent *e; d && (e = readdir(d));) {
            pid_t pid = (pid_t)atoi(e->d_name);
            ProcInfo pi;
            FILE *f;
            size_t n;
            if (pid <= 0)
                continue;
            snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
            if (!(f = fopen(path, "r")))
                continue;
            n = fread(buf, 1, sizeof(buf), f);
            fclose(f);
            if (n == strlen("sleep") + 1 + strlen(secs) + 1 && memcmp(buf, want, n - 1) == 0 &&
                procs_read_info(pid, &pi) == 0) {
                closedir(d);
                return (ProcId){pid, pi.start};
            }
        }
        if (d)
            closedir(d);
        sleep_ms(STEP_MS);
    }
    return (ProcId){0, 0};
}

static void test_read_info(void)
{
    ProcInfo me, child;
    /* comm may hold ") " and digits: the fields after it must still parse. */
    ProcId c = spawn_sh("exec sleep 1000", NULL, "x) 1 2 (y");

    CHECK_INTEQ(procs_read_info(getpid(), &me), 0);
    CHECK_INTEQ(me.pid, getpid());
    CHECK_INTEQ(me.ppid, getppid());
    CHECK_INTEQ(me.pgid, getpgrp());
    CHECK(me.start > 0);
    CHECK_INTEQ(procs_read_info(c.pid, &child), 0);
    CHECK_INTEQ(child.ppid, getpid());
    CHECK_INTEQ(child.pgid, getpgrp());
    CHECK(child.start >= me.start);
    kill(c.pid, SIGKILL);
    /* Reaped here, not by wait_dead: that one may see the zombie after its reap, and a zombie
     * still has its /proc entry. */
    CHECK_INTEQ(waitpid(c.pid, NULL, 0), c.pid);
    CHECK_INTEQ(procs_read_info(c.pid, &child), -ENOENT);
}

static void test_env_has(void)
{
    ProcId c = spawn_sh("exec sleep 1001", "MCPD_INSTANCE=abc-7", NULL);

    CHECK(procs_env_has(c.pid, "MCPD_INSTANCE=abc-7", false));
    CHECK(procs_env_has(c.pid, "MCPD_INSTANCE=abc-", true));
    CHECK(!procs_env_has(c.pid, "MCPD_INSTANCE=abc-", false));
    CHECK(!procs_env_has(c.pid, "MCPD_INSTANCE=abc-70", false));
    CHECK(!procs_env_has(getpid(), "MCPD_INSTANCE=abc-7", false));
    kill(c.pid, SIGKILL);
    CHECK(wait_dead(&c));
}

/*
 * A tagged tree: a setsid'd grandchild (its own group) and one that cleared its environment
 * (found as a descendant) die; an untagged process of the same user survives.
 */
static void test_signal_tree(void)
{
    ProcId decoy = spawn_sh("exec sleep 1002", NULL, NULL);
    ProcId top = spawn_sh("setsid sleep 1003 & env -i /bin/sh -c 'sleep 1004 & wait' & wait",
                          "MCPD_INSTANCE=tree-1", NULL);
    ProcId setsid_one = find_sleep("1003"), bare = find_sleep("1004");
    ProcTarget t = {.tag = "MCPD_INSTANCE=tree-1"};

    CHECK(setsid_one.pid > 0 && bare.pid > 0);
    CHECK(!procs_env_has(bare.pid, "MCPD_INSTANCE=tree-1", false));
    CHECK(procs_signal(&t, SIGKILL) >= 4);
    CHECK(wait_dead(&top));
    CHECK(wait_dead(&setsid_one));
    CHECK(wait_dead(&bare));
    CHECK(alive(&decoy));
    kill(decoy.pid, SIGKILL);
    CHECK(wait_dead(&decoy));
}

static void write_rec(const char *dir, const char *name, const char *text)
{
    _cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
    test_write_file(path, text);
}

static bool exists(const char *dir, const char *name)
{
    _cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

#define DEAD_REC  "00000000000000000000000000000001"
#define OTHER_REC "00000000000000000000000000000002"
#define LIVE_REC  "00000000000000000000000000000003"
#define BAD_REC   "00000000000000000000000000000004"

static void test_reap_records(void)
{
    _cleanup_free_ char *dir = test_tmpdir();
    const char *boot = procs_boot_id();
    char text[512];
    pid_t gone = fork();

    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    /* Ours by tag and by identity (a leader whose group also goes), and a reused pid. */
    ProcId tagged = spawn_sh("exec sleep 1005", "MCPD_INSTANCE=" DEAD_REC "-3", NULL);
    ProcId leader = spawn_sh("sleep 1006 & wait", NULL, "group");
    ProcId member = find_sleep("1006");
    ProcId reused = spawn_sh("exec sleep 1007", NULL, NULL);
    ProcId live_daemon = spawn_sh("exec sleep 1008", NULL, NULL);
    ProcId live_child = spawn_sh("exec sleep 1009", "MCPD_INSTANCE=" LIVE_REC "-1", NULL);
    ProcId other_boot = spawn_sh("exec sleep 1010", "MCPD_INSTANCE=" OTHER_REC "-1", NULL);

    CHECK(member.pid > 0);
    snprintf(text, sizeof(text),
             "mcpd-procs 1\nboot %s\ndaemon %d 1\nchild %d %llu\nchild %d %llu\n", boot, (int)gone,
             (int)leader.pid, (unsigned long long)leader.start, (int)reused.pid,
             (unsigned long long)reused.start + 1);
    write_rec(dir, DEAD_REC, text);
    snprintf(text, sizeof(text), "mcpd-procs 1\nboot %s\ndaemon %d %llu\n", boot,
             (int)live_daemon.pid, (unsigned long long)live_daemon.start);
    write_rec(dir, LIVE_REC, text);
    snprintf(text, sizeof(text), "mcpd-procs 1\nboot not-%s\ndaemon %d 1\n", boot, (int)gone);
    write_rec(dir, OTHER_REC, text);
    write_rec(dir, BAD_REC, "mcpd-procs 1\nboot x\nkill everything\n");
    write_rec(dir, "notes.txt", "not a record\n");

    CHECK(procs_reap_records(dir, NULL) >= 3);
    CHECK(wait_dead(&tagged));
    CHECK(wait_dead(&leader));
    CHECK(wait_dead(&member));
    CHECK(alive(&reused));
    CHECK(alive(&live_daemon));
    CHECK(alive(&live_child));
    CHECK(alive(&other_boot));
    CHECK(!exists(dir, DEAD_REC));
    CHECK(!exists(dir, OTHER_REC));
    CHECK(exists(dir, BAD_REC)); /* not understood: reported, left alone */
    CHECK(exists(dir, LIVE_REC));
    CHECK(exists(dir, "notes.txt"));
    /* Everything, also what should have died: a survivor would hold the test's output open. */
    ProcId *rest[] = {&tagged, &leader, &member, &reused, &live_daemon, &live_child, &other_boot};
    for (size_t i = 0; i < N_ELEMENTS(rest); i++) {
        kill(rest[i]->pid, SIGKILL);
        CHECK(wait_dead(rest[i]));
    }
    test_rm_rf(dir);
}

int main(void)
{
    /* Grandchildren whose parent died come back to us to be reaped, as they do to mcpd. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    RUN(test_read_info);
    RUN(test_env_has);
    RUN(test_signal_tree);
    RUN(test_reap_records);
    return test_main_result();
}
