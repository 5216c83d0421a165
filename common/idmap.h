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

/* A removed slot's key: it keeps probing chains intact. */
#define IDMAP_TOMBSTONE UINT64_MAX

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
/** idmap_put for what its inline first try does not settle. */
void idmap_put_probe(IdMap *m, uint64_t id, void *value);
/** Insert or replace; id must not be 0. */
static inline void idmap_put(IdMap *m, uint64_t id, void *value)
{
    /* The usual insert, with no call: room without a rehash (the same bound as idmap_put_probe's)
     * and the id's first slot empty, so it is in no later slot of its probe either. */
    if ((m->n_used + 1) * 2 < m->cap) {
        size_t i = idmap_slot(id, m->cap);
        if (!m->keys[i]) {
            m->keys[i] = id;
            m->values[i] = value;
            m->n++;
            m->n_used++;
            return;
        }
    }
    idmap_put_probe(m, id, value);
}
/** idmap_remove for what its inline first try does not settle. */
void *idmap_remove_probe(IdMap *m, uint64_t id);
/** Remove and return the value for id (NULL if absent). */
static inline void *idmap_remove(IdMap *m, uint64_t id)
{
    /* The usual remove, with no call: id at its first slot, ending its chain (the next slot
     * empty) with no tombstone before it, so the slot simply becomes empty again. */
    if (m->cap && id != IDMAP_TOMBSTONE) {
        size_t mask = m->cap - 1, i = idmap_slot(id, m->cap);
        if (m->keys[i] == id && id && !m->keys[(i + 1) & mask] &&
            m->keys[(i - 1) & mask] != IDMAP_TOMBSTONE) {
            void *v = m->values[i];
            m->values[i] = NULL;
            m->keys[i] = 0;
            m->n--;
            m->n_used--;
            return v;
        }
    }
    return idmap_remove_probe(m, id);
}
/** Release the table (not the values); safe on a zeroed value. */
void idmap_deinit(IdMap *m);
/**
 * Iterate: start with *pos = 0; returns false at the end. Removing the current entry during
 * iteration is allowed; inserting is not.
 */
bool idmap_next(const IdMap *m, size_t *pos, uint64_t *idp, void **valuep);
