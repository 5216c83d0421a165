// SPDX-License-Identifier: MIT
// test-list: unit tests for the intrusive list (calls of an agent, of a server).

#include <stddef.h>

#include "common/list.h"
#include "common/util.h"
#include "tests/unit/test.h"

typedef struct Item {
    int v;
    ListNode node;
} Item;

/* The values in list order, as a number (digits), and a check that the links agree. */
static int values(const List *l)
{
    int r = 0;
    size_t n = 0;
    ListNode *const *pp = &l->first;

    for (ListNode *x = l->first; x; x = x->next, n++) {
        CHECK(x->pprev == pp);
        CHECK(x->list == l);
        pp = &x->next;
        r = r * 10 + container_of(x, Item, node)->v;
    }
    CHECK_INTEQ(n, l->n);
    return r;
}

static void test_zeroed(void)
{
    List l = {0};
    Item a = {.v = 1};

    CHECK_INTEQ(values(&l), 0);
    list_unlink(&a.node); /* in no list: nothing */
    CHECK(a.node.list == NULL);
    list_detach_all(&l);
    CHECK_INTEQ(l.n, 0);
}

static void test_push_unlink_anywhere(void)
{
    List l = {0};
    Item it[4] = {{.v = 1}, {.v = 2}, {.v = 3}, {.v = 4}};

    for (int i = 0; i < 4; i++)
        list_push(&l, &it[i].node);
    CHECK_INTEQ(values(&l), 4321);
    list_unlink(&it[1].node); /* the middle */
    CHECK_INTEQ(values(&l), 431);
    list_unlink(&it[3].node); /* the first */
    CHECK_INTEQ(values(&l), 31);
    list_unlink(&it[0].node); /* the last */
    CHECK_INTEQ(values(&l), 3);
    list_unlink(&it[0].node); /* twice: nothing */
    CHECK_INTEQ(values(&l), 3);
    list_push(&l, &it[0].node); /* back in */
    CHECK_INTEQ(values(&l), 13);
    list_unlink(&it[2].node);
    list_unlink(&it[0].node);
    CHECK_INTEQ(values(&l), 0);
    CHECK(l.first == NULL);
}

static void test_two_lists_per_item(void)
{
    typedef struct Two {
        ListNode a, b;
    } Two;
    List la = {0}, lb = {0};
    Two t[3];

    for (int i = 0; i < 3; i++) {
        t[i] = (Two){0};
        list_push(&la, &t[i].a);
        list_push(&lb, &t[i].b);
    }
    list_unlink(&t[1].a);
    CHECK_INTEQ(la.n, 2);
    CHECK_INTEQ(lb.n, 3);
    CHECK(t[1].b.list == &lb);
    list_unlink(&t[1].b);
    CHECK_INTEQ(lb.n, 2);
    CHECK(la.first == &t[2].a && la.first->next == &t[0].a);
    CHECK(lb.first == &t[2].b && lb.first->next == &t[0].b);
}

/* The owner goes first: its members are left in no list, and unlinking them later is safe. */
static void test_detach_all_then_unlink(void)
{
    List *l = xcalloc(1, sizeof(*l));
    Item it[3] = {{.v = 1}, {.v = 2}, {.v = 3}};

    for (int i = 0; i < 3; i++)
        list_push(l, &it[i].node);
    list_detach_all(l);
    CHECK_INTEQ(l->n, 0);
    CHECK(l->first == NULL);
    free(l); /* under ASan, a later write through a stale link would be caught */
    for (int i = 0; i < 3; i++) {
        CHECK(it[i].node.list == NULL);
        list_unlink(&it[i].node);
    }
    List l2 = {0};
    list_push(&l2, &it[1].node); /* and they can join another list */
    CHECK_INTEQ(values(&l2), 2);
}

int main(void)
{
    RUN(test_zeroed);
    RUN(test_push_unlink_anywhere);
    RUN(test_two_lists_per_item);
    RUN(test_detach_all_then_unlink);
    return test_main_result();
}
