// SPDX-License-Identifier: MIT
// source-copilot: GitHub Copilot CLI's ~/.copilot/mcp-config.json.
//
// Format: https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers
// and .../coding-agent/extend-coding-agent-with-mcp ("Writing a JSON configuration for MCP
// servers"): {"mcpServers": {"name": {"type": "local"|"stdio"|"http"|"sse", "command",
// "args", "env", "url", "headers", "tools": ["*"]}}}. The file sits in ~/.copilot, or in
// $COPILOT_HOME: releases since 1.0 ignore XDG_CONFIG_HOME (github/copilot-cli issues
// 1750 and 1954, where its maintainer says the XDG support was removed). Strict JSON.
// A repository's shared servers sit in <root>/.github/mcp.json, same format, and win over the
// user's (docs.github.com, Copilot CLI "Adding per-repository MCP servers", github/docs pull
// 44236; loaded by Copilot CLI only once the folder is trusted, so they pass mcpd's project
// trust gate). The other per-repository file, <root>/.mcp.json, is read by the Claude Code
// provider already, ahead of this one.

#include <errno.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/source.h"

static const AgentType copilot_types[] = {
    {"local", "stdio"}, {"stdio", "stdio"}, {"http", "http"}, {"sse", "sse"}, {NULL, NULL},
};

static const AgentShape copilot_shape = {
    .agent = "GitHub Copilot CLI",
    .drop = (const char *const[]){"tools", NULL},
    .types = copilot_types,
};

/* "tools" is Copilot's allow-list of tool names ("*": all): mcpd's enabledTools. */
static int map_copilot(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    yajl_val tools = json_get(in, "tools");
    int r;

    (void)name;
    if (tools && !YAJL_IS_ARRAY(tools)) {
        *whyp = xstrdup("\"tools\" must be an array of tool names (\"*\" for all)");
        return -EINVAL;
    }
    if ((r = source_map_agent(&copilot_shape, in, outp, whyp)) < 0)
        return r;
    if (tools && !json_get(in, "enabledTools"))
        json_object_set(*outp, "enabledTools", json_copy(tools));
    return 0;
}

void source_copilot_collect(const ConfigSource *src, const DiscoverOptions *opt,
                            const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *path = source_agent_file("copilot");

    source_load_project_then_user(src, opt, settings, set, ".github/mcp.json", path, "mcpServers",
                                  map_copilot, false);
}
