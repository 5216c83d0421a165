// SPDX-License-Identifier: MIT
// mem: byte strings compared in a time that tells nothing of where they differ (for secrets).

#include "common/mem.h"

bool mem_equal_consttime(const void *a, const void *b, size_t n)
{
    const volatile unsigned char *x = a, *y = b;
    unsigned char d = 0;

    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}
