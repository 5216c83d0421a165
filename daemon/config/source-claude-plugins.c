// SPDX-License-Identifier: MIT
// source-claude-plugins: the servers of the Claude Code plugins the user installed and enabled
// (~/.claude/plugins/installed_plugins.json, ~/.claude/settings.json enabledPlugins).

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/source.h"

/*
 * Layout (code.claude.com/docs/en/plugins-reference, "plugin installation scopes", "MCP
 * servers"): `claude plugin install` records each plugin in <dir>/plugins/installed_plugins.json,
 * {"version": 2, "plugins": {"<plugin>@<marketplace>": [{"scope": "user", "installPath":
 * "<dir>/plugins/cache/<marketplace>/<plugin>/<version>", ...}]}} (version 1 kept one object
 * per plugin instead of a list, all user scope), <dir> being $CLAUDE_CONFIG_DIR or ~/.claude.
 * A plugin is loaded only when <dir>/settings.json has "enabledPlugins": {"<id>": true}. Its
 * servers are the plugin.json "mcpServers" (inline servers, or a ./path, or a list of either)
 * and the plugin root's .mcp.json ({"mcpServers": {...}} or the servers themselves), with
 * ${CLAUDE_PLUGIN_ROOT} the install path. Project- and local-scope installs (with a
 * "projectPath") belong to one project and its settings; they are not read.
 */

/*
 * Plugins read from installed_plugins.json at most: users have a few dozen; the bound keeps a
 * runaway file from costing more than a few hundred small reads, the rest are reported.
 */
#define CLAUDE_MAX_PLUGINS 256

/*
 * Entries of a plugin.json "mcpServers" list read at most: a plugin names one or two files;
 * the bound keeps a strange manifest from costing more than a few reads.
 */
#define CLAUDE_MAX_PLUGIN_MCP_ENTRIES 16

static char *claude_dir(void)
{
    const char *dir = getenv("CLAUDE_CONFIG_DIR");

    return dir && dir[0] ? xstrdup(dir) : source_home_path(".claude");
}

/* What a plugin's servers need to be added: where they come from, and why they are off. */
typedef struct Plugin {
    const char *id, *root;
    const char *why_off; /* NULL when enabled */
    const ConfigSource *src;
    const Settings *settings;
    ConfigSet *set;
} Plugin;

static void add_servers(const Plugin *p, yajl_val servers, const char *path, const char *key)
{
    static const char *const vars[] = {"CLAUDE_PLUGIN_ROOT", NULL};
    const char *const values[] = {p->root};
    SourceMeta meta = {(char *)p->src->id, (char *)p->src->name, (char *)path, CONFIG_LEVEL_USER};
    _cleanup_json_ yajl_val filled = source_fill_vars(json_copy(servers), vars, values);

    if (!p->why_off) {
        config_add_entries(p->set, filled, key, &meta, p->settings, NULL);
        return;
    }
    for (size_t i = 0; YAJL_IS_OBJECT(filled) && i < filled->u.object.len; i++)
        config_set_skip(p->set, filled->u.object.keys[i], &meta, "%s", p->why_off);
}

/* A file in .mcp.json's shape: {"mcpServers": {...}}, or the servers as the top level. */
static void load_mcp_file(const Plugin *p, const char *path, bool must_exist)
{
    _cleanup_json_ yajl_val root = NULL;
    int r = source_read_json(p->set, path, CONFIG_LEVEL_USER, false, &root);

    if (r == -ENOENT && must_exist && !p->why_off)
        config_set_problem(p->set, path, NULL,
                           "the plugin \"%s\" names this file in its plugin.json \"mcpServers\" "
                           "but it does not exist; reinstall the plugin",
                           p->id);
    if (r < 0)
        return;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(p->set, path, NULL, "the top level must be an object, not %s",
                           json_type_name(root));
        return;
    }
    yajl_val servers = json_get_object(root, "mcpServers");
    add_servers(p, servers ? servers : root, path, servers ? "mcpServers" : "(top level)");
}

/* A path plugin.json names is relative to the plugin root and stays inside it. */
static bool inside_plugin(const char *rel)
{
    if (rel[0] == '/' || streq(rel, ".."))
        return false;
    size_t n = strlen(rel);
    return !startswith(rel, "../") && !strstr(rel, "/../") &&
           !(n >= 3 && streq(rel + n - 3, "/.."));
}

/* One entry of plugin.json "mcpServers": a ./path to read, or servers inline. */
static void load_manifest_entry(const Plugin *p, yajl_val v, const char *manifest,
                                bool *default_read)
{
    if (YAJL_IS_OBJECT(v)) {
        add_servers(p, v, manifest, "mcpServers");
        return;
    }
    if (!YAJL_IS_STRING(v)) {
        config_set_problem(p->set, manifest, NULL,
                           "\"mcpServers\" must be an object, a path or a list of them, not %s",
                           json_type_name(v));
        return;
    }
    const char *rel = v->u.string;
    if (!inside_plugin(rel)) {
        config_set_problem(p->set, manifest, NULL,
                           "\"mcpServers\" names \"%s\", outside the plugin; it is not read "
                           "(Claude Code takes paths relative to the plugin, starting with ./)",
                           rel);
        return;
    }
    while (startswith(rel, "./"))
        rel += 2;
    *default_read |= streq(rel, ".mcp.json");
    _cleanup_free_ char *path = paths_join(p->root, rel);
    load_mcp_file(p, path, true);
}

/* A plugin's servers: its plugin.json "mcpServers" first, then its .mcp.json. */
static void load_plugin(const Plugin *p)
{
    _cleanup_free_ char *manifest = paths_join(p->root, ".claude-plugin/plugin.json");
    _cleanup_free_ char *mcp = paths_join(p->root, ".mcp.json");
    _cleanup_json_ yajl_val m = NULL;
    bool default_read = false;

    if (source_read_json(p->set, manifest, CONFIG_LEVEL_USER, false, &m) == 0) {
        yajl_val servers = json_get(m, "mcpServers");
        size_t n = YAJL_IS_ARRAY(servers) ? json_array_len(servers) : 0;
        if (n > CLAUDE_MAX_PLUGIN_MCP_ENTRIES) {
            config_set_problem(p->set, manifest, NULL,
                               "\"mcpServers\" lists %zu entries; the first %d are read", n,
                               CLAUDE_MAX_PLUGIN_MCP_ENTRIES);
            n = CLAUDE_MAX_PLUGIN_MCP_ENTRIES;
        }
        for (size_t i = 0; i < n; i++)
            load_manifest_entry(p, json_array_at(servers, i), manifest, &default_read);
        if (servers && !YAJL_IS_ARRAY(servers) && !YAJL_IS_NULL(servers))
            load_manifest_entry(p, servers, manifest, &default_read);
    }
    if (!default_read)
        load_mcp_file(p, mcp, false);
}

/* The user-scope install of a plugin: the entry itself (version 1) or the list's (version 2). */
static yajl_val user_install(yajl_val v)
{
    if (YAJL_IS_OBJECT(v))
        return v;
    for (size_t i = 0; i < json_array_len(v); i++) {
        yajl_val e = json_array_at(v, i);
        const char *scope = json_get_string(e, "scope");
        if (YAJL_IS_OBJECT(e) && (!scope || streq(scope, "user")))
            return e;
    }
    return NULL;
}

void source_claude_plugins(const ConfigSource *src, const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *dir = claude_dir();
    _cleanup_free_ char *installed = paths_join(dir, "plugins/installed_plugins.json");
    _cleanup_free_ char *settings_path = paths_join(dir, "settings.json");
    _cleanup_json_ yajl_val list = NULL, user = NULL;

    if (source_read_json(set, installed, CONFIG_LEVEL_USER, false, &list) < 0)
        return;
    yajl_val plugins = json_get(list, "plugins");
    if (!YAJL_IS_OBJECT(plugins)) {
        config_set_problem(set, installed, NULL,
                           "\"plugins\" must be an object; no plugin's servers are read");
        return;
    }
    /* Claude Code reads its settings.json as plain JSON. */
    int r = source_read_json(set, settings_path, CONFIG_LEVEL_USER, false, &user);
    if (r < 0 && r != -ENOENT)
        return; /* reported; which plugins are on is unknown, so none is started */
    yajl_val enabled = json_get(user, "enabledPlugins");
    if (enabled && !YAJL_IS_OBJECT(enabled)) {
        config_set_problem(set, settings_path, NULL,
                           "\"enabledPlugins\" must be an object of \"<plugin>@<marketplace>\": "
                           "true; no plugin's servers are read");
        return;
    }
    size_t n = plugins->u.object.len;
    if (n > CLAUDE_MAX_PLUGINS) {
        config_set_problem(set, installed, NULL, "%zu plugins; the first %d are read", n,
                           CLAUDE_MAX_PLUGINS);
        n = CLAUDE_MAX_PLUGINS;
    }
    for (size_t i = 0; i < n; i++) {
        const char *id = plugins->u.object.keys[i];
        yajl_val install = user_install(plugins->u.object.values[i]);
        const char *root = json_get_string(install, "installPath");
        yajl_val on = json_get(enabled, id);
        _cleanup_free_ char *why_off = NULL;
        struct stat st;

        if (!install)
            continue; /* installed for one project only */
        if (!YAJL_IS_TRUE(on))
            why_off = xasprintf("the Claude Code plugin \"%s\" is %s (enabledPlugins in %s)", id,
                                on ? "disabled" : "not enabled", settings_path);
        if (!root || root[0] != '/' || stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
            if (!why_off)
                config_set_problem(set, installed, NULL,
                                   "the plugin \"%s\" has no installed directory (installPath "
                                   "%s); reinstall it in Claude Code (/plugin)",
                                   id, root ? root : "missing");
            continue;
        }
        Plugin p = {id, root, why_off, src, settings, set};
        load_plugin(&p);
    }
}
