// SPDX-License-Identifier: MIT
// mcpc.h: libmcpc, the C client library for mcpd (the per-user MCP aggregator daemon).
#pragma once

/*
 * libmcpc talks to mcpd over its Unix socket. JSON goes in and comes out as text; results are
 * strings the caller frees with mcpc_string_free().
 *
 * Two ways to use it, freely mixed on one client:
 * - blocking: mcpc_request(), mcpc_list_tools(), mcpc_call_tool(), ... each waits for its
 *   answer, bounded by the client's timeout;
 * - asynchronous, for agents with their own event loop: mcpc_request_async() and
 *   mcpc_call_tool_async() return at once; poll mcpc_fd() for POLLIN (and POLLOUT while
 *   mcpc_want_write() says so), call mcpc_dispatch() when it is ready, and results, progress,
 *   notifications and requests from servers (sampling, elicitation, roots) arrive through
 *   callbacks. mcpc_cancel() abandons a call and cancels it upstream.
 * mcpc_connect() is blocking (one local round trip).
 *
 * Subagents: mcpc_session_env() gives "MCPD_SESSION=<token>"; a child whose environment holds
 * it (or that passes the token in mcpc_options.session) joins this agent's session: the same
 * workspace, tools and upstream connections.
 *
 * Thread safety: an mcpc_client is not thread-safe; use one per thread (they are cheap), or
 * lock around every call. Callbacks run inside the libmcpc call that read the message, on the
 * caller's thread; a callback may make new requests, cancel and respond, but must not call
 * mcpc_free() on its own client. Distinct clients may be used from distinct threads freely.
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
    const char *profile; /* a profile of mcpd.json (_meta "mcpd/profile"); NULL: $MCPD_PROFILE */
} mcpc_options;

/* Called for every notification that arrives while a call waits (progress, list_changed). */
typedef void (*mcpc_notify_fn)(void *userdata, const char *method, const char *params_json);

/*
 * The answer to an asynchronous request. status is 0 (json is the result), MCPC_E_RPC (json is
 * the JSON-RPC error object {code, message, data?}), or a negative errno with json NULL:
 * -ECANCELED after mcpc_cancel(), -ECONNRESET when the connection was lost, -ETIMEDOUT when
 * mcpd sent nothing within the client's timeout. Called exactly once per request.
 */
typedef void (*mcpc_result_fn)(void *userdata, unsigned long long id, int status, const char *json);
/* Progress of an asynchronous tools/call; total and message are < 0 / NULL when not given. */
typedef void (*mcpc_progress_fn)(void *userdata, unsigned long long id, double progress,
                                 double total, const char *message);
/*
 * A request from a server, forwarded by mcpd (sampling/createMessage, elicitation/create,
 * roots/list): answer it now or later with mcpc_respond() or mcpc_respond_error(), passing
 * id_json back. A client with no handler answers -32601.
 */
typedef void (*mcpc_server_request_fn)(void *userdata, const char *id_json, const char *method,
                                       const char *params_json);

/*
 * MCP eras libmcpc speaks to mcpd. MCPC_ERA_2025 (the default): initialize, then requests.
 * MCPC_ERA_2026 (MCP 2026-07-28): no handshake; mcpc_connect() asks server/discover whether
 * mcpd serves the revision (-EPROTONOSUPPORT otherwise), and every request carries its own
 * _meta (protocol version, client info and capabilities, cwd, session). A server request
 * (elicitation, sampling, roots) then arrives as an input_required result: with a handler set
 * (mcpc_set_server_request_handler) libmcpc hands each input request to it, under an id of its
 * own, and sends the request again with the answers once every one is given through
 * mcpc_respond() (at most 16 rounds per request); without a handler the input_required result
 * is returned as it is. mcpc_session() is known after the first result. Changes of tool lists
 * reach the notify callback only through a subscriptions/listen request (mcpc_request_async).
 */
#define MCPC_ERA_2025 0
#define MCPC_ERA_2026 1

/** Create a client (not yet connected); opts may be NULL. Returns NULL only without memory. */
mcpc_client *mcpc_new(const mcpc_options *opts);
/** Connect and run the MCP initialize handshake (MCPC_ERA_2026: server/discover). */
int mcpc_connect(mcpc_client *c);
/** Choose the era (MCPC_ERA_2025 or MCPC_ERA_2026) before mcpc_connect(); 0 or -errno. */
int mcpc_set_protocol_era(mcpc_client *c, int era);
/** The era the client speaks. */
int mcpc_protocol_era(const mcpc_client *c);
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
/*
 * Prompts, resources and completion of the servers mcpd aggregates. Lists take the cursor of
 * the previous page's nextCursor (NULL: the first page). Names and URIs are those mcpd lists
 * (prompts as mcp_<server>_<prompt>; a URI two servers share is mcpd://<server>/<uri> for the
 * later server; ui:// URIs are ui://<server>/<rest>).
 */
/** prompts/list: *result_jsonp is {"prompts":[...], "nextCursor"?}. */
int mcpc_list_prompts(mcpc_client *c, const char *cursor, char **result_jsonp);
/** prompts/get with arguments (a JSON object of strings, or NULL). */
int mcpc_get_prompt(mcpc_client *c, const char *name, const char *arguments_json,
                    char **result_jsonp);
/** resources/list: *result_jsonp is {"resources":[...], "nextCursor"?}. */
int mcpc_list_resources(mcpc_client *c, const char *cursor, char **result_jsonp);
/** resources/templates/list: *result_jsonp is {"resourceTemplates":[...], "nextCursor"?}. */
int mcpc_list_resource_templates(mcpc_client *c, const char *cursor, char **result_jsonp);
/** resources/read: *result_jsonp is {"contents":[...]}. */
int mcpc_read_resource(mcpc_client *c, const char *uri, char **result_jsonp);
/**
 * resources/subscribe (on != 0) or resources/unsubscribe; updates arrive through the notify
 * callback as notifications/resources/updated.
 */
int mcpc_subscribe_resource(mcpc_client *c, const char *uri, int on);
/**
 * completion/complete: ref_json is {"type":"ref/prompt","name":...} or
 * {"type":"ref/resource","uri":<template>}; value is the argument's text so far.
 */
int mcpc_complete(mcpc_client *c, const char *ref_json, const char *argument, const char *value,
                  char **result_jsonp);
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
/** The socket fd (for poll, POLLIN), or -1 before connect. */
int mcpc_fd(const mcpc_client *c);

/* ---- asynchronous API ---- */

/** Send a request without waiting; fn gets the answer from mcpc_dispatch(). *idp may be NULL. */
int mcpc_request_async(mcpc_client *c, const char *method, const char *params_json,
                       mcpc_result_fn fn, void *userdata, unsigned long long *idp);
/** tools/call without waiting; progress (may be NULL) asks the server for progress reports. */
int mcpc_call_tool_async(mcpc_client *c, const char *name, const char *arguments_json,
                         mcpc_result_fn fn, mcpc_progress_fn progress, void *userdata,
                         unsigned long long *idp);
/** prompts/get, resources/read and completion/complete without waiting (see above). */
int mcpc_get_prompt_async(mcpc_client *c, const char *name, const char *arguments_json,
                          mcpc_result_fn fn, void *userdata, unsigned long long *idp);
int mcpc_read_resource_async(mcpc_client *c, const char *uri, mcpc_result_fn fn, void *userdata,
                             unsigned long long *idp);
int mcpc_complete_async(mcpc_client *c, const char *ref_json, const char *argument,
                        const char *value, mcpc_result_fn fn, void *userdata,
                        unsigned long long *idp);
/**
 * Abandon a request: mcpd cancels it upstream, its callback runs now with -ECANCELED, and a
 * late answer is dropped. Unknown ids return -ENOENT.
 */
int mcpc_cancel(mcpc_client *c, unsigned long long id);
/** Install the handler for requests from servers (NULL: answer them -32601). */
void mcpc_set_server_request_handler(mcpc_client *c, mcpc_server_request_fn fn, void *userdata);
/** Answer a server request with a result (a JSON object text). */
int mcpc_respond(mcpc_client *c, const char *id_json, const char *result_json);
/** Answer a server request with an error. */
int mcpc_respond_error(mcpc_client *c, const char *id_json, int code, const char *message);
/**
 * Read what has arrived and flush what is queued, without blocking; run the callbacks.
 * Returns 0, or a negative errno when the connection is lost (every pending request has then
 * been answered with -ECONNRESET).
 */
int mcpc_dispatch(mcpc_client *c);
/** Whether output is queued (poll mcpc_fd() for POLLOUT too while it is). */
int mcpc_want_write(const mcpc_client *c);
/** Asynchronous requests still waiting for their answer. */
int mcpc_pending(const mcpc_client *c);
/**
 * Milliseconds until the earliest pending request times out (a poll timeout), or -1 when none
 * is pending. mcpc_dispatch() answers the overdue ones with -ETIMEDOUT.
 */
int mcpc_next_timeout(const mcpc_client *c);
/** A message describing the last failure ("" if none). */
const char *mcpc_errmsg(const mcpc_client *c);
/** Close the connection and free the client; NULL is allowed. */
void mcpc_free(mcpc_client *c);
/** Free a string returned by libmcpc. */
void mcpc_string_free(char *s);

#ifdef __cplusplus
}
#endif
