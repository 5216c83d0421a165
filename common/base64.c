// SPDX-License-Identifier: MIT
// base64: base64 and base64url encoding (RFC 4648 4 and 5).

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base64.h"
#include "common/util.h"

char *base64_encode(const void *data, size_t n, bool url)
{
    static const char std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const char *tab = url ? safe : std;
    const unsigned char *p = data;
    char *out = xmalloc(4 * ((n + 2) / 3) + 1), *o = out;

    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        size_t left = n - i;
        if (left > 1)
            v |= (uint32_t)p[i + 1] << 8;
        if (left > 2)
            v |= p[i + 2];
        *o++ = tab[(v >> 18) & 63];
        *o++ = tab[(v >> 12) & 63];
        if (left > 1)
            *o++ = tab[(v >> 6) & 63];
        else if (!url)
            *o++ = '=';
        if (left > 2)
            *o++ = tab[v & 63];
        else if (!url)
            *o++ = '=';
    }
    *o = '\0';
    return out;
}
