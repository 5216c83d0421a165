// SPDX-License-Identifier: MIT
// wssearch: search a workspace's tools (live and cached) for a query (mcpd/searchTools).
#pragma once

#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "daemon/core/workspace.h"

/*
 * Most tools one search returns: a search is for the few tools a task needs; 50 definitions is
 * already some 12,000 tokens (the corpus's average, docs/search.md). A larger limit is cut here.
 */
#define WSSEARCH_LIMIT_MAX     50
#define WSSEARCH_LIMIT_DEFAULT 5

/*
 * The best min(limit, matches) tools of the workspace's view for query (len bytes), as
 * {"tools":[{name, title?, description, inputSchema, _meta}], "searched": tools ranked}. The
 * index is built on the first search after the view changed. limit is 1..WSSEARCH_LIMIT_MAX.
 */
yajl_val wssearch_tools(Workspace *ws, const char *query, size_t len, size_t limit);
/** Free the workspace's index (safe when it has none). */
void wssearch_deinit(Workspace *ws);
