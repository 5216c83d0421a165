// SPDX-License-Identifier: MIT
// test-turn: the daemon's loop (daemon/sys/turn.c) on a real event loop: work deferred to the end
// of a turn, run by turn_loop after the turn's events or by its fallback event under a plain
// libevent loop; fds in the own epoll set; libevent's timers, events and activations seen by the
// own loop. Every test runs twice: on a base of turn_base_new (the own loop) and of
// event_base_new (the loop is libevent's, with the own set as one of its events).

#include <sys/socket.h>
#include <time.h>

#include <event2/event.h>

#include "common/util.h"
#include "daemon/sys/turn.h"
#include "tests/unit/test.h"

/* This pass's kind of base: turn_base_new's (the own loop) or a plain libevent one. */
static bool own_pass;

static struct event_base *new_base(void)
{
    return own_pass ? turn_base_new() : event_base_new();
}

static void free_base(struct event_base *base)
{
    turn_base_free(base);
}

typedef struct Log {
    char seq[64];
    int n;
    struct event_base *base;
    TurnTask *a, *b;
    int defer_b_from_a; /* a defers b (work deferred by deferred work runs in the same turn) */
    int stop_after;     /* turn_loop_exit after this many runs of a */
    int runs_a;
} Log;

static void note(Log *l, char c)
{
    if (l->n < (int)sizeof(l->seq) - 1)
        l->seq[l->n++] = c;
}

static void on_a(evutil_socket_t fd, short what, void *arg)
{
    Log *l = arg;

    CHECK(fd == -1);
    CHECK(what == EV_TIMEOUT);
    note(l, 'a');
    l->runs_a++;
    if (l->defer_b_from_a)
        turn_defer(l->b);
    if (l->stop_after && l->runs_a >= l->stop_after)
        turn_loop_exit(l->base);
}

static void on_b(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    note(arg, 'b');
}

/* An event ready in the turn: defers a twice and b once; they run after it, once each. */
static void on_ready(evutil_socket_t fd, short what, void *arg)
{
    Log *l = arg;

    (void)fd, (void)what;
    note(l, 'r');
    turn_defer(l->a);
    turn_defer(l->b);
    turn_defer(l->a);
    note(l, 'R');
}

static void test_fallback_without_turn_loop(void)
{
    struct event_base *base = new_base();
    TurnTask a, b;
    Log l = {.base = base, .a = &a, .b = &b};
    struct event *ready = event_new(base, -1, 0, on_ready, &l);

    turn_task_init(&a, base, on_a, &l);
    turn_task_init(&b, base, on_b, &l);
    event_active(ready, EV_TIMEOUT, 1);
    event_base_loop(base, EVLOOP_NONBLOCK);
    l.seq[l.n] = '\0';
    CHECK_STREQ(l.seq, "rRab");
    CHECK(!a.queued && !b.queued);
    event_free(ready);
    turn_task_deinit(&a);
    turn_task_deinit(&b);
    free_base(base);
}

static void test_turn_loop_runs_after_the_turn(void)
{
    struct event_base *base = new_base();
    TurnTask a, b;
    Log l = {.base = base, .a = &a, .b = &b, .stop_after = 2};
    struct event *ready = event_new(base, -1, EV_PERSIST, on_ready, &l);
    struct timeval tv = {0, 1000};

    turn_task_init(&a, base, on_a, &l);
    turn_task_init(&b, base, on_b, &l);
    event_add(ready, &tv); /* fires every ms: two turns, then a stops the loop */
    CHECK_INTEQ(turn_loop(base), 0);
    l.seq[l.n] = '\0';
    CHECK_STREQ(l.seq, "rRabrRab");
    CHECK(!a.queued && !b.queued);
    event_free(ready);
    turn_task_deinit(&a);
    turn_task_deinit(&b);
    free_base(base);
}

static void test_deferred_work_defers_more(void)
{
    struct event_base *base = new_base();
    TurnTask a, b;
    Log l = {.base = base, .a = &a, .b = &b, .defer_b_from_a = 1, .stop_after = 1};
    struct event *ready = event_new(base, -1, 0, on_ready, &l);

    turn_task_init(&a, base, on_a, &l);
    turn_task_init(&b, base, on_b, &l);
    event_active(ready, EV_TIMEOUT, 1);
    CHECK_INTEQ(turn_loop(base), 0);
    l.seq[l.n] = '\0';
    /* b was still queued when a deferred it again: it runs once, after a. */
    CHECK_STREQ(l.seq, "rRab");
    event_free(ready);
    turn_task_deinit(&a);
    turn_task_deinit(&b);
    free_base(base);
}

/* A task cancelled (or freed) while queued does not run, whichever way it was queued. */
static void on_ready_cancel(evutil_socket_t fd, short what, void *arg)
{
    Log *l = arg;

    (void)fd, (void)what;
    turn_defer(l->a);
    turn_defer(l->b);
    turn_cancel(l->a);
    turn_task_deinit(l->b);
    note(l, 'r');
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    turn_loop_exit(arg);
}

static void test_cancel(void)
{
    for (int driven = 0; driven < 2; driven++) {
        struct event_base *base = new_base();
        TurnTask a, b;
        Log l = {.base = base, .a = &a, .b = &b};
        struct event *ready = event_new(base, -1, 0, on_ready_cancel, &l);
        struct event *stop = evtimer_new(base, on_stop, base);
        struct timeval tv = {0, 20000};

        turn_task_init(&a, base, on_a, &l);
        turn_task_init(&b, base, on_b, &l);
        event_active(ready, EV_TIMEOUT, 1);
        evtimer_add(stop, &tv);
        if (driven)
            CHECK_INTEQ(turn_loop(base), 0);
        else
            event_base_dispatch(base);
        l.seq[l.n] = '\0';
        CHECK_STREQ(l.seq, "r");
        CHECK(!a.queued);
        event_free(ready);
        event_free(stop);
        turn_task_deinit(&a);
        turn_task_deinit(&b); /* again: safe on a deinitialized task */
        free_base(base);
    }
}

/* Within one turn of turn_loop the clock is read once; the next turn reads it again. */
typedef struct Clock {
    uint64_t first[2], later[2];
    int turn;
} Clock;

static void on_clock(evutil_socket_t fd, short what, void *arg)
{
    Clock *c = arg;
    uint64_t give_up = now_ms() + 1000;

    (void)fd, (void)what;
    c->first[c->turn] = turn_now_ms();
    while (now_ms() < c->first[c->turn] + 5 && now_ms() < give_up)
        ; /* let the real clock move on */
    c->later[c->turn] = turn_now_ms();
    c->turn++;
}

static void on_clock_stop(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    turn_loop_exit(arg);
}

static void test_clock_once_per_turn(void)
{
    struct event_base *base = new_base();
    Clock c = {0};
    struct event *t1 = evtimer_new(base, on_clock, &c), *t2 = evtimer_new(base, on_clock, &c);
    struct event *stop = evtimer_new(base, on_clock_stop, base);
    struct timeval a = {0, 1000}, b = {0, 30000}, end = {0, 60000};

    evtimer_add(t1, &a);
    evtimer_add(t2, &b);
    evtimer_add(stop, &end);
    CHECK_INTEQ(turn_loop(base), 0);
    CHECK_INTEQ(c.turn, 2);
    CHECK(c.later[0] == c.first[0]); /* the same turn: the same reading */
    CHECK(c.later[1] == c.first[1]);
    CHECK(c.first[1] >= c.first[0] + 5); /* a later turn: read again */
    /* No turn_loop: every reading is fresh. */
    uint64_t t0 = turn_now_ms(), until = t0 + 1000;
    while (turn_now_ms() == t0 && now_ms() < until)
        ;
    CHECK(turn_now_ms() > t0);
    event_free(t1);
    event_free(t2);
    event_free(stop);
    free_base(base);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    int *n = arg;

    (void)fd, (void)what;
    ++*n;
}

/* A stop asked before the loop runs (a signal during start-up) is not lost: it stops at once. */
static void test_exit_before_loop(void)
{
    struct event_base *base = new_base();
    int ticks = 0;
    struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, &ticks);
    struct timeval every = {0, 5000};

    event_add(tick, &every);
    turn_loop_exit(base);
    CHECK_INTEQ(turn_loop(base), 0);
    CHECK(ticks <= 1);
    /* The request was taken: a later loop runs until stopped again. */
    event_free(tick);
    free_base(base);
}

/* ---- fds in the own epoll set ---- */

/* The longest any of these tests may run: a loop that missed its event waits for this instead. */
#define SAFETY_MS 10000
/* A test that took this long waited for its safety stop, not for the event it set up. */
#define PROMPT_MS 5000

typedef struct Io {
    struct event_base *base;
    TurnFd w[2];
    int sv[2][2];
    int reads[2], writes[2];
    struct event *timer; /* set, moved or activated from a read callback */
    int mode;            /* what the read callback does (the tests below) */
    bool timer_fired;
} Io;

enum { IO_WRITE_ONCE, IO_RELEASE_OTHER, IO_ADD_TIMER, IO_MOVE_TIMER, IO_ACTIVATE };

static void on_safety(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    turn_loop_exit(arg);
}

static void on_io_timer(evutil_socket_t fd, short what, void *arg)
{
    Io *io = arg;

    (void)fd, (void)what;
    io->timer_fired = true;
    turn_loop_exit(io->base);
}

static void on_io_read(evutil_socket_t fd, short what, void *arg);

static void on_io_write(evutil_socket_t fd, short what, void *arg)
{
    Io *io = arg;
    int k = fd == io->sv[0][0] ? 0 : 1;

    CHECK(what == EV_WRITE);
    io->writes[k]++;
    turn_loop_exit(io->base);
}

static void on_io_read(evutil_socket_t fd, short what, void *arg)
{
    Io *io = arg;
    int k = fd == io->sv[0][0] ? 0 : 1;
    char buf[64];
    struct timeval soon = {0, 20000};

    CHECK(what & EV_READ);
    io->reads[k]++;
    if (read(fd, buf, sizeof(buf)) <= 0)
        turn_fd_want(&io->w[k], 0);
    switch (io->mode) {
    case IO_WRITE_ONCE:
        turn_fd_want(&io->w[k], EV_READ | EV_WRITE); /* a socket with room: once */
        break;
    case IO_RELEASE_OTHER:
        /* Both are ready in the same batch: the other one's callback must not run. */
        turn_fd_deinit(&io->w[1 - k]);
        turn_loop_exit(io->base);
        break;
    case IO_ADD_TIMER:
    case IO_MOVE_TIMER:
        evtimer_add(io->timer, &soon);
        break;
    case IO_ACTIVATE:
        event_active(io->timer, EV_TIMEOUT, 1);
        break;
    }
}

/* An Io with two socket pairs, each read end watched for reads with data waiting. */
static void io_setup(Io *io, int mode)
{
    *io = (Io){.base = new_base(), .mode = mode};
    for (int k = 0; k < 2; k++) {
        CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, io->sv[k]) == 0);
        CHECK_INTEQ(turn_fd_init(&io->w[k], io->base, io->sv[k][0], on_io_read, on_io_write, io),
                    0);
    }
    io->timer = evtimer_new(io->base, on_io_timer, io);
}

/* Run the loop with a safety stop; returns the ms it ran. */
static uint64_t io_run(Io *io)
{
    struct event *safety = evtimer_new(io->base, on_safety, io->base);
    struct timeval tv = {SAFETY_MS / 1000, 0};
    uint64_t t0 = now_ms();

    evtimer_add(safety, &tv);
    CHECK_INTEQ(turn_loop(io->base), 0);
    event_free(safety);
    return now_ms() - t0;
}

static void io_teardown(Io *io)
{
    for (int k = 0; k < 2; k++) {
        turn_fd_deinit(&io->w[k]);
        turn_fd_deinit(&io->w[k]); /* safe twice */
        close(io->sv[k][0]);
        close(io->sv[k][1]);
    }
    event_free(io->timer);
    free_base(io->base);
}

static void test_fd_read_then_write_once(void)
{
    Io io;

    io_setup(&io, IO_WRITE_ONCE);
    CHECK_INTEQ(turn_fd_want(&io.w[0], EV_READ), 0);
    CHECK(write(io.sv[0][1], "x", 1) == 1);
    CHECK(io_run(&io) < PROMPT_MS);
    CHECK_INTEQ(io.reads[0], 1);
    CHECK_INTEQ(io.writes[0], 1);
    CHECK(!(io.w[0].want & EV_WRITE)); /* once: no longer wanted */
    io_teardown(&io);
}

static void test_fd_released_in_its_batch(void)
{
    Io io;

    io_setup(&io, IO_RELEASE_OTHER);
    for (int k = 0; k < 2; k++) {
        CHECK_INTEQ(turn_fd_want(&io.w[k], EV_READ), 0);
        CHECK(write(io.sv[k][1], "x", 1) == 1);
    }
    CHECK(io_run(&io) < PROMPT_MS);
    CHECK_INTEQ(io.reads[0] + io.reads[1], 1);
    io_teardown(&io);
}

/* A timer set from an fd's callback, outside any turn of libevent: the loop must not sleep past. */
static void test_timer_set_from_fd_callback(void)
{
    Io io;

    io_setup(&io, IO_ADD_TIMER);
    CHECK_INTEQ(turn_fd_want(&io.w[0], EV_READ), 0);
    CHECK(write(io.sv[0][1], "x", 1) == 1);
    CHECK(io_run(&io) < PROMPT_MS);
    CHECK(io.timer_fired);
    io_teardown(&io);
}

/* A pending timer moved earlier from an fd's callback: libevent's event count does not change. */
static void test_timer_moved_earlier(void)
{
    Io io;
    struct timeval late = {SAFETY_MS / 1000 - 1, 0};

    io_setup(&io, IO_MOVE_TIMER);
    evtimer_add(io.timer, &late);
    CHECK_INTEQ(turn_fd_want(&io.w[0], EV_READ), 0);
    CHECK(write(io.sv[0][1], "x", 1) == 1);
    CHECK(io_run(&io) < PROMPT_MS);
    CHECK(io.timer_fired);
    io_teardown(&io);
}

/* An event activated from an fd's callback runs in that turn, not at the next timer. */
static void test_activation_from_fd_callback(void)
{
    Io io;

    io_setup(&io, IO_ACTIVATE);
    CHECK_INTEQ(turn_fd_want(&io.w[0], EV_READ), 0);
    CHECK(write(io.sv[0][1], "x", 1) == 1);
    CHECK(io_run(&io) < PROMPT_MS);
    CHECK(io.timer_fired);
    io_teardown(&io);
}

static void on_lev_read(evutil_socket_t fd, short what, void *arg)
{
    char buf[8];

    CHECK(what & EV_READ);
    CHECK(read(fd, buf, sizeof(buf)) == 1);
    turn_loop_exit(arg);
}

/* An fd libevent watches (not in the own set) is served by the own loop's turns of libevent. */
static void test_libevent_fd_served(void)
{
    Io io;
    struct event *ev;

    io_setup(&io, IO_WRITE_ONCE);
    ev = event_new(io.base, io.sv[1][0], EV_READ, on_lev_read, io.base);
    event_add(ev, NULL);
    CHECK(write(io.sv[1][1], "x", 1) == 1);
    CHECK(io_run(&io) < PROMPT_MS);
    CHECK_INTEQ(io.reads[0] + io.reads[1], 0);
    event_free(ev);
    io_teardown(&io);
}

static void on_spin(evutil_socket_t fd, short what, void *arg)
{
    static const struct timeval now = {0, 0};

    (void)fd, (void)what;
    evtimer_add(arg, &now); /* due again at once: a callback that yields, as peer.c's ev_more */
}

/* A libevent timer that re-arms itself at once, turn after turn, leaves the own fds their turn. */
static void test_spinning_timer_leaves_fds_served(void)
{
    Io io;
    struct event *spin;
    static const struct timeval now = {0, 0};

    io_setup(&io, IO_RELEASE_OTHER);
    spin = evtimer_new(io.base, on_spin, NULL);
    event_assign(spin, io.base, -1, 0, on_spin, spin);
    evtimer_add(spin, &now);
    CHECK_INTEQ(turn_fd_want(&io.w[0], EV_READ), 0);
    CHECK(write(io.sv[0][1], "x", 1) == 1);
    CHECK(io_run(&io) < PROMPT_MS);
    CHECK_INTEQ(io.reads[0], 1);
    event_free(spin);
    io_teardown(&io);
}

typedef struct Order {
    struct event_base *base;
    TurnFd w;
    int sv[2];
    struct event *ev;
    TurnTask task;
    char seq[8];
    int n;
} Order;

static void order_note(Order *o, char c)
{
    if (o->n < (int)sizeof(o->seq) - 1)
        o->seq[o->n++] = c;
}

static void on_order_read(evutil_socket_t fd, short what, void *arg)
{
    Order *o = arg;
    char buf[8];

    (void)what;
    CHECK(read(fd, buf, sizeof(buf)) == 1);
    order_note(o, 'r');
    event_active(o->ev, EV_TIMEOUT, 1);
    turn_defer(&o->task);
}

static void on_order_event(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    order_note(arg, 'e');
}

static void on_order_task(evutil_socket_t fd, short what, void *arg)
{
    Order *o = arg;

    (void)fd, (void)what;
    order_note(o, 't');
    turn_loop_exit(o->base);
}

/*
 * An event an fd's callback activates runs in the same turn, before the work deferred to the
 * turn's end (the answer written to an agent): as with libevent's own loop.
 */
static void test_activation_before_deferred_work(void)
{
    Order o = {.base = new_base()};
    struct event *safety = evtimer_new(o.base, on_safety, o.base);
    struct timeval tv = {SAFETY_MS / 1000, 0};

    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, o.sv) == 0);
    CHECK_INTEQ(turn_fd_init(&o.w, o.base, o.sv[0], on_order_read, NULL, &o), 0);
    CHECK_INTEQ(turn_fd_want(&o.w, EV_READ), 0);
    o.ev = event_new(o.base, -1, 0, on_order_event, &o);
    turn_task_init(&o.task, o.base, on_order_task, &o);
    evtimer_add(safety, &tv);
    CHECK(write(o.sv[1], "x", 1) == 1);
    CHECK_INTEQ(turn_loop(o.base), 0);
    o.seq[o.n] = '\0';
    CHECK_STREQ(o.seq, "ret");
    event_free(safety);
    event_free(o.ev);
    turn_task_deinit(&o.task);
    turn_fd_deinit(&o.w);
    close(o.sv[0]);
    close(o.sv[1]);
    free_base(o.base);
}

/* Timers one after another, each set by the one before it (the loop's alarm rings, and is set
 * again). */
#define CHAIN_N       8
#define CHAIN_STEP_MS 100

typedef struct Chain {
    struct event_base *base;
    struct event *ev;
    int fired;
} Chain;

static void on_chain(evutil_socket_t fd, short what, void *arg)
{
    Chain *c = arg;
    struct timeval step = {0, CHAIN_STEP_MS * 1000};

    (void)fd, (void)what;
    if (++c->fired == CHAIN_N)
        turn_loop_exit(c->base);
    else
        evtimer_add(c->ev, &step);
}

static uint64_t cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Each timer runs when due, never before, and the loop sleeps in between: one that woke for
 * an alarm still ringing would spin, and spend the time on the CPU instead.
 */
static void test_timers_in_a_row(void)
{
    Chain c = {.base = new_base()};
    struct event *safety = evtimer_new(c.base, on_safety, c.base);
    struct timeval tv = {SAFETY_MS / 1000, 0}, step = {0, CHAIN_STEP_MS * 1000};

    c.ev = evtimer_new(c.base, on_chain, &c);
    evtimer_add(safety, &tv);
    evtimer_add(c.ev, &step);
    uint64_t t0 = now_ms(), c0 = cpu_ms();
    CHECK_INTEQ(turn_loop(c.base), 0);
    uint64_t took = now_ms() - t0, cpu = cpu_ms() - c0;
    CHECK_INTEQ(c.fired, CHAIN_N);
    CHECK(took >= CHAIN_N * CHAIN_STEP_MS);
    CHECK(took < PROMPT_MS);
    /* Half of it, generously: a spinning loop takes all of it. */
    CHECK(cpu < took / 2);
    event_free(safety);
    event_free(c.ev);
    free_base(c.base);
}

static void run_all(void)
{
    RUN(test_exit_before_loop);
    RUN(test_clock_once_per_turn);
    RUN(test_fallback_without_turn_loop);
    RUN(test_turn_loop_runs_after_the_turn);
    RUN(test_deferred_work_defers_more);
    RUN(test_cancel);
    RUN(test_fd_read_then_write_once);
    RUN(test_fd_released_in_its_batch);
    RUN(test_timer_set_from_fd_callback);
    RUN(test_timer_moved_earlier);
    RUN(test_activation_from_fd_callback);
    RUN(test_libevent_fd_served);
    RUN(test_spinning_timer_leaves_fds_served);
    RUN(test_activation_before_deferred_work);
    RUN(test_timers_in_a_row);
}

int main(void)
{
    printf("# on event_base_new (libevent's loop, the own set as one of its events)\n");
    run_all();
    own_pass = true;
    printf("# on turn_base_new (the own loop)\n");
    run_all();
    return test_main_result();
}
