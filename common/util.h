// SPDX-License-Identifier: MIT
// util: the C language helpers every file uses: cleanup attributes, attribute and array macros,
// string equality.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The modules once part of this file, included here so that the files that found them through
 * util.h need no change; each function is declared in the header of the module that defines it.
 */
#include "common/alloc.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/hex.h"
#include "common/mem.h"
#include "common/parse.h"
#include "common/random.h"

#define _cleanup_(f)    __attribute__((cleanup(f)))
#define _cleanup_free_  _cleanup_(util_freep)
#define _cleanup_close_ _cleanup_(util_closep)
#define _printf_(a, b)  __attribute__((format(printf, a, b)))
#define _unused_        __attribute__((unused))

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))
/* The struct of type that holds member at ptr (for nodes embedded in what they link). */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#define MIN(a, b)                       ((a) < (b) ? (a) : (b))
#define MAX(a, b)                       ((a) > (b) ? (a) : (b))

/** Free *p (for _cleanup_free_). */
void util_freep(void *p);
/** Close *fd if it is >= 0 (for _cleanup_close_). */
void util_closep(int *fd);

/** Return true when the strings are equal; NULL equals only NULL. */
static inline bool streq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

/** Return true when s starts with prefix. */
static inline bool startswith(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}
