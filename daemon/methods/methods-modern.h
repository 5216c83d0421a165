// SPDX-License-Identifier: MIT
// methods-modern: agents of the 2026-07-28 era on the socket (server/discover, stateless
// requests, subscriptions/listen, MRTR), beside the 2025 era the rest of methods serves.
#pragma once

#include <yajl/yajl_tree.h>

#include "common/jsonrpc.h"
#include "daemon/downstream/peer.h"

#include "daemon/methods/methods.h"

typedef struct Manager Manager;

/**
 * Called first for every message: answers server/discover, fixes the agent's era on its first
 * other message, and handles what a modern agent sends that the 2025 tables do not know
 * (its _meta, subscriptions/listen, MRTR retries). Returns true when the message is done.
 */
bool methods_modern_dispatch(Manager *mg, Peer *p, JsonrpcMsg *m);
/** mcpd is stopping: each open subscriptions/listen gets its response (methods-modern.c). */
void methods_modern_shutdown(MethodsCtx *d);
