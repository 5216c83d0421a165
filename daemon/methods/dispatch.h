// SPDX-License-Identifier: MIT
// dispatch: every line from an agent to its method (the hot path for tools/call first), with the
// checks every handler relies on.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/jsonrpc.h"
#include "daemon/downstream/peer.h"

/** The hot path for tools/call, before any parsing (the PeerFastFn). */
bool methods_fast(Peer *p, const char *line, size_t len, void *userdata);
/** Dispatch one message from a peer (the PeerDispatchFn). */
void methods_dispatch(Peer *p, JsonrpcMsg *m, void *userdata);
