// SPDX-License-Identifier: MIT
// sandbox: a stdio server's command wrapped in bubblewrap as its policy says (reads allowed
// but the secrets' places, writes only where allowed, a private /tmp, the network off or on).

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

void sandbox_argv_free(char **argv)
{
    for (char **p = argv; p && *p; p++)
        free(*p);
    free(argv);
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
static void deny(Argv *a, const char *path, const char *pdir, const char *pfile)
{
    struct stat st;

    if (stat(path, &st) < 0)
        return;
    argv_add3(a, "--ro-bind", S_ISDIR(st.st_mode) ? pdir : pfile, path);
}

static char *xdg_dir(const char *var, const char *home, const char *dflt)
{
    const char *v = getenv(var);

    return v && v[0] == '/' ? xstrdup(v) : paths_join(home, dflt);
}

/* Every policy's denials: the secrets under $HOME, mcpd's own files, the user's runtime dir. */
static void deny_defaults(Argv *a, const char *home, const char *pdir, const char *pfile)
{
    const char *xdg[][3] = {
        {"XDG_CONFIG_HOME", ".config", "mcpd"},
        {"XDG_STATE_HOME", ".local/state", "mcpd"},
        {"XDG_CACHE_HOME", ".cache", "mcpd"},
    };
    const char *run = getenv("XDG_RUNTIME_DIR");

    for (size_t i = 0; i < N_ELEMENTS(denied_in_home); i++) {
        _cleanup_free_ char *p = paths_join(home, denied_in_home[i]);
        deny(a, p, pdir, pfile);
    }
    for (size_t i = 0; i < N_ELEMENTS(xdg); i++) {
        _cleanup_free_ char *base = xdg_dir(xdg[i][0], home, xdg[i][1]);
        _cleanup_free_ char *p = paths_join(base, xdg[i][2]);
        deny(a, p, pdir, pfile);
    }
    /*
     * The session's sockets (D-Bus and through it the Secret Service, the keyring's control
     * socket, ssh-agent, mcpd's own socket): the whole runtime directory, or mcpd's own when
     * there is none.
     */
    if (run && run[0] == '/')
        deny(a, run, pdir, pfile);
    else {
        _cleanup_free_ char *rt = paths_runtime_dir();
        deny(a, rt, pdir, pfile);
    }
}

static void add_list(Argv *a, yajl_val policy, const char *field, const char *opt, const char *pdir,
                     const char *pfile)
{
    yajl_val list = json_get_array(policy, field);

    for (size_t i = 0; i < json_array_len(list); i++) {
        const char *p = json_array_at(list, i)->u.string;
        if (pdir)
            deny(a, p, pdir, pfile);
        else
            argv_add3(a, opt, p, p);
    }
}

/* The working directory: visible always (/tmp is private), writable with projectWrite. */
static void add_cwd(Argv *a, const char *cwd, const char *home, bool write, char **notep)
{
    if (!cwd)
        return;
    if (write && (streq(cwd, "/") || streq(cwd, home))) {
        *notep = xasprintf("\"projectWrite\" leaves %s read-only: it is %s, not a project (give "
                           "the server a \"cwd\", or name the directory in \"allowWrite\")",
                           cwd, streq(cwd, "/") ? "the root" : "the home directory");
        write = false;
    }
    argv_add3(a, write ? "--bind-try" : "--ro-bind-try", cwd, cwd);
    argv_add3(a, "--chdir", cwd, NULL);
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

int sandbox_wrap(ChildSpec *spec, yajl_val policy, char ***argvp, char **notep, char **whyp)
{
    _cleanup_free_ char *pdir = NULL, *pfile = NULL, *home = paths_home(), *bwrap = NULL;
    Argv a = {0};
    bool network = YAJL_IS_TRUE(json_get(policy, "network"));
    int r;

    *notep = NULL;
    if (find_bwrap(&bwrap) < 0) {
        *whyp = xasprintf("cannot find \"%s\" in mcpd's PATH", SANDBOX_BWRAP);
        return -ENOENT;
    }
    if ((r = ensure_placeholders(&pdir, &pfile, whyp)) < 0)
        return r;
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
    if (!network)
        argv_add(&a, "--unshare-net");
    argv_add3(&a, "--cap-drop", "ALL", NULL);
    /* Everything readable and nothing writable; a device set and /proc of its own. */
    argv_add3(&a, "--ro-bind", "/", "/");
    argv_add3(&a, "--dev", "/dev", NULL);
    argv_add3(&a, "--proc", "/proc", NULL);
    argv_add3(&a, "--tmpfs", "/tmp", NULL);
    argv_add3(&a, "--setenv", "TMPDIR", "/tmp");
    for (size_t i = 0; i < N_ELEMENTS(tool_caches); i++) {
        _cleanup_free_ char *p = paths_join(home, tool_caches[i]);
        /* Made when missing: in the sandbox the home directory is read-only. */
        (void)paths_mkdir_p(p, 0700);
        argv_add3(&a, "--bind-try", p, p);
    }
    add_cwd(&a, spec->cwd, home, YAJL_IS_TRUE(json_get(policy, "projectWrite")), notep);
    add_list(&a, policy, "allowWrite", "--bind-try", NULL, NULL);
    /* Denials last: a later mount covers an earlier one, so they win over every allowance. */
    add_list(&a, policy, "denyWrite", "--ro-bind-try", NULL, NULL);
    add_list(&a, policy, "denyRead", NULL, pdir, pfile);
    deny_defaults(&a, home, pdir, pfile);
    argv_add(&a, "--");
    argv_add(&a, spec->file);
    for (size_t i = 1; spec->argv[i]; i++)
        argv_add(&a, spec->argv[i]);
    spec->file = a.v[0];
    spec->argv = a.v;
    *argvp = a.v;
    return 0;
}

char *sandbox_spawn_error(const char *server, const char *why)
{
    return xasprintf("%s: server \"%s\" asks for a sandbox, which mcpd cannot set up, and mcpd "
                     "does not run it unconfined instead (the sandbox is bubblewrap's: Debian's "
                     "package bubblewrap)",
                     why, server);
}

char *sandbox_exit_hint(const char *server, yajl_val policy)
{
    _cleanup_free_ char *what = sandbox_describe(policy);

    return xasprintf("it ran in a sandbox, %s: what the sandbox refused shows in `mcpctl logs %s` "
                     "as \"Permission denied\" (a denied path), \"Read-only file system\" (a write "
                     "outside the allowed paths) or a failed connection (the network is off); "
                     "a line starting \"bwrap:\" is the sandbox failing to start (for example no "
                     "user namespaces for unprivileged users on this system); docs/sandbox.md",
                     what, server);
}

char *sandbox_describe(yajl_val policy)
{
    const char *profile = json_get_string(policy, "profile");
    bool network = YAJL_IS_TRUE(json_get(policy, "network"));

    return xasprintf("\"%s\" (bubblewrap; network %s)", profile ? profile : "?",
                     network ? "on" : "off");
}
