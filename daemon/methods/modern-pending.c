// SPDX-License-Identifier: MIT
// modern-pending: a 2026-07-28 agent's requests in flight (its ModernAgent's Pending entries),
// found by the id the handlers answer, the id the agent knows by now or the requestState token.

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/config/configset.h"
#include "daemon/methods/modern-pending.h"

/*
 * A request mcpd has not answered after this long no longer counts toward that bound once the
 * bound is reached: a call's own timeout is at most 10 min (CONFIG_MAX_CALL_TIMEOUT_MS), so an
 * entry twice as old is one whose answer was lost, not one still running (or one a progress
 * stream keeps alive, which only loses its reshaping: its answer still goes out, complete).
 * Calls in MRTR have their own expiry (MODERN_RETRY_WAIT_MS) and are left alone.
 */
#define MODERN_PENDING_STALE_MS (2 * CONFIG_MAX_CALL_TIMEOUT_MS)

void modern_pending_held_clear(Pending *pd)
{
    json_free(pd->held.result);
    free((void *)pd->held.raw);
    free((void *)pd->held.message);
    json_free(pd->held.data);
    pd->held = (AgentOut){0};
    pd->has_held = false;
}

void modern_pending_free(Pending *pd)
{
    if (pd->expiry)
        event_free(pd->expiry);
    json_free(pd->asks);
    json_free(pd->shown);
    modern_pending_held_clear(pd);
    free(pd->id);
    free(pd->down_id);
    free(pd->method);
    free(pd);
}

/* The text pd is found by in one index. */
static const char *index_text(const Pending *pd, int which)
{
    switch (which) {
    case MODERN_BY_ID:
        return pd->id;
    case MODERN_BY_DOWN:
        return pd->down_id ? pd->down_id : pd->id;
    default:
        return pd->token;
    }
}

static uint64_t index_key(const char *text)
{
    uint64_t k = hash_fnv1a(text, strlen(text));

    return k == 0 || k == IDMAP_TOMBSTONE ? 1 : k; /* the two keys IdMap keeps for itself */
}

void modern_pending_index_add(ModernAgent *ma, Pending *pd, int which)
{
    uint64_t k = index_key(index_text(pd, which));

    pd->same[which] = idmap_get(&ma->index[which], k);
    idmap_put(&ma->index[which], k, pd);
    pd->indexed[which] = true;
}

void modern_pending_index_remove(ModernAgent *ma, Pending *pd, int which)
{
    uint64_t k = index_key(index_text(pd, which));
    Pending **pp = NULL, *head = idmap_get(&ma->index[which], k);

    if (!pd->indexed[which])
        return;
    pd->indexed[which] = false;
    if (head == pd) {
        if (pd->same[which])
            idmap_put(&ma->index[which], k, pd->same[which]);
        else
            idmap_remove(&ma->index[which], k);
        return;
    }
    for (pp = head ? &head->same[which] : NULL; pp && *pp; pp = &(*pp)->same[which])
        if (*pp == pd) {
            *pp = pd->same[which];
            return;
        }
}

Pending *modern_pending_find(ModernAgent *ma, const char *text, int which)
{
    for (Pending *pd = idmap_get(&ma->index[which], index_key(text)); pd; pd = pd->same[which])
        if (streq(index_text(pd, which), text))
            return pd;
    return NULL;
}

Pending *modern_pending_add(ModernAgent *ma, const char *id, const char *method)
{
    Pending *pd = xcalloc(1, sizeof(*pd));

    pd->id = xstrdup(id);
    pd->method = xstrdup(method);
    pd->since_ms = now_ms();
    pd->ma = ma;
    list_push(&ma->pending, &pd->node);
    modern_pending_index_add(ma, pd, MODERN_BY_ID);
    modern_pending_index_add(ma, pd, MODERN_BY_DOWN);
    return pd;
}

void modern_pending_unlink(ModernAgent *ma, Pending *pd)
{
    for (int i = 0; i < MODERN_N_INDEX; i++)
        modern_pending_index_remove(ma, pd, i);
    list_unlink(&pd->node);
}

void modern_pending_remove(ModernAgent *ma, Pending *pd)
{
    modern_pending_unlink(ma, pd);
    modern_pending_free(pd);
}

void modern_pending_sweep(ModernAgent *ma)
{
    int64_t now = now_ms();

    for (ListNode *n = ma->pending.first, *next; n; n = next) {
        Pending *pd = (Pending *)n;
        next = n->next;
        if (pd->token[0] || pd->parked || now - pd->since_ms < MODERN_PENDING_STALE_MS)
            continue;
        log_info("peer %llu: %s %s unanswered after %d s: no longer counted",
                 (unsigned long long)ma->peer_id, pd->method, pd->id,
                 (int)(MODERN_PENDING_STALE_MS / 1000));
        modern_pending_remove(ma, pd);
    }
}

void modern_pending_clear(ModernAgent *ma)
{
    while (ma->pending.first) {
        Pending *pd = (Pending *)ma->pending.first;
        list_unlink(&pd->node);
        modern_pending_free(pd);
    }
    for (int i = 0; i < MODERN_N_INDEX; i++)
        idmap_deinit(&ma->index[i]);
}
