// SPDX-License-Identifier: MIT
// source-windsurf: Windsurf's ~/.codeium/windsurf/mcp_config.json and
// <root>/.windsurf/mcp_config.json, then its JetBrains plugin's ~/.codeium/mcp_config.json.

#include <errno.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/config/source.h"

/*
 * Windsurf writes remote servers as serverUrl; url works too. disabled: true means off.
 * disabledTools is mcpd's own key and passes through.
 */
static int map_windsurf(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    static const char *const drop[] = {"serverUrl", "disabled", NULL};
    yajl_val url = json_get(in, "serverUrl"), disabled = json_get(in, "disabled"), out;

    (void)name;
    if (url && !YAJL_IS_STRING(url)) {
        *whyp = xstrdup("\"serverUrl\" must be a string");
        return -EINVAL;
    }
    if (disabled && !YAJL_IS_TRUE(disabled) && !YAJL_IS_FALSE(disabled)) {
        *whyp = xstrdup("\"disabled\" must be true or false");
        return -EINVAL;
    }
    out = source_copy_without(in, drop);
    if (url && !json_get(in, "url"))
        json_object_set(out, "url", json_copy(url));
    if (YAJL_IS_TRUE(disabled) && !json_get(in, "enabled"))
        json_object_set(out, "enabled", json_bool_new(false));
    *outp = out;
    return 0;
}

void source_windsurf_collect(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_agent_file("windsurf");
    _cleanup_free_ char *plugin = source_agent_more_file("windsurf", 0);

    source_load_pair(src, opt, settings, set, user, ".windsurf/mcp_config.json", "mcpServers",
                     map_windsurf);
    /*
     * Windsurf's JetBrains plugin keeps its servers in ~/.codeium/mcp_config.json
     * (https://docs.windsurf.com/plugins/cascade/mcp), the same shape: read after the editor's
     * own files, whose entry of a name wins.
     */
    source_load_pair(src, opt, settings, set, plugin, NULL, "mcpServers", map_windsurf);
}

/* The same mapping for the servers mcpctl setup moved out of this agent's file. */
int source_windsurf_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    return map_windsurf(name, in, outp, whyp);
}
