// SPDX-License-Identifier: MIT
// agent: what mcpd says to an agent, keyed by its id (replies, errors, notifications); an agent
// that has gone is skipped quietly, so async work never holds a Peer pointer.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "daemon/downstream/peer.h"

/** {"jsonrpc":"2.0","id":id,"result":result} to agent agent_id, if it is still there. */
void agent_reply(PeerRegistry *peers, uint64_t agent_id, yajl_val id, yajl_val result);
/** An error reply (code, message). */
void agent_reply_error(PeerRegistry *peers, uint64_t agent_id, yajl_val id, int code,
                       const char *message);
/** A notification (params may be NULL). */
void agent_notify(PeerRegistry *peers, uint64_t agent_id, const char *method, yajl_val params);
