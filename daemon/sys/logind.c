// SPDX-License-Identifier: MIT
// logind: systemd-logind's PrepareForSleep signal on the system bus (sd-bus on the daemon's
// libevent loop), so mcpd hears when the machine goes to sleep and when it has resumed.

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <systemd/sd-bus.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/sys/logind.h"

#define LOGIND_NAME      "org.freedesktop.login1"
#define LOGIND_PATH      "/org/freedesktop/login1"
#define LOGIND_INTERFACE "org.freedesktop.login1.Manager"

struct Logind {
    struct event_base *base;
    sd_bus *bus;
    sd_bus_slot *slot;
    struct event *ev_io;   /* the bus fd, for what sd_bus_get_events asks */
    struct event *ev_time; /* sd_bus_get_timeout: a method call's reply deadline */
    short io_what;
    LogindSleepFn fn;
    void *ud;
};

static void logind_process(Logind *l);

static void on_io(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    logind_process(arg);
}

/* The bus is gone (the system bus restarted, or it refused us): the clock path stays. */
static void logind_drop(Logind *l, int r)
{
    log_warning("system bus: %s; a resume is now seen from the clocks only", strerror(-r));
    if (l->ev_io)
        event_free(l->ev_io);
    if (l->ev_time)
        event_free(l->ev_time);
    l->ev_io = l->ev_time = NULL;
    l->slot = sd_bus_slot_unref(l->slot);
    l->bus = sd_bus_flush_close_unref(l->bus);
}

/* Wait for what the bus asks: its fd readable (always), writable (output queued), a deadline. */
static void logind_arm(Logind *l)
{
    int events = sd_bus_get_events(l->bus);
    short what = EV_READ | EV_PERSIST | (events > 0 && (events & POLLOUT) ? EV_WRITE : 0);
    uint64_t usec = UINT64_MAX;
    struct timespec ts;
    struct timeval tv;

    if (events < 0)
        return logind_drop(l, events);
    if (!l->ev_io || what != l->io_what) {
        if (l->ev_io)
            event_free(l->ev_io);
        l->ev_io = event_new(l->base, sd_bus_get_fd(l->bus), what, on_io, l);
        l->io_what = what;
        event_add(l->ev_io, NULL);
    }
    if (sd_bus_get_timeout(l->bus, &usec) < 0 || usec == UINT64_MAX) {
        event_del(l->ev_time);
        return;
    }
    /* sd-bus gives an absolute CLOCK_MONOTONIC time. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
    uint64_t rel = usec > now ? usec - now : 0;
    tv.tv_sec = (time_t)(rel / 1000000u);
    tv.tv_usec = (suseconds_t)(rel % 1000000u);
    evtimer_add(l->ev_time, &tv);
}

static void logind_process(Logind *l)
{
    int r;

    if (!l->bus)
        return;
    while ((r = sd_bus_process(l->bus, NULL)) > 0)
        ;
    if (r < 0)
        return logind_drop(l, r);
    logind_arm(l);
}

static int on_prepare_for_sleep(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
    Logind *l = userdata;
    int before = 0;

    (void)error;
    if (sd_bus_message_read(m, "b", &before) < 0)
        return 0; /* not the signal's signature: not logind's */
    l->fn(l->ud, before != 0);
    return 0;
}

static int on_match_installed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
    const sd_bus_error *e = sd_bus_message_get_error(m);

    (void)userdata, (void)error;
    if (e)
        log_warning("system bus: cannot watch logind's PrepareForSleep: %s; a resume is seen "
                    "from the clocks only",
                    e->message ? e->message : e->name);
    return 0;
}

int logind_watch(Logind **lp, struct event_base *base, LogindSleepFn fn, void *ud)
{
    Logind *l = xcalloc(1, sizeof(*l));
    int r;

    *lp = NULL;
    l->base = base;
    l->fn = fn;
    l->ud = ud;
    r = sd_bus_open_system(&l->bus);
    if (r >= 0)
        r = sd_bus_match_signal_async(l->bus, &l->slot, LOGIND_NAME, LOGIND_PATH, LOGIND_INTERFACE,
                                      "PrepareForSleep", on_prepare_for_sleep, on_match_installed,
                                      l);
    if (r < 0) {
        sd_bus_slot_unref(l->slot);
        sd_bus_flush_close_unref(l->bus);
        free(l);
        return r;
    }
    l->ev_time = evtimer_new(base, on_io, l);
    logind_arm(l); /* the Hello and AddMatch are queued: written once the fd is writable */
    *lp = l;
    return 0;
}

Logind *logind_free(Logind *l)
{
    if (!l)
        return NULL;
    if (l->ev_io)
        event_free(l->ev_io);
    if (l->ev_time)
        event_free(l->ev_time);
    sd_bus_slot_unref(l->slot);
    sd_bus_flush_close_unref(l->bus);
    free(l);
    return NULL;
}
