// SPDX-License-Identifier: MIT
// setup-claude: Claude Code's per-project switches for .mcp.json servers, followed where Claude
// Code moves them (<project>/.claude/settings.local.json).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "client/setup-edit.h"

/* Claude Code's per-project lists of .mcp.json servers: refused (setup's switch) and approved. */
#define SETUP_CLAUDE_SWITCH   "disabledMcpjsonServers"
#define SETUP_CLAUDE_APPROVED "enabledMcpjsonServers"

/** Whether <root>/.claude/settings.local.json approves the .mcp.json server name. */
bool setup_claude_local_approves(const char *root, const char *name);
/**
 * Undo, for each project of the switch record in imported_path (claudeProjectSwitches): the
 * names setup switched off leave the project's settings.local.json when Claude Code moved the
 * switch there, and approvals come back there. 0, or -errno when a file could not be written.
 */
int setup_claude_undo_local(const char *imported_path, bool dry_run);
/**
 * Undo of ~/.claude.json: the project's switch or approvals that the original file held and
 * Claude Code has since moved out (cm: the project's members now, om: in the original) go back
 * where they were, byte for byte.
 */
void setup_claude_readd_moved(const char *cur, const SetupMember *cm, size_t ncm, const char *orig,
                              const SetupMember *om, size_t nom, SetupEdits *edits);
/**
 * The servers of the .mcp.json files Claude Code reads for a session started in root (root's
 * and its parents') that it starts itself: all but those the project's .claude/settings*.json
 * refuse and those setup handed to mcpd (its record). An array of names, to free.
 */
yajl_val setup_claude_own_servers(const char *root);
