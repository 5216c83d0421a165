// SPDX-License-Identifier: MIT
// ctl-logs: mcpctl logs: a server's stderr and run records, once or followed.
#pragma once

#include "client/ctl.h"

/** logs NAME [-n N] [-f] [--run K]: a server's recent stderr by run. */
int ctl_verb_logs(Ctl *ctl, char **args, int n);
