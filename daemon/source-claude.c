// SPDX-License-Identifier: MIT
// source-claude: Claude Code's ~/.claude.json (user and local scope) and <root>/.mcp.json (project
// scope), in Claude Code's own order.

#include <stdlib.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/source.h"

char *source_claude_json_path(void)
{
    const char *dir = getenv("CLAUDE_CONFIG_DIR");

    return dir && dir[0] ? paths_join(dir, ".claude.json") : source_home_path(".claude.json");
}

/*
 * Claude Code's own precedence (docs.anthropic.com/en/docs/claude-code/mcp, "scope
 * hierarchy"): local scope (~/.claude.json projects["<root>"].mcpServers) over project scope
 * (<root>/.mcp.json) over user scope (the top-level mcpServers of ~/.claude.json). The file
 * also carries a lot of state Claude Code keeps for itself; only those members are read.
 * Claude Code reads neither ~/.claude/mcp.json nor <root>/.claude/mcp.json, so mcpd does not.
 */
void source_claude_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *path = source_claude_json_path();
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta user = {(char *)src->id, (char *)src->name, path, CONFIG_LEVEL_USER};
    SourceMeta local = {(char *)src->id, (char *)src->name, path, CONFIG_LEVEL_PROJECT};
    SourceMeta project = {(char *)src->id, (char *)src->name, NULL, CONFIG_LEVEL_PROJECT};
    yajl_val projects = NULL;

    if (config_read_json(set, path, &root) == 0 && !YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL, "the top level must be an object");
        root = json_free(root);
    }
    if (opt->root && (projects = json_get(root, "projects")) && !YAJL_IS_OBJECT(projects)) {
        config_set_problem(set, path, NULL, "\"projects\" must be an object, not %s",
                           json_type_name(projects));
        projects = NULL;
    }
    if (opt->root) {
        _cleanup_free_ char *mcp = paths_join(opt->root, ".mcp.json");
        config_add_entries(set, json_get(source_project_entry(projects, opt->root), "mcpServers"),
                           "projects[root].mcpServers", &local, settings, NULL);
        config_load_json_servers(set, mcp, "mcpServers", &project, settings, NULL);
    }
    config_add_entries(set, json_get(root, "mcpServers"), "mcpServers", &user, settings, NULL);
}
