// SPDX-License-Identifier: MIT
// methods: what every method handler shares: its context (MethodsCtx), its table entry, and its
// replies, through the core's reply API.
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
    const struct Wake *wake; /* resumes from sleep, for status (core/wake.h) */
    /** Reload settings and discovery (every workspace, or only that of root); done when over. */
    void (*reload)(void *ud, const char *root, ManagerReloadedFn done, void *done_ud);
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

/** Replies to the peer a handler serves, through the core's reply API (by its id). */
void methods_reply(MethodsCtx *d, Peer *p, yajl_val id, yajl_val result);
void methods_error(MethodsCtx *d, Peer *p, yajl_val id, int code, const char *message);
/**
 * A request answered once a reload is over (MethodsCtx.reload's done_ud): remembers the peer
 * and a copy of id; result (taken; NULL: the reload's outcome is the answer) gets the outcome as
 * its "reload" member.
 */
void *methods_reload_answer_new(MethodsCtx *d, Peer *p, yajl_val id, yajl_val result);
/** MethodsCtx.reload's done: answers the request of ud (methods_reload_answer_new) and frees it. */
void methods_reload_answer(yajl_val r, void *ud);
