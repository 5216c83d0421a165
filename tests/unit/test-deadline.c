// SPDX-License-Identifier: MIT
// test-deadline: many deadlines behind one timer (daemon/sys/deadline.c), on a real event loop.

#include <event2/event.h>
#include <stdint.h>

#include "common/util.h"
#include "daemon/sys/deadline.h"
#include "tests/unit/test.h"

typedef struct Item {
    DeadlineNode node;
    int tag;
} Item;

typedef struct Fired {
    int order[16];
    uint64_t at[16];
    int n;
    DeadlineQueue *q;
    Item *clear_on_fire; /* cleared by the first expiry: a callback may change the queue */
    Item *requeue;       /* queued again by the first expiry, 40 ms later */
} Fired;

static void on_expired(DeadlineNode *n, void *ud)
{
    Fired *f = ud;
    Item *it = container_of(n, Item, node);

    CHECK(n->at_ms == 0); /* out of the queue before the callback */
    if (f->n < 16) {
        f->at[f->n] = now_ms();
        f->order[f->n++] = it->tag;
    }
    if (f->n == 1 && f->clear_on_fire)
        deadline_clear(f->q, &f->clear_on_fire->node);
    if (f->n == 1 && f->requeue)
        deadline_set(f->q, &f->requeue->node, now_ms() + 40);
}

/* Run the loop until nothing is queued (bounded: a broken queue must not hang the test). */
static void run(struct event_base *base, DeadlineQueue *q)
{
    uint64_t give_up = now_ms() + 10000;

    while (q->head && now_ms() < give_up)
        event_base_loop(base, EVLOOP_ONCE);
    CHECK(q->head == NULL);
}

static void test_order_and_timing(void)
{
    struct event_base *base = event_base_new();
    DeadlineQueue q;
    Fired f = {.q = &q};
    Item it[5] = {{.tag = 0}, {.tag = 1}, {.tag = 2}, {.tag = 3}, {.tag = 4}};
    uint64_t t0 = now_ms();

    deadline_init(&q, base, on_expired, &f);
    /* Out of order, one moved later and one moved earlier, one taken out. */
    deadline_set(&q, &it[0].node, t0 + 60);
    deadline_set(&q, &it[1].node, t0 + 20);
    deadline_set(&q, &it[2].node, t0 + 40);
    deadline_set(&q, &it[3].node, t0 + 30);
    deadline_set(&q, &it[4].node, t0 + 50);
    deadline_set(&q, &it[1].node, t0 + 70); /* progress pushes it back */
    deadline_set(&q, &it[0].node, t0 + 10); /* and this one forward */
    deadline_clear(&q, &it[4].node);
    deadline_clear(&q, &it[4].node); /* twice is harmless */
    run(base, &q);
    CHECK_INTEQ(f.n, 4);
    int want[] = {0, 3, 2, 1};
    uint64_t due[] = {10, 30, 40, 70};
    for (int i = 0; i < 4 && i < f.n; i++) {
        CHECK_INTEQ(f.order[i], want[i]);
        /* Never early; late only by what a loaded machine adds (a generous bound). */
        CHECK_MSG(f.at[i] >= t0 + due[i], "item %d fired at +%" PRIu64 " ms, due +%" PRIu64,
                  want[i], f.at[i] - t0, due[i]);
        CHECK_MSG(f.at[i] < t0 + due[i] + 5000, "item %d fired %" PRIu64 " ms late", want[i],
                  f.at[i] - t0 - due[i]);
    }
    deadline_deinit(&q);
    event_base_free(base);
}

static void test_changes_from_the_callback(void)
{
    struct event_base *base = event_base_new();
    DeadlineQueue q;
    Fired f = {.q = &q};
    Item a = {.tag = 1}, b = {.tag = 2}, c = {.tag = 3};
    uint64_t t0 = now_ms();

    deadline_init(&q, base, on_expired, &f);
    deadline_set(&q, &a.node, t0 + 10);
    deadline_set(&q, &b.node, t0 + 30); /* cleared when a fires: never fires */
    deadline_set(&q, &c.node, t0 + 20); /* queued again when a fires: fires once, later */
    f.clear_on_fire = &b;
    f.requeue = &c;
    run(base, &q);
    CHECK_INTEQ(f.n, 2);
    CHECK_INTEQ(f.order[0], 1);
    CHECK_INTEQ(f.order[1], 3);
    CHECK(f.n < 2 || f.at[1] >= f.at[0] + 40);
    deadline_deinit(&q);
    event_base_free(base);
}

static void test_same_deadline_keeps_arrival_order(void)
{
    struct event_base *base = event_base_new();
    DeadlineQueue q;
    Fired f = {.q = &q};
    Item it[8];
    uint64_t at = now_ms() + 15;

    deadline_init(&q, base, on_expired, &f);
    for (int i = 0; i < 8; i++) {
        it[i] = (Item){.tag = i};
        deadline_set(&q, &it[i].node, at);
    }
    run(base, &q);
    CHECK_INTEQ(f.n, 8);
    for (int i = 0; i < 8 && i < f.n; i++)
        CHECK_INTEQ(f.order[i], i);
    deadline_deinit(&q);
    event_base_free(base);
}

int main(void)
{
    RUN(test_order_and_timing);
    RUN(test_changes_from_the_callback);
    RUN(test_same_deadline_keeps_arrival_order);
    return test_main_result();
}
