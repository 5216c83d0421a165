// SPDX-License-Identifier: MIT
// agent-names: the server names each agent accepts, and its own words for the ones it refuses.
//
// Claude Code accepts a server name of 1 to 64 characters from [A-Za-z0-9_-] and refuses any
// other with "Invalid name <name>. Names can only contain letters, numbers, hyphens, and
// underscores." (its `claude mcp add` and getInvalidMcpServerNameReason); a file it reads with
// such a name does not give a server. mcpd reports the entry with the file and does not start it,
// rather than serving it under a changed name the user never chose. Its scopes only (user,
// local, project: source-claude.c); plugins' servers are named by Claude Code itself.

#include <stdbool.h>
#include <string.h>

#include "common/util.h"
#include "daemon/config/agent-names.h"

static bool claude_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

char *agent_names_claude_refusal(const char *name)
{
    size_t n = strlen(name);
    const char *p = name;

    while (*p && claude_name_char(*p))
        p++;
    if (!*p && n > 0 && n <= AGENT_NAMES_CLAUDE_MAX)
        return NULL;
    return xasprintf("Server \"%s\": Claude Code refuses this name (\"Invalid name %s. Names can "
                     "only contain letters, numbers, hyphens, and underscores.\"; at most %d "
                     "characters) and does not start it, so neither does mcpd: rename it",
                     name, name, AGENT_NAMES_CLAUDE_MAX);
}
