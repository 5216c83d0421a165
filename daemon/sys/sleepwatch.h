// SPDX-License-Identifier: MIT
// sleepwatch: hears that the machine resumed from sleep: logind's PrepareForSleep(false) on the
// system bus where there is one (logind.c), and always the jump of CLOCK_BOOTTIME ahead of
// CLOCK_MONOTONIC (the time asleep), checked by a periodic timer on CLOCK_BOOTTIME.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "daemon/sys/logind.h"

struct event_base;
struct event;

/*
 * The clock check's period. A timer on CLOCK_BOOTTIME that fell due while the machine slept
 * fires as soon as it resumes, so a sleep longer than this is seen at once; a shorter one within
 * this time. Every 10 s is one wake-up of an idle daemon that already wakes that often (the
 * process walk), cheap for a laptop's battery.
 */
#define SLEEPWATCH_PERIOD_MS 10000
/*
 * BOOTTIME gaining this much on MONOTONIC between two checks is a sleep: the two clocks differ
 * only by time suspended, and no real suspend and resume takes less than a second.
 */
#define SLEEPWATCH_MIN_JUMP_MS 1000
/*
 * logind and the clocks both report the same resume: a second report within this time of the
 * first is the same one (resuming, then reconnecting every server, takes a few seconds at most).
 */
#define SLEEPWATCH_COALESCE_MS 5000
/*
 * The test knob (docs/processes.md, "Sleep and wake"): MCPD_TEST_CLOCK_OFFSET_FILE names a file
 * whose number (ms) is added to CLOCK_BOOTTIME, a faked sleep; read only when the variable is
 * set, and then the clocks are checked at this shorter period. It can only make mcpd believe it
 * resumed, which pings and reconnects servers: nothing a user's environment could not do.
 */
#define SLEEPWATCH_TEST_ENV       "MCPD_TEST_CLOCK_OFFSET_FILE"
#define SLEEPWATCH_TEST_PERIOD_MS 100

/* source: "logind" or "clock"; slept_ms: the time asleep when known, else -1. */
typedef void (*SleepWatchFn)(void *ud, const char *source, int64_t slept_ms);

typedef struct SleepWatch {
    struct event_base *base;
    int tfd;                      /* the timerfd on CLOCK_BOOTTIME, or -1 */
    struct event *tick;           /* its read event */
    int64_t gap_ms;               /* BOOTTIME - MONOTONIC at the last check */
    const char *offset_file;      /* the test knob, or NULL */
    Logind *logind;               /* NULL without a system bus */
    int64_t asleep_wall_ms;       /* PrepareForSleep(true) came then, 0: not asleep */
    uint64_t last_resume_mono_ms; /* for SLEEPWATCH_COALESCE_MS */
    SleepWatchFn fn;
    void *ud;
} SleepWatch;

/** Start watching; fn(ud, ...) is called on each resume. 0 or -errno (no timerfd). */
int sleepwatch_init(SleepWatch *w, struct event_base *base, SleepWatchFn fn, void *ud);
/** Stop watching; safe on a zeroed value. */
void sleepwatch_deinit(SleepWatch *w);
/** Whether logind's signal is watched (a system bus was there at start). */
bool sleepwatch_has_logind(const SleepWatch *w);
