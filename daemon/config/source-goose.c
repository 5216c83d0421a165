// SPDX-License-Identifier: MIT
// source-goose: Goose's extensions in $XDG_CONFIG_HOME/goose/config.yaml (through libyaml).
//
// Format: https://block.github.io/goose/docs/guides/config-files ("extensions:" keyed by
// name, each {enabled, type, name, cmd, args, envs, env_keys, timeout, uri, headers,
// bundled, description, available_tools}) and goose's crates/goose/src/agents/extension.rs
// (ExtensionConfig: "stdio" runs cmd/args, "sse" and "streamable_http" connect to uri,
// "builtin", "platform", "frontend" and "inline_python" run inside goose itself; timeout
// in seconds; env_keys are variables goose looks up in its secret store or environment: mcpd
// reads the environment, then goose's Secret Service item).
// User level only; the file is $GOOSE_PATH_ROOT/config/config.yaml when GOOSE_PATH_ROOT is set
// (crates/goose/src/config/paths.rs).

#include <errno.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config-read.h"
#include "daemon/config/source.h"
#include "daemon/config/yaml-tree.h"
#include "daemon/sys/keyring.h"

static const AgentType goose_types[] = {
    {"stdio", "stdio"},
    {"sse", "sse"},
    {"streamable_http", "http"},
    {NULL, NULL},
};

static const AgentShape goose_shape = {
    .agent = "Goose",
    .drop = (const char *const[]){"name", "cmd", "envs", "env_keys", "uri", "bundled",
                                  "description", "available_tools", NULL},
    .types = goose_types,
    .timeout_seconds = "timeout",
};

/*
 * goose's secrets where goose keeps them: one Secret Service item (the Rust keyring crate's
 * service "goose", username "secrets", crates/goose/src/config/base.rs) holding a JSON object
 * of every secret. NULL when there is none (no Secret Service, no item, not that shape); read
 * at most once per file read (the lookup is bounded by KEYRING_CALL_TIMEOUT_MS).
 */
static yajl_val goose_secrets(void)
{
    const KeyringAttr attrs[] = {{"service", "goose"}, {"username", "secrets"}};
    char *text = NULL;
    size_t len = 0;
    yajl_val o;

    if (keyring_lookup(attrs, N_ELEMENTS(attrs), &text, &len, NULL) != 0)
        return NULL;
    o = json_parse(text, NULL);
    explicit_bzero(text, len);
    free(text);
    if (!YAJL_IS_OBJECT(o))
        return json_free(o), NULL;
    return o;
}

/*
 * envs plus env_keys: a key is taken, as goose takes it, from mcpd's environment, else from
 * goose's secrets in the Secret Service; one found in neither is noted.
 */
static int map_env(yajl_val in, yajl_val out, StrBuf *notes, char **whyp)
{
    _cleanup_json_ yajl_val secrets = NULL;
    bool looked = false;
    const char *secret;
    yajl_val envs = json_get(in, "envs"), keys = json_get(in, "env_keys");
    yajl_val env = envs && YAJL_IS_OBJECT(envs) ? json_copy(envs) : json_object_new();

    if ((envs && !YAJL_IS_OBJECT(envs) && !YAJL_IS_NULL(envs)) ||
        (keys && !YAJL_IS_ARRAY(keys) && !YAJL_IS_NULL(keys))) {
        *whyp = xstrdup("\"envs\" must be a mapping and \"env_keys\" a list of names");
        return json_free(env), -EINVAL;
    }
    for (size_t i = 0; i < json_array_len(keys); i++) {
        yajl_val k = keys->u.array.values[i];
        if (!YAJL_IS_STRING(k)) {
            *whyp = xasprintf("\"env_keys[%zu]\" must be a variable name", i);
            return json_free(env), -EINVAL;
        }
        if (json_get(env, k->u.string))
            continue;
        if (getenv(k->u.string)) {
            _cleanup_free_ char *ref = xasprintf("${%s}", k->u.string);
            json_object_set(env, k->u.string, json_string_new(ref));
            continue;
        }
        if (!looked) {
            looked = true;
            secrets = goose_secrets();
        }
        if ((secret = json_get_string(secrets, k->u.string)))
            json_object_set(env, k->u.string, json_string_new(secret));
        else
            strbuf_printf(notes,
                          "\"env_keys\": %s is neither in mcpd's environment nor in goose's "
                          "Secret Service item (service goose, username secrets); goose's "
                          "secrets.yaml is not read: the server starts without it: set it where "
                          "mcpd starts\n",
                          k->u.string);
    }
    if (env->u.object.len)
        json_object_set(out, "env", env);
    else
        json_free(env);
    return 0;
}

static int map_goose(yajl_val in, yajl_val *outp, char **whyp)
{
    yajl_val out, cmd = json_get(in, "cmd"), uri = json_get(in, "uri");
    yajl_val tools = json_get(in, "available_tools");

    if (source_map_agent(&goose_shape, in, &out, whyp) < 0)
        return -EINVAL;
    if (cmd)
        json_object_set(out, "command", json_copy(cmd));
    if (uri)
        json_object_set(out, "url", json_copy(uri));
    StrBuf notes = STRBUF_INIT;
    if (map_env(in, out, &notes, whyp) < 0) {
        strbuf_deinit(&notes);
        return json_free(out), -EINVAL;
    }
    if (json_array_len(tools) > 0)
        json_object_set(out, "enabledTools", json_copy(tools));
    *outp = out;
    *whyp = notes.len ? strbuf_detach(&notes, NULL) : NULL;
    strbuf_deinit(&notes);
    return 0;
}

/* Each extension: one that runs inside goose is noted as skipped, the others mapped. */
static void add_extension(ConfigSet *set, const char *name, yajl_val ext, const SourceMeta *meta,
                          const Settings *settings)
{
    static const char *const inside[] = {"builtin", "platform", "frontend", "inline_python", NULL};
    const char *type = json_get_string(ext, "type");
    _cleanup_json_ yajl_val mapped = NULL;
    _cleanup_free_ char *why = NULL;

    for (const char *const *t = inside; type && *t; t++) {
        if (streq(type, *t)) {
            config_set_skip(set, name, meta, "a goose \"%s\" extension: it runs inside goose",
                            type);
            return;
        }
    }
    if (YAJL_IS_OBJECT(ext) && map_goose(ext, &mapped, &why) < 0) {
        _cleanup_free_ char *msg = xasprintf("Server \"%s\": %s", name, why);
        config_add_invalid(set, name, meta, msg);
        return;
    }
    config_add_entry(set, name, mapped ? mapped : ext, meta, settings);
    config_add_map_notes(set, name, meta, why);
}

void source_goose_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set)
{
    /*
     * goose's config directory is $GOOSE_PATH_ROOT/config when that is an absolute path, else
     * the XDG one (crates/goose/src/config/paths.rs: path_root, get_dir).
     */
    const char *groot = getenv("GOOSE_PATH_ROOT");
    _cleanup_free_ char *path = groot && groot[0] == '/' ? paths_join(groot, "config/config.yaml")
                                                         : source_agent_file("goose");
    _cleanup_free_ char *text = NULL, *why = NULL;
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta meta = {(char *)src->id, (char *)src->name, path, CONFIG_LEVEL_USER, 0};
    size_t len;
    yajl_val exts;

    (void)opt;
    if (config_read_text(set, path, CONFIG_LEVEL_USER, &text, &len) < 0)
        return;
    if (!(root = yaml_tree_parse(text, len, &why))) {
        config_set_problem(set, path, NULL, "%s; fix the file or move it away", why);
        return;
    }
    if (!YAJL_IS_OBJECT(root) && !YAJL_IS_NULL(root)) {
        config_set_problem(set, path, NULL, "the top level must be a mapping, not %s",
                           json_type_name(root));
        return;
    }
    exts = json_get(root, "extensions");
    if (!exts || YAJL_IS_NULL(exts))
        return;
    if (!YAJL_IS_OBJECT(exts)) {
        config_set_problem(set, path, NULL,
                           "\"extensions\" must be a mapping of name to extension, not %s",
                           json_type_name(exts));
        return;
    }
    if (config_too_many_servers(set, meta.path, exts->u.object.len))
        return;
    for (size_t i = 0; i < exts->u.object.len; i++)
        add_extension(set, exts->u.object.keys[i], exts->u.object.values[i], &meta, settings);
}
