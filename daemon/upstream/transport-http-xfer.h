// SPDX-License-Identifier: MIT
// transport-http-xfer: one HTTP transfer of the MCP HTTP transports (its request, and its
// response's headers, body and SSE events), which tells the layer above what it brought through
// t->hooks. The bottom layer of the HTTP transport: it calls nothing above it.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/util.h"
#include "daemon/upstream/transport-http-private.h"

/* One transfer. */
Xfer *ht_xfer_new(HttpTransport *t, XferKind kind, const char *url, int64_t timeout_ms);
/** (Re)build the easy handle for x->url and start it. */
int ht_xfer_launch(Xfer *x);
/** Launch, or tell t->hooks.unstarted (the request fails there) and free it. */
void ht_xfer_start(Xfer *x);
void ht_xfer_free(Xfer *x);
/** The transfer's inactivity timer fired: it ends as CURLE_OPERATION_TIMEDOUT (t->hooks.done). */
void ht_xfer_on_timeout(evutil_socket_t fd, short what, void *arg);
/** A stream paused for backpressure (HT_UPCALLS_MAX) goes on; any other transfer is left alone. */
void ht_xfer_unpause(Xfer *x);
void ht_note_status(Xfer *x);
bool ht_header_name_is(const char *line, size_t n, const char *name);
char *ht_header_value(const char *line, size_t n, size_t name_len);
size_t ht_on_header(char *data, size_t size, size_t nitems, void *userdata);
void ht_headers_apply(Xfer *x, const char *ct);
size_t ht_on_write(char *data, size_t size, size_t nmemb, void *userdata);

/* What a transfer's end says. */
/** Whether a Location may be followed: http and https only, as the transfers themselves. */
bool ht_redirect_scheme_ok(const char *loc);
/** A redirect from https to plain http: never followed. */
bool ht_redirect_downgrades(const Xfer *x, const char *loc);
/** A short text for an HTTP error: the JSON-RPC error message in the body, or its start. */
char *ht_error_text(Xfer *x);
/** What failed a transfer: curl's error buffer if it said anything, else the code's text. */
const char *ht_curl_error(const Xfer *x, CURLcode res);
