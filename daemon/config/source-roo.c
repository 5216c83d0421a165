// SPDX-License-Identifier: MIT
// source-roo: Roo Code's <root>/.roo/mcp.json, then its global mcp_settings.json.
//
// Format: https://docs.roocode.com/features/mcp/using-mcp-in-roo ("Configuring MCP
// Servers": global mcp_settings.json in the extension's storage, project .roo/mcp.json;
// "the project-level configuration takes precedence"; entries with "type" "stdio" | "sse" |
// "streamable-http", "disabled", "alwaysAllow", "disabledTools", "watchPaths", "cwd",
// "timeout" in seconds) and Roo Code's src/services/mcp/McpHub.ts (validateServerConfig: a url
// needs a type, command and url do not mix). The global file is the VS Code extension's
// globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json. Strict JSON.

#include <errno.h>
#include <stdlib.h>

#include "common/json.h"
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
    /* McpHub.ts BaseConfigSchema: timeout z.number().min(1).max(3600), else the server fails. */
    .timeout_min = 1,
    .timeout_max = 3600,
};

/*
 * disabledTools carries over under its own name (mcpd's per-server filter). Roo Code refuses an
 * entry with both a command and a url, and a url without a type (McpHub.ts,
 * validateServerConfig: it does not probe): so does mcpd, saying what to add.
 */
int source_roo_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    bool cmd = json_get(in, "command") != NULL, url = json_get(in, "url") != NULL;

    (void)name;
    if (cmd && url) {
        *whyp = xstrdup("\"command\" and \"url\" together: Roo Code refuses such an entry, and "
                        "so does mcpd; keep \"command\" (stdio) or \"url\" (remote)");
        return -EINVAL;
    }
    if (url && !json_get(in, "type")) {
        *whyp = xstrdup("\"url\" without \"type\": Roo Code refuses it, and so does mcpd; add "
                        "\"type\": \"streamable-http\" (or \"sse\" for an older server)");
        return -EINVAL;
    }
    return source_map_agent(&roo_shape, in, outp, whyp);
}

void source_roo_collect(const ConfigSource *src, const DiscoverOptions *opt,
                        const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_agent_file("roo");

    source_load_project_then_user(src, opt, settings, set, ".roo/mcp.json", user, "mcpServers",
                                  source_roo_map, false);
    for (size_t i = 0;; i++) {
        _cleanup_free_ char *path = source_agent_more_file("roo", i);
        if (!path)
            break;
        source_load_project_then_user(src, opt, settings, set, NULL, path, "mcpServers",
                                      source_roo_map, false);
    }
}
