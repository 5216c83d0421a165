// SPDX-License-Identifier: MIT
// source-opencode: OpenCode's opencode.json[c] in the project, then in $XDG_CONFIG_HOME/opencode.
//
// Format: https://opencode.ai/docs/mcp-servers ({"mcp": {"name": {"type": "local",
// "command": ["bin", "arg", ...], "environment": {...}, "enabled", "timeout"} or {"type":
// "remote", "url", "headers", "oauth", "enabled", "timeout"}}}) and
// https://opencode.ai/docs/config (JSONC; global ~/.config/opencode/opencode.json, project
// opencode.json; the project's config is merged over the global one, so a project entry
// wins; "{env:VAR}" substitutes a variable). timeout is in ms, like mcpd's.

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/source.h"

/* OpenCode's {env:NAME} is mcpd's ${NAME}; every other brace stays as written. */
static yajl_val env_syntax(yajl_val v)
{
    if (YAJL_IS_STRING(v) && strstr(v->u.string, "{env:")) {
        StrBuf sb = STRBUF_INIT;
        const char *s = v->u.string, *p, *end;
        while ((p = strstr(s, "{env:")) && (end = strchr(p, '}'))) {
            strbuf_append(&sb, s, (size_t)(p - s));
            strbuf_printf(&sb, "${%.*s}", (int)(end - p - 5), p + 5);
            s = end + 1;
        }
        strbuf_printf(&sb, "%s", s);
        yajl_val out = json_string_new(strbuf_str(&sb));
        strbuf_deinit(&sb);
        return out;
    }
    yajl_val out = json_copy(v);
    if (YAJL_IS_OBJECT(out) || YAJL_IS_ARRAY(out)) {
        size_t n = YAJL_IS_OBJECT(out) ? out->u.object.len : out->u.array.len;
        yajl_val *vals = YAJL_IS_OBJECT(out) ? out->u.object.values : out->u.array.values;
        for (size_t i = 0; i < n; i++) {
            yajl_val old = vals[i];
            vals[i] = env_syntax(old);
            json_free(old);
        }
    }
    return out;
}

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
    static const char *const keep[] = {"enabled", "timeout", "url", "headers", "cwd", NULL};
    yajl_val oauth;
    _cleanup_json_ yajl_val in = env_syntax(entry);
    const char *type = json_get_string(in, "type");
    yajl_val out = json_object_new();

    (void)name;
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
    } else {
        *whyp = xstrdup("\"type\" must be \"local\" (command) or \"remote\" (url)");
        return json_free(out), -EINVAL;
    }
    *outp = out;
    return 0;
}

/*
 * The files of dir OpenCode merges, strongest first (OpenCode merges them in the reverse order,
 * the later over the earlier): each is read, and the first entry of a name wins.
 */
static void load_dir(const ConfigSource *src, const Settings *settings, ConfigSet *set,
                     const char *dir, const char *const *names, ConfigLevel level)
{
    SourceMeta meta = {(char *)src->id, (char *)src->name, NULL, level};

    for (const char *const *n = names; *n; n++) {
        _cleanup_free_ char *path = paths_join(dir, *n);
        source_load_servers(set, path, "mcp", &meta, settings, map_opencode, true);
    }
}

/*
 * OpenCode's config.ts: in the project, opencode.jsonc and then opencode.json are merged (the
 * json over the jsonc), then each .opencode directory's (again the json last); the global
 * directory merges config.json (where `opencode mcp add` writes user servers), opencode.json,
 * then opencode.jsonc. Read here strongest first.
 */
void source_opencode_collect(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set)
{
    static const char *const project_names[] = {"opencode.json", "opencode.jsonc", NULL};
    static const char *const global_names[] = {"opencode.jsonc", "opencode.json", "config.json",
                                               NULL};
    _cleanup_free_ char *global = source_config_path("opencode");

    if (opt->root) {
        _cleanup_free_ char *dot = paths_join(opt->root, ".opencode");
        load_dir(src, settings, set, dot, project_names, CONFIG_LEVEL_PROJECT);
        load_dir(src, settings, set, opt->root, project_names, CONFIG_LEVEL_PROJECT);
    }
    load_dir(src, settings, set, global, global_names, CONFIG_LEVEL_USER);
}
