// SPDX-License-Identifier: MIT
// sandbox: a stdio server started contained as its policy says (reads allowed but the secrets'
// places, writes only where allowed, a private /tmp, the network off or on): the plan, and its
// start in mcpd's own namespaces or, where the kernel refuses those, under bubblewrap.

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/sandbox-ns.h"
#include "daemon/upstream/sandbox-plan.h"
#include "daemon/upstream/sandbox.h"

/*
 * What every policy denies reading (and so writing), under $HOME: keys, keyrings, password
 * stores, cloud and cluster credentials, the agents' own tokens, browsers' profiles (cookies).
 * Only those that exist are covered (a mount needs its target). docs/sandbox.md lists them.
 */
static const char *const denied_in_home[] = {
    ".ssh",
    ".gnupg",
    ".local/share/keyrings",
    ".local/share/kwalletd",
    ".password-store",
    ".pki",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".config/hub",
    ".config/rclone",
    ".vault-token",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".config/github-copilot",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
};

/*
 * Where the tools that start servers keep their caches and downloads (npx, uvx and the Pythons
 * it installs, pip, node-gyp): writable in every profile, or `npx -y` and `uvx` could not run,
 * and made when missing. Under ~/.cache, mcpd's own cache stays denied (below).
 */
static const char *const tool_caches[] = {".npm", ".cache", ".local/share/uv"};

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

static void argv_free(char **argv)
{
    for (char **p = argv; p && *p; p++)
        free(*p);
    free(argv);
}

static void plan_add(SandboxPlan *p, SandboxMountKind kind, const char *path)
{
    p->mounts = xrealloc(p->mounts, (p->n_mounts + 1) * sizeof(*p->mounts));
    p->mounts[p->n_mounts++] = (SandboxMount){kind, xstrdup(path)};
}

static void plan_deinit(SandboxPlan *p)
{
    for (size_t i = 0; i < p->n_mounts; i++)
        free(p->mounts[i].path);
    free(p->mounts);
    free(p->pdir);
    free(p->pfile);
    *p = (SandboxPlan){0};
}

/*
 * The two things a denied path is covered with: an empty directory and an empty file, both mode
 * 000, in mcpd's runtime directory (private to the user). The server has no capabilities in its
 * sandbox (--cap-drop ALL), so opening either is EACCES: "Permission denied" names the path in
 * the server's own error, where an empty tmpfs would only say it is not there.
 */
static int ensure_placeholders(char **dirp, char **filep, char **whyp)
{
    _cleanup_free_ char *rt = paths_runtime_dir();
    _cleanup_free_ char *dir = paths_join(rt, "sandbox-denied");
    _cleanup_free_ char *file = paths_join(rt, "sandbox-denied-file");
    struct stat st;
    int fd;

    if (paths_mkdir_p(rt, 0700) < 0 || (mkdir(dir, 0) < 0 && errno != EEXIST) || chmod(dir, 0) < 0)
        goto fail;
    /* Made once; opened again it would refuse a user who is not root (mode 000). */
    fd = open(file, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd >= 0)
        close(fd);
    else if (errno != EEXIST || lstat(file, &st) < 0)
        goto fail;
    else if (!S_ISREG(st.st_mode) || (st.st_mode & 07777) != 0) {
        errno = EEXIST;
        goto fail;
    }
    *dirp = dir;
    *filep = file;
    dir = file = NULL;
    return 0;
fail:;
    int r = -errno;
    *whyp = xasprintf("cannot make the sandbox's placeholders in %s: %s", rt, strerror(errno));
    return r;
}

/* Cover path (if it exists) with the placeholder of its kind. */
static void deny(SandboxPlan *p, const char *path)
{
    struct stat st;

    if (stat(path, &st) < 0)
        return;
    plan_add(p, S_ISDIR(st.st_mode) ? SANDBOX_MOUNT_DENY_DIR : SANDBOX_MOUNT_DENY_FILE, path);
}

static char *xdg_dir(const char *var, const char *home, const char *dflt)
{
    const char *v = getenv(var);

    return v && v[0] == '/' ? xstrdup(v) : paths_join(home, dflt);
}

/* Every policy's denials: the secrets under $HOME, mcpd's own files, the user's runtime dir. */
static void deny_defaults(SandboxPlan *p, const char *home)
{
    const char *xdg[][3] = {
        {"XDG_CONFIG_HOME", ".config", "mcpd"},
        {"XDG_STATE_HOME", ".local/state", "mcpd"},
        {"XDG_CACHE_HOME", ".cache", "mcpd"},
    };
    const char *run = getenv("XDG_RUNTIME_DIR");

    for (size_t i = 0; i < N_ELEMENTS(denied_in_home); i++) {
        _cleanup_free_ char *path = paths_join(home, denied_in_home[i]);
        deny(p, path);
    }
    for (size_t i = 0; i < N_ELEMENTS(xdg); i++) {
        _cleanup_free_ char *base = xdg_dir(xdg[i][0], home, xdg[i][1]);
        _cleanup_free_ char *path = paths_join(base, xdg[i][2]);
        deny(p, path);
    }
    /*
     * The session's sockets (D-Bus and through it the Secret Service, the keyring's control
     * socket, ssh-agent, mcpd's own socket): the whole runtime directory, or mcpd's own when
     * there is none.
     */
    if (run && run[0] == '/')
        deny(p, run);
    else {
        _cleanup_free_ char *rt = paths_runtime_dir();
        deny(p, rt);
    }
}

/* A policy's list: bound (allowWrite), bound read-only (denyWrite) or covered (denyRead). */
static void add_list(SandboxPlan *p, yajl_val policy, const char *field, int kind)
{
    yajl_val list = json_get_array(policy, field);

    for (size_t i = 0; i < json_array_len(list); i++) {
        const char *path = json_array_at(list, i)->u.string;
        struct stat st;
        if (kind < 0)
            deny(p, path);
        else if (stat(path, &st) == 0) /* like bubblewrap's --bind-try */
            plan_add(p, kind, path);
    }
}

/* The working directory: visible always (also under the private /tmp), writable with projectWrite.
 */
static void add_cwd(SandboxPlan *p, const char *cwd, const char *home, bool write, char **notep)
{
    if (!cwd)
        return;
    if (write && (streq(cwd, "/") || streq(cwd, home))) {
        *notep = xasprintf("\"projectWrite\" leaves %s read-only: it is %s, not a project (give "
                           "the server a \"cwd\", or name the directory in \"allowWrite\")",
                           cwd, streq(cwd, "/") ? "the root" : "the home directory");
        write = false;
    }
    if (!streq(cwd, "/"))
        plan_add(p, write ? SANDBOX_MOUNT_WRITE : SANDBOX_MOUNT_READ, cwd);
}

/*
 * The plan of policy's sandbox for a server starting in cwd: the tool caches (made when
 * missing), the working directory, the policy's lists, then every policy's denials (last, so
 * they win over an allowance that contains them).
 */
static int plan_build(SandboxPlan *p, yajl_val policy, const char *cwd, char **notep, char **whyp)
{
    _cleanup_free_ char *home = paths_home();
    int r;

    *p = (SandboxPlan){.cwd = cwd, .network = YAJL_IS_TRUE(json_get(policy, "network"))};
    if ((r = ensure_placeholders(&p->pdir, &p->pfile, whyp)) < 0)
        return r;
    for (size_t i = 0; i < N_ELEMENTS(tool_caches); i++) {
        _cleanup_free_ char *path = paths_join(home, tool_caches[i]);
        /* Made when missing: in the sandbox the home directory is read-only. */
        (void)paths_mkdir_p(path, 0700);
        plan_add(p, SANDBOX_MOUNT_WRITE, path);
    }
    add_cwd(p, cwd, home, YAJL_IS_TRUE(json_get(policy, "projectWrite")), notep);
    add_list(p, policy, "allowWrite", SANDBOX_MOUNT_WRITE);
    add_list(p, policy, "denyWrite", SANDBOX_MOUNT_READ);
    add_list(p, policy, "denyRead", -1);
    deny_defaults(p, home);
    return 0;
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

/* The plan as bubblewrap's arguments, around spec's command (to free with argv_free). */
static int bwrap_argv(char ***argvp, const SandboxPlan *p, const ChildSpec *spec, char **whyp)
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

/*
 * Set when mcpd's own namespaces were refused (or MCPD_SANDBOX asks for bubblewrap): every later
 * sandbox is bubblewrap's, and the reason was logged once. The loop's thread only.
 */
static bool ns_refused;

/* The namespaces' try: 0 started, CHILD_E_CONTAIN refused (then bubblewrap's), or -errno. */
static int spawn_ns(Child **cp, const ChildSpec *spec, const SandboxPlan *plan, ChildExitFn on_exit,
                    void *userdata, char **whyp)
{
    const char *want = getenv("MCPD_SANDBOX");
    _cleanup_free_ char *why = NULL;
    SandboxNs ns;
    ChildContain contain = {.fn = sandbox_ns_contain, .arg = &ns};
    int r;

    if (!ns_refused && want && streq(want, "bubblewrap")) {
        ns_refused = true;
        log_info("MCPD_SANDBOX=bubblewrap: contained servers start under bubblewrap");
    }
    if (ns_refused)
        return CHILD_E_CONTAIN;
    sandbox_ns_init(&ns, plan);
    contain.clone_flags = sandbox_ns_clone_flags(plan);
    r = child_spawn_contained(cp, spec, &contain, on_exit, userdata, &why);
    if (r == CHILD_E_CONTAIN) {
        ns_refused = true;
        log_warning("the kernel refused mcpd's own sandbox (%s): contained servers start under "
                    "bubblewrap instead (docs/sandbox.md)",
                    why);
    } else if (r < 0) {
        *whyp = why;
        why = NULL;
    }
    return r;
}

int sandbox_spawn(Child **cp, const ChildSpec *spec, yajl_val policy, const char *server,
                  ChildExitFn on_exit, void *userdata, const char **howp, char **whyp)
{
    _cleanup_json_ yajl_val env = spec->env ? json_copy(spec->env) : json_object_new();
    _cleanup_free_ char *note = NULL, *why = NULL;
    char **argv = NULL;
    SandboxPlan plan;
    ChildSpec s = *spec;
    int r;

    /* Its /tmp is its own, whatever the daemon's TMPDIR names. */
    json_object_set(env, "TMPDIR", json_string_new("/tmp"));
    s.env = env;
    r = plan_build(&plan, policy, spec->cwd, &note, &why);
    if (note)
        log_full(LOG_WARNING, server, "sandbox", "%s", note);
    if (r == 0 && (r = spawn_ns(cp, &s, &plan, on_exit, userdata, &why)) <= 0) {
        /*
         * Contained, or the command itself could not run (not found, not executable): that
         * failure reads as an unconfined server's would.
         */
        *howp = SANDBOX_HOW_NS;
        if (r < 0) {
            *whyp = why;
            why = NULL;
        }
        plan_deinit(&plan);
        return r;
    }
    if (r == CHILD_E_CONTAIN && (r = bwrap_argv(&argv, &plan, spec, &why)) == 0) {
        s.file = argv[0];
        s.argv = argv;
        if ((r = child_spawn(cp, &s, on_exit, userdata, &why)) == 0)
            *howp = SANDBOX_HOW_BWRAP;
    }
    argv_free(argv);
    plan_deinit(&plan);
    if (r < 0)
        *whyp = sandbox_spawn_error(server, why);
    return r < 0 ? r : 0;
}

char *sandbox_spawn_error(const char *server, const char *why)
{
    return xasprintf("%s: server \"%s\" asks for a sandbox, which mcpd cannot set up, and mcpd "
                     "does not run it unconfined instead (where the kernel refuses mcpd's own "
                     "sandbox, it is bubblewrap's: Debian's package bubblewrap)",
                     why, server);
}

char *sandbox_exit_hint(const char *server, yajl_val policy, const char *how)
{
    _cleanup_free_ char *what = sandbox_describe(policy, how);

    return xasprintf("it ran in a sandbox, %s: what the sandbox refused shows in `mcpctl logs %s` "
                     "as \"Permission denied\" (a denied path), \"Read-only file system\" (a write "
                     "outside the allowed paths) or a failed connection (the network is off); "
                     "a line starting \"bwrap:\" is bubblewrap failing to set the sandbox up (for "
                     "example no user namespaces for unprivileged users on this system); "
                     "docs/sandbox.md",
                     what, server);
}

char *sandbox_describe(yajl_val policy, const char *how)
{
    const char *profile = json_get_string(policy, "profile");
    bool network = YAJL_IS_TRUE(json_get(policy, "network"));

    return xasprintf("\"%s\" (%s; network %s)", profile ? profile : "?", how,
                     network ? "on" : "off");
}
