// SPDX-License-Identifier: MIT
// sandbox-ns: a sandbox plan carried out by mcpd itself in the server's own child, between
// fork and exec: user, mount, PID, IPC (and network) namespaces, the mounts, no capabilities.

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "daemon/upstream/sandbox-ns.h"

/*
 * Mounts one sandbox may hold: a policy's three lists (64 paths each, sandbox-policy.c's bound)
 * and the 35 defaults (secrets, tool caches, the working directory), 227 at most. Each is an fd
 * in the child while it is set up, in an array of this size on its stack.
 */
#define SANDBOX_NS_MAX_MOUNTS 256

/* The device nodes a sandbox's own /dev holds, bound from the host's (bubblewrap's set). */
static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

void sandbox_ns_init(SandboxNs *ns, const SandboxPlan *plan)
{
    ns->plan = plan;
    snprintf(ns->uid_map, sizeof(ns->uid_map), "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
    snprintf(ns->gid_map, sizeof(ns->gid_map), "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
}

int sandbox_ns_clone_flags(const SandboxPlan *plan)
{
    /*
     * A user namespace always, also for root: its capabilities are then only over what it made,
     * and a process in it cannot ptrace the user's others. Not UTS and cgroup (names only).
     */
    return CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
           (plan->network ? 0 : CLONE_NEWNET);
}

/* From here on the child's side: system calls only, no allocation, no stdio. */

#define TRY(expr, step, path)                                                                      \
    do {                                                                                           \
        if ((expr) < 0) {                                                                          \
            what[0] = (step);                                                                      \
            what[1] = (path);                                                                      \
            return -errno;                                                                         \
        }                                                                                          \
    } while (0)

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A detached copy of the tree at path, read-only when asked. */
static int clone_tree(const char *path, bool rdonly)
{
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
    int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);

    if (fd >= 0 && rdonly &&
        mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/*
 * Make path (a directory, or with file an empty file) when it is missing: a mount target under
 * the sandbox's own /tmp or /dev, which start empty. Elsewhere it exists (the plan's paths did).
 */
static int make_target(const char *path, bool file)
{
    char buf[PATH_MAX];
    size_t len = strlen(path);

    if (access(path, F_OK) == 0)
        return 0;
    if (len >= sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, len + 1);
    for (char *s = buf + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    if (!file)
        return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
    int fd = open(buf, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int move_tree(int fd, const char *path)
{
    struct stat st;

    if (fstat(fd, &st) < 0 || make_target(path, !S_ISDIR(st.st_mode)) < 0)
        return -1;
    return move_mount(fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH);
}

/* Its own /dev, as bubblewrap's --dev makes it: a few nodes, its own ptys, a writable shm. */
static int make_dev(const int *nodes, const char *what[2])
{
    static const char *const links[][2] = {
        {"pts/ptmx", "/dev/ptmx"},          {"/proc/self/fd", "/dev/fd"},
        {"/proc/self/fd/0", "/dev/stdin"},  {"/proc/self/fd/1", "/dev/stdout"},
        {"/proc/self/fd/2", "/dev/stderr"},
    };
    char path[32];

    TRY(mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755"), "mounting", "/dev");
    for (size_t i = 0; i < N_ELEMENTS(dev_nodes); i++) {
        if (nodes[i] < 0)
            continue;
        memcpy(path, "/dev/", 6);
        memcpy(path + 5, dev_nodes[i], strlen(dev_nodes[i]) + 1);
        TRY(move_tree(nodes[i], path), "binding a device node in", "/dev");
    }
    TRY(mkdir("/dev/shm", 0700), "making", "/dev/shm");
    TRY(chmod("/dev/shm", 01777), "making", "/dev/shm");
    TRY(mkdir("/dev/pts", 0755), "making", "/dev/pts");
    TRY(mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=620"),
        "mounting", "/dev/pts");
    for (size_t i = 0; i < N_ELEMENTS(links); i++)
        TRY(symlink(links[i][0], links[i][1]), "making", links[i][1]);
    return 0;
}

/* The loopback device up, so a server may still talk to itself with the network off. */
static int loopback_up(void)
{
    struct ifreq req = {.ifr_flags = IFF_UP | IFF_RUNNING};
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

    if (fd < 0)
        return -1;
    memcpy(req.ifr_name, "lo", 3);
    r = ioctl(fd, SIOCSIFFLAGS, &req);
    close(fd);
    return r;
}

/*
 * No capability left, none to gain by exec (also as uid 0: its bounding and inheritable sets
 * are empty), no privilege from set-user-ID files: nothing can undo the mounts.
 */
static int drop_privileges(void)
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {{0}};

    /* Up to the first number the kernel does not know (EINVAL): its CAP_LAST_CAP. */
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break;
            return -1;
        }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ||
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return (int)syscall(SYS_capset, &hdr, none);
}

/* Detached copies of what each mount binds, taken from the host's tree before it changes. */
static int take_trees(const SandboxPlan *p, int *trees, int *nodes, const char *what[2])
{
    for (size_t i = 0; i < p->n_mounts; i++) {
        const SandboxMount *m = &p->mounts[i];
        const char *src = m->kind == SANDBOX_MOUNT_DENY_DIR    ? p->pdir
                          : m->kind == SANDBOX_MOUNT_DENY_FILE ? p->pfile
                                                               : m->path;
        trees[i] = clone_tree(src, m->kind != SANDBOX_MOUNT_WRITE);
        /* Gone since the plan was made: like bubblewrap's --bind-try, nothing to cover. */
        if (trees[i] < 0 && errno != ENOENT)
            TRY(-1, "copying the mount of", src);
    }
    for (size_t i = 0; i < N_ELEMENTS(dev_nodes); i++) {
        char path[32];
        memcpy(path, "/dev/", 6);
        memcpy(path + 5, dev_nodes[i], strlen(dev_nodes[i]) + 1);
        nodes[i] = clone_tree(path, false);
    }
    return 0;
}

int sandbox_ns_contain(void *arg, const char *what[2])
{
    const SandboxNs *ns = arg;
    const SandboxPlan *p = ns->plan;
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
    int trees[SANDBOX_NS_MAX_MOUNTS], nodes[N_ELEMENTS(dev_nodes)], r;

    if (p->n_mounts > SANDBOX_NS_MAX_MOUNTS) {
        what[0] = "counting its mounts", what[1] = NULL;
        return -E2BIG;
    }
    TRY(write_text("/proc/self/setgroups", "deny"), "writing", "/proc/self/setgroups");
    TRY(write_text("/proc/self/uid_map", ns->uid_map), "writing", "/proc/self/uid_map");
    TRY(write_text("/proc/self/gid_map", ns->gid_map), "writing", "/proc/self/gid_map");
    /* Nothing of it goes back to the host, nothing of the host's later mounts comes in. */
    TRY(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "making private the mounts of", "/");
    if ((r = take_trees(p, trees, nodes, what)) < 0)
        return r;
    TRY(mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof(ro)), "making read-only", "/");
    if ((r = make_dev(nodes, what)) < 0)
        return r;
    TRY(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), "mounting",
        "/proc");
    TRY(mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=01777"), "mounting", "/tmp");
    for (size_t i = 0; i < p->n_mounts; i++)
        if (trees[i] >= 0)
            TRY(move_tree(trees[i], p->mounts[i].path), "mounting", p->mounts[i].path);
    if (!p->network)
        TRY(loopback_up(), "bringing up the loopback device", NULL);
    TRY(drop_privileges(), "dropping its capabilities", NULL);
    return 0;
}
