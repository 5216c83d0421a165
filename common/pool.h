// SPDX-License-Identifier: MIT
// pool: a free list of same-size objects made and freed on every request (a call, a pending
// upstream request). With a hundred agents a hundred of each are alive at once, more than
// malloc's per-thread cache keeps (7 per size), so without the list each one takes malloc's
// slow path twice.
#pragma once

#include <stddef.h>
#include <string.h>

#include "common/util.h"

typedef struct Pool {
    void *free;  /* the first free object; each starts with the pointer to the next */
    size_t n;    /* objects in the list */
    size_t max;  /* kept at most: the memory a burst leaves behind is bounded */
    size_t size; /* of one object, at least a pointer */
} Pool;

#define POOL_INIT(type, max_kept)                                                                  \
    {                                                                                              \
        NULL, 0, (max_kept), sizeof(type)                                                          \
    }

/** A zeroed object, from the list when it has one. */
static inline void *pool_get(Pool *p)
{
    void *o = p->free;

    if (!o)
        return xcalloc(1, p->size);
    memcpy(&p->free, o, sizeof(void *));
    p->n--;
    return memset(o, 0, p->size);
}

/** Give o back (NULL is fine): kept for reuse up to max, freed beyond. */
static inline void pool_put(Pool *p, void *o)
{
    if (!o)
        return;
    if (p->n >= p->max) {
        free(o);
        return;
    }
    memcpy(o, &p->free, sizeof(void *));
    p->free = o;
    p->n++;
}

/** Free every kept object (at exit, so leak checkers see a clean heap). */
static inline void pool_drain(Pool *p)
{
    while (p->free) {
        void *o = p->free;
        memcpy(&p->free, o, sizeof(void *));
        free(o);
    }
    p->n = 0;
}
