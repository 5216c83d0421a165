// SPDX-License-Identifier: MIT
// turn: work deferred to the end of the event loop's turn (writes that batch what one turn made),
// run by the daemon's own loop with no libevent event per turn, or by an event where no such
// loop runs (a test driving libevent itself).
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

/*
 * One piece of deferred work (a peer registry's flush, a server's stdin write), embedded in its
 * owner. Deferring it again before it ran is free: it runs once per turn at most.
 */
typedef struct TurnTask {
    struct TurnTask *next; /* in the queue of the loop run by turn_loop */
    struct event_base *base;
    struct event *ev; /* activated instead when no turn_loop runs on base */
    event_callback_fn fn;
    void *arg;
    bool queued;
} TurnTask;

/** Set up a task that calls fn(-1, EV_TIMEOUT, arg) at the end of a turn of base's loop. */
void turn_task_init(TurnTask *t, struct event_base *base, event_callback_fn fn, void *arg);
/** Take the task out of the turn if it is queued; safe on a zeroed or deinitialized task. */
void turn_cancel(TurnTask *t);
/** Cancel and release the task; safe on a zeroed value. */
void turn_task_deinit(TurnTask *t);
/** Run t once the loop has handled every event ready in this turn (no-op if already queued). */
void turn_defer(TurnTask *t);
/**
 * Run base's loop until turn_loop_exit (or until it has no events): each turn handles what is
 * ready, then the tasks deferred meanwhile; nothing is left queued when it returns. Returns -1
 * on a libevent error, else 0. It does not look for event_base_loopexit or loopbreak after
 * each turn (that costs two calls into libevent a turn): use turn_loop_exit to stop it.
 */
int turn_loop(struct event_base *base);
/**
 * The monotonic clock in ms (now_ms), read once per turn of turn_loop and kept for the rest of
 * it (a turn lasts well under the millisecond deadlines and idle times are counted in), so a
 * turn that starts a hundred calls reads it once; read each time when no turn_loop runs.
 */
uint64_t turn_now_ms(void);
/** Stop turn_loop on base after the current turn (event_base_loopexit when none runs). */
void turn_loop_exit(struct event_base *base);
