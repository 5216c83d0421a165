// SPDX-License-Identifier: MIT
// stdio-server: the JSON-RPC loop the small standalone test servers share (a line in, a reply
// out): ids, results, errors, and the requests every one of them answers alike.
#pragma once

#include <stdbool.h>

#include <yajl/yajl_tree.h>

typedef struct StdioServer {
    const char *name;       /* the program's name, for its stderr lines */
    const char *initialize; /* the initialize result, JSON text */
    /*
     * A request (msg has an id) before the shared answers: true when it was handled (answered,
     * or left unanswered on purpose). Unhandled, ping gets {}, initialize the text above, and
     * anything else -32601. Notifications are not passed: no server here needs one.
     */
    bool (*request)(const char *method, yajl_val id, yajl_val msg);
} StdioServer;

/** A member of msg by path (NULL-terminated), of type t (yajl_t_any for any), or NULL. */
yajl_val stdio_server_get(yajl_val msg, const char *const *path, yajl_type t);
/** Write id as JSON text (integers and plain strings, which is all mcpd sends; else null). */
void stdio_server_put_id(yajl_val id);
/** Answer id with result, JSON text. */
void stdio_server_reply(yajl_val id, const char *result);
/** Answer id with a JSON-RPC error (message: plain text, no escaping needed). */
void stdio_server_error(yajl_val id, int code, const char *message);
/** Serve stdin until EOF; a line that is not JSON is named on stderr and skipped. Returns 0. */
int stdio_server_run(const StdioServer *s);
