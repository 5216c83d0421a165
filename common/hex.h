// SPDX-License-Identifier: MIT
// hex: bytes written as hexadecimal digits, and a digit's value read back.
#pragma once

#include <stddef.h>

/** Write 2*n lowercase hex digits of bytes into out (which must hold 2*n + 1 bytes). */
void hex_encode(char *out, const void *bytes, size_t n);

/** The value of hex digit c (either case), or -1. */
static inline int hex_digit(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}
