// SPDX-License-Identifier: MIT
// util: the C language helpers every file uses: cleanup attributes, attribute and array macros,
// string equality (here: the functions the cleanup attributes call).

#include "common/util.h"

void util_freep(void *p)
{
    free(*(void **)p);
}

void util_closep(int *fd)
{
    if (*fd >= 0)
        close(*fd);
}
