// SPDX-License-Identifier: MIT
// methods-mcp: the MCP methods agents call (initialize, ping, tools/*, notifications).
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/jsonrpc.h"
#include "daemon/downstream/peer.h"
#include "daemon/methods/methods.h"

extern const Method methods_mcp[];
/** Whether p's agent negotiated 2025-03-26, whose receivers accept JSON-RPC batches. */
bool methods_takes_batches(Peer *p, void *userdata);

/**
 * Whether m was held (taken, or refused) because the peer's initialize still waits for its
 * project's discovery; held messages are handled once it is answered.
 */
bool methods_init_hold(MethodsCtx *d, Peer *p, JsonrpcMsg *m);
/** A peer is gone: an initialize of it that waits for its project's discovery is dropped. */
void methods_peer_gone(uint64_t peer_id);
