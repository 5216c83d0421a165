// SPDX-License-Identifier: MIT
// source-antigravity: Google Antigravity's ~/.gemini/antigravity/mcp_config.json (the editor) and
// ~/.gemini/config/mcp_config.json (the Antigravity CLI, agy).
//
// Format: https://antigravity.google/docs/mcp ("Connecting custom MCP servers": the raw
// config opened from "Manage MCP Servers" > "View raw config" is
// ~/.gemini/antigravity/mcp_config.json): {"mcpServers": {"name": {"command", "args",
// "env"} or {"serverUrl", "headers"}, "disabled", "disabledTools"}}. User level only.
// Strict JSON. The CLI (agy) keeps its global servers in ~/.gemini/config/mcp_config.json (its
// customization root ~/.gemini/config/, beside skills/), in the same shape: the same mapping,
// a provider of its own so each file is named as its agent's.

#include <stdlib.h>

#include "common/util.h"
#include "daemon/config/source.h"

static const AgentShape antigravity_shape = {
    .agent = "Google Antigravity",
    .url_alias = "serverUrl",
    .has_disabled = true,
};

/* disabledTools carries over under its own name (mcpd's per-server filter). */
int source_antigravity_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    (void)name;
    return source_map_agent(&antigravity_shape, in, outp, whyp);
}

void source_antigravity_collect(const ConfigSource *src, const DiscoverOptions *opt,
                                const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_agent_file("antigravity");

    source_load_project_then_user(src, opt, settings, set, NULL, user, "mcpServers",
                                  source_antigravity_map, false);
}

void source_antigravity_cli_collect(const ConfigSource *src, const DiscoverOptions *opt,
                                    const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_agent_file("antigravity-cli");

    source_load_project_then_user(src, opt, settings, set, NULL, user, "mcpServers",
                                  source_antigravity_map, false);
}
