// SPDX-License-Identifier: MIT
// fd: file descriptor flags and whole writes to a blocking descriptor.

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/fd.h"

int fd_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

int fd_set_cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFD);

    if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
        return -errno;
    return 0;
}

int fd_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;

    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}
