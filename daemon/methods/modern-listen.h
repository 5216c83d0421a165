// SPDX-License-Identifier: MIT
// modern-listen: a 2026-07-28 agent's subscriptions/listen streams: opened, acknowledged,
// carrying the notifications each asked for, and ended by a cancel or mcpd's stop.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/jsonrpc.h"
#include "daemon/core/agent.h"
#include "daemon/downstream/peer.h"

typedef struct Manager Manager;
typedef struct Listen Listen;

/* One connection's open streams (zeroed: none), newest first. */
typedef struct ModernListens {
    Listen *first;
    size_t n;
} ModernListens;

/**
 * subscriptions/listen m (params checked here) opens a stream under id (the request's id as
 * JSON text): the resources it names are subscribed and the acknowledgement goes to p, or an
 * error does.
 */
void modern_listen_start(ModernListens *ls, Manager *mg, Peer *p, JsonrpcMsg *m, const char *id);
/** Whether a stream was opened under id (JSON text). */
bool modern_listen_has(const ModernListens *ls, const char *id);
/**
 * End the stream opened under id (the agent cancelled it) and the subscriptions no other stream
 * holds: false when there is none.
 */
bool modern_listen_end(ModernListens *ls, Manager *mg, Peer *p, const char *id);
/**
 * A list_changed or resources/updated notification goes to p once per stream that asked for
 * it, with the stream's id: true, or false when o is no notification of theirs.
 */
bool modern_listen_notify(const ModernListens *ls, Peer *p, const AgentOut *o);
/** mcpd is stopping: each stream's response goes to p (it ends the stream on purpose). */
void modern_listen_close(const ModernListens *ls, Peer *p);
/** Forget every stream (the agent went: its subscriptions go with its peer). */
void modern_listen_deinit(ModernListens *ls);
