// SPDX-License-Identifier: MIT
// source-cline: Cline's cline_mcp_settings.json (~/.cline and the VS Code extension's storage).
//
// Format: https://docs.cline.bot/mcp/configuring-mcp-servers and Cline's source
// (src/services/mcp/schemas.ts: type "stdio" | "sse" | "streamableHttp", the older
// "transportType", "disabled", "autoApprove", "timeout" in seconds, default 60; a url entry
// without a type is SSE).
// Locations: https://docs.cline.bot/getting-started/config (~/.cline/data/settings/
// cline_mcp_settings.json, shared by the CLI and the IDE) and the VS Code extension's
// globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json. User level only.
// Strict JSON.

#include <stdlib.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/source.h"

static const AgentType cline_types[] = {
    {"stdio", "stdio"}, {"sse", "sse"}, {"streamableHttp", "http"}, {"http", "http"}, {NULL, NULL},
};

static const AgentShape cline_shape = {
    .agent = "Cline",
    .drop = (const char *const[]){"autoApprove", NULL},
    .type_alias = "transportType",
    .types = cline_types,
    .has_disabled = true,
    .timeout_seconds = "timeout",
};

/*
 * Without "type" (or "transportType"), an entry with a command is stdio and one with only a url
 * is SSE, not probed: schemas.ts lists the SSE shape before the Streamable HTTP one so that
 * older entries keep working ("when type is not specified, it will default to sse").
 */
int source_cline_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    int r;

    (void)name;
    if ((r = source_map_agent(&cline_shape, in, outp, whyp)) < 0)
        return r;
    if (!json_get(in, "type") && !json_get(in, "transportType") && !json_get(in, "command") &&
        json_get(in, "url"))
        json_object_set(*outp, "type", json_string_new("sse"));
    return 0;
}

void source_cline_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *shared = source_agent_file("cline");

    source_load_project_then_user(src, opt, settings, set, NULL, shared, "mcpServers",
                                  source_cline_map, false);
    for (size_t i = 0;; i++) {
        _cleanup_free_ char *path = source_agent_more_file("cline", i);
        if (!path)
            break;
        source_load_project_then_user(src, opt, settings, set, NULL, path, "mcpServers",
                                      source_cline_map, false);
    }
}
