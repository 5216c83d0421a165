// SPDX-License-Identifier: MIT
// random: bytes from the kernel's CSPRNG, for tokens and secrets.
#pragma once

#include <stddef.h>

/** Fill buf with n bytes from the kernel CSPRNG; return 0 or -errno. */
int random_bytes(void *buf, size_t n);
