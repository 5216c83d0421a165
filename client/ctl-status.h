// SPDX-License-Identifier: MIT
// ctl-status: mcpctl status, tools and call: what mcpd serves, shown for a person or as JSON.
#pragma once

#include "client/ctl.h"

/** status [NAME...]: the daemon, its servers and agents; 0, 3 (not connected) or 4 (unknown). */
int ctl_verb_status(Ctl *ctl, char **args, int n);
/** tools: the aggregated tool list. */
int ctl_verb_tools(Ctl *ctl, char **args, int n);
/** call TOOL [JSON]: one tools/call; 1 when the tool says isError. */
int ctl_verb_call(Ctl *ctl, char **args, int n);
