// SPDX-License-Identifier: MIT
// source-roo: Roo Code's <root>/.roo/mcp.json, then its global mcp_settings.json.
//
// Format: https://docs.roocode.com/features/mcp/using-mcp-in-roo ("Configuring MCP
// Servers": global mcp_settings.json in the extension's storage, project .roo/mcp.json;
// "the project-level configuration takes precedence"; entries with "type" "stdio" | "sse" |
// "streamable-http", "disabled", "alwaysAllow", "disabledTools", "watchPaths", "cwd",
// "timeout" in seconds). The global file is the VS Code extension's
// globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json. Strict JSON.

#include <stdlib.h>

#include "common/util.h"
#include "daemon/config/source.h"

static const AgentType roo_types[] = {
    {"stdio", "stdio"},
    {"sse", "sse"},
    {"streamable-http", "http"},
    {NULL, NULL},
};

static const AgentShape roo_shape = {
    .agent = "Roo Code",
    .drop = (const char *const[]){"alwaysAllow", "watchPaths", NULL},
    .types = roo_types,
    .has_disabled = true,
    .timeout_seconds = "timeout",
};

/* disabledTools carries over under its own name (mcpd's per-server filter). */
static int map_roo(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    (void)name;
    return source_map_agent(&roo_shape, in, outp, whyp);
}

void source_roo_collect(const ConfigSource *src, const DiscoverOptions *opt,
                        const Settings *settings, ConfigSet *set)
{
    source_load_project_then_user(src, opt, settings, set, ".roo/mcp.json", NULL, "mcpServers",
                                  map_roo, false);
    for (const char *const *d = source_vscode_dirs; *d; d++) {
        _cleanup_free_ char *rel = xasprintf(
            "%s/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json", *d);
        _cleanup_free_ char *path = source_config_path(rel);
        source_load_project_then_user(src, opt, settings, set, NULL, path, "mcpServers", map_roo,
                                      false);
    }
}
