// SPDX-License-Identifier: MIT
// modern-ask: a legacy server's requests during a 2026-07-28 agent's call, put to the agent as
// that call's input_required result, withdrawn, or refused when the agent gives the call up.
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/core/agent.h"
#include "daemon/downstream/peer.h"
#include "daemon/methods/modern-pending.h"

/**
 * A legacy server asked the agent something during one of its calls (o: AGENT_OUT_REQUEST):
 * it joins the call's questions, shown at once unless the agent is answering earlier ones;
 * refused upstream when no call of ma's carries it or the call has too many.
 */
void modern_ask_server_request(ModernAgent *ma, Peer *p, const AgentOut *o);
/**
 * The call's agent gets input_required with every question not yet shown, and pd waits for
 * the retry (MODERN_RETRY_WAIT_MS, then it is given up).
 */
void modern_ask_agent(Peer *p, Pending *pd);
/** The server withdrew request rid (or it timed out): the agent need not answer it. */
void modern_ask_withdrawn(ModernAgent *ma, yajl_val rid);
/**
 * The agent gave up on pd (cancel, or no retry in time): questions the server still waits on
 * are refused now, not at their timeout, the call is cancelled upstream and pd is freed.
 */
void modern_ask_abandon(ModernAgent *ma, Peer *p, Pending *pd, const char *why);
