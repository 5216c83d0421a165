// SPDX-License-Identifier: MIT
// modern-pending: a 2026-07-28 agent's requests in flight (its ModernAgent's Pending entries),
// found by the id the handlers answer, the id the agent knows by now or the requestState token.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/idmap.h"
#include "common/list.h"
#include "daemon/core/agent.h"
#include "daemon/methods/modern-listen.h"
#include "daemon/methods/modern-state.h"

typedef struct Manager Manager;

/*
 * Requests one modern agent may have in flight. Calls are bounded on their own (per agent,
 * in call.c); this bounds what the writer remembers per connection (lists, reads, gets
 * waiting for a server to start), far above what an agent sends at once.
 */
#define MODERN_MAX_PENDING 1024

/*
 * The indexes of a connection's requests in flight, each an IdMap from a hash of the text to
 * the first of the requests whose text has that hash (a chain through Pending.same): by the id
 * the handlers answer, by the id the agent knows it by now, by its requestState token.
 */
enum { MODERN_BY_ID, MODERN_BY_DOWN, MODERN_BY_TOKEN, MODERN_N_INDEX };

/* A request of the agent not yet answered. */
typedef struct Pending {
    ListNode node; /* in ModernAgent.pending (first: the node is the Pending) */
    struct Pending *same[MODERN_N_INDEX]; /* the next with the same hash, per index */
    bool indexed[MODERN_N_INDEX];
    char *id;      /* the id the handlers answer (JSON text): the agent's first request's */
    char *down_id; /* the id of the agent's latest retry, or NULL: id */
    char *method;
    int64_t since_ms; /* when the agent sent it */
    /* MRTR: a legacy server's requests during this call, carried to the agent as input. */
    char token[2 * MODERN_TOKEN_BYTES + 1]; /* the requestState, "" until needed */
    bool parked;                            /* an input_required went out: wait for a retry */
    yajl_val asks;                          /* key -> {method, params} not yet shown */
    yajl_val shown;                         /* key -> request id, shown in the last one */
    /* The final answer, come while parked (what it points to is owned here): sent after the
     * retry, as if it came then. */
    AgentOut held;
    bool has_held;
    struct event *expiry;
    struct ModernAgent *ma;
} Pending;

/* What mcpd keeps for one 2026-07-28 agent (Agent.modern), made by methods-modern.c. */
typedef struct ModernAgent {
    AgentWriter writer; /* its peer's (Peer.writer): what the core says to it goes through here */
    Manager *mg;
    uint64_t peer_id;
    List pending; /* of Pending; ma->pending.n counts them */
    IdMap index[MODERN_N_INDEX];
    ModernListens listens; /* its subscriptions/listen streams (modern-listen.c) */
    WrapTable wrapped;     /* a modern server's requestStates, under tokens of mcpd's */
    char *cwd, *session;   /* what it attached with ("" for none) */
    bool told_session;     /* its session token went out (_meta of its first result) */
} ModernAgent;

/** A new request of the agent's (id: its id as JSON text), found by its id in both id indexes. */
Pending *modern_pending_add(ModernAgent *ma, const char *id, const char *method);
/** Put pd in one index (MODERN_BY_*), under its text there now. */
void modern_pending_index_add(ModernAgent *ma, Pending *pd, int which);
/** Take pd out of one index (nothing when it is not in it). */
void modern_pending_index_remove(ModernAgent *ma, Pending *pd, int which);
/** The request whose text in one index is text, or NULL. */
Pending *modern_pending_find(ModernAgent *ma, const char *text, int which);
/** Free the answer pd holds (Pending.held) and mark it gone. */
void modern_pending_held_clear(Pending *pd);
/** Take pd out of the agent's list and every index, not freeing it. */
void modern_pending_unlink(ModernAgent *ma, Pending *pd);
/** Free pd, which is in no list or index any more. */
void modern_pending_free(Pending *pd);
/** Unlink and free pd: the request is done. */
void modern_pending_remove(ModernAgent *ma, Pending *pd);
/** Forget requests never answered (too old to be running), so they stop counting. */
void modern_pending_sweep(ModernAgent *ma);
/** The agent went: every request and the indexes freed. */
void modern_pending_clear(ModernAgent *ma);
