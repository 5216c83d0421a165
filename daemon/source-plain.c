// SPDX-License-Identifier: MIT
// source-plain: the plain project files <root>/mcp.json and <root>/.mcp.json (Claude Code's project
// file).

#include "daemon/source.h"

/* Lowest priority of all (seed 1.2): anything more specific about the same name wins. */
void source_plain_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set)
{
    source_load_pair(src, opt, settings, set, NULL, "mcp.json", "mcpServers", NULL);
    source_load_pair(src, opt, settings, set, NULL, ".mcp.json", "mcpServers", NULL);
}
