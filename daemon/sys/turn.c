// SPDX-License-Identifier: MIT
// turn: the daemon's loop (see turn.h): its own epoll set for the hot fds, libevent for the rest,
// and work deferred to the end of each turn.
//
// Why not one libevent event per task: activating an event, dispatching it and taking it off
// the active queue costs some 300 instructions, twice per tools/call (the request written to
// the server's stdin, the reply written to the agent), a tenth of what mcpd spends on a call.
//
// Why not libevent for the hot fds (agents' sockets, stdio servers' pipes): a turn of libevent's
// loop costs some 850 instructions (two clock reads, its timer heap, the active queue), two turns
// a call, about a fifth of mcpd's work on a tools/call. turn_loop waits on an epoll set of its
// own, which holds those fds and libevent's own epoll fd. A turn that finds only hot fds ready
// calls them directly and never enters libevent; libevent runs one turn (EVLOOP_ONCE and
// EVLOOP_NONBLOCK) only when its epoll fd is ready, one of its events was activated, or one of
// its timers is due.
//
// The one thing libevent does not say is when its next timer is due. turn_loop keeps a time
// that is never later: mcpd's own calls to event_add, which the link wraps
// (-Wl,--wrap=event_add, set in daemon/meson.build), bring theirs in as they are made; and it
// walks libevent's events (event_base_foreach_event) when the set may have changed otherwise:
// at the start, after a turn of libevent in which a timer was due, and when the number of events
// added changed (events libevent added for itself). Events mcpd's code activates (event_active,
// wrapped too) run in the same turn, before the work deferred to its end, as before the own
// loop. mcpd gives no bufferevent a timeout: one
// re-armed inside libevent could move earlier unseen (oauth-listener.c has a timer of its own).
//
// Where no own loop can run (libevent's backend is not epoll, or its epoll fd was not found, or
// a test drives libevent itself), the own epoll set sits in libevent's as one event instead.
// A build with -Down_loop=false (TURN_LIBEVENT_ONLY) always does that: libevent's public API
// only, no link-time wrapping and no guess of its fd. It costs CPU per call (docs/performance.md,
// "The loop"); CI runs the suites in such a build too (.ci/run).

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/sys/turn.h"

/* The base whose loop turn_loop runs now (NULL: none), and its queue, oldest first. */
static struct event_base *driven;
static TurnTask *head, *tail;
static bool stopping; /* turn_loop_exit was called for driven */
static bool own;      /* driven is run by own_loop */
/* A base turn_loop_exit was called for while no turn_loop ran on it: its next turn_loop stops
 * at once, as event_base_dispatch would after event_base_loopexit. */
static struct event_base *exit_asked;
static uint64_t turn_ms; /* the clock as read in this turn of driven's loop */
static bool turn_ms_read;

static void on_fallback(evutil_socket_t fd, short what, void *arg)
{
    TurnTask *t = arg;

    (void)fd, (void)what;
    t->queued = false;
    t->fn(-1, EV_TIMEOUT, t->arg);
}

void turn_task_init(TurnTask *t, struct event_base *base, event_callback_fn fn, void *arg)
{
    *t = (TurnTask){.base = base, .fn = fn, .arg = arg};
    /* Persistent and never added: activating it needs no event_del when it runs. */
    t->ev = event_new(base, -1, EV_PERSIST, on_fallback, t);
}

/* Unlink t from the queue: rare (a task cancelled while queued), so a walk is fine. */
static void unqueue(TurnTask *t)
{
    TurnTask *prev = NULL;

    for (TurnTask *q = head; q; prev = q, q = q->next)
        if (q == t) {
            if (prev)
                prev->next = t->next;
            else
                head = t->next;
            if (tail == t)
                tail = prev;
            break;
        }
    t->next = NULL;
}

void turn_cancel(TurnTask *t)
{
    if (!t->queued)
        return;
    t->queued = false;
    unqueue(t);
    if (t->ev)
        event_del(t->ev); /* takes it off the active queue if it was activated instead */
}

void turn_task_deinit(TurnTask *t)
{
    turn_cancel(t);
    if (t->ev)
        event_free(t->ev);
    *t = (TurnTask){0};
}

void turn_defer(TurnTask *t)
{
    if (t->queued)
        return;
    t->queued = true;
    if (t->base != driven) {
        event_active(t->ev, EV_TIMEOUT, 1);
        return;
    }
    if (tail)
        tail->next = t;
    else
        head = t;
    tail = t;
}

/* The tasks deferred in this turn, and those they defer in turn, until none is left. */
static void run_queued(void)
{
    TurnTask *t;

    while ((t = head)) {
        head = t->next;
        if (!head)
            tail = NULL;
        t->next = NULL;
        t->queued = false;
        t->fn(-1, EV_TIMEOUT, t->arg);
    }
}

/* ---- the own epoll set ---- */

/*
 * epoll events taken per wait. More ready at once are left for the next wait (level-triggered,
 * nothing is lost); 64 covers a turn with every agent of a busy session ready, and keeps the
 * array on the stack small.
 */
#define TURN_BATCH 64

/* The own epoll set of one event base, shared by its TurnFds and its turn_loop. */
typedef struct TurnPoll {
    struct event_base *base;
    int epfd;
    unsigned users;   /* TurnFds set up on it, and a turn_loop running on it */
    struct event *ev; /* epfd in libevent's set, while no own loop waits on it */
    struct TurnPoll *next;
} TurnPoll;

static TurnPoll *polls;

/*
 * The batch being dispatched: a TurnFd stopped or released meanwhile is taken out of its rest,
 * so no callback runs for it and nothing reads it once its owner freed it.
 */
static struct epoll_event *batch;
static int batch_n, batch_i;

/* What epoll is asked for, for what a TurnFd wants. */
static uint32_t epoll_mask(short want)
{
    return (want & EV_READ ? EPOLLIN | EPOLLRDHUP : 0u) | (want & EV_WRITE ? EPOLLOUT : 0u);
}

/* Tell epoll what w wants now: 0 when it took it. */
static int fd_sync(TurnFd *w)
{
    uint32_t mask = epoll_mask(w->want);
    struct epoll_event ev = {.events = mask, .data.ptr = w};
    int op;

    if (mask == w->in_epoll)
        return 0;
    op = !w->in_epoll ? EPOLL_CTL_ADD : !mask ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
    if (epoll_ctl(w->poll->epfd, op, w->fd, &ev) < 0) {
        int e = errno;
        log_warning("cannot watch fd %d (epoll_ctl: %s)", w->fd, strerror(e));
        return -e;
    }
    w->in_epoll = mask;
    return 0;
}

/* Run the callbacks of one ready fd, as libevent would: EPOLLHUP and EPOLLERR wake both sides. */
static void fd_dispatch(TurnFd *w, uint32_t e)
{
    short what = (e & EPOLLRDHUP) ? EV_CLOSED : 0;

    if ((w->want & EV_READ) && (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
        w->on_read(w->fd, (short)(what | EV_READ), w->arg);
        if (batch[batch_i].data.ptr != w)
            return; /* released by its callback */
    }
    if ((w->want & EV_WRITE) && (e & (EPOLLOUT | EPOLLHUP | EPOLLERR))) {
        /* Once, as a libevent write event without EV_PERSIST: asked for again if still blocked. */
        w->want &= (short)~EV_WRITE;
        (void)fd_sync(w);
        w->on_write(w->fd, EV_WRITE, w->arg);
    }
}

/*
 * Dispatch what one epoll_wait returned; returns whether libevent's own fd (mark) was ready, and
 * sets *rang when the loop's alarm (alarm_mark) was.
 */
static bool dispatch_batch(struct epoll_event *evs, int n, const void *mark, const void *alarm_mark,
                           bool *rang)
{
    bool libevent_ready = false;

    batch = evs;
    batch_n = n;
    for (batch_i = 0; batch_i < n; batch_i++) {
        void *p = evs[batch_i].data.ptr;
        if (!p)
            continue; /* a TurnFd released earlier in the batch */
        if (p == mark)
            libevent_ready = true;
        else if (p == alarm_mark)
            *rang = true;
        else
            fd_dispatch(p, evs[batch_i].events);
    }
    batch = NULL;
    batch_n = batch_i = 0;
    return libevent_ready;
}

/* The own set's fds that are ready, from libevent's loop (no own loop runs on the base). */
static void on_poll_ready(evutil_socket_t fd, short what, void *arg)
{
    struct epoll_event evs[TURN_BATCH];
    int n = epoll_wait(fd, evs, TURN_BATCH, 0);

    (void)what, (void)arg;
    if (n > 0)
        dispatch_batch(evs, n, NULL, NULL, NULL);
}

static TurnPoll *poll_get(struct event_base *base)
{
    TurnPoll *tp;

    for (tp = polls; tp; tp = tp->next)
        if (tp->base == base)
            break;
    if (!tp) {
        int epfd = epoll_create1(EPOLL_CLOEXEC);
        if (epfd < 0)
            return NULL;
        tp = xcalloc(1, sizeof(*tp));
        tp->base = base;
        tp->epfd = epfd;
        tp->ev = event_new(base, epfd, EV_READ | EV_PERSIST, on_poll_ready, NULL);
        if (!tp->ev) {
            close(epfd);
            free(tp);
            errno = ENOMEM;
            return NULL;
        }
        event_add(tp->ev, NULL);
        tp->next = polls;
        polls = tp;
    }
    tp->users++;
    return tp;
}

static void poll_put(TurnPoll *tp)
{
    if (--tp->users)
        return;
    for (TurnPoll **pp = &polls; *pp; pp = &(*pp)->next)
        if (*pp == tp) {
            *pp = tp->next;
            break;
        }
    event_free(tp->ev);
    close(tp->epfd);
    free(tp);
}

int turn_fd_init(TurnFd *w, struct event_base *base, int fd, event_callback_fn on_read,
                 event_callback_fn on_write, void *arg)
{
    *w = (TurnFd){.fd = fd, .on_read = on_read, .on_write = on_write, .arg = arg};
    w->poll = poll_get(base);
    return w->poll ? 0 : -errno;
}

int turn_fd_want(TurnFd *w, short what)
{
    if (!w->poll)
        return -EBADF;
    w->want = what & (EV_READ | EV_WRITE);
    return fd_sync(w);
}

void turn_fd_deinit(TurnFd *w)
{
    if (!w->poll)
        return;
    w->want = 0;
    (void)fd_sync(w);
    for (int i = batch_i; batch && i < batch_n; i++)
        if (batch[i].data.ptr == w)
            batch[i].data.ptr = NULL;
    poll_put(w->poll);
    *w = (TurnFd){.fd = -1};
}

/* ---- the loop ---- */

/*
 * The earliest expiry given to event_add by mcpd's code since the loop last merged them (us on
 * the monotonic clock; UINT64_MAX: none), and whether libevent's timers must be walked before
 * the next wait (a timeout event_add could not read as plain time).
 */
static uint64_t added_first_us = UINT64_MAX;
static bool walk_needed;

/*
 * An event mcpd's code activated (event_active, wrapped) since libevent last ran. It runs in
 * the same turn, before the work deferred to the turn's end, as it did when every fd was
 * libevent's: an agent's initialize that adds a config watch (watch.c activates its sync) has
 * the watch in place before the answer leaves, so a file the agent writes next is seen.
 */
static bool activated;

#ifdef TURN_LIBEVENT_ONLY
#define REAL_EVENT_ADD event_add
#else
#define REAL_EVENT_ADD __real_event_add
int __real_event_add(struct event *ev, const struct timeval *tv);
int __wrap_event_add(struct event *ev, const struct timeval *tv);
void __real_event_active(struct event *ev, int res, short ncalls);
void __wrap_event_active(struct event *ev, int res, short ncalls);

void __wrap_event_active(struct event *ev, int res, short ncalls)
{
    activated = true;
    __real_event_active(ev, res, ncalls);
}

/*
 * event_add for every caller in mcpd (the link wraps it): a timeout is noted, so the loop never
 * waits past it. Read on the clock now, it may lie a turn's time after libevent's (which counts
 * from the time it cached at the start of its turn): the timer runs that much late at most.
 */
int __wrap_event_add(struct event *ev, const struct timeval *tv)
{
    if (tv) {
        if (tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= 1000000) {
            walk_needed = true; /* a common timeout's encoded value, or nonsense */
        } else {
            uint64_t at = now_us() + (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
            if (at < added_first_us)
                added_first_us = at;
        }
    }
    return __real_event_add(ev, tv);
}
#endif

typedef struct TimerScan {
    const struct event *skip;
    struct timeval first;
    bool any;
} TimerScan;

static int scan_timer(const struct event_base *base, const struct event *ev, void *arg)
{
    TimerScan *ts = arg;
    struct timeval tv;

    (void)base;
    if (ev != ts->skip && event_pending(ev, EV_TIMEOUT, &tv) &&
        (!ts->any || evutil_timercmp(&tv, &ts->first, <))) {
        ts->first = tv;
        ts->any = true;
    }
    return 0;
}

/*
 * When libevent's first timer is due, on the monotonic clock in us (UINT64_MAX: none).
 * event_pending gives a timer's expiry on libevent's own clock mapped to the wall clock with an
 * offset it refreshes now and then; a probe timer set to fire now, read the same way, gives the
 * same mapping of now, so the difference is exact whatever the offset and the wall clock do.
 */
static uint64_t first_timer_us(struct event_base *base, struct event *probe)
{
    static const struct timeval zero = {0, 0};
    TimerScan ts = {.skip = probe};
    struct timeval now, left;
    uint64_t mono = now_us();

    REAL_EVENT_ADD(probe, &zero);
    event_pending(probe, EV_TIMEOUT, &now);
    event_del(probe);
    event_base_foreach_event(base, scan_timer, &ts);
    if (!ts.any)
        return UINT64_MAX;
    if (!evutil_timercmp(&ts.first, &now, >))
        return mono;
    evutil_timersub(&ts.first, &now, &left);
    return mono + (uint64_t)left.tv_sec * 1000000u + (uint64_t)left.tv_usec;
}

static void on_probe(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg; /* never fires: it is deleted as soon as it is read */
}

/* The base turn_base_new made, and its epoll fd (-1: not found): what own_loop waits on. */
static struct event_base *made_base;
static int made_epfd = -1;

struct event_base *turn_base_new(void)
{
    struct event_config *cfg = event_config_new();
    struct event_base *base;
    struct epoll_event ev;
#ifdef TURN_LIBEVENT_ONLY
    int lowest = -1; /* no own loop: libevent's epoll fd is not needed */
#else
    /* The fd epoll_create1 will get: its epoll backend opens nothing before it. (An open, not
     * a dup of fd 0, which may be closed.) */
    int lowest = open("/dev/null", O_RDONLY | O_CLOEXEC);

    if (lowest >= 0)
        close(lowest);
#endif
    if (!cfg)
        return NULL;
    /*
     * The environment could ask for a changelist (EVENT_EPOLL_USE_CHANGELIST), which holds
     * epoll_ctl back until libevent next waits: its epoll fd, waited on from outside, would
     * not say when a new event is ready. Or for another backend, with no epoll fd at all.
     */
    event_config_set_flag(cfg, EVENT_BASE_FLAG_IGNORE_ENV);
    /*
     * libevent's timers on CLOCK_MONOTONIC, as the loop's alarm (a timerfd) and now_us(): on its
     * default coarse clock (a kernel tick, 4 ms) an alarm set to the exact time rang before
     * libevent saw the timer due, and was set again, until the next tick. The precise clock is
     * read through the vDSO, in the few turns libevent still runs.
     */
    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
    base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (!base)
        return NULL;
    made_base = base;
    /* epoll_wait refuses anything but an epoll fd. */
    made_epfd = lowest >= 0 && strcmp(event_base_get_method(base), "epoll") == 0 &&
                        epoll_wait(lowest, &ev, 1, 0) >= 0
                    ? lowest
                    : -1;
    return base;
}

void turn_base_free(struct event_base *base)
{
    if (exit_asked == base)
        exit_asked = NULL; /* a later base at the same address has not been asked to stop */
    if (base == made_base) {
        made_base = NULL;
        made_epfd = -1;
    }
    event_base_free(base);
}

/*
 * The loop's alarm: a timerfd in the own set, set to when libevent's first timer is due.
 *
 * Why not a timeout to epoll_wait: the kernel then arms and cancels a timer at every sleep, two
 * sleeps a tools/call, while the first timer is due seconds away and never moves. Measured on
 * the null relay (mcpd-bench --only 1, pinned): a 4 s timeout to its poll costs 1.0 us of CPU a
 * call, half of what mcpd spent over the relay. The timerfd is set again only when the first
 * timer moves, and at us on the monotonic clock (the same as now_us), so nothing is rounded.
 */
typedef struct Alarm {
    int fd;      /* -1: no timerfd here (epoll_wait's timeout does its work) */
    int epfd;    /* the own set it is in */
    uint64_t at; /* what it is set to: ALARM_OFF, ALARM_RANG, or a time in us */
} Alarm;

#define ALARM_OFF UINT64_MAX
/* It went off and is still readable: the next alarm_set sets it whatever the time. */
#define ALARM_RANG 0

static void alarm_open(Alarm *a, int epfd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = a};

    *a = (Alarm){.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC),
                 .epfd = epfd,
                 .at = ALARM_OFF};
    if (a->fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, a->fd, &ev) < 0) {
        close(a->fd);
        a->fd = -1;
    }
    if (a->fd < 0)
        log_debug("event loop: no timerfd (%s): timers are waited for with epoll_wait",
                  strerror(errno));
}

static void alarm_close(Alarm *a)
{
    if (a->fd < 0)
        return;
    epoll_ctl(a->epfd, EPOLL_CTL_DEL, a->fd, NULL);
    close(a->fd);
    a->fd = -1;
}

/* Set the alarm to at (us, monotonic; ALARM_OFF: none); false when the timerfd refused it. */
static bool alarm_set(Alarm *a, uint64_t at)
{
    struct itimerspec its = {{0, 0}, {0, 0}}; /* all zero: disarmed, and no longer readable */

    if (at == a->at)
        return true;
    if (at != ALARM_OFF) {
        its.it_value.tv_sec = (time_t)(at / 1000000u);
        its.it_value.tv_nsec = (long)(at % 1000000u) * 1000;
    }
    if (timerfd_settime(a->fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        return false;
    a->at = at;
    return true;
}

/*
 * The timeout for the next epoll_wait: 0 when libevent has callbacks ready (*activep is then
 * set, so that the turn runs them) or a timer is due; otherwise -1, with the alarm set for the
 * first timer, or (no alarm) the ms to that timer, -1 when none is set. first_us is when
 * libevent's first timer is due, or earlier (then the loop wakes for nothing, finds it not due,
 * and walks the timers again); never later. It is walked afresh when walk_needed says so;
 * timeouts mcpd gave event_add since are merged in. now: the clock as read at the start of the
 * turn that just ended (only the ms wait counts from it: the alarm's time is absolute).
 */
static int wait_timeout(struct event_base *base, struct event *probe, uint64_t *first_us,
                        bool *activep, uint64_t now, Alarm *alarm)
{
    if (event_base_get_num_events(base, EVENT_BASE_COUNT_ACTIVE) > 0) {
        *activep = true;
        return 0;
    }
    if (walk_needed) {
        walk_needed = false;
        *first_us = first_timer_us(base, probe);
    } else if (added_first_us < *first_us) {
        *first_us = added_first_us;
    }
    added_first_us = UINT64_MAX;
    if (*first_us != UINT64_MAX && *first_us <= now)
        return 0;
    if (alarm->fd >= 0) {
        if (alarm_set(alarm, *first_us))
            return -1;
        /* Refused (it cannot be, short of a kernel fault): one left ringing would spin the loop,
         * so it goes, and the waits count the time from here on. */
        log_warning("event loop: timerfd_settime: %s; timers are waited for with epoll_wait",
                    strerror(errno));
        alarm_close(alarm);
    }
    if (*first_us == UINT64_MAX)
        return -1;
    /* Rounded up, as libevent rounds: woken early, the timer is not due and the wait goes on. */
    return (int)MIN((*first_us - now + 999) / 1000, (uint64_t)INT_MAX);
}

/* turn_loop with its own epoll set; -1 when it cannot run here (the caller runs libevent's). */
static int own_loop(struct event_base *base, TurnPoll *tp, int lev_fd)
{
    struct epoll_event evs[TURN_BATCH];
    struct epoll_event mark = {.events = EPOLLIN, .data.ptr = &mark};
    struct event *probe = evtimer_new(base, on_probe, NULL);
    uint64_t first_us = UINT64_MAX, now = now_us();
    int n_added = -1, r = 0;
    bool active = false;
    Alarm alarm;

    /* Not both ways round: epoll refuses a loop of sets. */
    event_del(tp->ev);
    if (!probe || epoll_ctl(tp->epfd, EPOLL_CTL_ADD, lev_fd, &mark) < 0) {
        if (probe)
            event_free(probe);
        event_add(tp->ev, NULL);
        return -1;
    }
    alarm_open(&alarm, tp->epfd);
    walk_needed = true;
    while (!stopping) {
        bool rang = false;
        int n = epoll_wait(tp->epfd, evs, TURN_BATCH,
                           wait_timeout(base, probe, &first_us, &active, now, &alarm));
        if (n < 0 && errno != EINTR) {
            log_error("epoll_wait: %s", strerror(errno));
            r = -1;
            break;
        }
        /* The turn's one reading of the clock, for turn_now_ms() too. */
        now = now_us();
        turn_ms = now / 1000;
        turn_ms_read = true;
        bool lev = n > 0 && dispatch_batch(evs, n, &mark, &alarm, &rang), due = first_us <= now;
        if (rang)
            alarm.at = ALARM_RANG;
        /*
         * Events mcpd's callbacks activated run now (activated); any libevent activated for
         * itself outside its turns, in the next (wait_timeout sees its count). No call into
         * libevent on the turns that need none.
         */
        if (lev || due || active || activated) {
            active = activated = false;
            /* One turn: NONBLOCK alone goes on while a callback re-arms a timer due at once. */
            if (event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK) < 0) {
                r = -1;
                break;
            }
            /*
             * A timer that ran is gone, or set again by libevent itself (EV_PERSIST), and
             * events libevent added for itself show in its count: walk them then. What mcpd's
             * code set came through event_add; the timeouts libevent re-arms for itself on
             * activity only move later, which first_us may stay before.
             */
            int added = event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED);
            if (due || added != n_added)
                walk_needed = true;
            n_added = added;
        }
        run_queued();
    }
    turn_ms_read = false;
    alarm_close(&alarm);
    epoll_ctl(tp->epfd, EPOLL_CTL_DEL, lev_fd, NULL);
    event_add(tp->ev, NULL);
    event_free(probe);
    return r;
}

int turn_loop(struct event_base *base)
{
    TurnPoll *tp;
    int r = -1, lev_fd;

    if (exit_asked == base) {
        exit_asked = NULL;
        return 0;
    }
    driven = base;
    stopping = false;
    tp = poll_get(base);
    lev_fd = tp && base == made_base ? made_epfd : -1;
    if (lev_fd >= 0) {
        own = true;
        r = own_loop(base, tp, lev_fd);
        own = false;
    }
    if (lev_fd < 0 || (r < 0 && !stopping)) {
        if (base == made_base)
            log_debug("event loop: libevent's own (no epoll fd of libevent's to wait on)");
        do {
            r = event_base_loop(base, EVLOOP_ONCE);
            run_queued();
            turn_ms_read = false; /* the next turn reads the clock afresh */
        } while (r == 0 && !stopping);
    }
    if (tp)
        poll_put(tp);
    driven = NULL;
    stopping = false;
    return r < 0 ? -1 : 0;
}

uint64_t turn_now_ms(void)
{
    if (!driven)
        return now_ms();
    if (!turn_ms_read) {
        turn_ms = now_ms();
        turn_ms_read = true;
    }
    return turn_ms;
}

void turn_loop_exit(struct event_base *base)
{
    if (base == driven)
        stopping = true;
    else
        exit_asked = base;
    /* Ends the turn under way of libevent's loop; the own loop looks at stopping instead, and a
     * loopexit left pending would end its next libevent turn before it ran anything. */
    if (!(own && base == driven))
        event_base_loopexit(base, NULL);
}
