// SPDX-License-Identifier: MIT
// test-text: a check that also prints the text it looked at (parsers' messages).
#pragma once

#include <stdio.h>

#include "tests/unit/test.h"

/* CHECK, and on failure the text that was checked. */
#define CHECK_MSG(cond, fmt, arg)                                                                  \
    do {                                                                                           \
        CHECK(cond);                                                                               \
        if (!(cond))                                                                               \
            fprintf(stderr, "  got: " fmt "\n", arg);                                              \
    } while (0)
