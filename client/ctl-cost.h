// SPDX-License-Identifier: MIT
// ctl-cost: what tool definitions cost a model, per server, in total and per agent (issue 33).
#pragma once

#include <yajl/yajl_tree.h>

/** mcpctl status's block: each server's tools, the total, and what each agent is shown. */
void ctl_cost_status(yajl_val status);
/** mcpctl tools's footer, counted from the tools/list it printed (tools: its array). */
void ctl_cost_tools(yajl_val tools);
