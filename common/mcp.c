// SPDX-License-Identifier: MIT
// mcp: the protocol's version list and log level names, in one place for daemon and clients.

#include <string.h>

#include "common/mcp.h"

const char *const mcp_protocol_versions[] = {MCP_PROTOCOL_VERSIONS_2025, NULL};

static const char *const level_names[MCP_N_LEVELS] = {
    [MCP_LEVEL_DEBUG] = "debug",   [MCP_LEVEL_INFO] = "info",
    [MCP_LEVEL_NOTICE] = "notice", [MCP_LEVEL_WARNING] = "warning",
    [MCP_LEVEL_ERROR] = "error",   [MCP_LEVEL_CRITICAL] = "critical",
    [MCP_LEVEL_ALERT] = "alert",   [MCP_LEVEL_EMERGENCY] = "emergency",
};

const char *mcp_protocol_find(const char *v)
{
    for (size_t i = 0; v && mcp_protocol_versions[i]; i++)
        if (strcmp(v, mcp_protocol_versions[i]) == 0)
            return mcp_protocol_versions[i];
    return NULL;
}

int mcp_level_from_name(const char *name)
{
    for (int i = 0; name && i < MCP_N_LEVELS; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    return -1;
}

const char *mcp_level_name(int level)
{
    return level >= 0 && level < MCP_N_LEVELS ? level_names[level] : NULL;
}
