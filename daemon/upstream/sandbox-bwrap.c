// SPDX-License-Identifier: MIT
// sandbox-bwrap: a sandbox plan carried out by bubblewrap: its command line around the server's.

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/paths.h"
#include "common/util.h"
#include "daemon/sys/child.h"
#include "daemon/upstream/sandbox-bwrap.h"
#include "daemon/upstream/sandbox-plan.h"

/* An argv being built: every string owned. */
typedef struct Argv {
    char **v;
    size_t n, cap;
} Argv;

static void argv_add(Argv *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = xrealloc(a->v, a->cap * sizeof(char *));
    }
    a->v[a->n++] = xstrdup(s);
    a->v[a->n] = NULL;
}

static void argv_add3(Argv *a, const char *opt, const char *x, const char *y)
{
    argv_add(a, opt);
    argv_add(a, x);
    if (y)
        argv_add(a, y);
}

void sandbox_bwrap_argv_free(char **argv)
{
    for (char **p = argv; p && *p; p++)
        free(*p);
    free(argv);
}

/*
 * bwrap's absolute path, found in mcpd's own PATH: never in the server's, whose "env" could name
 * a PATH where a "bwrap" of the entry's choosing waits (a sandbox the user approved, not run).
 * -ENOENT when there is none.
 */
static int find_bwrap(char **pathp)
{
    const char *path = getenv("PATH");
    _cleanup_free_ char *dirs = xstrdup(path && path[0] ? path : "/usr/local/bin:/usr/bin:/bin");
    char *save = NULL;

    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        _cleanup_free_ char *p = paths_join(d, SANDBOX_BWRAP);
        if (d[0] == '/' && access(p, X_OK) == 0) {
            *pathp = p;
            p = NULL;
            return 0;
        }
    }
    return -ENOENT;
}

int sandbox_bwrap_argv(char ***argvp, const SandboxPlan *p, const ChildSpec *spec, char **whyp)
{
    _cleanup_free_ char *bwrap = NULL;
    Argv a = {0};

    if (find_bwrap(&bwrap) < 0) {
        *whyp = xasprintf("cannot find \"%s\" in mcpd's PATH", SANDBOX_BWRAP);
        return -ENOENT;
    }
    argv_add(&a, bwrap);
    /*
     * Namespaces that contain: its own processes (none of the user's to signal or ptrace, its
     * own /proc), no SysV IPC of the user's, the network's own when it is off; with --cap-drop
     * ALL no capability, also when mcpd runs as root. Not the UTS and cgroup namespaces: they
     * hide only names and cost a start about a millisecond of CPU each (docs/sandbox.md). No
     * --new-session: the server must stay in the process group mcpd ends it by.
     */
    argv_add(&a, "--die-with-parent");
    argv_add(&a, "--unshare-pid");
    argv_add(&a, "--unshare-ipc");
    if (!p->network)
        argv_add(&a, "--unshare-net");
    argv_add3(&a, "--cap-drop", "ALL", NULL);
    /* Everything readable and nothing writable; a device set and /proc of its own. */
    argv_add3(&a, "--ro-bind", "/", "/");
    argv_add3(&a, "--dev", "/dev", NULL);
    argv_add3(&a, "--proc", "/proc", NULL);
    argv_add3(&a, "--tmpfs", "/tmp", NULL);
    for (size_t i = 0; i < p->n_mounts; i++) {
        const SandboxMount *m = &p->mounts[i];
        if (m->kind == SANDBOX_MOUNT_WRITE)
            argv_add3(&a, "--bind-try", m->path, m->path);
        else if (m->kind == SANDBOX_MOUNT_READ)
            argv_add3(&a, "--ro-bind-try", m->path, m->path);
        else
            argv_add3(&a, "--ro-bind", m->kind == SANDBOX_MOUNT_DENY_DIR ? p->pdir : p->pfile,
                      m->path);
    }
    if (p->cwd)
        argv_add3(&a, "--chdir", p->cwd, NULL);
    argv_add(&a, "--");
    argv_add(&a, spec->file);
    for (size_t i = 1; spec->argv[i]; i++)
        argv_add(&a, spec->argv[i]);
    *argvp = a.v;
    return 0;
}
