// SPDX-License-Identifier: MIT
// route: what an upstream sends that concerns agents, routed to exactly the agent it belongs to:
// its requests (sampling, elicitation, roots) forwarded to one agent and the answer brought back,
// and its notifications (progress, cancellations, elicitation completions, task status).
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "common/jsonrpc.h"
#include "daemon/core/agent.h"
#include "daemon/core/call.h"
#include "daemon/core/server.h"
#include "daemon/downstream/peer.h"

/** A request from server s for an agent: forwarded to the one that can answer, or answered. */
void route_request(CallRegistry *cr, Server *s, yajl_val id, const char *method, yajl_val params);
/** A notification from server s: to the agents it concerns. */
void route_notification(CallRegistry *cr, Server *s, const char *method, yajl_val params);
/** A response from a peer to a request mcpd forwarded to it (sampling, elicitation, roots). */
void route_peer_response(CallRegistry *cr, Peer *p, JsonrpcMsg *msg);
/** The server's session ended: requests it forwarded to agents are withdrawn. */
void route_upstream_closed(CallRegistry *cr, Server *s, uint64_t upstream_id);
/** The server is going away (after calls_server_removed): the agents hear its requests to them
 * are void, its tasks end. */
void route_server_removed(CallRegistry *cr, Server *s);
/** A peer went away (after calls_peer_gone): requests it was asked fail upstream, its MRTR
 * rounds and tasks are forgotten. */
void route_peer_gone(CallRegistry *cr, Peer *p);
/** Free every forwarded request without replying (daemon exit, before call_registry_deinit). */
void route_deinit(CallRegistry *cr);
/**
 * The agent's id (JSON text, to free) of the call that caused request_id, a request mcpd
 * forwarded to that agent; NULL when none is known. For MRTR toward 2026-07-28 agents.
 */
char *route_cause_of_request(CallRegistry *cr, uint64_t request_id);
