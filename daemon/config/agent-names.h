// SPDX-License-Identifier: MIT
// agent-names: the server names each agent accepts, and its own words for the ones it refuses.
#pragma once

/* Claude Code's longest server name (getInvalidMcpServerNameReason: "longer than 64"). */
#define AGENT_NAMES_CLAUDE_MAX 64

/**
 * Why Claude Code refuses a server of its user, local or project scope named name, in its
 * words (newly allocated), or NULL when it accepts the name. Such an entry is not used, under
 * its name or another: Claude Code never starts it either.
 */
char *agent_names_claude_refusal(const char *name);
