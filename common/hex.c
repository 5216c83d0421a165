// SPDX-License-Identifier: MIT
// hex: bytes written as hexadecimal digits, and a digit's value read back.

#include "common/hex.h"

void hex_encode(char *out, const void *bytes, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = bytes;

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 0xf];
    }
    out[2 * n] = '\0';
}
