// SPDX-License-Identifier: MIT
// child: the one recipe for child processes (process group, PDEATHSIG, fds, reaping via SIGCHLD).

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/idmap.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/sys/child-env.h"
#include "daemon/sys/child.h"
#include "daemon/sys/proctree.h"
#include "daemon/sys/procs.h"

extern char **environ;

/* pid -> Child, for reaping. */
static IdMap children = IDMAP_INIT;
static unsigned n_children;
/* Numbers the children of this instance: the serial in each one's MCPD_INSTANCE tag. */
static uint64_t next_serial;

unsigned child_count(void)
{
    return n_children;
}

char *child_describe_status(int status)
{
    if (WIFEXITED(status))
        return xasprintf("exited with status %d", WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return xasprintf("killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    return xasprintf("stopped (status 0x%x)", (unsigned)status);
}

/*
 * The daemon's environment with spec->env laid over it, and this child's tag first (read first
 * by a scan, and never taken from the daemon's own environment or the config: it is proof).
 */
static char **build_env(yajl_val env, uint64_t serial)
{
    return child_env_merge(environ, env, PROCS_ENV_NAME,
                           procs_instance()[0] ? procs_child_env(serial) : NULL);
}

static void free_env(char **env)
{
    for (char **p = env; p && *p; p++)
        free(*p);
    free(env);
}

/* Close every fd from lo up; close_range(2) where the kernel has it, a sweep otherwise. */
static void close_fds_from(int lo)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lo, ~0U, 0U) == 0)
        return;
#endif
    for (int fd = lo; fd < 65536; fd++)
        close(fd);
}

/* What the exec-status pipe carries when the child fails: errno, and a sandbox's failed step. */
typedef struct ExecStatus {
    int err;
    const char *what[2];
} ExecStatus;

/*
 * Whether the daemon still runs. In a PID namespace of its own the child sees no parent
 * (getppid() is 0): then the exec-status pipe tells, its read end being the daemon's alone.
 */
static bool parent_alive(const ChildContain *contain, int errfd, pid_t parent)
{
    struct pollfd p = {.fd = errfd};

    if (!contain || !(contain->clone_flags & CLONE_NEWPID))
        return getppid() == parent;
    return poll(&p, 1, 0) == 0;
}

/* In the child: never returns. Only async-signal-safe work from here on. */
_Noreturn static void exec_child(const ChildSpec *spec, const ChildContain *contain, char **envp,
                                 int pipes[3][2], int errfd, pid_t parent)
{
    ExecStatus st = {0};
    sigset_t none;

    setpgid(0, 0);
    /* Die with the daemon; if it died before this line, leave now. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!parent_alive(contain, errfd, parent))
        _exit(127);
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /*
     * Move the exec-status pipe out of the way of 0-2 first, then place the pipes. Only when
     * needed: at the fd limit there is no free slot for a copy, and a silent _exit would look
     * like a server that started and died.
     */
    if (errfd < 3 && (errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 3)) < 0)
        _exit(127);
    if (dup2(pipes[0][0], 0) < 0 || dup2(pipes[1][1], 1) < 0 || dup2(pipes[2][1], 2) < 0)
        goto fail;
    if (errfd != 3 && dup3(errfd, 3, O_CLOEXEC) < 0)
        goto fail;
    errfd = 3;
    close_fds_from(4);
    /* The sandbox first: the working directory is then the one its mounts show. */
    if (contain && (st.err = -contain->fn(contain->arg, st.what)) > 0)
        goto report;
    if (spec->cwd && chdir(spec->cwd) < 0)
        goto fail;
    environ = envp;
    execvp(spec->file, spec->argv);
fail:
    st.err = errno;
report:
    (void)!write(errfd, &st, sizeof(st));
    _exit(127);
}

static void close_pipes(int pipes[3][2])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            if (pipes[i][j] >= 0)
                close(pipes[i][j]);
}

/* Wait for the exec-status pipe: EOF means exec succeeded, an ExecStatus that it failed. */
static int read_exec_status(int fd, ExecStatus *st)
{
    ssize_t n;

    do {
        n = read(fd, st, sizeof(*st));
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof(*st) ? -st->err : 0;
}

/* A child in the namespaces spec names (a sandbox's), or a plain fork. */
static pid_t fork_child(const ChildContain *contain)
{
    if (!contain)
        return fork();
    /* Like fork (no new stack: the child runs on its copy of ours), in new namespaces. */
    return (pid_t)syscall(SYS_clone, (unsigned long)contain->clone_flags | SIGCHLD, NULL, NULL,
                          NULL, NULL);
}

/* The reason a spawn failed, saying whether waiting can cure it (the system ran short). */
static char *spawn_error(const char *what, int r)
{
    if (r == -EMFILE)
        return xasprintf("%s: %s (mcpd is at its limit of open files; retrying once some are "
                         "closed)",
                         what, strerror(-r));
    if (r == -ENFILE)
        return xasprintf("%s: %s (the system is at its limit of open files; retrying)", what,
                         strerror(-r));
    if (r == -EAGAIN || r == -ENOMEM)
        return xasprintf("%s: %s (out of processes or memory; retrying)", what, strerror(-r));
    return xasprintf("%s: %s", what, strerror(-r));
}

int child_spawn(Child **cp, const ChildSpec *spec, ChildExitFn on_exit, void *userdata, char **whyp)
{
    return child_spawn_contained(cp, spec, NULL, on_exit, userdata, whyp);
}

int child_spawn_contained(Child **cp, const ChildSpec *spec, const ChildContain *contain,
                          ChildExitFn on_exit, void *userdata, char **whyp)
{
    int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}}, errpipe[2] = {-1, -1};
    ExecStatus st = {0};
    char **envp;
    pid_t parent = getpid(), pid;
    uint64_t serial = ++next_serial;
    int r;

    for (int i = 0; i < 4; i++)
        if (pipe2(i < 3 ? pipes[i] : errpipe, O_CLOEXEC) < 0) {
            r = -errno;
            close_pipes(pipes);
            *whyp = spawn_error("cannot create pipes", r);
            return r;
        }
    envp = build_env(spec->env, serial);
    pid = fork_child(contain);
    if (pid == 0) {
        close(errpipe[0]);
        exec_child(spec, contain, envp, pipes, errpipe[1], parent);
    }
    r = pid < 0 ? -errno : 0;
    close(errpipe[1]);
    free_env(envp);
    if (r == 0) {
        /* Set the group from this side too, so a kill before the child ran still works. */
        setpgid(pid, pid);
        r = read_exec_status(errpipe[0], &st);
    }
    close(errpipe[0]);
    if (r < 0) {
        _cleanup_free_ char *what = xasprintf("cannot run \"%s\"", spec->file);
        bool refused = st.what[0] || (pid < 0 && contain && r != -EAGAIN && r != -ENOMEM);
        if (refused)
            *whyp = xasprintf("%s%s%s: %s", st.what[0] ? st.what[0] : "making its namespaces",
                              st.what[1] ? " " : "", st.what[1] ? st.what[1] : "", strerror(-r));
        else
            *whyp = spawn_error(pid < 0 ? "fork failed" : what, r);
        close_pipes(pipes);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        return refused ? CHILD_E_CONTAIN : r;
    }
    close(pipes[0][0]);
    close(pipes[1][1]);
    close(pipes[2][1]);
    Child *c = xcalloc(1, sizeof(*c));
    c->pid = pid;
    c->serial = serial;
    c->started_ms = now_ms();
    c->fd_stdin = pipes[0][1];
    c->fd_stdout = pipes[1][0];
    c->fd_stderr = pipes[2][0];
    c->on_exit = on_exit;
    c->userdata = userdata;
    fd_set_nonblock(c->fd_stdin);
    fd_set_nonblock(c->fd_stdout);
    fd_set_nonblock(c->fd_stderr);
    idmap_put(&children, (uint64_t)pid, c);
    n_children++;
    procs_add(pid, serial);
    proctree_spawned();
    *cp = c;
    return 0;
}

void child_kill_group(Child *c, int sig)
{
    if (c->pid <= 0)
        return;
    /*
     * The group id is ours only while the leader is unreaped (a zombie still holds it): once
     * reaped, and its group empty, the id may be reused by someone else's new group (a shell
     * job, a session leader). child_reap ends the group before it reaps the leader.
     */
    if (!c->exited)
        (void)kill(-c->pid, sig);
    /*
     * And what left the group (setsid, a daemonizing helper): found by its tag or as a
     * descendant, by group only under the same rule.
     */
    _cleanup_free_ ProcId *known = NULL;
    size_t n_known = proctree_members(c->serial, &known);

    /*
     * And what the last walk of /proc saw in its tree: also a process that cleared its tag and
     * left the group (a daemonizing helper), by its identity.
     */
    procs_signal_child(c->exited ? 0 : c->pid, c->serial, known, n_known, sig);
}

void child_reap(void)
{
    for (;;) {
        siginfo_t si = {0};
        int status;
        pid_t pid;

        /* Look before reaping: while the leader is a zombie its group id cannot be reused. */
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid <= 0)
            return;
        if (idmap_get(&children, (uint64_t)si.si_pid))
            (void)kill(-si.si_pid, SIGKILL); /* what it left in its group (npx, uvx wrappers) */
        while ((pid = waitpid(si.si_pid, &status, WNOHANG)) < 0 && errno == EINTR)
            ;
        if (pid <= 0)
            return;
        Child *c = idmap_remove(&children, (uint64_t)pid);
        if (!c) {
            /* An orphan of a server's, adopted by us as its subreaper: reaped, nothing more. */
            _cleanup_free_ char *why = child_describe_status(status);
            log_debug("reaped adopted process %d (%s)", (int)pid, why);
            continue;
        }
        c->exited = true;
        c->status = status;
        procs_remove(pid);
        /* Its group went above; what left the group goes by its tag. */
        child_kill_group(c, SIGKILL);
        if (c->on_exit)
            c->on_exit(c, status, c->userdata);
    }
}

void child_free(Child *c)
{
    if (!c)
        return;
    if (!c->exited && c->pid > 0) {
        /* Never leave a child behind: kill the group and reap it now. */
        child_kill_group(c, SIGKILL);
        idmap_remove(&children, (uint64_t)c->pid);
        while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        procs_remove(c->pid);
    }
    if (c->fd_stdin >= 0)
        close(c->fd_stdin);
    if (c->fd_stdout >= 0)
        close(c->fd_stdout);
    if (c->fd_stderr >= 0)
        close(c->fd_stderr);
    n_children--;
    free(c);
}
