// SPDX-License-Identifier: MIT
// sandbox-plan: what one contained server's sandbox holds (its mounts in order, the network),
// built once from its policy and carried out by bubblewrap or by mcpd's own namespaces.

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/upstream/sandbox-plan.h"

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

static void plan_add(SandboxPlan *p, SandboxMountKind kind, const char *path)
{
    p->mounts = xrealloc(p->mounts, (p->n_mounts + 1) * sizeof(*p->mounts));
    p->mounts[p->n_mounts++] = (SandboxMount){kind, xstrdup(path)};
}

void sandbox_plan_deinit(SandboxPlan *p)
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

int sandbox_plan_build(SandboxPlan *p, yajl_val policy, const char *cwd, char **notep, char **whyp)
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
