// SPDX-License-Identifier: MIT
// transport-http-incoming: the messages one response body or SSE event brings (a 2025-03-26
// batch taken entry by entry, within bounds), each noted against the requests in flight and
// handed up to upstream.c.
#pragma once

#include <stddef.h>

#include "daemon/upstream/transport-http-private.h"

/** One body or event holding a message (or, on 2025-03-26 sessions, an array of them). */
void ht_take_messages(HttpTransport *t, const char *text, size_t len);
