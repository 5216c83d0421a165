// SPDX-License-Identifier: MIT
// tool-headers: whether a tool's x-mcp-header annotations (2026-07-28, SEP-2243) are well formed.
#pragma once

#include <yajl/yajl_tree.h>

/**
 * What is wrong with a tool's x-mcp-header annotations (a phrase for "it has ..."), or NULL when
 * they are well formed or absent. A tool with such a problem is not served.
 */
const char *tool_headers_problem(yajl_val tool);
