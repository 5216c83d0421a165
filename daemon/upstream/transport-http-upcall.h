// SPDX-License-Identifier: MIT
// transport-http-upcall: what the HTTP transport tells upstream.c (messages, a sign-in challenge,
// its close), queued and delivered from the loop, never inside curl or inside send().
#pragma once

#include <stdint.h>
#include <stddef.h>

#include <event2/event.h>

#include "common/util.h"
#include "daemon/upstream/transport-http-private.h"

typedef enum UpcallKind {
    UP_MESSAGE, /* a message line for upstream.c (cb.message) */
    UP_AUTH,    /* the server's WWW-Authenticate (cb.auth) */
    UP_CLOSED,  /* the transport is done, and why (cb.closed) */
} UpcallKind;

/** Queue text (len bytes) for upstream.c; it is delivered from the loop (ht_on_deliver). */
void ht_upcall(HttpTransport *t, UpcallKind kind, const char *text, size_t len);
/** Tell upstream.c, once, that the transport is done, and why. */
void ht_report_closed(HttpTransport *t, const char *fmt, ...) _printf_(2, 3);
/** The loop's turn (t->ev_deliver): deliver what is queued, then resume paused streams. */
void ht_on_deliver(evutil_socket_t fd, short what, void *arg);
/** A JSON-RPC error for a request whose HTTP exchange failed: upstream.c sees a normal reply. */
void ht_synth_error(HttpTransport *t, uint64_t id, const char *fmt, ...) _printf_(3, 4);
/** The server needs authorization (HTTP 401): upstream.c hears it, the transport closes. */
void ht_auth_needed(HttpTransport *t, Xfer *x);
/** Drop what is queued, undelivered (the transport is freed). */
void ht_upcalls_free(HttpTransport *t);
