// SPDX-License-Identifier: MIT
// mcpc.h: libmcpc, the C client library for mcpd (the per-user MCP aggregator daemon).
#pragma once

/*
 * libmcpc talks to mcpd over its Unix socket. Every call here is blocking and bounded by the
 * client's timeout. JSON goes in and comes out as text; results are strings the caller frees
 * with mcpc_string_free().
 *
 * Thread safety: an mcpc_client is not thread-safe; use one per thread (they are cheap), or
 * lock around every call. Distinct clients may be used from distinct threads freely.
 *
 * Errors: functions return 0 on success, a negative errno for system failures (-ECONNREFUSED,
 * -ETIMEDOUT, ...), or MCPC_E_RPC when mcpd answered with a JSON-RPC error. In every failure
 * case mcpc_errmsg() returns a message fit to print.
 */

#ifdef __cplusplus
extern "C" {
#endif

#define MCPC_E_RPC 1 /* mcpd answered with a JSON-RPC error; see mcpc_errmsg() */

typedef struct mcpc_client mcpc_client;

typedef struct mcpc_options {
    const char *socket_path;    /* NULL: $MCPD_SOCKET, else $XDG_RUNTIME_DIR/mcpd/mcpd.sock */
    const char *client_name;    /* clientInfo.name; NULL: "libmcpc" */
    const char *client_version; /* clientInfo.version; NULL: the library's version */
    const char *cwd;            /* the agent's project root (_meta "mcpd/cwd"), or NULL */
    const char *session;        /* a parent's session token; NULL: $MCPD_SESSION if set */
    int timeout_ms;             /* per request; 0: 120000 */
} mcpc_options;

/* Called for every notification that arrives while a call waits (progress, list_changed). */
typedef void (*mcpc_notify_fn)(void *userdata, const char *method, const char *params_json);

/** Create a client (not yet connected); opts may be NULL. Returns NULL only without memory. */
mcpc_client *mcpc_new(const mcpc_options *opts);
/** Connect and run the MCP initialize handshake. */
int mcpc_connect(mcpc_client *c);
/** Send any request; params_json may be NULL. On success *result_jsonp holds the result. */
int mcpc_request(mcpc_client *c, const char *method, const char *params_json, char **result_jsonp);
/** tools/list: *result_jsonp is {"tools":[...]}. */
int mcpc_list_tools(mcpc_client *c, char **result_jsonp);
/**
 * tools/call with arguments (a JSON object text, or NULL for {}). A tool that failed still
 * returns 0: the result has "isError": true, also reported in *is_errorp when not NULL.
 */
int mcpc_call_tool(mcpc_client *c, const char *name, const char *arguments_json,
                   char **result_jsonp, int *is_errorp);
/** mcpd/status: the daemon's servers, agents and problems. */
int mcpc_status(mcpc_client *c, char **result_jsonp);
/** The session token mcpd gave this connection, or NULL before connect. */
const char *mcpc_session(const mcpc_client *c);
/**
 * An environment entry "MCPD_SESSION=<token>" for a subagent's environment (static storage
 * inside c), or NULL before connect.
 */
const char *mcpc_session_env(mcpc_client *c);
/** Install a notification callback (NULL to remove). */
void mcpc_set_notify(mcpc_client *c, mcpc_notify_fn fn, void *userdata);
/** notifications/tools/list_changed seen since the last call of this function. */
int mcpc_take_list_changed(mcpc_client *c);
/**
 * Read and deliver notifications for up to timeout_ms (for a caller waiting on
 * list_changed or progress between calls). Returns 0, or a failure (connection lost).
 */
int mcpc_process(mcpc_client *c, int timeout_ms);
/** The socket fd (for poll), or -1. Reserved for the asynchronous API. */
int mcpc_fd(const mcpc_client *c);
/** A message describing the last failure ("" if none). */
const char *mcpc_errmsg(const mcpc_client *c);
/** Close the connection and free the client; NULL is allowed. */
void mcpc_free(mcpc_client *c);
/** Free a string returned by libmcpc. */
void mcpc_string_free(char *s);

#ifdef __cplusplus
}
#endif
