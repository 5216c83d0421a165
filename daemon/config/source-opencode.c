// SPDX-License-Identifier: MIT
// source-opencode: OpenCode's opencode.json[c] in the project, then in $XDG_CONFIG_HOME/opencode.
//
// Format: https://opencode.ai/docs/mcp-servers ({"mcp": {"name": {"type": "local",
// "command": ["bin", "arg", ...], "environment": {...}, "enabled", "timeout"} or {"type":
// "remote", "url", "headers", "oauth", "enabled", "timeout"}}}) and
// https://opencode.ai/docs/config (JSONC; global ~/.config/opencode/opencode.json, project
// opencode.json; the project's config is merged over the global one, so a project entry
// wins; "{env:VAR}" substitutes a variable, empty when unset: packages/opencode/src/config/
// variable.ts in github.com/anomalyco/opencode). timeout is in ms, like mcpd's.

#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/source.h"

/* "command": ["bin", "arg", ...] is mcpd's command and args. */
static int map_local(yajl_val in, yajl_val out, char **whyp)
{
    yajl_val cmd = json_get(in, "command"), env = json_get(in, "environment");
    yajl_val args = json_array_new();

    if (!YAJL_IS_ARRAY(cmd) || cmd->u.array.len == 0) {
        *whyp = xstrdup("a \"local\" server needs \"command\": [\"program\", \"arg\", ...]");
        return json_free(args), -EINVAL;
    }
    for (size_t i = 0; i < cmd->u.array.len; i++) {
        if (!YAJL_IS_STRING(cmd->u.array.values[i])) {
            *whyp = xasprintf("\"command[%zu]\" must be a string", i);
            return json_free(args), -EINVAL;
        }
        if (i > 0)
            json_array_push(args, json_copy(cmd->u.array.values[i]));
    }
    json_object_set(out, "type", json_string_new("stdio"));
    json_object_set(out, "command", json_copy(cmd->u.array.values[0]));
    json_object_set(out, "args", args);
    if (env)
        json_object_set(out, "env", json_copy(env));
    return 0;
}

static int map_opencode(const char *name, yajl_val entry, yajl_val *outp, char **whyp)
{
    static const char *const keep[] = {"enabled", "timeout",       "url", "headers",
                                       "cwd",     "disabledTools", NULL};
    yajl_val oauth;
    StrBuf unset = STRBUF_INIT;
    /*
     * {env:NAME} is the variable's value, or empty when it is unset or empty (OpenCode's
     * config/variable.ts: process.env[NAME] || ""): mcpd's ${NAME:-}. Other braces stay.
     */
    _cleanup_json_ yajl_val in = source_env_or_empty(json_copy(entry), "{env:", &unset);
    _cleanup_free_ char *note = source_env_unset_note("OpenCode", &unset);
    const char *type = json_get_string(in, "type");
    yajl_val out = json_object_new();

    (void)name;
    strbuf_deinit(&unset);
    for (const char *const *k = keep; *k; k++)
        if (json_get(in, *k))
            json_object_set(out, *k, json_copy(json_get(in, *k)));
    /*
     * Newer OpenCode releases write "disabled": true, and "timeout": {"startup", "request"}
     * (both ms): mcpd's enabled, timeout and callTimeout.
     */
    if (YAJL_IS_TRUE(json_get(in, "disabled")) && !json_get(in, "enabled"))
        json_object_set(out, "enabled", json_bool_new(false));
    if (YAJL_IS_OBJECT(json_get(in, "timeout"))) {
        yajl_val t = json_get(in, "timeout");
        json_free(json_object_take(out, "timeout"));
        if (json_get(t, "startup"))
            json_object_set(out, "timeout", json_copy(json_get(t, "startup")));
        if (json_get(t, "request"))
            json_object_set(out, "callTimeout", json_copy(json_get(t, "request")));
    }
    if (type && streq(type, "local")) {
        if (map_local(in, out, whyp) < 0)
            return json_free(out), -EINVAL;
    } else if (type && streq(type, "remote")) {
        /* OpenCode tries Streamable HTTP, then SSE: mcpd's "auto". */
        json_object_set(out, "type", json_string_new("auto"));
        /*
         * Its sign-in options {clientId, clientSecret, scope} are names mcpd's "oauth" reads
         * (daemon/upstream/oauth.c); "oauth": false (no sign-in) has no mcpd counterpart: a
         * server that asks for a sign-in is reported as needing one.
         */
        if (YAJL_IS_OBJECT(oauth = json_get(in, "oauth")))
            json_object_set(out, "oauth", json_copy(oauth));
        /*
         * "oauth": false asks OpenCode not to start a sign-in on a 401 and to rely on the
         * headers: mcpd never starts one by itself, so there is nothing to map.
         */
        else if (oauth && !YAJL_IS_FALSE(oauth))
            *whyp = xasprintf("\"oauth\" must be an object or false, not %s; ignored",
                              json_type_name(oauth));
    } else {
        *whyp = xstrdup("\"type\" must be \"local\" (command) or \"remote\" (url)");
        return json_free(out), -EINVAL;
    }
    if (note) {
        char *both = *whyp ? xasprintf("%s\n%s", *whyp, note) : xstrdup(note);
        free(*whyp);
        *whyp = both;
    }
    *outp = out;
    return 0;
}

/* OpenCode's config files read at most: two in .opencode, two in the project, three global. */
#define OPENCODE_MAX_FILES 7

/* A glob's literal beginning: the bytes before its first special character. */
static size_t literal_prefix(const char *glob)
{
    return strcspn(glob, "*?[\\");
}

/*
 * OpenCode names an MCP tool <server>_<tool>, and its top-level "tools" ({"glob": false}) and
 * "permission" ({"glob": "deny"}) switch tools off by that name across all servers. A glob
 * "<server>_<rest>" is mcpd's disabledTools "<rest>" for that server; one whose literal part
 * ends inside "<server>_" followed by a lone "*" takes every tool ("*"). Any other glob that
 * could match some of the server's tools cannot be expressed per server: it is a warning.
 */
static void apply_tool_globs(ConfigSet *set, const char *path, const char *name, yajl_val entry,
                             yajl_val off)
{
    _cleanup_free_ char *prefix = xasprintf("%s_", name);
    size_t np = strlen(prefix);
    yajl_val globs = json_get_array(entry, "disabledTools");

    for (size_t i = 0; i < json_array_len(off); i++) {
        const char *g = json_array_at(off, i)->u.string;
        size_t lit = literal_prefix(g);
        const char *tool = NULL;
        if (lit >= np && startswith(g, prefix))
            tool = g + np;
        else if (lit < np && strncmp(g, prefix, lit) == 0 && streq(g + lit, "*"))
            tool = "*";
        else if (lit < np && strncmp(g, prefix, lit) == 0)
            config_set_warning(set, path, name,
                               "Server \"%s\": OpenCode's tool switch \"%s\" is not honoured "
                               "(mcpd reads only \"%s<tool glob>\" and \"%.*s*\"); list the tools "
                               "in disabledTools in mcpd's mcp.json",
                               name, g, prefix, (int)lit, g);
        if (!tool)
            continue;
        if (!globs) {
            globs = json_array_new();
            json_object_set(entry, "disabledTools", globs);
        }
        json_array_push(globs, json_string_new(tool));
    }
}

/*
 * The globs the files switch off, strongest file first: a glob a stronger file sets (to
 * anything) is decided there. "tools": {"glob": false} and "permission": {"glob": "deny"}.
 */
static int glob_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void glob_keep(void *g)
{
    (void)g; /* borrowed from the roots */
}

static yajl_val tool_switches(yajl_val *roots, size_t n)
{
    yajl_val off = json_array_new();
    void *seen = NULL; /* globs decided already: a tree, as a search per glob was quadratic */

    for (size_t f = 0; f < n; f++) {
        yajl_val tools = json_get_object(roots[f], "tools");
        yajl_val perm = json_get_object(roots[f], "permission");
        for (int k = 0; k < 2; k++) {
            yajl_val map = k ? perm : tools;
            for (size_t i = 0; map && i < map->u.object.len; i++) {
                const char *g = map->u.object.keys[i];
                yajl_val v = map->u.object.values[i];
                if (*(const char **)xtsearch(g, &seen, glob_cmp) != g)
                    continue;
                if ((!k && YAJL_IS_FALSE(v)) ||
                    (k && YAJL_IS_STRING(v) && streq(v->u.string, "deny")))
                    json_array_push(off, json_string_new(g));
            }
        }
    }
    tdestroy(seen, glob_keep);
    return off;
}

/*
 * OpenCode's config.ts: in the project, opencode.jsonc and then opencode.json are merged (the
 * json over the jsonc), then each .opencode directory's (again the json last); the global
 * directory merges config.json (where `opencode mcp add` writes user servers), opencode.json,
 * then opencode.jsonc. Read here strongest first; the first entry of a name wins.
 */
void source_opencode_collect(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set)
{
    static const char *const project_names[] = {"opencode.json", "opencode.jsonc"};
    /* The global files (common/agents.c lists them), strongest first: jsonc, json, config.json. */
    char *const global[] = {source_agent_more_file("opencode", 0), source_agent_file("opencode"),
                            source_agent_more_file("opencode", 1)};
    _cleanup_free_ char *dot = opt->root ? paths_join(opt->root, ".opencode") : NULL;
    char *paths[OPENCODE_MAX_FILES];
    ConfigLevel levels[OPENCODE_MAX_FILES];
    yajl_val roots[OPENCODE_MAX_FILES] = {NULL};
    size_t n = 0;

    for (size_t i = 0; opt->root && i < N_ELEMENTS(project_names); i++, n++)
        paths[n] = paths_join(dot, project_names[i]), levels[n] = CONFIG_LEVEL_PROJECT;
    for (size_t i = 0; opt->root && i < N_ELEMENTS(project_names); i++, n++)
        paths[n] = paths_join(opt->root, project_names[i]), levels[n] = CONFIG_LEVEL_PROJECT;
    for (size_t i = 0; i < N_ELEMENTS(global); i++, n++)
        paths[n] = global[i], levels[n] = CONFIG_LEVEL_USER; /* freed with paths[] */
    for (size_t i = 0; i < n; i++) {
        if (source_read_json(set, paths[i], levels[i], true, &roots[i]) == 0 &&
            !YAJL_IS_OBJECT(roots[i])) {
            config_set_problem(set, paths[i], NULL,
                               "the top level must be an object with \"mcp\", not %s",
                               json_type_name(roots[i]));
            roots[i] = json_free(roots[i]);
        }
    }
    _cleanup_json_ yajl_val off = tool_switches(roots, n);
    for (size_t i = 0; i < n; i++) {
        SourceMeta meta = {(char *)src->id, (char *)src->name, paths[i], levels[i],
                           src->expand_off};
        yajl_val written = json_get(roots[i], "mcp");
        /* The bound is asked before the copy and the globs: a file over it costs neither. */
        bool over = YAJL_IS_OBJECT(written) &&
                    config_too_many_servers(set, paths[i], written->u.object.len);
        _cleanup_json_ yajl_val servers = over ? NULL : json_copy(written);
        for (size_t j = 0; YAJL_IS_OBJECT(servers) && j < servers->u.object.len; j++)
            if (YAJL_IS_OBJECT(servers->u.object.values[j]))
                apply_tool_globs(set, paths[i], servers->u.object.keys[j],
                                 servers->u.object.values[j], off);
        config_add_entries(set, servers, "mcp", &meta, settings, map_opencode);
        json_free(roots[i]);
        free(paths[i]);
    }
}
