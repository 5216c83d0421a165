// SPDX-License-Identifier: MIT
// methods-modern: agents of the 2026-07-28 era on the socket (server/discover, stateless
// requests, subscriptions/listen, MRTR), beside the 2025 era the rest of methods serves.
#pragma once

#include <yajl/yajl_tree.h>

#include "common/jsonrpc.h"
#include "daemon/downstream/peer.h"

typedef struct Manager Manager;

/* The stateless revision, and the _meta keys every one of its requests carries. */
#define MODERN_VERSION        "2026-07-28"
#define MODERN_META_VERSION   "io.modelcontextprotocol/protocolVersion"
#define MODERN_META_CAPS      "io.modelcontextprotocol/clientCapabilities"
#define MODERN_META_INFO      "io.modelcontextprotocol/clientInfo"
#define MODERN_META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
#define MODERN_META_SERVER    "io.modelcontextprotocol/serverInfo"
#define MODERN_META_SUB_ID    "io.modelcontextprotocol/subscriptionId"

/* 2026-07-28 error codes. */
enum {
    MODERN_ERROR_HEADER_MISMATCH = -32020,
    MODERN_ERROR_MISSING_CAPABILITY = -32021,
    MODERN_ERROR_UNSUPPORTED_VERSION = -32022,
};

/* The 2025 revisions served after initialize, newest first, NULL-terminated (methods-mcp.c). */
extern const char *const methods_served_versions[];

/** initialize's and server/discover's capabilities for a peer (a new tree). */
yajl_val methods_capabilities(Manager *mg, Peer *p);
/** mcpd's Implementation object (a new tree). */
yajl_val methods_server_info(void);

/**
 * Called first for every message: answers server/discover, fixes the peer's era on its first
 * other message, and handles what a modern peer sends that the 2025 tables do not know
 * (its _meta, subscriptions/listen, MRTR retries). Returns true when the message is done.
 */
bool methods_modern_dispatch(Manager *mg, Peer *p, JsonrpcMsg *m);
/* methods_modern_filter and methods_modern_gone are declared in methods.h (for daemon.c). */
