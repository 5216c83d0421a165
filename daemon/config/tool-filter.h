// SPDX-License-Identifier: MIT
// tool-filter: a server's enabledTools and disabledTools globs applied to its tools.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "daemon/config/configset.h"

/** Whether the server's tool filters (enabledTools, then disabledTools, as globs) pass tool. */
bool config_tool_allowed(const ServerConfig *c, const char *tool);
/**
 * Drop the tools the server's filters hide from an array of tool objects, in place; returns
 * how many were dropped. NULL tools is allowed (0).
 */
size_t config_filter_tools(const ServerConfig *c, yajl_val tools);
