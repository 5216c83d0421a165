// SPDX-License-Identifier: MIT
// loglimit: rate-limited log lines whose left-out count is never lost (see loglimit.h).

#include <stdlib.h>
#include <sys/time.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/sys/loglimit.h"

static void log_count(LogLimit *l)
{
    if (l->bucket.dropped)
        log_full(LOG_NOTICE, l->server, l->event, "(%u %s not logged)", l->bucket.dropped, l->what);
    l->bucket.dropped = 0;
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    log_count(arg);
}

/*
 * Due a second after the first line refused (every rate is at least one line a second, so the
 * bucket holds a line again by then): a flood that goes on is summed up in one line a second.
 */
static void arm_flush(LogLimit *l)
{
    struct timeval tv = {.tv_sec = 1};

    if (!l->ev_flush)
        l->ev_flush = evtimer_new(l->base, on_flush, l);
    if (l->ev_flush && !evtimer_pending(l->ev_flush, NULL))
        evtimer_add(l->ev_flush, &tv);
}

void loglimit_init(LogLimit *l, struct event_base *base, const char *server, const char *event,
                   const char *what, unsigned burst, unsigned rate)
{
    *l = (LogLimit){.burst = burst, .rate = rate, .base = base};
    l->server = server ? xstrdup(server) : NULL;
    l->event = event ? xstrdup(event) : NULL;
    l->what = xstrdup(what);
}

void loglimit_deinit(LogLimit *l)
{
    if (l->what)
        log_count(l);
    if (l->ev_flush)
        event_free(l->ev_flush);
    free(l->server);
    free(l->event);
    free(l->what);
    *l = (LogLimit){0};
}

bool loglimit_take(LogLimit *l)
{
    unsigned dropped = 0;

    if (!ratelimit_take(&l->bucket, now_ms(), l->burst, l->rate, &dropped)) {
        arm_flush(l);
        return false;
    }
    l->bucket.dropped = dropped;
    log_count(l);
    return true;
}
