// SPDX-License-Identifier: MIT
// source-claude-plugins: the servers of the Claude Code plugins the user installed and enabled
// (~/.claude/plugins/installed_plugins.json; enabledPlugins in ~/.claude/settings.json and, for
// a project, in its .claude/settings.json and .claude/settings.local.json).

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/claude-policy.h"
#include "daemon/config/source.h"

/*
 * Layout (code.claude.com/docs/en/plugins-reference, "plugin installation scopes", "MCP
 * servers", "environment variables"): `claude plugin install` records each plugin in
 * <dir>/installed_plugins.json, {"version": 2, "plugins": {"<plugin>@<marketplace>":
 * [{"scope": "managed" | "user" | "project" | "local", "projectPath": "<root>" (project and local
 * only), "installPath": "<dir>/cache/<marketplace>/<plugin>/<version>", ...}]}} (version 1 kept one
 * object per plugin instead of a list, all user scope), <dir> being $CLAUDE_CODE_PLUGIN_CACHE_DIR
 * when set (Claude Code's utils/plugins/pluginDirectories.ts, getPluginsDirectory; "~" is home),
 * else <claude dir>/plugins. A user- or managed-scope install serves every project; a project- or
 * local-scope one only the project at its projectPath. A plugin is loaded when "enabledPlugins":
 * {"<id>": true} in the merged settings: managed settings over <root>/.claude/settings.local.json
 * over <root>/.claude/settings.json over <claude dir>/settings.json, key by key
 * (code.claude.com/docs/en/settings, "settings precedence"), so an administrator can turn a plugin
 * on or off for everyone and a project can turn a user plugin on or off for itself. Its servers are
 * the plugin.json "mcpServers" (inline servers, or a ./path, or a list of either) and the plugin
 * root's .mcp.json
 * ({"mcpServers": {...}} or the servers themselves), with ${CLAUDE_PLUGIN_ROOT} the install path
 * and ${CLAUDE_PLUGIN_DATA} the plugin's persistent directory, <plugins dir>/data/<id> with every
 * character of the id but letters, digits, '_' and '-' made '-' (Claude Code creates it on
 * first use; so does mcpd for an enabled plugin that names it).
 *
 * A cloned repository must not start anything by itself: a plugin that is on only because a
 * file in the project says so (the user's own settings.json does not enable it) has its servers
 * recorded against that project file, at project level, so the project trust gate holds them
 * back until the user approves them (mcpctl trust). A plugin the managed settings turn on is the
 * administrator's word: user level, not gated. Every plugin server passes Claude Code's MCP
 * policy (claude-policy.c) like the user's own.
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

/*
 * Installs of one plugin examined at most: a plugin has one user install and one per project
 * the user installed it in; the bound keeps a runaway list from costing more than a few dozen
 * realpath calls per plugin, the rest are reported.
 */
#define CLAUDE_MAX_INSTALLS_PER_PLUGIN 64

/* What a plugin's servers need to be added: where they come from, and why they are off. */
typedef struct Plugin {
    const char *id, *root, *data;
    const char *why_off;   /* NULL when enabled */
    const char *gate_path; /* the project file that alone turns it on, or NULL */
    ConfigLevel level;     /* project for a project's install or a project's say-so */
    const ConfigSource *src;
    const Settings *settings;
    ConfigSet *set;
    ClaudeSettings *cs;
} Plugin;

/* Whether a server the policy let through names ${CLAUDE_PLUGIN_DATA} (as written). */
static bool kept_names_data(yajl_val kept, yajl_val written)
{
    for (size_t i = 0; YAJL_IS_OBJECT(kept) && i < kept->u.object.len; i++)
        if (claude_value_holds(json_get(written, kept->u.object.keys[i]), "${CLAUDE_PLUGIN_DATA}"))
            return true;
    return false;
}

static void add_servers(const Plugin *p, yajl_val servers, const char *path, const char *key)
{
    static const char *const vars[] = {"CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", NULL};
    const char *const values[] = {p->root, p->data};
    const char *at = p->gate_path ? p->gate_path : path;
    SourceMeta meta = {(char *)p->src->id, (char *)p->src->name, (char *)at, p->level,
                       p->src->expand_off};
    _cleanup_json_ yajl_val filled = source_fill_vars(json_copy(servers), vars, values);
    int r;

    if (p->why_off) {
        for (size_t i = 0; YAJL_IS_OBJECT(filled) && i < filled->u.object.len; i++)
            config_set_skip(p->set, filled->u.object.keys[i], &meta, "%s", p->why_off);
        return;
    }
    /* The policy sees the values Claude Code would run; a blocked server creates nothing. */
    _cleanup_json_ yajl_val kept =
        claude_policy_filter(p->cs, p->set, filled, &meta, CLAUDE_ORIGIN_PLUGIN);
    if (kept_names_data(kept, servers) && (r = paths_mkdir_p(p->data, 0700)) < 0)
        config_set_problem(p->set, path, NULL,
                           "cannot create the plugin \"%s\"'s data directory %s: %s; its servers "
                           "may fail to start",
                           p->id, p->data, strerror(-r));
    config_add_entries(p->set, kept ? kept : filled, key, &meta, p->settings, NULL);
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

/* A settings file's enabledPlugins when it is an object (a wrong type is reported once). */
static yajl_val enabled_of(const ClaudeSettings *cs, int i)
{
    return json_get_object(cs->scopes[i].root, "enabledPlugins");
}

/*
 * Check each file's enabledPlugins. Returns false when the user's own file exists but cannot
 * be read, or its enabledPlugins is not an object (reported): which plugins are on is unknown.
 */
static bool scopes_check(ConfigSet *set, const ClaudeSettings *cs)
{
    bool ok = !cs->scopes[CLAUDE_SCOPE_USER].broken;

    for (int i = 0; i < CLAUDE_N_SCOPES; i++) {
        yajl_val v = json_get(cs->scopes[i].root, "enabledPlugins");
        if (!v || YAJL_IS_OBJECT(v))
            continue;
        config_set_problem(set, cs->scopes[i].path, NULL,
                           "\"enabledPlugins\" must be an object of \"<plugin>@<marketplace>\": "
                           "true; %s",
                           i == CLAUDE_SCOPE_USER ? "no plugin's servers are read"
                                                  : "it switches no plugin");
        ok &= i != CLAUDE_SCOPE_USER;
    }
    return ok;
}

/* The file whose enabledPlugins names id, strongest first, or -1 when none does. */
static int scope_deciding(const ClaudeSettings *cs, const char *id)
{
    for (int i = 0; i < CLAUDE_N_SCOPES; i++)
        if (json_get(enabled_of(cs, i), id))
            return i;
    return -1;
}

/* Whether a project- or local-scope install's projectPath is root (a realpath). */
static bool install_for(yajl_val install, const char *root)
{
    const char *pp = json_get_string(install, "projectPath");

    if (!root || !pp || pp[0] != '/')
        return false;
    if (streq(pp, root))
        return true;
    _cleanup_free_ char *real = realpath(pp, NULL);
    return real && streq(real, root);
}

/*
 * The install that serves this discovery: the one for root (a project or local scope), else
 * the user-scope one (version 1 kept only that). *projectp: whether it is the project's own.
 */
static yajl_val pick_install(ConfigSet *set, const char *installed, const char *id, yajl_val v,
                             const char *root, bool *projectp)
{
    yajl_val user = NULL;
    size_t n = json_array_len(v);

    *projectp = false;
    if (YAJL_IS_OBJECT(v))
        return v;
    if (n > CLAUDE_MAX_INSTALLS_PER_PLUGIN) {
        config_set_problem(set, installed, NULL,
                           "the plugin \"%s\" lists %zu installs; the first %d are read", id, n,
                           CLAUDE_MAX_INSTALLS_PER_PLUGIN);
        n = CLAUDE_MAX_INSTALLS_PER_PLUGIN;
    }
    for (size_t i = 0; i < n; i++) {
        yajl_val e = json_array_at(v, i);
        const char *scope = json_get_string(e, "scope");
        if (!YAJL_IS_OBJECT(e))
            continue;
        if (scope && (streq(scope, "project") || streq(scope, "local"))) {
            if (install_for(e, root)) {
                *projectp = true;
                return e;
            }
        } else if (!user && (!scope || streq(scope, "user") || streq(scope, "managed")) &&
                   !json_get(e, "projectPath")) {
            user = e;
        }
    }
    return user;
}

/* <plugins>/data/<id>, the id's characters other than [A-Za-z0-9_-] made '-' (newly allocated). */
static char *plugin_data_dir(const char *plugins, const char *id)
{
    _cleanup_free_ char *safe = xstrdup(id);

    for (char *c = safe; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-'))
            *c = '-';
    _cleanup_free_ char *data = paths_join(plugins, "data");
    return paths_join(data, safe);
}

/* Why a plugin's servers are not used (to free), or NULL when it is on; d: the deciding file. */
static char *plugin_why_off(const ClaudeSettings *cs, int d, const char *id)
{
    yajl_val on = d >= 0 ? json_get(enabled_of(cs, d), id) : NULL;

    if (YAJL_IS_TRUE(on))
        return NULL;
    return xasprintf("the Claude Code plugin \"%s\" is %s (enabledPlugins in %s)", id,
                     on ? "disabled" : "not enabled",
                     cs->scopes[d >= 0 ? d : CLAUDE_SCOPE_USER].path);
}

/* One installed plugin: which install serves here, whether it is on and who said so. */
static void load_installed(const ConfigSource *src, const Settings *settings, ConfigSet *set,
                           ClaudeSettings *cs, const char *installed, const char *id,
                           yajl_val installs)
{
    bool project_install;
    yajl_val install = pick_install(set, installed, id, installs, cs->root, &project_install);
    const char *path = json_get_string(install, "installPath");
    int d = scope_deciding(cs, id);
    _cleanup_free_ char *why_off = plugin_why_off(cs, d, id);
    _cleanup_free_ char *data = plugin_data_dir(cs->plugins, id);
    bool user_on = YAJL_IS_TRUE(json_get(enabled_of(cs, CLAUDE_SCOPE_USER), id));
    bool project_say = d == CLAUDE_SCOPE_LOCAL || d == CLAUDE_SCOPE_PROJECT;
    struct stat st;

    if (!install)
        return; /* installed for other projects only */
    if (!path || path[0] != '/' || stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
        if (!why_off)
            config_set_problem(set, installed, NULL,
                               "the plugin \"%s\" has no installed directory (installPath "
                               "%s); reinstall it in Claude Code (/plugin)",
                               id, path ? path : "missing");
        return;
    }
    Plugin p = {
        .id = id,
        .root = path,
        .data = data,
        .why_off = why_off,
        .gate_path = !why_off && project_say && !user_on ? cs->scopes[d].path : NULL,
        .src = src,
        .settings = settings,
        .set = set,
        .cs = cs,
    };
    p.level = project_install || p.gate_path ? CONFIG_LEVEL_PROJECT : CONFIG_LEVEL_USER;
    load_plugin(&p);
}

/*
 * Versions of one plugin looked at in a seed's cache: a seed is built with one version of each
 * plugin, rarely a few; the bound keeps a strange directory from costing more.
 */
#define CLAUDE_MAX_SEED_VERSIONS 32

/*
 * The directory of plugin id in seed: <seed>/cache/<marketplace>/<plugin>/<version>, the version
 * the seed's own installed_plugins.json records (Claude Code installed it there when the seed was
 * built; the seed may be mounted elsewhere since, so only the last part of its installPath is
 * used), else the newest version directory (by version order: 10.0.0 after 9.0.0). NULL when
 * the seed does not hold it.
 */
static char *seed_plugin_dir(ConfigSet *set, const char *seed, const char *id)
{
    const char *at = strrchr(id, '@');
    char *versions[CLAUDE_MAX_SEED_VERSIONS], *found = NULL;
    _cleanup_free_ char *plugin = at ? xstrndup(id, (size_t)(at - id)) : NULL;
    _cleanup_free_ char *rel = at ? xasprintf("cache/%s/%s", at + 1, plugin) : NULL;
    _cleanup_free_ char *dir = rel ? paths_join(seed, rel) : NULL;
    _cleanup_free_ char *installed = paths_join(seed, "installed_plugins.json");
    _cleanup_json_ yajl_val list = NULL;
    size_t n;

    if (!at || !plugin[0] || !at[1] || strchr(id, '/') || !inside_plugin(rel))
        return NULL;
    n = source_list_subdirs(set, dir, versions, N_ELEMENTS(versions), "versions");
    if (source_read_json(set, installed, CONFIG_LEVEL_USER, false, &list) == 0) {
        yajl_val v = json_get(json_get(list, "plugins"), id);
        const char *path =
            json_get_string(YAJL_IS_ARRAY(v) ? json_array_at(v, 0) : v, "installPath");
        const char *version = path ? strrchr(path, '/') : NULL;
        for (size_t i = 0; version && i < n && !found; i++)
            if (streq(versions[i], version + 1))
                found = paths_join(dir, versions[i]);
    }
    for (size_t i = 0; !found && i < n; i++) {
        size_t newest = 0;
        for (size_t j = 1; j < n; j++) /* "10.0.0" after "9.0.0" */
            if (strverscmp(versions[j], versions[newest]) > 0)
                newest = j;
        found = paths_join(dir, versions[newest]);
    }
    for (size_t i = 0; i < n; i++)
        free(versions[i]);
    return found;
}

/*
 * The enabled plugins the user's installed_plugins.json does not list, from the seed
 * directories ($CLAUDE_CODE_PLUGIN_SEED_DIR; code.claude.com/docs/en/plugins/org, "Seed
 * containers and CI"): the first seed that holds one serves it, read-only, as a user install;
 * a seed plugin must still be enabled, and its enablement decides trust as for any plugin.
 */
static void load_seeded(const ConfigSource *src, const Settings *settings, ConfigSet *set,
                        ClaudeSettings *cs, yajl_val plugins)
{
    _cleanup_json_ yajl_val done = json_object_new();

    for (int sc = 0; cs->n_seeds && sc < CLAUDE_N_SCOPES; sc++) {
        yajl_val en = enabled_of(cs, sc);
        for (size_t i = 0; en && i < en->u.object.len; i++) {
            const char *id = en->u.object.keys[i];
            int d = scope_deciding(cs, id);
            if (json_get(plugins, id) || json_get(done, id) || d != sc ||
                !YAJL_IS_TRUE(en->u.object.values[i]))
                continue;
            json_object_set(done, id, json_bool_new(true));
            for (size_t k = 0; k < cs->n_seeds; k++) {
                _cleanup_free_ char *root = seed_plugin_dir(set, cs->seeds[k], id);
                if (!root)
                    continue;
                _cleanup_free_ char *data = plugin_data_dir(cs->plugins, id);
                bool user_on = YAJL_IS_TRUE(json_get(enabled_of(cs, CLAUDE_SCOPE_USER), id));
                bool project_say = d == CLAUDE_SCOPE_LOCAL || d == CLAUDE_SCOPE_PROJECT;
                Plugin p = {
                    .id = id,
                    .root = root,
                    .data = data,
                    .gate_path = project_say && !user_on ? cs->scopes[d].path : NULL,
                    .src = src,
                    .settings = settings,
                    .set = set,
                    .cs = cs,
                };
                p.level = p.gate_path ? CONFIG_LEVEL_PROJECT : CONFIG_LEVEL_USER;
                load_plugin(&p);
                break;
            }
        }
    }
}

void source_claude_plugins(const ConfigSource *src, const Settings *settings, ConfigSet *set,
                           ClaudeSettings *cs)
{
    _cleanup_free_ char *installed = paths_join(cs->plugins, "installed_plugins.json");
    _cleanup_json_ yajl_val list = NULL;
    int r = source_read_json(set, installed, CONFIG_LEVEL_USER, false, &list);

    if (r < 0 && (r != -ENOENT || !cs->n_seeds))
        return;
    yajl_val plugins = json_get(list, "plugins");
    if (r == 0 && !YAJL_IS_OBJECT(plugins)) {
        config_set_problem(set, installed, NULL,
                           "\"plugins\" must be an object; no plugin's servers are read");
        return;
    }
    if (!scopes_check(set, cs))
        return; /* reported; which plugins are on is unknown, so none is started */
    size_t n = plugins ? plugins->u.object.len : 0;
    if (n > CLAUDE_MAX_PLUGINS) {
        config_set_problem(set, installed, NULL, "%zu plugins; the first %d are read", n,
                           CLAUDE_MAX_PLUGINS);
        n = CLAUDE_MAX_PLUGINS;
    }
    for (size_t i = 0; i < n; i++)
        load_installed(src, settings, set, cs, installed, plugins->u.object.keys[i],
                       plugins->u.object.values[i]);
    load_seeded(src, settings, set, cs, plugins);
}
