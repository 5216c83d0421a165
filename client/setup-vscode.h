// SPDX-License-Identifier: MIT
// setup-vscode: what mcpctl setup does differently for VS Code's user mcp.json (VS Code,
// VS Code Insiders, VSCodium): typed entries, servers only VS Code can start, its sandbox.
#pragma once

#include <stdbool.h>

#include <yajl/yajl_tree.h>

#include "common/agents.h"

/** Whether the agent keeps its servers in VS Code's shape ("servers", each with a "type"). */
bool setup_vscode_agent(const AgentInfo *a);
/**
 * What in a VS Code entry only VS Code can fill in (an ${input:...} prompt, a ${command:...}
 * or ${config:...} variable), described for the user; NULL when mcpd can start the entry. Such
 * an entry stays in VS Code's file, where VS Code keeps filling it in.
 */
const char *setup_vscode_unfilled(yajl_val entry);
/**
 * The moved servers as mcpd's copy keeps them (a new object): each entry with
 * "sandboxEnabled" gets the file's top-level "sandbox" block when it has none of its own, so
 * it stays contained under mcpd as it was in VS Code.
 */
yajl_val setup_vscode_moved(yajl_val file, yajl_val moved);
