// SPDX-License-Identifier: MIT
// child: the one recipe for child processes (process group, PDEATHSIG, fds, reaping via SIGCHLD).

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/idmap.h"
#include "common/json.h"
#include "common/util.h"
#include "daemon/child.h"

extern char **environ;

/* pid -> Child, for reaping. */
static IdMap children = IDMAP_INIT;
static unsigned n_children;

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

/* The daemon's environment with spec->env laid over it. */
static char **build_env(yajl_val env)
{
    size_t n_env = 0, n_over = env ? env->u.object.len : 0, k = 0;
    char **out;

    while (environ[n_env])
        n_env++;
    out = xcalloc(n_env + n_over + 1, sizeof(char *));
    for (size_t i = 0; i < n_env; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t kl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        bool overridden = false;
        for (size_t j = 0; j < n_over && !overridden; j++)
            overridden = strlen(env->u.object.keys[j]) == kl &&
                         strncmp(env->u.object.keys[j], environ[i], kl) == 0;
        if (!overridden)
            out[k++] = xstrdup(environ[i]);
    }
    for (size_t j = 0; j < n_over; j++)
        out[k++] = xasprintf("%s=%s", env->u.object.keys[j], env->u.object.values[j]->u.string);
    return out;
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

/* In the child: never returns. Only async-signal-safe work from here on. */
_Noreturn static void exec_child(const ChildSpec *spec, char **envp, int pipes[3][2], int errfd,
                                 pid_t parent)
{
    sigset_t none;
    int e;

    setpgid(0, 0);
    /* Die with the daemon; if it died before this line, leave now. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* Move the exec-status pipe out of the way of 0-2 first, then place the pipes. */
    errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 10);
    if (errfd < 0)
        _exit(127);
    if (dup2(pipes[0][0], 0) < 0 || dup2(pipes[1][1], 1) < 0 || dup2(pipes[2][1], 2) < 0)
        goto fail;
    if (dup3(errfd, 3, O_CLOEXEC) < 0)
        goto fail;
    errfd = 3;
    close_fds_from(4);
    if (spec->cwd && chdir(spec->cwd) < 0)
        goto fail;
    environ = envp;
    execvp(spec->file, spec->argv);
fail:
    e = errno;
    (void)!write(errfd, &e, sizeof(e));
    _exit(127);
}

static void close_pipes(int pipes[3][2])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            if (pipes[i][j] >= 0)
                close(pipes[i][j]);
}

/* Wait for the exec-status pipe: EOF means exec succeeded, an int is the child's errno. */
static int read_exec_status(int fd)
{
    int e = 0;
    ssize_t n;

    do {
        n = read(fd, &e, sizeof(e));
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof(e) ? -e : 0;
}

int child_spawn(Child **cp, const ChildSpec *spec, ChildExitFn on_exit, void *userdata, char **whyp)
{
    int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}}, errpipe[2];
    char **envp;
    pid_t parent = getpid(), pid;
    int r;

    for (int i = 0; i < 3; i++)
        if (pipe2(pipes[i], O_CLOEXEC) < 0) {
            r = -errno;
            close_pipes(pipes);
            *whyp = xasprintf("cannot create pipes: %s", strerror(-r));
            return r;
        }
    if (pipe2(errpipe, O_CLOEXEC) < 0) {
        r = -errno;
        close_pipes(pipes);
        *whyp = xasprintf("cannot create pipes: %s", strerror(-r));
        return r;
    }
    envp = build_env(spec->env);
    pid = fork();
    if (pid == 0) {
        close(errpipe[0]);
        exec_child(spec, envp, pipes, errpipe[1], parent);
    }
    r = pid < 0 ? -errno : 0;
    close(errpipe[1]);
    free_env(envp);
    if (r == 0) {
        /* Set the group from this side too, so a kill before the child ran still works. */
        setpgid(pid, pid);
        r = read_exec_status(errpipe[0]);
    }
    close(errpipe[0]);
    if (r < 0) {
        *whyp = pid < 0 ? xasprintf("fork failed: %s", strerror(-r))
                        : xasprintf("cannot run \"%s\": %s", spec->file, strerror(-r));
        close_pipes(pipes);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        return r;
    }
    close(pipes[0][0]);
    close(pipes[1][1]);
    close(pipes[2][1]);
    Child *c = xcalloc(1, sizeof(*c));
    c->pid = pid;
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
    *cp = c;
    return 0;
}

void child_kill_group(Child *c, int sig)
{
    if (c->pid > 0)
        (void)kill(-c->pid, sig);
}

void child_reap(void)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        Child *c = idmap_remove(&children, (uint64_t)pid);
        if (!c)
            continue;
        c->exited = true;
        c->status = status;
        /* The leader is gone; whatever it left in its group (npx, uvx wrappers) goes too. */
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
