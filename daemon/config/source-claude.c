// SPDX-License-Identifier: MIT
// source-claude: Claude Code's ~/.claude.json (user and local scope) and <root>/.mcp.json (project
// scope), in Claude Code's own order, then the servers of the user's enabled plugins; the
// administrator's managed servers and Claude Code's MCP policy over all of them.

#include <stdlib.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/agent-names.h"
#include "daemon/config/claude-policy.h"
#include "daemon/config/config-read.h"
#include "daemon/config/source.h"

/* Claude Code's managed (administrator) servers on Linux. */
#define CLAUDE_MANAGED_MCP "/etc/claude-code/managed-mcp.json"

char *source_claude_json_path(void)
{
    return source_agent_file("claude");
}

/*
 * Claude Code's own precedence (docs.anthropic.com/en/docs/claude-code/mcp, "scope
 * hierarchy"): local scope (~/.claude.json projects["<root>"].mcpServers) over project scope
 * (<root>/.mcp.json) over user scope (the top-level mcpServers of ~/.claude.json). The file
 * also carries a lot of state Claude Code keeps for itself; only those members are read.
 * Claude Code reads neither ~/.claude/mcp.json nor <root>/.claude/mcp.json, so mcpd does not.
 */
/*
 * An administrator's managed-mcp.json (code.claude.com/docs/en/managed-mcp, "exclusive control
 * with managed-mcp.json"; /etc/claude-code/ on Linux) is exclusive: when it exists, Claude Code
 * uses its servers (and those of managedMcpServers) and no others, plugins' included; the
 * denylist still applies to them, the allowlist only to those that use ${VAR}.
 * $MCPD_CLAUDE_MANAGED_MCP names another file (tests, unusual installs). Returns whether the
 * file exists.
 */
static bool load_managed(const ConfigSource *src, const Settings *settings, ConfigSet *set,
                         ClaudeSettings *cs)
{
    const char *env = getenv("MCPD_CLAUDE_MANAGED_MCP");
    const char *path = env && env[0] ? env : CLAUDE_MANAGED_MCP;
    SourceMeta meta = {(char *)src->id, (char *)src->name, (char *)path, CONFIG_LEVEL_USER,
                       src->expand_off};
    _cleanup_json_ yajl_val root = NULL, kept = NULL;

    if (access(path, F_OK) < 0)
        return false;
    if (source_read_json(set, path, CONFIG_LEVEL_USER, false, &root) < 0)
        return true; /* reported; Claude Code stays exclusive too, with nothing loaded */
    yajl_val servers = json_get(root, "mcpServers");
    if (!YAJL_IS_OBJECT(root) || (servers && !YAJL_IS_OBJECT(servers))) {
        config_set_problem(set, path, NULL,
                           "the top level must be an object with \"mcpServers\" (an object)");
        return true;
    }
    kept = claude_policy_filter(cs, set, servers, &meta, CLAUDE_ORIGIN_MANAGED);
    config_add_entries(set, kept, "mcpServers", &meta, settings, NULL);
    return true;
}

/*
 * managedMcpServers of the managed settings: remote servers the organization provides alongside
 * the user's own, before them (code.claude.com/docs/en/managed-mcp, "how provided servers load":
 * a provided server wins over local, project and user scope; managed-mcp.json's wins over it).
 */
static void load_provided(const ConfigSource *src, const Settings *settings, ConfigSet *set,
                          ClaudeSettings *cs)
{
    SourceMeta meta = {(char *)src->id, (char *)src->name, cs->scopes[CLAUDE_SCOPE_MANAGED].path,
                       CONFIG_LEVEL_USER, src->expand_off};
    _cleanup_json_ yajl_val provided = claude_managed_servers(cs, set);
    _cleanup_json_ yajl_val kept =
        claude_policy_filter(cs, set, provided, &meta, CLAUDE_ORIGIN_PROVIDED);

    if (kept)
        config_add_entries(set, kept, "managedMcpServers", &meta, settings, NULL);
}

/*
 * servers without the names Claude Code refuses, each reported in its words with the file (a
 * new object), or NULL when it refuses none.
 */
static yajl_val drop_refused_names(ConfigSet *set, yajl_val servers, const SourceMeta *meta)
{
    yajl_val out = NULL;

    for (size_t i = 0; YAJL_IS_OBJECT(servers) && i < servers->u.object.len; i++) {
        const char *name = servers->u.object.keys[i];
        _cleanup_free_ char *why = agent_names_claude_refusal(name);
        if (why) {
            config_set_warning(set, meta->path, name, "%s", why);
            config_set_skip(set, name, meta, "%s", why);
            if (!out) {
                out = json_object_new();
                for (size_t j = 0; j < i; j++)
                    json_object_append(out, servers->u.object.keys[j],
                                       json_copy(servers->u.object.values[j]));
            }
        } else if (out) {
            json_object_append(out, name, json_copy(servers->u.object.values[i]));
        }
    }
    return out;
}

/* The user's own servers of one list, as Claude Code's selection and policy leave them. */
static void add_own(ConfigSet *set, ClaudeSettings *cs, yajl_val servers, const char *key,
                    const SourceMeta *meta, const Settings *settings, yajl_val off,
                    const char *why_off)
{
    _cleanup_json_ yajl_val named = drop_refused_names(set, servers, meta);
    if (named)
        servers = named;
    _cleanup_json_ yajl_val kept = claude_policy_filter(cs, set, servers, meta, CLAUDE_ORIGIN_USER);

    source_add_selected(set, kept ? kept : servers, key, meta, settings, NULL, NULL, off, NULL,
                        why_off);
}

/*
 * Directories above the project root whose .mcp.json is read at most: paths are rarely more than
 * a dozen levels deep; the bound keeps a pathological path from costing more than 64 small reads.
 */
#define CLAUDE_MAX_MCP_JSON_PARENTS 64

/*
 * The project's .mcp.json, then that of every directory above it up to /, the nearer file's entry
 * of a name winning (Claude Code's services/mcp/config.ts, getMcpConfigsByScope("project"): it
 * walks from its working directory to the root, a closer file overriding its parents'). Every one
 * is a project file: the trust gate holds its servers back until the user approves them.
 */
static void load_mcp_json_chain(ConfigSet *set, ClaudeSettings *cs, const char *root,
                                SourceMeta *project, const Settings *settings, yajl_val off,
                                const char *why_off)
{
    _cleanup_free_ char *dir = xstrdup(root);

    for (int depth = 0; depth <= CLAUDE_MAX_MCP_JSON_PARENTS; depth++) {
        _cleanup_free_ char *mcp = paths_join(dir, ".mcp.json");
        _cleanup_json_ yajl_val mcp_json = NULL;
        project->path = mcp;
        if (config_read_json(set, mcp, CONFIG_LEVEL_PROJECT, &mcp_json) == 0 &&
            !YAJL_IS_OBJECT(mcp_json))
            config_set_problem(set, mcp, NULL,
                               "the top level must be an object with \"mcpServers\"");
        else if (mcp_json)
            add_own(set, cs, json_get(mcp_json, "mcpServers"), "mcpServers", project, settings, off,
                    why_off);
        project->path = NULL;
        if (streq(dir, "/"))
            break;
        char *up = paths_dirname(dir);
        free(dir);
        dir = up;
    }
}

void source_claude_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    _cleanup_(claude_settings_deinit) ClaudeSettings cs;

    claude_settings_load(&cs, set, opt->root);
    bool exclusive = load_managed(src, settings, set, &cs);
    load_provided(src, settings, set, &cs);
    if (exclusive)
        return;
    _cleanup_free_ char *path = source_claude_json_path();
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta user = {(char *)src->id, (char *)src->name, path, CONFIG_LEVEL_USER,
                       src->expand_off};
    SourceMeta local = {(char *)src->id, (char *)src->name, path, CONFIG_LEVEL_PROJECT,
                        src->expand_off};
    SourceMeta project = {(char *)src->id, (char *)src->name, NULL, CONFIG_LEVEL_PROJECT,
                          src->expand_off};
    yajl_val projects = NULL;

    if (source_read_claude_json(set, path, &root) == 0 && !YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL, "the top level must be an object");
        root = json_free(root);
    }
    if (opt->root && (projects = json_get(root, "projects")) && !YAJL_IS_OBJECT(projects)) {
        config_set_problem(set, path, NULL, "\"projects\" must be an object, not %s",
                           json_type_name(projects));
        projects = NULL;
    }
    yajl_val proj = opt->root ? source_project_entry(projects, opt->root) : NULL;
    yajl_val off = json_get_array(proj, "disabledMcpServers");
    _cleanup_free_ char *why_off = xasprintf(
        "switched off in Claude Code for this project (projects[root].disabledMcpServers in %s)",
        path);
    if (opt->root) {
        add_own(set, &cs, json_get(proj, "mcpServers"), "projects[root].mcpServers", &local,
                settings, off, why_off);
        load_mcp_json_chain(set, &cs, opt->root, &project, settings, off, why_off);
    }
    add_own(set, &cs, json_get(root, "mcpServers"), "mcpServers", &user, settings, off, why_off);
    /* Plugins' servers come after the user's own: a name the user defined wins. */
    source_claude_plugins(src, settings, set, &cs);
}
