// SPDX-License-Identifier: MIT
// deadline: many deadlines behind one timer (see deadline.h).

#include <event2/event.h>

#include "common/util.h"
#include "daemon/sys/deadline.h"
#include "daemon/sys/turn.h"

static void arm(DeadlineQueue *q)
{
    uint64_t now, at;
    struct timeval tv;

    if (!q->head || q->firing)
        return; /* the firing loop re-arms when it is done */
    at = q->head->at_ms;
    if (q->armed_ms && q->armed_ms <= at)
        return;          /* due no later than the head: it will re-arm for the head then */
    now = turn_now_ms(); /* the deadlines were counted from the same reading */
    /* At least 1 ms: a timer due now would only spin the loop until the clock moves on. */
    uint64_t ms = at > now ? at - now : 1;
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
    evtimer_add(q->timer, &tv);
    q->armed_ms = now + ms;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    DeadlineQueue *q = arg;
    uint64_t now = now_ms();

    (void)fd, (void)what;
    q->armed_ms = 0;
    q->firing = true;
    /* The callback may change the queue, so the head is taken afresh each time. */
    while (q->head && q->head->at_ms <= now) {
        DeadlineNode *n = q->head;
        deadline_clear(q, n);
        q->expired(n, q->ud);
    }
    q->firing = false;
    arm(q);
}

void deadline_init(DeadlineQueue *q, struct event_base *base, DeadlineFn expired, void *ud)
{
    *q = (DeadlineQueue){.expired = expired, .ud = ud};
    q->timer = evtimer_new(base, on_timer, q);
}

void deadline_deinit(DeadlineQueue *q)
{
    if (q->timer)
        event_free(q->timer);
    *q = (DeadlineQueue){0};
}

void deadline_clear(DeadlineQueue *q, DeadlineNode *n)
{
    if (!n->at_ms)
        return;
    if (n->prev)
        n->prev->next = n->next;
    else
        q->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        q->tail = n->prev;
    n->prev = n->next = NULL;
    n->at_ms = 0;
    /* The timer stays set: when it fires early it only re-arms for the new head. */
}

void deadline_set(DeadlineQueue *q, DeadlineNode *n, uint64_t at_ms)
{
    DeadlineNode *after;

    deadline_clear(q, n);
    if (!at_ms)
        return;
    n->at_ms = at_ms;
    /* From the tail: the newest deadline is almost always the latest. */
    for (after = q->tail; after && after->at_ms > at_ms; after = after->prev)
        ;
    n->prev = after;
    n->next = after ? after->next : q->head;
    if (n->next)
        n->next->prev = n;
    else
        q->tail = n;
    if (after)
        after->next = n;
    else
        q->head = n;
    arm(q);
}
