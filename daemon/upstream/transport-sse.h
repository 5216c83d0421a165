// SPDX-License-Identifier: MIT
// transport-sse: the legacy HTTP+SSE transport (2024-11-05): a GET stream whose first event names
// the URL that messages are POSTed to; answers come on the stream.
#pragma once

#include <curl/curl.h>

#include "daemon/upstream/sse.h"
#include "daemon/upstream/transport-http-private.h"

/** Switch t to legacy HTTP+SSE (its ops set by the caller) and open the stream. */
void ht_start_legacy(HttpTransport *t);
/** The legacy stream's first event names the URL that messages are POSTed to. */
int ht_legacy_endpoint(Xfer *x, const SseEvent *ev);
/** The legacy stream ended: why, for status and the log. */
void ht_legacy_get_done(Xfer *x, CURLcode res);
