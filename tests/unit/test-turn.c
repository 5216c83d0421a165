// SPDX-License-Identifier: MIT
// test-turn: work deferred to the end of a loop turn (daemon/sys/turn.c), on a real event loop:
// run by turn_loop after the turn's events, or by its fallback event under a plain libevent loop.

#include <event2/event.h>

#include "common/util.h"
#include "daemon/sys/turn.h"
#include "tests/unit/test.h"

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
    struct event_base *base = event_base_new();
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
    event_base_free(base);
}

static void test_turn_loop_runs_after_the_turn(void)
{
    struct event_base *base = event_base_new();
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
    event_base_free(base);
}

static void test_deferred_work_defers_more(void)
{
    struct event_base *base = event_base_new();
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
    event_base_free(base);
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
        struct event_base *base = event_base_new();
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
        event_base_free(base);
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
    struct event_base *base = event_base_new();
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
    event_base_free(base);
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
    struct event_base *base = event_base_new();
    int ticks = 0;
    struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, &ticks);
    struct timeval every = {0, 5000};

    event_add(tick, &every);
    turn_loop_exit(base);
    CHECK_INTEQ(turn_loop(base), 0);
    CHECK(ticks <= 1);
    /* The request was taken: a later loop runs until stopped again. */
    event_free(tick);
    event_base_free(base);
}

int main(void)
{
    RUN(test_exit_before_loop);
    RUN(test_clock_once_per_turn);
    RUN(test_fallback_without_turn_loop);
    RUN(test_turn_loop_runs_after_the_turn);
    RUN(test_deferred_work_defers_more);
    RUN(test_cancel);
    return test_main_result();
}
