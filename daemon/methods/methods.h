// SPDX-License-Identifier: MIT
// methods: the socket's method tables (MCP methods, mcpd/ methods) and the dispatcher.
#pragma once

#include <yajl/yajl_tree.h>

#include "common/jsonrpc.h"
#include "daemon/downstream/peer.h"

typedef struct Daemon Daemon;

/* Argument checks done before a handler runs. */
typedef enum MethodFlags {
    METHOD_NEEDS_INIT = 1 << 0,   /* only after initialize */
    METHOD_NOTIFICATION = 1 << 1, /* a notification: never answered */
} MethodFlags;

typedef struct Method {
    const char *name;
    void (*handler)(Daemon *d, Peer *p, JsonrpcMsg *m);
    unsigned flags;
    const char *string_param; /* a params member that must be a non-empty string, or NULL */
} Method;

extern const Method methods_mcp[];
extern const Method methods_mcpd[];

/** The hot path for tools/call, before any parsing (the PeerFastFn). */
bool methods_fast(Peer *p, const char *line, size_t len, void *userdata);
/** Dispatch one message from a peer (the PeerDispatchFn). */
void methods_dispatch(Peer *p, JsonrpcMsg *m, void *userdata);
/** What goes to a 2026-07-28 agent, reshaped for its era (the PeerFilterFn, methods-modern.c). */
void methods_modern_filter(Peer *p, const char *data, size_t n, void *userdata);
/** A peer went away: its 2026-07-28 state goes (methods-modern.c). */
void methods_modern_gone(Peer *p);
/** Reply helpers used by the handlers. */
void methods_reply(Peer *p, yajl_val id, yajl_val result);
void methods_error(Peer *p, yajl_val id, int code, const char *message);
