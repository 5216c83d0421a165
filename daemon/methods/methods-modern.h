// SPDX-License-Identifier: MIT
// methods-modern: a 2026-07-28 agent's requests in: checked (_meta, the era's methods), its
// connection placed, and handed to the one set of handlers, or resumed by a retry after
// input_required; what goes back to it is modern-writer.c's, its listen streams modern-listen.c's.
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
/** mcpd is stopping: each open subscriptions/listen gets its response (modern-listen.c). */
void methods_modern_shutdown(MethodsCtx *d);
