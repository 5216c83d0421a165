// SPDX-License-Identifier: MIT
// methods: the socket's method tables (MCP methods, mcpd/ methods), their context and dispatch.
#pragma once

#include <yajl/yajl_tree.h>

#include "common/jsonrpc.h"
#include "daemon/config/config.h"
#include "daemon/core/manager.h"
#include "daemon/downstream/listener.h"
#include "daemon/downstream/peer.h"

/* What the methods see of the daemon: filled in by daemon.c (the layer above), once. */
typedef struct MethodsCtx {
    Manager *manager;
    const Settings *settings;
    const ConfigSet *settings_problems; /* of the last settings load */
    const char *settings_path;
    const char *config_file;
    const Listener *listener;
    int64_t started_wall_ms;
    /** Reload settings and discovery (every workspace, or only that of root). */
    yajl_val (*reload)(void *ud, const char *root);
    void *ud;
} MethodsCtx;

/* Argument checks done before a handler runs. */
typedef enum MethodFlags {
    METHOD_NEEDS_INIT = 1 << 0,   /* only after initialize */
    METHOD_NOTIFICATION = 1 << 1, /* a notification: never answered */
} MethodFlags;

typedef struct Method {
    const char *name;
    void (*handler)(MethodsCtx *d, Peer *p, JsonrpcMsg *m);
    unsigned flags;
    const char *string_param; /* a params member that must be a non-empty string, or NULL */
} Method;

extern const Method methods_mcp[];
extern const Method methods_mcpd[];

/** Whether p's agent negotiated 2025-03-26, whose receivers accept JSON-RPC batches. */
bool methods_takes_batches(Peer *p, void *userdata);
/** The hot path for tools/call, before any parsing (the PeerFastFn). */
bool methods_fast(Peer *p, const char *line, size_t len, void *userdata);
/** Dispatch one message from a peer (the PeerDispatchFn). */
void methods_dispatch(Peer *p, JsonrpcMsg *m, void *userdata);
/** Replies to the peer a handler serves, through the core's reply API (by its id). */
void methods_reply(MethodsCtx *d, Peer *p, yajl_val id, yajl_val result);
void methods_error(MethodsCtx *d, Peer *p, yajl_val id, int code, const char *message);
/**
 * Whether m was held (taken, or refused) because the peer's initialize still waits for its
 * project's discovery; held messages are handled once it is answered.
 */
bool methods_init_hold(MethodsCtx *d, Peer *p, JsonrpcMsg *m);
/** A peer is gone: an initialize of it that waits for its project's discovery is dropped. */
void methods_peer_gone(uint64_t peer_id);
/** mcpd is stopping: each open subscriptions/listen gets its response (methods-modern.c). */
void methods_modern_shutdown(MethodsCtx *d);
