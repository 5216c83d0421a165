// SPDX-License-Identifier: MIT
// modern-writer: what the core says to a 2026-07-28 agent, written in the era's form (its
// AgentWriter): resultType, the session token, list ttl, error codes, answers held for a retry.
#pragma once

#include "daemon/core/agent.h"
#include "daemon/downstream/peer.h"
#include "daemon/methods/modern-pending.h"

/*
 * ttlMs on list results: mcpd's lists change when servers come and go, which listeners hear
 * at once; a client that does not listen re-lists after this long.
 */
#define MODERN_LIST_TTL_MS 60000

/**
 * The era's writer (AgentWriter.write of a ModernAgent, its first member): a result or error
 * goes out under the id the agent knows its request by now (or is held while the agent
 * answers the call's input requests), a notification to the streams that listen for it, a
 * server's request to its call's input_required (modern-ask.c).
 */
void modern_writer_write(AgentWriter *w, Peer *p, const AgentOut *o);
/** The agent retried pd: the answer held for it goes out, as if it came now, and pd is done. */
void modern_writer_held_out(ModernAgent *ma, Peer *p, Pending *pd);
