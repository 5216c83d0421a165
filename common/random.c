// SPDX-License-Identifier: MIT
// random: bytes from the kernel's CSPRNG, for tokens and secrets.

#include <errno.h>
#include <sys/random.h>
#include <sys/types.h>

#include "common/random.h"

int random_bytes(void *buf, size_t n)
{
    char *p = buf;

    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}
