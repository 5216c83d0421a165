// SPDX-License-Identifier: MIT
// source-codex: OpenAI Codex's config.toml ($CODEX_HOME or ~/.codex, and <root>/.codex),
// [mcp_servers.<name>].

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/toml.h"
#include "common/util.h"
#include "daemon/config/source.h"

/* The system-wide layer Codex reads on Unix, below the user's own. */
#define CODEX_SYSTEM_CONFIG "/etc/codex/config.toml"

/* Members copied as they are: they mean the same in mcpd. */
static const char *const codex_same[] = {"command", "args", "cwd", "url", "enabled", NULL};

/* A timeout in seconds (integer or float) as whole milliseconds. */
static int take_seconds(yajl_val in, const char *key, const char *to, yajl_val out, char **whyp)
{
    yajl_val v = json_get(in, key);
    double sec;

    if (!v)
        return 0;
    sec = YAJL_IS_INTEGER(v) ? (double)v->u.number.i : YAJL_IS_DOUBLE(v) ? v->u.number.d : -1;
    if (sec < 0 || sec > 2147483.0 || isnan(sec)) {
        *whyp = xasprintf("\"%s\" must be a non-negative number of seconds", key);
        return -EINVAL;
    }
    json_object_set(out, to, json_int_new((int64_t)(sec * 1000.0 + 0.5)));
    return 0;
}

/* A table of strings (env, http_headers) copied into dst. */
static int take_table(yajl_val in, const char *key, yajl_val dst, char **whyp)
{
    yajl_val t = json_get(in, key);

    if (!t)
        return 0;
    for (size_t i = 0; YAJL_IS_OBJECT(t) && i < t->u.object.len; i++)
        if (!YAJL_IS_STRING(t->u.object.values[i])) {
            *whyp = xasprintf("\"%s.%s\" must be a string", key, t->u.object.keys[i]);
            return -EINVAL;
        }
    if (!YAJL_IS_OBJECT(t)) {
        *whyp = xasprintf("\"%s\" must be a table of strings", key);
        return -EINVAL;
    }
    for (size_t i = 0; i < t->u.object.len; i++)
        json_object_set(dst, t->u.object.keys[i], json_copy(t->u.object.values[i]));
    return 0;
}

/*
 * Variables named in the config, copied from mcpd's environment when set. They are written as
 * ${NAME} so the value is filled in by expansion and never appears in the entry as shown.
 */
static int take_env_names(yajl_val in, yajl_val env, yajl_val headers, char **whyp)
{
    yajl_val names = json_get(in, "env_vars"), hdr = json_get(in, "env_http_headers"),
             bearer = json_get(in, "bearer_token_env_var");

    if (names && !YAJL_IS_ARRAY(names))
        goto bad_names;
    for (size_t i = 0; i < json_array_len(names); i++) {
        yajl_val n = json_array_at(names, i);
        /* An entry is "NAME" or a table {name = "NAME", source = ...}; mcpd has one source. */
        if (YAJL_IS_OBJECT(n))
            n = json_get(n, "name");
        if (!YAJL_IS_STRING(n) || !n->u.string[0])
            goto bad_names;
        if (getenv(n->u.string)) {
            _cleanup_free_ char *ref = xasprintf("${%s}", n->u.string);
            json_object_set(env, n->u.string, json_string_new(ref));
        }
    }
    if (hdr && !YAJL_IS_OBJECT(hdr)) {
        *whyp = xstrdup("\"env_http_headers\" must be a table of header = \"VARIABLE\"");
        return -EINVAL;
    }
    for (size_t i = 0; hdr && i < hdr->u.object.len; i++) {
        yajl_val var = hdr->u.object.values[i];
        if (!YAJL_IS_STRING(var)) {
            *whyp = xasprintf("\"env_http_headers.%s\" must be a string", hdr->u.object.keys[i]);
            return -EINVAL;
        }
        if (getenv(var->u.string)) {
            _cleanup_free_ char *ref = xasprintf("${%s}", var->u.string);
            json_object_set(headers, hdr->u.object.keys[i], json_string_new(ref));
        }
    }
    if (bearer && !YAJL_IS_STRING(bearer)) {
        *whyp = xstrdup("\"bearer_token_env_var\" must be a string");
        return -EINVAL;
    }
    if (bearer && getenv(bearer->u.string)) {
        _cleanup_free_ char *ref = xasprintf("Bearer ${%s}", bearer->u.string);
        json_object_set(headers, "Authorization", json_string_new(ref));
    }
    return 0;
bad_names:
    *whyp = xstrdup("\"env_vars\" must be an array of variable names or {name = \"NAME\"} "
                    "tables");
    return -EINVAL;
}

/*
 * Codex's fields to mcpd's (seed 1.2, with B13 fixed: cwd, enabled and both timeouts are
 * honoured). A url means Streamable HTTP, which is all Codex speaks. enabled_tools and
 * disabled_tools become enabledTools and disabledTools.
 */
static int map_codex(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    _cleanup_json_ yajl_val out = json_object_new(), env = json_object_new(),
                            headers = json_object_new();

    (void)name;
    for (const char *const *k = codex_same; *k; k++)
        if (json_get(in, *k))
            json_object_set(out, *k, json_copy(json_get(in, *k)));
    if (take_table(in, "env", env, whyp) < 0 || take_table(in, "http_headers", headers, whyp) < 0 ||
        take_env_names(in, env, headers, whyp) < 0 ||
        take_seconds(in, "startup_timeout_sec", "timeout", out, whyp) < 0 ||
        take_seconds(in, "tool_timeout_sec", "callTimeout", out, whyp) < 0)
        return -EINVAL;
    /* Codex reads startup_timeout_sec first; the older _ms spelling only without it. */
    if (json_get(in, "startup_timeout_ms") && !json_get(in, "startup_timeout_sec"))
        json_object_set(out, "timeout", json_copy(json_get(in, "startup_timeout_ms")));
    if (json_get(in, "url"))
        json_object_set(out, "type", json_string_new("http"));
    /* Codex's tool filters are mcpd's (disabled_tools applies after enabled_tools). */
    if (json_get(in, "enabled_tools"))
        json_object_set(out, "enabledTools", json_copy(json_get(in, "enabled_tools")));
    if (json_get(in, "disabled_tools"))
        json_object_set(out, "disabledTools", json_copy(json_get(in, "disabled_tools")));
    if (env->u.object.len) {
        json_object_set(out, "env", env);
        env = NULL;
    }
    if (headers->u.object.len) {
        json_object_set(out, "headers", headers);
        headers = NULL;
    }
    *outp = out;
    out = NULL;
    return 0;
}

static void load_toml(const ConfigSource *src, const char *path, ConfigLevel level,
                      const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *text = NULL, *err = NULL;
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta meta = {(char *)src->id, (char *)src->name, (char *)path, level};
    size_t len = 0;

    if (config_read_text(set, path, level, &text, &len) < 0)
        return;
    root = toml_parse(text, len, &err);
    if (!root) {
        config_set_problem(set, path, NULL, "invalid TOML: %s; fix the file or move it away", err);
        return;
    }
    config_add_entries(set, json_get(root, "mcp_servers"), "mcp_servers", &meta, settings,
                       map_codex);
}

char *source_codex_config_path(void)
{
    const char *codex_home = getenv("CODEX_HOME");

    return codex_home && codex_home[0] ? paths_join(codex_home, "config.toml")
                                       : source_home_path(".codex/config.toml");
}

/*
 * Codex's layers, strongest first (developers.openai.com/codex/config-reference: a trusted
 * project's .codex/config.toml over the user's config.toml over /etc/codex/config.toml). A
 * project file is read only once trusted (daemon/config/trust.c). Each layer gives whole entries:
 * Codex merges one server's fields across layers, mcpd takes the strongest layer's entry.
 */
void source_codex_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_codex_config_path();

    if (opt->root) {
        _cleanup_free_ char *project = paths_join(opt->root, ".codex/config.toml");
        load_toml(src, project, CONFIG_LEVEL_PROJECT, settings, set);
    }
    load_toml(src, user, CONFIG_LEVEL_USER, settings, set);
    load_toml(src, CODEX_SYSTEM_CONFIG, CONFIG_LEVEL_USER, settings, set);
}

/* The same mapping for the servers mcpctl setup moved out of this agent's file. */
int source_codex_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    return map_codex(name, in, outp, whyp);
}
