// SPDX-License-Identifier: MIT
// logind: systemd-logind's PrepareForSleep signal on the system bus (sd-bus on the daemon's
// libevent loop), so mcpd hears when the machine goes to sleep and when it has resumed.
#pragma once

#include <stdbool.h>

struct event_base;

/*
 * logind.c implements this with libsystemd's sd-bus; logind-fallback.c, for -Dsystemd=disabled,
 * says there is no bus, so the clock-jump path (sleepwatch.c) is the only one.
 */

/* before: true when the machine is about to sleep, false when it has resumed. */
typedef void (*LogindSleepFn)(void *ud, bool before);

typedef struct Logind Logind;

/**
 * Watch PrepareForSleep on the system bus ($DBUS_SYSTEM_BUS_ADDRESS, else the usual socket).
 * 0 with *lp set; -errno when there is no bus to watch (then *lp is NULL and nothing is logged).
 * The bus going away later ends the watch, with one log line.
 */
int logind_watch(Logind **lp, struct event_base *base, LogindSleepFn fn, void *ud);
/** Stop watching; returns NULL. NULL is fine. */
Logind *logind_free(Logind *l);
