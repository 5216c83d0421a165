// SPDX-License-Identifier: MIT
// source-kiro: Kiro's <root>/.kiro/settings/mcp.json, then ~/.kiro/settings/mcp.json.
//
// Format: https://kiro.dev/docs/mcp/configuration ("Configuration file structure",
// "Configuration locations"): {"mcpServers": {"name": {"command", "args", "env",
// "disabled", "autoApprove", "disabledTools"} or {"url", "headers", ...}}}; "workspace
// settings take precedence" over the user's. Strict JSON.

#include <stdlib.h>

#include "common/util.h"
#include "daemon/config/source.h"

static const AgentShape kiro_shape = {
    .agent = "Kiro",
    .drop = (const char *const[]){"autoApprove", NULL},
    .has_disabled = true,
};

/* A url without a type: Kiro probes Streamable HTTP then SSE, mcpd's "auto". */
int source_kiro_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    (void)name;
    return source_map_agent(&kiro_shape, in, outp, whyp);
}

void source_kiro_collect(const ConfigSource *src, const DiscoverOptions *opt,
                         const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_agent_file("kiro");

    source_load_project_then_user(src, opt, settings, set, ".kiro/settings/mcp.json", user,
                                  "mcpServers", source_kiro_map, false);
}
