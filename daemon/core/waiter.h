// SPDX-License-Identifier: MIT
// waiter: mcpd/wait requests, each answered once its server settles or its time runs out.
#pragma once

#include <stdint.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "daemon/core/server.h"
#include "daemon/downstream/peer.h"

typedef struct ServerWaiter ServerWaiter;

/* The mcpd/wait requests not answered yet. */
typedef struct WaiterRegistry {
    struct event_base *base;
    PeerRegistry *peers;
    ServerRegistry *servers;
    ServerWaiter *first;
} WaiterRegistry;

/** Set up (nothing is allocated until a request waits). */
void waiter_registry_init(WaiterRegistry *wr, struct event_base *base, PeerRegistry *peers,
                          ServerRegistry *servers);
/** Answer every request still waiting with "removed" (the daemon exits), and free them. */
void waiter_registry_deinit(WaiterRegistry *wr);
/**
 * Answer request id of agent peer_id once s settles (connected, failed, stopped, disabled) or
 * timeout_ms passes; at once when s is neither connecting nor backing off.
 */
void waiter_add(WaiterRegistry *wr, uint64_t peer_id, yajl_val id, Server *s, int64_t timeout_ms);
/** s settled or was removed: answer the requests it ends. */
void waiters_server_settled(WaiterRegistry *wr, Server *s);
