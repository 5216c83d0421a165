// SPDX-License-Identifier: MIT
// logind-fallback: no system bus without libsystemd (-Dsystemd=disabled); sleepwatch.c's clock
// jump is the only way mcpd hears of a resume.

#include <errno.h>
#include <stddef.h>

#include "daemon/sys/logind.h"

int logind_watch(Logind **lp, struct event_base *base, LogindSleepFn fn, void *ud)
{
    (void)base, (void)fn, (void)ud;
    *lp = NULL;
    return -ENOSYS;
}

Logind *logind_free(Logind *l)
{
    (void)l;
    return NULL;
}
