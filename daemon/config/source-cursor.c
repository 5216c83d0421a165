// SPDX-License-Identifier: MIT
// source-cursor: Cursor's ~/.cursor/mcp.json and <root>/.cursor/mcp.json.

#include "daemon/config/source.h"

/*
 * Cursor's entries are mcpServers-shaped already: command/args/env, or url (+ headers) with
 * the transport found by probing, which is what mcpd's "auto" does for a url without a type.
 */
void source_cursor_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    source_load_pair(src, opt, settings, set, ".cursor/mcp.json", ".cursor/mcp.json", "mcpServers",
                     NULL);
}
