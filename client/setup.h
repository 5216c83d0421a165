// SPDX-License-Identifier: MIT
// setup: `mcpctl setup AGENT|--all [--dry-run] [--undo]`: an agent starts mcpd's bridge only.
#pragma once

/* Files larger than this are not an agent's config (~/.claude.json grows with history, so
 * the bound is generous); setup refuses them rather than load them whole. */
#define SETUP_MAX_FILE_BYTES (64 * 1024 * 1024)

/** Run the setup verb; argv[0] is "setup". Returns mcpctl's exit status. */
int setup_main(int argc, char **argv);
