// SPDX-License-Identifier: MIT
// turn: work deferred to the end of the event loop's turn (see turn.h).
//
// Why not one libevent event per task: activating an event, dispatching it and taking it off
// the active queue costs some 300 instructions, twice per tools/call (the request written to
// the server's stdin, the reply written to the agent), a tenth of what mcpd spends on a call.
// turn_loop runs libevent one turn at a time (EVLOOP_ONCE: poll, then every callback that is
// ready, including those made ready meanwhile) and then the deferred tasks, from a plain list.

#include "common/util.h"
#include "daemon/sys/turn.h"

/* The base whose loop turn_loop runs now (NULL: none), and its queue, oldest first. */
static struct event_base *driven;
static TurnTask *head, *tail;
static bool stopping; /* turn_loop_exit was called for driven */
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

int turn_loop(struct event_base *base)
{
    int r;

    if (exit_asked == base) {
        exit_asked = NULL;
        return 0;
    }
    driven = base;
    stopping = false;
    do {
        r = event_base_loop(base, EVLOOP_ONCE);
        run_queued();
        turn_ms_read = false; /* the next turn reads the clock afresh */
    } while (r == 0 && !stopping);
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
    event_base_loopexit(base, NULL); /* ends the turn under way, or a loop run otherwise */
}
