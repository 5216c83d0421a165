// SPDX-License-Identifier: MIT
// test-paths: unit tests for XDG directories, the socket path and private-directory checks.

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/paths.h"
#include "common/util.h"
#include "tests/unit/test.h"

/* Compare a newly allocated result with want, then free it. */
#define CHECK_PATH(expr, want)                                                                     \
    do {                                                                                           \
        char *got_ = (expr);                                                                       \
        CHECK_STREQ(got_, want);                                                                   \
        free(got_);                                                                                \
    } while (0)

static void clear_env(void)
{
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("XDG_RUNTIME_DIR");
    unsetenv("MCPD_SOCKET");
    setenv("HOME", "/home/tester", 1);
}

static void test_home(void)
{
    struct passwd *pw = getpwuid(getuid());
    const char *pw_home = pw && pw->pw_dir ? pw->pw_dir : "/";

    clear_env();
    CHECK_PATH(paths_home(), "/home/tester");
    /* A relative or empty $HOME is not trusted; the passwd entry is used. */
    setenv("HOME", "relative/home", 1);
    CHECK_PATH(paths_home(), pw_home);
    setenv("HOME", "", 1);
    CHECK_PATH(paths_home(), pw_home);
    unsetenv("HOME");
    CHECK_PATH(paths_home(), pw_home);
    clear_env();
}

static void test_xdg_config_cache(void)
{
    clear_env();
    CHECK_PATH(paths_config_home(), "/home/tester/.config");
    CHECK_PATH(paths_cache_home(), "/home/tester/.cache");

    setenv("XDG_CONFIG_HOME", "/xdg/conf", 1);
    setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
    CHECK_PATH(paths_config_home(), "/xdg/conf");
    CHECK_PATH(paths_cache_home(), "/xdg/cache");

    /* The XDG spec: relative values are invalid and must be ignored. */
    setenv("XDG_CONFIG_HOME", "xdg/conf", 1);
    setenv("XDG_CACHE_HOME", "./cache", 1);
    CHECK_PATH(paths_config_home(), "/home/tester/.config");
    CHECK_PATH(paths_cache_home(), "/home/tester/.cache");
    setenv("XDG_CONFIG_HOME", "", 1);
    CHECK_PATH(paths_config_home(), "/home/tester/.config");

    /* A trailing slash on $HOME does not double the separator. */
    clear_env();
    setenv("HOME", "/home/tester/", 1);
    CHECK_PATH(paths_config_home(), "/home/tester/.config");
    clear_env();
}

/* The login manager's directory counts only as a real, private directory of our own. */
static void test_user_runtime_ok(void)
{
    char tmpl[] = "/tmp/test-paths-run.XXXXXX";
    char *dir = mkdtemp(tmpl);
    _cleanup_free_ char *link = NULL, *file = NULL;

    CHECK(dir);
    if (!dir)
        return;
    CHECK(chmod(dir, 0700) == 0);
    CHECK(paths_user_runtime_ok(dir, getuid()));
    CHECK(!paths_user_runtime_ok(dir, getuid() + 1)); /* another user's */
    CHECK(chmod(dir, 0710) == 0);
    CHECK(!paths_user_runtime_ok(dir, getuid())); /* open to the group */
    CHECK(chmod(dir, 0755) == 0);
    CHECK(!paths_user_runtime_ok(dir, getuid()));
    CHECK(chmod(dir, 0700) == 0);
    link = xasprintf("%s.link", dir);
    CHECK(symlink(dir, link) == 0);
    CHECK(!paths_user_runtime_ok(link, getuid())); /* a link could point anywhere */
    file = paths_join(dir, "file");
    FILE *f = fopen(file, "w");
    CHECK(f);
    fclose(f);
    chmod(file, 0600);
    CHECK(!paths_user_runtime_ok(file, getuid()));
    CHECK(!paths_user_runtime_ok("/nonexistent/run/user/1", getuid()));
    unlink(file);
    unlink(link);
    rmdir(dir);
}

static void test_runtime_and_socket(void)
{
    _cleanup_free_ char *run = xasprintf(PATHS_USER_RUNTIME_FMT, (unsigned)getuid());
    /* Without XDG_RUNTIME_DIR: the login manager's directory when it is there, else /tmp. */
    _cleanup_free_ char *fallback = paths_user_runtime_ok(run, getuid())
                                        ? paths_join(run, "mcpd")
                                        : xasprintf("/tmp/mcpd-%u", (unsigned)getuid());
    _cleanup_free_ char *fallback_sock = xasprintf("%s/mcpd.sock", fallback);

    clear_env();
    CHECK_PATH(paths_runtime_dir(), fallback);
    CHECK_PATH(paths_socket(), fallback_sock);

    setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
    CHECK_PATH(paths_runtime_dir(), "/run/user/4242/mcpd");
    CHECK_PATH(paths_socket(), "/run/user/4242/mcpd/mcpd.sock");
    setenv("XDG_RUNTIME_DIR", "/run/user/4242/", 1);
    CHECK_PATH(paths_runtime_dir(), "/run/user/4242/mcpd");

    setenv("XDG_RUNTIME_DIR", "run/user/4242", 1);
    CHECK_PATH(paths_runtime_dir(), fallback);
    CHECK_PATH(paths_socket(), fallback_sock);

    /* MCPD_SOCKET wins over everything; an empty one is ignored. */
    setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
    setenv("MCPD_SOCKET", "/srv/other/my.sock", 1);
    CHECK_PATH(paths_socket(), "/srv/other/my.sock");
    CHECK_PATH(paths_runtime_dir(), "/run/user/4242/mcpd");
    setenv("MCPD_SOCKET", "", 1);
    CHECK_PATH(paths_socket(), "/run/user/4242/mcpd/mcpd.sock");
    clear_env();
}

static void test_join(void)
{
    CHECK_PATH(paths_join("a", "b"), "a/b");
    CHECK_PATH(paths_join("a/", "b"), "a/b");
    CHECK_PATH(paths_join("a//", "//b"), "a/b");
    CHECK_PATH(paths_join("/x/y", "mcpd/mcp.json"), "/x/y/mcpd/mcp.json");
    /* The root joins with one slash too (a project rooted at /). */
    CHECK_PATH(paths_join("/", "b"), "/b");
    CHECK_PATH(paths_join("//", ".mcpd/mcp.json"), "/.mcpd/mcp.json");
}

static void test_dirname(void)
{
    CHECK_PATH(paths_dirname("/a/b"), "/a");
    CHECK_PATH(paths_dirname("/run/user/1/mcpd/mcpd.sock"), "/run/user/1/mcpd");
    CHECK_PATH(paths_dirname("/a"), "/");
    CHECK_PATH(paths_dirname("/"), "/");
    CHECK_PATH(paths_dirname("a/b"), "a");
    CHECK_PATH(paths_dirname("file"), ".");
    CHECK_PATH(paths_dirname(""), ".");
}

static mode_t mode_of(const char *path)
{
    struct stat st;

    if (lstat(path, &st) < 0)
        return (mode_t)-1;
    return st.st_mode & 07777;
}

static void test_ensure_private_dir(void)
{
    _cleanup_free_ char *tmp = test_tmpdir();
    _cleanup_free_ char *dir = paths_join(tmp, "p/q/r");
    _cleanup_free_ char *parent = paths_join(tmp, "p");
    char *why = NULL;
    mode_t old = umask(0);

    /* Created with parents, all 0700 (even with a permissive umask). */
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 1, &why), 0);
    CHECK(why == NULL);
    CHECK_INTEQ(mode_of(dir), 0700);
    CHECK_INTEQ(mode_of(parent), 0700);
    /* Existing and private: fine again, strict or not. */
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 1, &why), 0);
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 0, &why), 0);
    CHECK(why == NULL);

    /* 0777 is refused either way, with a message naming the dir, the mode and the fix. */
    CHECK(chmod(dir, 0777) == 0);
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 1, &why), -EPERM);
    CHECK(why && strstr(why, dir) && strstr(why, "0777") && strstr(why, "chmod 0700"));
    free(why);
    why = NULL;
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 0, NULL), -EPERM);
    CHECK_INTEQ(mode_of(dir), 0777); /* checked, not silently changed */

    /* Group-writable is refused when not strict; group-readable only when strict. */
    CHECK(chmod(dir, 0770) == 0);
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 0, &why), -EPERM);
    CHECK(why && strstr(why, "0770"));
    free(why);
    why = NULL;
    CHECK(chmod(dir, 0702) == 0);
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 0, NULL), -EPERM);
    CHECK(chmod(dir, 0755) == 0);
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 0, &why), 0);
    CHECK(why == NULL);
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 1, &why), -EPERM);
    CHECK(why && strstr(why, "0755"));
    free(why);
    why = NULL;
    CHECK(chmod(dir, 0710) == 0);
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 1, NULL), -EPERM);
    CHECK(chmod(dir, 0700) == 0);
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid(), 1, NULL), 0);

    /* Owned by someone else. */
    CHECK_INTEQ(paths_ensure_private_dir(dir, getuid() + 1, 0, &why), -EPERM);
    CHECK(why && strstr(why, "owned by"));
    free(why);
    why = NULL;

    /* Not a directory: a file, or a symlink to a good directory. */
    _cleanup_free_ char *file = paths_join(tmp, "file");
    test_write_file(file, "x");
    CHECK_INTEQ(paths_ensure_private_dir(file, getuid(), 0, &why), -ENOTDIR);
    CHECK(why && strstr(why, "not a directory"));
    free(why);
    why = NULL;
    _cleanup_free_ char *link = paths_join(tmp, "link");
    CHECK(symlink(dir, link) == 0);
    CHECK_INTEQ(paths_ensure_private_dir(link, getuid(), 0, &why), -ENOTDIR);
    free(why);
    why = NULL;

    /* Cannot be created under a file. */
    _cleanup_free_ char *under = paths_join(file, "sub");
    CHECK(paths_ensure_private_dir(under, getuid(), 0, &why) < 0);
    CHECK(why && strstr(why, "cannot create"));
    free(why);

    umask(old);
    test_rm_rf(tmp);
}

static void test_mkdir_p(void)
{
    _cleanup_free_ char *tmp = test_tmpdir();
    _cleanup_free_ char *deep = paths_join(tmp, "a/b/c/d");
    _cleanup_free_ char *slash = xasprintf("%s/e/f/", tmp);
    struct stat st;

    CHECK_INTEQ(paths_mkdir_p(deep, 0700), 0);
    CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode));
    /* Existing is fine; a trailing slash is fine. */
    CHECK_INTEQ(paths_mkdir_p(deep, 0700), 0);
    CHECK_INTEQ(paths_mkdir_p(slash, 0700), 0);
    CHECK(stat(slash, &st) == 0 && S_ISDIR(st.st_mode));
    test_rm_rf(tmp);
}

/* Read path; return the errno-style result, the text in *textp and the reason in *whyp. */
static int read_regular(const char *path, bool follow, char **textp, char **whyp)
{
    *textp = *whyp = NULL;
    return paths_read_regular(path, follow, 64, NULL, textp, NULL, whyp);
}

static void test_read_regular(void)
{
    _cleanup_free_ char *tmp = test_tmpdir();
    _cleanup_free_ char *file = paths_join(tmp, "file.json");
    _cleanup_free_ char *link = paths_join(tmp, "link.json");
    _cleanup_free_ char *fifo = paths_join(tmp, "fifo.json");
    _cleanup_free_ char *dev = paths_join(tmp, "dev.json");
    _cleanup_free_ char *big = paths_join(tmp, "big.json");
    _cleanup_free_ char *missing = paths_join(tmp, "missing/x.json");
    char *text, *why;

    test_write_file(file, "{\"a\": 1}");
    CHECK(symlink(file, link) == 0 && mkfifo(fifo, 0600) == 0 && symlink("/dev/zero", dev) == 0);
    test_write_file(big, "0123456789012345678901234567890123456789012345678901234567890123456789");

    CHECK_INTEQ(read_regular(file, false, &text, &why), 0);
    CHECK_STREQ(text, "{\"a\": 1}");
    free(text);
    /* A link: followed when asked (a dotfile manager's), refused when not (a project's). */
    CHECK_INTEQ(read_regular(link, true, &text, &why), 0);
    CHECK_STREQ(text, "{\"a\": 1}");
    free(text);
    CHECK_INTEQ(read_regular(link, false, &text, &why), -ELOOP);
    CHECK(why && strstr(why, "symbolic link") && !text);
    free(why);
    /* A FIFO with no writer: refused at once, never waited on. */
    CHECK_INTEQ(read_regular(fifo, true, &text, &why), -EINVAL);
    CHECK(why && strstr(why, "FIFO") && strstr(why, "replace it"));
    free(why);
    /* A device behind a followed link, and a directory. */
    CHECK_INTEQ(read_regular(dev, true, &text, &why), -EINVAL);
    CHECK(why && strstr(why, "character device"));
    free(why);
    CHECK_INTEQ(read_regular(tmp, true, &text, &why), -EISDIR);
    CHECK(why && strstr(why, "directory"));
    free(why);
    CHECK_INTEQ(read_regular(big, true, &text, &why), -EFBIG);
    CHECK(why && strstr(why, "larger than 64"));
    free(why);
    /* Missing: quiet, for the caller to treat as "not configured". */
    CHECK_INTEQ(read_regular(missing, true, &text, &why), -ENOENT);
    CHECK(!why);
    test_rm_rf(tmp);
}

int main(void)
{
    RUN(test_home);
    RUN(test_xdg_config_cache);
    RUN(test_user_runtime_ok);
    RUN(test_runtime_and_socket);
    RUN(test_join);
    RUN(test_dirname);
    RUN(test_ensure_private_dir);
    RUN(test_mkdir_p);
    RUN(test_read_regular);
    return test_main_result();
}
