// SPDX-License-Identifier: MIT
// idmap: an open-addressing hash table from 64-bit ids to pointers (peers, requests, children).

#include "common/idmap.h"
#include "common/util.h"

#define TOMBSTONE IDMAP_TOMBSTONE

static size_t slot_of(uint64_t id, size_t cap)
{
    return idmap_slot(id, cap);
}

static void rehash(IdMap *m, size_t cap)
{
    IdMap nm = {xcalloc(cap, sizeof(uint64_t)), xcalloc(cap, sizeof(void *)), cap, 0, 0};

    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] && m->keys[i] != TOMBSTONE)
            idmap_put(&nm, m->keys[i], m->values[i]);
    free(m->keys);
    free(m->values);
    *m = nm;
}

void *idmap_get_probe(const IdMap *m, uint64_t id)
{
    if (!m->cap || !id || id == TOMBSTONE)
        return NULL;
    for (size_t i = slot_of(id, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == id)
            return m->values[i];
        if (!m->keys[i])
            return NULL;
    }
}

void idmap_put_probe(IdMap *m, uint64_t id, void *value)
{
    size_t tomb = SIZE_MAX;

    /*
     * At most half full, tombstones included: linear probing's misses (every put, and every
     * lookup of a removed id) stay near two probes. The maps of calls and requests churn, a
     * put and a remove per request, so their tombstones are cleared by a rehash at the same
     * size; a map whose live entries fill a quarter grows.
     */
    if ((m->n_used + 1) * 2 >= m->cap)
        rehash(m, m->cap ? (m->n * 4 >= m->cap ? m->cap * 2 : m->cap) : 16);
    for (size_t i = slot_of(id, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == id) {
            m->values[i] = value;
            return;
        }
        if (m->keys[i] == TOMBSTONE && tomb == SIZE_MAX)
            tomb = i;
        if (!m->keys[i]) {
            if (tomb != SIZE_MAX)
                i = tomb;
            else
                m->n_used++;
            m->keys[i] = id;
            m->values[i] = value;
            m->n++;
            return;
        }
    }
}

void *idmap_remove_probe(IdMap *m, uint64_t id)
{
    if (!m->cap || !id || id == TOMBSTONE)
        return NULL;
    for (size_t i = slot_of(id, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == id) {
            void *v = m->values[i];
            m->values[i] = NULL;
            m->n--;
            if (m->keys[(i + 1) & (m->cap - 1)]) {
                m->keys[i] = TOMBSTONE; /* a probe chain may run through it */
                return v;
            }
            /*
             * The end of a chain: no lookup passes this slot, so it is empty again, and so are
             * the tombstones just before it. At the usual low load most removes end here, so a
             * map that churns (a put and a remove per request) is seldom rehashed.
             */
            m->keys[i] = 0;
            m->n_used--;
            for (i = (i - 1) & (m->cap - 1); m->keys[i] == TOMBSTONE; i = (i - 1) & (m->cap - 1)) {
                m->keys[i] = 0;
                m->n_used--;
            }
            return v;
        }
        if (!m->keys[i])
            return NULL;
    }
}

void idmap_deinit(IdMap *m)
{
    free(m->keys);
    free(m->values);
    *m = (IdMap)IDMAP_INIT;
}

bool idmap_next(const IdMap *m, size_t *pos, uint64_t *idp, void **valuep)
{
    for (; *pos < m->cap; (*pos)++) {
        uint64_t k = m->keys[*pos];
        if (k && k != TOMBSTONE) {
            if (idp)
                *idp = k;
            if (valuep)
                *valuep = m->values[*pos];
            (*pos)++;
            return true;
        }
    }
    return false;
}
