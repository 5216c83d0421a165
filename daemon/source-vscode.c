// SPDX-License-Identifier: MIT
// source-vscode: VS Code's <root>/.vscode/mcp.json (top-level "servers", each with a "type").

#include <stdlib.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/source.h"

/*
 * The file VS Code writes is {"inputs": [...], "servers": {"name": {"type": "stdio",
 * "command": ...}}}; the older settings.json shape nests it as {"mcp": {"servers": ...}}.
 * Both are read. ${input:...} prompts cannot be answered by a daemon and stay as written;
 * ${workspaceFolder} and ${env:NAME} expand like ${VAR}; envFile is read as VS Code does
 * (config.c). dev is VS Code's own.
 */
static int map_vscode(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    static const char *const drop[] = {"dev", NULL};

    (void)name, (void)whyp;
    *outp = source_copy_without(in, drop);
    return 0;
}

void source_vscode_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *path = opt->root ? paths_join(opt->root, ".vscode/mcp.json") : NULL;
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta meta = {(char *)src->id, (char *)src->name, path, CONFIG_LEVEL_PROJECT};
    yajl_val servers;

    if (!path || config_read_json(set, path, CONFIG_LEVEL_PROJECT, &root) < 0)
        return;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL, "the top level must be an object with \"servers\"");
        return;
    }
    servers = json_get(root, "servers");
    if (!servers)
        servers = json_get(json_get_object(root, "mcp"), "servers");
    config_add_entries(set, servers, "servers", &meta, settings, map_vscode);
}
