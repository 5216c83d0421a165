// SPDX-License-Identifier: MIT
// paths: XDG base directories, the socket path, and private-directory checks.

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>

#include "common/paths.h"
#include "common/util.h"

static const char *env_abs(const char *name)
{
    const char *v = getenv(name);
    /* The XDG spec says relative values are invalid and must be ignored. */
    return v && v[0] == '/' ? v : NULL;
}

char *paths_home(void)
{
    const char *h = env_abs("HOME");
    struct passwd *pw;

    if (h)
        return xstrdup(h);
    pw = getpwuid(getuid());
    return xstrdup(pw && pw->pw_dir ? pw->pw_dir : "/");
}

char *paths_join(const char *a, const char *b)
{
    size_t n = strlen(a);

    /* Down to nothing for "/", so the root joins as "/b", not "//b". */
    while (n > 0 && a[n - 1] == '/')
        n--;
    while (*b == '/')
        b++;
    return xasprintf("%.*s/%s", (int)n, a, b);
}

char *paths_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

static char *xdg_dir(const char *var, const char *fallback)
{
    const char *v = env_abs(var);
    _cleanup_free_ char *home = NULL;

    if (v)
        return xstrdup(v);
    home = paths_home();
    return paths_join(home, fallback);
}

char *paths_config_home(void)
{
    return xdg_dir("XDG_CONFIG_HOME", ".config");
}

char *paths_cache_home(void)
{
    return xdg_dir("XDG_CACHE_HOME", ".cache");
}

char *paths_runtime_dir(void)
{
    const char *v = env_abs("XDG_RUNTIME_DIR");

    if (v)
        return paths_join(v, "mcpd");
    return xasprintf("/tmp/mcpd-%u", (unsigned)getuid());
}

char *paths_socket(void)
{
    const char *v = getenv("MCPD_SOCKET");
    _cleanup_free_ char *dir = NULL;

    if (v && *v)
        return xstrdup(v);
    dir = paths_runtime_dir();
    return paths_join(dir, "mcpd.sock");
}

int paths_mkdir_p(const char *dir, mode_t mode)
{
    _cleanup_free_ char *p = xstrdup(dir);

    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, mode) < 0 && errno != EEXIST)
            return -errno;
        *s = '/';
    }
    if (mkdir(p, mode) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

int paths_ensure_private_dir(const char *dir, uid_t uid, int strict, char **whyp)
{
    struct stat st;
    int r;

    r = paths_mkdir_p(dir, 0700);
    if (r < 0) {
        if (whyp)
            *whyp = xasprintf("cannot create %s: %s", dir, strerror(-r));
        return r;
    }
    if (lstat(dir, &st) < 0) {
        r = -errno;
        if (whyp)
            *whyp = xasprintf("cannot stat %s: %s", dir, strerror(-r));
        return r;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (whyp)
            *whyp = xasprintf("%s is not a directory", dir);
        return -ENOTDIR;
    }
    if (st.st_uid != uid) {
        if (whyp)
            *whyp = xasprintf("%s is owned by uid %u, not by uid %u; remove it or fix its owner",
                              dir, (unsigned)st.st_uid, (unsigned)uid);
        return -EPERM;
    }
    if ((st.st_mode & (strict ? 0077 : 0022)) != 0) {
        if (whyp)
            *whyp =
                xasprintf("%s has mode %04o; it must not be %s by others (chmod 0700 %s)", dir,
                          (unsigned)(st.st_mode & 07777), strict ? "accessible" : "writable", dir);
        return -EPERM;
    }
    return 0;
}
