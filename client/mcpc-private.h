// SPDX-License-Identifier: MIT
// mcpc-private: the client state libmcpc's files share, below both eras (the client, its pending
// requests, its error message and output queue).
// Internal names start with libmcpc_, outside the exported mcpc_* (libmcpc.map).
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "client/include/mcpc.h"
#include "common/jsonrpc.h"
#include "common/mcp.h"
#include "common/strbuf.h"

/*
 * An asynchronous request waiting for its answer. In the 2026 era it keeps what it sent, so an
 * input_required answer can be fulfilled through the server-request handler and the request
 * sent again (MRTR) under a new wire id; the caller keeps knowing it by id.
 */
typedef struct Pending {
    unsigned long long id;
    unsigned long long wire_id; /* the id of its latest send */
    char *method;               /* 2026 era: what to send again */
    yajl_val params;
    yajl_val asks;    /* the inputRequests being answered, or NULL */
    yajl_val answers; /* key -> result, as the handler answers */
    yajl_val state;   /* the requestState to echo, or NULL */
    size_t waiting;   /* answers still due */
    unsigned rounds;  /* input_required rounds so far */
    mcpc_result_fn fn;
    mcpc_progress_fn progress;
    void *userdata;
    uint64_t deadline_ms;
    struct Pending *next;
} Pending;

struct mcpc_client {
    char *socket_path, *client_name, *client_version, *cwd, *session_in;
    char *profile; /* _meta["mcpd/profile"]: mcpc_options.profile, else $MCPD_PROFILE */
    int timeout_ms;
    int fd;
    Framer in;
    StrBuf out; /* queued output; out_off bytes of it already sent */
    size_t out_off;
    uint64_t next_id;
    char *session;
    char *session_env;
    char errmsg[512];
    mcpc_notify_fn notify;
    void *notify_ud;
    mcpc_server_request_fn server_request;
    void *server_request_ud;
    int list_changed;
    Pending *pending;
    int n_pending;
    int era; /* MCPC_ERA_2025 or MCPC_ERA_2026 */
};

/*
 * input_required rounds one request may take before libmcpc gives up: a server asks a few
 * questions in turn; one that keeps asking is looping.
 */
#define MCPC_MAX_INPUT_ROUNDS 16
/* The id handed to the server-request handler for one input request: prefix, round, key. */
#define MCPC_INPUT_ID_PREFIX "mcpc-input/"

/** Set the error message (printf-style) and return r. */
int libmcpc_fail(mcpc_client *c, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** Write the queued output the socket takes now; with block, all of it (or a timeout). */
int libmcpc_flush(mcpc_client *c, bool block);
/** Queue sb to mcpd and write what the socket takes (all of it when block). */
int libmcpc_send_sb(mcpc_client *c, const StrBuf *sb, bool block);
/** Take p out of the pending list. */
void libmcpc_pending_unlink(mcpc_client *c, Pending *p);
/** Call p's callback with the outcome and free p (already unlinked). */
void libmcpc_pending_finish(mcpc_client *c, Pending *p, int status, const char *json);
