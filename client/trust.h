// SPDX-License-Identifier: MIT
// trust: mcpctl trust / untrust, approving a project's servers through mcpd.
#pragma once

#include <stdbool.h>

#include "client/include/mcpc.h"

/**
 * mcpctl trust [--server NAME] [DIR] and mcpctl untrust [--server NAME] [DIR] (argv[0] is the
 * verb; DIR defaults to the current directory). Returns an mcpctl exit status.
 */
int trust_run(mcpc_client *c, int argc, char **argv, bool json);
