// SPDX-License-Identifier: MIT
// source-imported: the servers `mcpctl setup` moved out of agents' own files, kept in
// $XDG_CONFIG_HOME/mcpd/imported/<agent>.json with where they came from.
#pragma once

/* What mcpctl setup recorded about a project .mcp.json server it switched off in Claude Code. */
typedef enum ImportedSwitch {
    IMPORTED_SWITCH_NONE,     /* not setup's doing: Claude Code's list is the user's word */
    IMPORTED_SWITCH_APPROVED, /* the user had approved it in Claude Code before setup */
    IMPORTED_SWITCH_PENDING,  /* Claude Code had not asked yet, or the user had not answered */
} ImportedSwitch;

/**
 * Whether server is on projects[root].disabledMcpjsonServers in ~/.claude.json because
 * mcpctl setup put it there (so that Claude Code stops starting it while mcpd serves it). A
 * trust gate reading Claude Code's approvals must not take such a name as the user's refusal;
 * it gets what the user had said before setup instead.
 */
ImportedSwitch source_imported_claude_switch(const char *root, const char *server);
