// SPDX-License-Identifier: MIT
// sleepwatch: hears that the machine resumed from sleep: logind's PrepareForSleep(false) on the
// system bus where there is one (logind.c), and always the jump of CLOCK_BOOTTIME ahead of
// CLOCK_MONOTONIC (the time asleep), checked by a periodic timer on CLOCK_BOOTTIME.

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/sys/sleepwatch.h"

/* The test knob's file holds one number: a few bytes are plenty (a bound on what is read). */
#define OFFSET_FILE_MAX 32

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The faked time asleep of the test knob, in ms (0 when unreadable). */
static int64_t test_offset_ms(const char *path)
{
    char buf[OFFSET_FILE_MAX + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? read(fd, buf, OFFSET_FILE_MAX) : -1;

    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return strtoll(buf, NULL, 10);
}

/* BOOTTIME - MONOTONIC: the time spent asleep since boot (plus the test knob's offset). */
static int64_t sleep_gap_ms(const SleepWatch *w)
{
    int64_t boot = clock_ms(CLOCK_BOOTTIME);

    if (w->offset_file)
        boot += test_offset_ms(w->offset_file);
    return boot - clock_ms(CLOCK_MONOTONIC);
}

/* A resume, from either source; the second report of the same one is folded into the first. */
static void sleepwatch_resumed(SleepWatch *w, const char *source, int64_t slept_ms)
{
    uint64_t now = now_ms();

    if (w->last_resume_mono_ms && now - w->last_resume_mono_ms < SLEEPWATCH_COALESCE_MS) {
        log_debug("resume seen again (%s): already handled", source);
        return;
    }
    w->last_resume_mono_ms = now;
    w->fn(w->ud, source, slept_ms);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    SleepWatch *w = arg;
    uint64_t expirations;
    int64_t gap;

    (void)what;
    if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
        log_debug("sleepwatch: reading its timer: %m");
    gap = sleep_gap_ms(w);
    if (gap - w->gap_ms >= SLEEPWATCH_MIN_JUMP_MS) {
        int64_t slept = gap - w->gap_ms;
        w->gap_ms = gap;
        sleepwatch_resumed(w, "clock", slept);
        return;
    }
    w->gap_ms = gap;
}

static void on_logind(void *ud, bool before)
{
    SleepWatch *w = ud;
    int64_t asleep = w->asleep_wall_ms;

    if (before) {
        w->asleep_wall_ms = wall_ms();
        log_info("the machine is going to sleep");
        return;
    }
    w->asleep_wall_ms = 0;
    /* The clocks learn of this sleep now, so their next check does not report it again. */
    w->gap_ms = sleep_gap_ms(w);
    sleepwatch_resumed(w, "logind", asleep ? wall_ms() - asleep : -1);
}

int sleepwatch_init(SleepWatch *w, struct event_base *base, SleepWatchFn fn, void *ud)
{
    const char *knob = getenv(SLEEPWATCH_TEST_ENV);
    int64_t period = SLEEPWATCH_PERIOD_MS;
    struct itimerspec its;

    memset(w, 0, sizeof(*w));
    w->base = base;
    w->fn = fn;
    w->ud = ud;
    w->tfd = -1;
    if (knob && *knob) {
        w->offset_file = knob;
        period = SLEEPWATCH_TEST_PERIOD_MS;
        log_notice("%s is set: the clocks are checked every %lld ms with an offset from %s "
                   "(a test knob)",
                   SLEEPWATCH_TEST_ENV, (long long)period, knob);
    }
    w->gap_ms = sleep_gap_ms(w);
    if (logind_watch(&w->logind, base, on_logind, w) < 0)
        log_debug("no system bus: a resume is seen from the clocks only");
    w->tfd = timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    if (w->tfd < 0)
        return -errno;
    its.it_value.tv_sec = its.it_interval.tv_sec = period / 1000;
    its.it_value.tv_nsec = its.it_interval.tv_nsec = (period % 1000) * 1000000;
    if (timerfd_settime(w->tfd, 0, &its, NULL) < 0) {
        int r = -errno;
        close(w->tfd);
        w->tfd = -1;
        return r;
    }
    w->tick = event_new(base, w->tfd, EV_READ | EV_PERSIST, on_tick, w);
    event_add(w->tick, NULL);
    return 0;
}

void sleepwatch_deinit(SleepWatch *w)
{
    if (w->tick) {
        event_free(w->tick);
        close(w->tfd); /* open whenever tick is set (a zeroed value has neither) */
    }
    w->logind = logind_free(w->logind);
    w->tick = NULL;
    w->tfd = -1;
}

bool sleepwatch_has_logind(const SleepWatch *w)
{
    return w->logind != NULL;
}
