// SPDX-License-Identifier: MIT
// parse: a decimal integer read from text, within the bounds the caller names.

#include <errno.h>
#include <stdlib.h>

#include "common/parse.h"

int parse_int64(const char *s, int64_t min, int64_t max, int64_t *outp)
{
    char *end;
    long long v;

    if (!s || !*s)
        return -EINVAL;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (*end != '\0')
        return -EINVAL;
    if (errno == ERANGE || v < min || v > max)
        return -ERANGE;
    *outp = v;
    return 0;
}
