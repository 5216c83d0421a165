// SPDX-License-Identifier: MIT
// setup: `mcpctl setup AGENT|--all [--dry-run] [--undo]`: an agent starts mcpd's bridge only.
#pragma once

/*
 * Files larger than this are refused rather than loaded whole. ~/.claude.json keeps chat
 * history and is commonly 15-240 MB, so the bound sits well above that; setup holds the text
 * and two parsed copies for the round-trip check, a few times the file, once, in a short-lived
 * command.
 */
#define SETUP_MAX_FILE_BYTES (512 * 1024 * 1024)

/** Run the setup verb; argv[0] is "setup". Returns mcpctl's exit status. */
int setup_main(int argc, char **argv);
