// SPDX-License-Identifier: MIT
// mcpc-modern: libmcpc's 2026-07-28 era: the per-request _meta, server/discover's verdict, and
// input_required results fulfilled through the server-request handler and retried (MRTR).
// Below mcpc.c, which calls it; it uses only the shared state of mcpc-private.
#pragma once

#include <stdbool.h>

#include <yajl/yajl_tree.h>

#include "client/mcpc-private.h"

/** What each 2026-era request carries in params._meta (the caller's own keys win). */
void libmcpc_stamp_meta(mcpc_client *c, yajl_val params);
/** server/discover's outcome r and result text: 0 when mcpd serves the era, else a failure. */
int libmcpc_discover_check(mcpc_client *c, int r, const char *text);
/** An input_required answer to p taken up by the handler (true), or p is to finish (false). */
bool libmcpc_input_required(mcpc_client *c, Pending *p, yajl_val result);
/** mcpc_respond for an input request: 1 when it was one, 0 when not, or a failure. */
int libmcpc_input_answer(mcpc_client *c, const char *id_text, yajl_val result, const char *message);
