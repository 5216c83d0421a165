// SPDX-License-Identifier: MIT
// durable: replace a file so that a crash leaves the old version or the new one, never a mix.

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "common/durable.h"
#include "common/util.h"

static int fail(char **whyp, int r, const char *what, const char *path)
{
    if (whyp)
        *whyp = xasprintf("cannot %s %s: %s", what, path, strerror(-r));
    return r;
}

int durable_write(const char *dir, const char *path, const void *data, size_t len, char **whyp)
{
    return durable_write_mode(dir, path, data, len, 0600, whyp);
}

int durable_write_mode(const char *dir, const char *path, const void *data, size_t len, mode_t mode,
                       char **whyp)
{
    _cleanup_free_ char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
    _cleanup_close_ int dfd = -1;
    int fd, r;

    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* A temp file left by a crash of this very pid number: it is ours to replace. */
        unlink(tmp);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    if (fd < 0)
        return fail(whyp, -errno, "create", tmp);
    if ((mode & 07777) != 0600 && fchmod(fd, mode & 07777) < 0) {
        r = -errno;
        close(fd);
        unlink(tmp);
        return fail(whyp, r, "chmod", tmp);
    }
    if ((r = fd_write_all(fd, data, len)) < 0 || (fsync(fd) < 0 && (r = -errno))) {
        close(fd);
        unlink(tmp);
        return fail(whyp, r, "write", tmp);
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        r = -errno;
        unlink(tmp);
        return fail(whyp, r, "rename", tmp);
    }
    /* The rename is durable only once the directory is. */
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0)
        (void)fsync(dfd);
    return 0;
}

int durable_remove(const char *dir, const char *path, char **whyp)
{
    _cleanup_close_ int dfd = -1;

    if (unlink(path) < 0)
        return fail(whyp, -errno, "remove", path);
    /* The removal is durable only once the directory is: a crash must not bring it back. */
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0 && fsync(dfd) < 0)
        return fail(whyp, -errno, "fsync the directory of", path);
    return 0;
}
