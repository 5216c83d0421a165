// SPDX-License-Identifier: MIT
// parse: a decimal integer read from text, within the bounds the caller names.
#pragma once

#include <stdint.h>

/** Parse a decimal integer in [min, max]; return 0 or -EINVAL / -ERANGE. */
int parse_int64(const char *s, int64_t min, int64_t max, int64_t *outp);
