// SPDX-License-Identifier: MIT
// fd: file descriptor flags and whole writes to a blocking descriptor.
#pragma once

#include <stddef.h>

/** Set O_NONBLOCK on fd; return 0 or -errno. */
int fd_set_nonblock(int fd);
/** Set FD_CLOEXEC on fd; return 0 or -errno. */
int fd_set_cloexec(int fd);
/** Write all of buf to a blocking fd; return 0 or -errno. */
int fd_write_all(int fd, const void *buf, size_t n);
