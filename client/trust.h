// SPDX-License-Identifier: MIT
// trust: mcpctl trust / untrust, approving a project's servers through mcpd.
#pragma once

#include <stdbool.h>

#include "client/include/mcpc.h"

/**
 * mcpctl trust [DIR] [--server NAME] (untrust false) and mcpctl untrust (true): DIR defaults
 * to the current directory. Prints what changed (the raw result with json). Returns an mcpctl
 * exit status.
 */
int trust_run(mcpc_client *c, bool untrust, const char *dir, const char *server, bool json);
