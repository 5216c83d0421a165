// SPDX-License-Identifier: MIT
// idmap: an open-addressing hash table from 64-bit ids to pointers (peers, requests, children).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Id 0 is reserved as the empty slot marker: allocate ids from 1. */
typedef struct IdMap {
    uint64_t *keys;
    void **values;
    size_t cap; /* power of two, or 0 */
    size_t n;
    size_t n_used; /* live plus tombstones */
} IdMap;

#define IDMAP_INIT                                                                                 \
    {                                                                                              \
        NULL, NULL, 0, 0, 0                                                                        \
    }

/** Return the value for id, or NULL. */
void *idmap_get(const IdMap *m, uint64_t id);
/** Insert or replace; id must not be 0. */
void idmap_put(IdMap *m, uint64_t id, void *value);
/** Remove and return the value for id (NULL if absent). */
void *idmap_remove(IdMap *m, uint64_t id);
/** Release the table (not the values); safe on a zeroed value. */
void idmap_deinit(IdMap *m);
/**
 * Iterate: start with *pos = 0; returns false at the end. Removing the current entry during
 * iteration is allowed; inserting is not.
 */
bool idmap_next(const IdMap *m, size_t *pos, uint64_t *idp, void **valuep);
