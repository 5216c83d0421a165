// SPDX-License-Identifier: MIT
// list: an intrusive doubly linked list with a count, for members that are only walked or
// unlinked (the calls of one agent, of one server): no table, no allocation per member.
#pragma once

#include <stddef.h>

/* A member's link; all zero: in no list. */
typedef struct ListNode {
    struct ListNode *next;
    struct ListNode **pprev; /* the pointer that points at this node */
    struct List *list;       /* the list it is in, or NULL */
} ListNode;

/* All zero: an empty list. */
typedef struct List {
    ListNode *first;
    size_t n;
} List;

/** Put n (in no list) at the front of l. */
static inline void list_push(List *l, ListNode *n)
{
    n->next = l->first;
    if (l->first)
        l->first->pprev = &n->next;
    l->first = n;
    n->pprev = &l->first;
    n->list = l;
    l->n++;
}

/** Take n out of its list; a node in no list is left alone. */
static inline void list_unlink(ListNode *n)
{
    if (!n->list)
        return;
    *n->pprev = n->next;
    if (n->next)
        n->next->pprev = n->pprev;
    n->list->n--;
    n->next = NULL;
    n->pprev = NULL;
    n->list = NULL;
}

/**
 * Forget every member (the list's owner goes first): each is left in no list, so unlinking it
 * later is harmless.
 */
static inline void list_detach_all(List *l)
{
    for (ListNode *n = l->first, *next; n; n = next) {
        next = n->next;
        n->next = NULL;
        n->pprev = NULL;
        n->list = NULL;
    }
    l->first = NULL;
    l->n = 0;
}
