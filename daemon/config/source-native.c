// SPDX-License-Identifier: MIT
// source-native: mcpd's own config files, <root>/.mcpd/mcp.json and $XDG_CONFIG_HOME/mcpd/mcp.json.

#include <stdlib.h>

#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/source.h"

/* Project before user: a project may override the user's own definition of a server. */
void source_native_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *conf = paths_config_home();
    _cleanup_free_ char *user = paths_join(conf, "mcpd/mcp.json");

    if (opt->root) {
        _cleanup_free_ char *project = paths_join(opt->root, ".mcpd/mcp.json");
        config_load_native_file(set, project, src->id, "mcpd (project)", CONFIG_LEVEL_PROJECT,
                                settings);
    }
    config_load_native_file(set, user, src->id, "mcpd (user)", CONFIG_LEVEL_USER, settings);
}
