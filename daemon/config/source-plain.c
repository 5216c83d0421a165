// SPDX-License-Identifier: MIT
// source-plain: the plain project file <root>/mcp.json (<root>/.mcp.json is Claude Code's).

#include "daemon/config/source.h"

/* Lowest priority of all (seed 1.2): anything more specific about the same name wins. */
void source_plain_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set)
{
    source_load_pair(src, opt, settings, set, NULL, "mcp.json", "mcpServers", NULL);
}
