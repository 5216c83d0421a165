// SPDX-License-Identifier: MIT
// source-imported: the servers `mcpctl setup` moved out of agents' own files, kept in
// $XDG_CONFIG_HOME/mcpd/imported/<agent>.json with where they came from.

#include <stdlib.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/config-read.h"
#include "daemon/config/source-imported.h"
#include "daemon/config/source.h"

/*
 * One file per agent, written by client/setup.c: {"importedFrom": {"agent", "path", ...},
 * "mcpServers": {...}, "projects": {"<root>": {"mcpServers": {...}}}}. The entries are kept in
 * the agent's own shape (so undo and display show what the user wrote) and mapped the way the
 * agent's own provider maps them; "projects" holds Claude Code's per-project ("local") servers.
 */
static const struct {
    const char *agent, *name;
    ConfigMapFn map;
    unsigned expand_off; /* as the agent's own provider (config_sources[]): Codex expands nothing */
} imported_agents[] = {
    {"claude", "Claude Code (moved here by mcpctl setup)", NULL, EXPAND_ENV | EXPAND_EDITOR},
    {"codex", "OpenAI Codex (moved here by mcpctl setup)", source_codex_map, EXPAND_ALL},
    {"gemini", "Gemini CLI (moved here by mcpctl setup)", source_gemini_map,
     EXPAND_ENV | EXPAND_EDITOR},
    {"cursor", "Cursor (moved here by mcpctl setup)", NULL, EXPAND_VAR},
    {"windsurf", "Windsurf (moved here by mcpctl setup)", source_windsurf_map,
     EXPAND_VAR | EXPAND_EDITOR},
    {"claude-desktop", "Claude Desktop (moved here by mcpctl setup)", NULL, 0},
    {"cline", "Cline (moved here by mcpctl setup)", source_cline_map, EXPAND_VAR | EXPAND_EDITOR},
    {"roo", "Roo Code (moved here by mcpctl setup)", source_roo_map, 0},
    {"kiro", "Kiro (moved here by mcpctl setup)", source_kiro_map, 0},
    {"antigravity", "Google Antigravity (moved here by mcpctl setup)", source_antigravity_map, 0},
    {"antigravity-cli", "Antigravity CLI (moved here by mcpctl setup)", source_antigravity_map, 0},
    /* VS Code's entries carry their sandbox (the file's block folded in by setup). */
    {"vscode", "VS Code (moved here by mcpctl setup)", source_vscode_map, EXPAND_VAR},
    {"vscode-insiders", "VS Code Insiders (moved here by mcpctl setup)", source_vscode_map,
     EXPAND_VAR},
    {"vscodium", "VSCodium (moved here by mcpctl setup)", source_vscode_map, EXPAND_VAR},
};

static void load_one(const DiscoverOptions *opt, const Settings *settings, ConfigSet *set,
                     const char *path, const char *name, ConfigMapFn map, unsigned expand_off)
{
    _cleanup_json_ yajl_val root = NULL;
    /* Codex's mapping writes mcpd's ${mcpd:env:} references (and refuses them written). */
    SourceMeta meta = {"imported", (char *)name, (char *)path, CONFIG_LEVEL_USER,
                       expand_off | (map == source_codex_map ? SOURCE_MCPD_REFS : 0)};
    yajl_val projects;

    if (config_read_json(set, path, CONFIG_LEVEL_USER, &root) < 0)
        return;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL,
                           "the top level must be an object; run mcpctl setup --undo, or move "
                           "the file away");
        return;
    }
    config_add_entries(set, json_get(root, "mcpServers"), "mcpServers", &meta, settings, map);
    projects = json_get_object(root, "projects");
    if (!opt->root || !projects)
        return;
    meta.level = CONFIG_LEVEL_PROJECT;
    config_add_entries(set, json_get(json_get(projects, opt->root), "mcpServers"),
                       "projects[root].mcpServers", &meta, settings, map);
}

void source_imported_collect(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *conf = paths_config_home();

    (void)src;
    for (size_t i = 0; i < sizeof(imported_agents) / sizeof(imported_agents[0]); i++) {
        _cleanup_free_ char *rel = xasprintf("mcpd/imported/%s.json", imported_agents[i].agent);
        _cleanup_free_ char *path = paths_join(conf, rel);
        load_one(opt, settings, set, path, imported_agents[i].name, imported_agents[i].map,
                 imported_agents[i].expand_off);
    }
}

ImportedSwitch source_imported_claude_switch(const char *root, const char *server)
{
    _cleanup_free_ char *conf = paths_config_home();
    _cleanup_free_ char *path = paths_join(conf, "mcpd/imported/claude.json");
    _cleanup_free_ char *real_root = realpath(root, NULL);
    _cleanup_json_ yajl_val v = NULL;
    ConfigSet quiet = {.quiet = true};
    yajl_val switches;

    if (config_read_json(&quiet, path, CONFIG_LEVEL_USER, &v) < 0) {
        config_set_deinit(&quiet);
        return IMPORTED_SWITCH_NONE;
    }
    config_set_deinit(&quiet);
    /* Keyed as Claude Code keys projects: the directory it was started in, maybe via a link. */
    switches = json_get_object(v, "claudeProjectSwitches");
    for (size_t i = 0; switches && i < switches->u.object.len; i++) {
        const char *key = switches->u.object.keys[i];
        _cleanup_free_ char *real = realpath(key, NULL);
        if (!streq(key, root) && !(real && real_root && streq(real, real_root)))
            continue;
        const char *was = json_get_string(switches->u.object.values[i], server);
        if (was)
            return streq(was, "approved") ? IMPORTED_SWITCH_APPROVED : IMPORTED_SWITCH_PENDING;
    }
    return IMPORTED_SWITCH_NONE;
}
