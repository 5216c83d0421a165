// SPDX-License-Identifier: MIT
// tool-filter: a server's enabledTools and disabledTools globs applied to its tools.

#include <fnmatch.h>

#include "common/json.h"
#include "daemon/config/tool-filter.h"

static bool globs_match(yajl_val globs, const char *tool)
{
    for (size_t i = 0; i < json_array_len(globs); i++)
        if (fnmatch(json_array_at(globs, i)->u.string, tool, 0) == 0)
            return true;
    return false;
}

bool config_tool_allowed(const ServerConfig *c, const char *tool)
{
    if (c->enabled_tools && !globs_match(c->enabled_tools, tool))
        return false;
    return !globs_match(c->disabled_tools, tool);
}

size_t config_filter_tools(const ServerConfig *c, yajl_val tools)
{
    size_t kept = 0, n = json_array_len(tools);

    if (!c->enabled_tools && !c->disabled_tools)
        return 0;
    for (size_t i = 0; i < n; i++) {
        yajl_val t = tools->u.array.values[i];
        const char *name = json_get_string(t, "name");
        if (name && !config_tool_allowed(c, name))
            json_free(t);
        else
            tools->u.array.values[kept++] = t;
    }
    tools->u.array.len = kept;
    return n - kept;
}
