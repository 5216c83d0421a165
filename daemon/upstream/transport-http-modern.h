// SPDX-License-Identifier: MIT
// transport-http-modern: what Streamable HTTP adds for 2026-07-28 requests: the
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers (the last from tools'
// x-mcp-header parameters).
#pragma once

#include <stdbool.h>

#include <curl/curl.h>
#include <yajl/yajl_tree.h>

#include "daemon/upstream/transport-http-private.h"

/** The protocol version a message's _meta names, or NULL (a 2025-era message). */
const char *htm_version(yajl_val msg);
/** The headers of a modern POST (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*). */
struct curl_slist *htm_request_headers(HttpTransport *t, yajl_val msg);
/** A tools/list result passed by: remember each tool's x-mcp-header parameters. */
void htm_note_tools(HttpTransport *t, yajl_val result, bool first_page);
/** A non-2xx body that is a JSON-RPC error for x's request, as a message line; else NULL. */
char *htm_error_line(Xfer *x);
