// SPDX-License-Identifier: MIT
// deadline: many deadlines behind one timer. Requests to one server mostly share a timeout, so
// each new deadline is the latest: keeping them sorted costs O(1), and no request needs a timer
// (an event to allocate, add to libevent's heap, delete and free) of its own.
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct event_base;
struct event;

/* Embedded in what has a deadline (container_of finds it back). */
typedef struct DeadlineNode {
    struct DeadlineNode *prev, *next;
    uint64_t at_ms; /* monotonic (now_ms()); 0 while not queued */
} DeadlineNode;

/* Called for a node whose deadline has passed, already out of the queue; may free it, queue or
 * clear other nodes, or deinit the queue's owner only if it stops the queue first. */
typedef void (*DeadlineFn)(DeadlineNode *n, void *ud);

typedef struct DeadlineQueue {
    DeadlineNode *head, *tail; /* earliest first */
    struct event *timer;       /* set for the head's deadline, or later (re-armed when it fires) */
    uint64_t armed_ms;         /* when the timer is due, 0 when it is not pending */
    DeadlineFn expired;
    void *ud;
    bool firing;
} DeadlineQueue;

void deadline_init(DeadlineQueue *q, struct event_base *base, DeadlineFn expired, void *ud);
/* Frees the timer; the nodes still queued are left alone (their owner frees them). */
void deadline_deinit(DeadlineQueue *q);
/* Queue n for at_ms (moving it if already queued); at_ms 0 takes it out. */
void deadline_set(DeadlineQueue *q, DeadlineNode *n, uint64_t at_ms);
void deadline_clear(DeadlineQueue *q, DeadlineNode *n);
