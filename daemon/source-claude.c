// SPDX-License-Identifier: MIT
// source-claude: Claude Code's ~/.claude.json (top level and per project), ~/.claude/mcp.json,
// <root>/.claude/mcp.json.

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
 * ~/.claude.json holds the user's servers at the top level and each project's own ("local
 * scope") under projects["<absolute root>"].mcpServers. The file also carries a lot of state
 * Claude Code keeps for itself; only those two members are read.
 */
static void load_claude_json(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *path = source_claude_json_path();
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta user = {(char *)src->id, (char *)src->name, path, CONFIG_LEVEL_USER};
    SourceMeta project = {(char *)src->id, (char *)src->name, path, CONFIG_LEVEL_PROJECT};

    if (config_read_json(set, path, &root) < 0)
        return;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL, "the top level must be an object");
        return;
    }
    config_add_entries(set, json_get(root, "mcpServers"), "mcpServers", &user, settings, NULL);
    if (!opt->root)
        return;
    yajl_val projects = json_get(root, "projects");
    if (projects && !YAJL_IS_OBJECT(projects)) {
        config_set_problem(set, path, NULL, "\"projects\" must be an object, not %s",
                           json_type_name(projects));
        return;
    }
    config_add_entries(set, json_get(source_project_entry(projects, opt->root), "mcpServers"),
                       "projects[root].mcpServers", &project, settings, NULL);
}

/* The DESIGN order: ~/.claude.json, ~/.claude/mcp.json, then the project's .claude/mcp.json. */
void source_claude_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_home_path(".claude/mcp.json");
    SourceMeta meta = {(char *)src->id, (char *)src->name, NULL, CONFIG_LEVEL_USER};

    load_claude_json(src, opt, settings, set);
    config_load_json_servers(set, user, "mcpServers", &meta, settings, NULL);
    if (opt->root) {
        _cleanup_free_ char *project = paths_join(opt->root, ".claude/mcp.json");
        meta.level = CONFIG_LEVEL_PROJECT;
        config_load_json_servers(set, project, "mcpServers", &meta, settings, NULL);
    }
}
