// SPDX-License-Identifier: MIT
// paths: XDG base directories, the socket path, and private-directory checks.

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>

#include "common/paths.h"
#include "common/strbuf.h"
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
    /* getpwuid_r, not getpwuid: discovery runs on a thread of its own. An entry's text (the
     * buffer) fits in 16 KiB on every system seen; one that does not falls back to "/". */
    char buf[16384];
    struct passwd pwd, *pw = NULL;

    if (h)
        return xstrdup(h);
    if (getpwuid_r(getuid(), &pwd, buf, sizeof(buf), &pw) != 0)
        pw = NULL;
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

bool paths_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
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

char *paths_state_home(void)
{
    return xdg_dir("XDG_STATE_HOME", ".local/state");
}

bool paths_user_runtime_ok(const char *dir, uid_t uid)
{
    struct stat st;

    /* lstat: a link there could point anywhere; only the login manager's own directory counts. */
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid &&
           (st.st_mode & 0077) == 0;
}

char *paths_runtime_dir(void)
{
    const char *v = env_abs("XDG_RUNTIME_DIR");
    _cleanup_free_ char *run = NULL;

    if (v)
        return paths_join(v, "mcpd");
    /*
     * Hosts that start MCP servers with a short environment (Codex keeps HOME, PATH, SHELL,
     * TERM, LANG, ...) drop XDG_RUNTIME_DIR, yet the login manager's directory is still there:
     * the bridge must find the socket that mcpd (or mcpd.socket's %t) made there.
     */
    run = xasprintf(PATHS_USER_RUNTIME_FMT, (unsigned)getuid());
    if (paths_user_runtime_ok(run, getuid()))
        return paths_join(run, "mcpd");
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

const char *paths_type_name(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG:
        return "a regular file";
    case S_IFDIR:
        return "a directory";
    case S_IFIFO:
        return "a FIFO (named pipe)";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    case S_IFSOCK:
        return "a socket";
    case S_IFLNK:
        return "a symbolic link";
    default:
        return "not a regular file";
    }
}

static int refuse_type(const char *path, mode_t mode, char **whyp)
{
    if (S_ISLNK(mode)) {
        *whyp = xstrdup("not read: it is a symbolic link, and links are not followed for "
                        "this file (it could be made to point at any file of yours); replace "
                        "the link with a copy of its target");
        return -ELOOP;
    }
    struct stat lst;
    bool linked = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);

    *whyp = xasprintf("not read: it is %s%s, not a regular file; replace it with a regular "
                      "file or remove it",
                      linked ? "a symbolic link to " : "", paths_type_name(mode));
    return S_ISDIR(mode) ? -EISDIR : -EINVAL;
}

static int read_bounded(int fd, size_t max, StrBuf *sb, char **whyp)
{
    for (;;) {
        strbuf_reserve(sb, 8192);
        ssize_t n = read(fd, sb->data + sb->len, sb->cap - sb->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int r = -errno;
            *whyp = xasprintf("cannot read: %s", strerror(-r));
            return r;
        }
        if (n == 0)
            return 0;
        sb->len += (size_t)n;
        sb->data[sb->len] = '\0';
        if (sb->len > max) {
            /* It grew after the fstat: a file being written, or one that lies about its size. */
            *whyp = xasprintf("not read: larger than %zu bytes, too large for a config file", max);
            return -EFBIG;
        }
    }
}

int paths_read_regular(const char *path, bool follow, size_t max, struct stat *stp, char **textp,
                       size_t *lenp, char **whyp)
{
    _cleanup_close_ int fd = -1;
    StrBuf sb = STRBUF_INIT;
    struct stat st;
    int r;

    /*
     * Look before opening: opening a device can act on it (a tape rewinds, a serial line hangs
     * up), and opening a FIFO for reading waits for a writer. stat never blocks on either.
     */
    if ((follow ? stat(path, &st) : lstat(path, &st)) < 0) {
        r = -errno;
        if (r != -ENOENT && r != -ENOTDIR)
            *whyp = xasprintf("cannot open: %s", strerror(-r));
        return r;
    }
    if (!S_ISREG(st.st_mode))
        return refuse_type(path, st.st_mode, whyp);
    /* O_NONBLOCK and the second look (fstat) cover a swap between the stat and the open. */
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));
    if (fd < 0) {
        r = -errno;
        if (r == -ELOOP && !follow)
            return refuse_type(path, S_IFLNK, whyp);
        if (r != -ENOENT && r != -ENOTDIR)
            *whyp = xasprintf("cannot open: %s", strerror(-r));
        return r;
    }
    if (fstat(fd, &st) < 0) {
        r = -errno;
        *whyp = xasprintf("cannot stat: %s", strerror(-r));
        return r;
    }
    if (!S_ISREG(st.st_mode))
        return refuse_type(path, st.st_mode, whyp);
    if ((uint64_t)st.st_size > max) {
        *whyp = xasprintf("not read: %lld bytes, larger than %zu, too large for a config file",
                          (long long)st.st_size, max);
        return -EFBIG;
    }
    r = read_bounded(fd, max, &sb, whyp);
    if (r < 0) {
        if (sb.data)
            explicit_bzero(sb.data, sb.cap); /* the credential store holds tokens */
        strbuf_deinit(&sb);
        return r;
    }
    if (stp)
        *stp = st;
    *textp = strbuf_detach(&sb, lenp);
    return 0;
}
