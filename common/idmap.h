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

/* The slot an id's probe starts at (cap a power of two). */
static inline size_t idmap_slot(uint64_t id, size_t cap)
{
    /* Ids are sequential: mix them so neighbours do not cluster. */
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return (size_t)id & (cap - 1);
}

/** idmap_get past the first slot of the probe (idmap_get tries that one inline). */
void *idmap_get_probe(const IdMap *m, uint64_t id);
/** Return the value for id, or NULL. */
static inline void *idmap_get(const IdMap *m, uint64_t id)
{
    /* The usual hit, at the probe's first slot, costs no call. An empty slot (key 0) or a
     * tombstone holds a NULL value, so id 0 or TOMBSTONE finds NULL here as it should. */
    if (m->cap) {
        size_t i = idmap_slot(id, m->cap);
        if (m->keys[i] == id)
            return m->values[i];
        if (!m->keys[i])
            return NULL;
    }
    return idmap_get_probe(m, id);
}
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
