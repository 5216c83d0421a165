// SPDX-License-Identifier: MIT
// setup-vscode: what mcpctl setup does differently for VS Code's user mcp.json (VS Code,
// VS Code Insiders, VSCodium): typed entries, servers only VS Code can start, its sandbox.
//
// Format: code.visualstudio.com/docs/copilot/reference/mcp-configuration: {"inputs": [...],
// "servers": {"name": {"type": "stdio"|"http"|"sse", ...}}}, and per entry "sandboxEnabled"
// with a "sandbox" block (also at the top of the file: daemon/config/source-vscode.c).

#include <string.h>

#include "client/setup-vscode.h"
#include "common/json.h"
#include "common/util.h"
#include "daemon/config/source.h"

/*
 * Variables VS Code resolves when it starts a server and mcpd cannot: an input prompts the
 * user in VS Code's window (its value kept in VS Code's secret storage), and a command or a
 * setting is VS Code's own. ${env:}, ${workspaceFolder} and ${userHome} mcpd fills as VS Code
 * does (daemon/config/configset.h, EXPAND_ENV and EXPAND_EDITOR), so those entries move.
 */
static const struct {
    const char *mark, *what;
} vscode_only[] = {
    {"${input:", "an ${input:...} prompt, which only VS Code can ask"},
    {"${command:", "a ${command:...} variable, which only VS Code can run"},
    {"${config:", "a ${config:...} variable, which only VS Code's settings hold"},
};

/* VS Code entries nest a few levels (env, headers, sandbox.filesystem lists): far below this. */
#define SETUP_VSCODE_MAX_DEPTH 32

static const char *unfilled_in(yajl_val v, int depth)
{
    const char *what = NULL;

    if (depth > SETUP_VSCODE_MAX_DEPTH)
        return NULL;
    if (YAJL_IS_STRING(v)) {
        for (size_t i = 0; i < N_ELEMENTS(vscode_only); i++)
            if (strstr(v->u.string, vscode_only[i].mark))
                return vscode_only[i].what;
    } else if (YAJL_IS_OBJECT(v)) {
        for (size_t i = 0; !what && i < v->u.object.len; i++)
            what = unfilled_in(v->u.object.values[i], depth + 1);
    } else if (YAJL_IS_ARRAY(v)) {
        for (size_t i = 0; !what && i < v->u.array.len; i++)
            what = unfilled_in(v->u.array.values[i], depth + 1);
    }
    return what;
}

bool setup_vscode_agent(const AgentInfo *a)
{
    return a->format == AGENT_FORMAT_JSON && streq(a->servers_key, "servers");
}

const char *setup_vscode_unfilled(yajl_val entry)
{
    return unfilled_in(entry, 0);
}

yajl_val setup_vscode_moved(yajl_val file, yajl_val moved)
{
    yajl_val given = source_vscode_with_file_sandbox(moved, json_get(file, "sandbox"));

    return given ? given : json_copy(moved);
}
