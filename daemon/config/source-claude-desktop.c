// SPDX-License-Identifier: MIT
// source-claude-desktop: Claude Desktop's $XDG_CONFIG_HOME/Claude/claude_desktop_config.json.
//
// Format: https://modelcontextprotocol.io/quickstart/user ("claude_desktop_config.json",
// {"mcpServers": {"name": {"command", "args", "env"}}}); the Linux builds keep it under
// ~/.config/Claude (Electron's appData). Strict JSON: the app reads it with JSON.parse.

#include <stdlib.h>

#include "common/util.h"
#include "daemon/config/source.h"

/* Entries are mcpServers-shaped already (stdio only: command, args, env). */
void source_claude_desktop_collect(const ConfigSource *src, const DiscoverOptions *opt,
                                   const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *path = source_agent_file("claude-desktop");

    source_load_project_then_user(src, opt, settings, set, NULL, path, "mcpServers", NULL, false);
}
