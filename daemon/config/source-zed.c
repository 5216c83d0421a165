// SPDX-License-Identifier: MIT
// source-zed: Zed's context_servers in <root>/.zed/settings.json, then ~/.config/zed/settings.json.
//
// Format: https://zed.dev/docs/ai/mcp ("As Custom Servers": {"context_servers": {"name":
// {"command", "args", "env"} or {"url", "headers"}}}) and zed's
// crates/settings/src/settings_content/project.rs (ContextServerSettingsContent: stdio
// {enabled, remote, command, args, env, timeout}, http {enabled, url, headers, timeout, oauth},
// extension {enabled, remote, settings}; timeout in seconds, for tool calls; "source": "custom"
// in older files; the older {"command": {"path", "args", "env"}}). Settings files
// are JSONC (https://zed.dev/docs/configuring-zed); project settings override the user's. The
// top-level "context_server_timeout" (seconds, project's over user's) is the default timeout.

#include <errno.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/source.h"

/*
 * Zed's "timeout" is the tool-call timeout in seconds (ContextServerCommand and the Http
 * variant: "Timeout for tool calls in seconds"), mcpd's "callTimeout" in ms; kept as mcpd's
 * "timeout" it would be read as a 120 ms start-up limit. Above this it is refused: a day is
 * already far past any tool call, and it keeps the product with 1000 far from overflow.
 */
#define ZED_MAX_TIMEOUT_SECONDS 86400

/*
 * "remote" (run it on the remote-development host) only means something inside Zed. "oauth"
 * ({client_id, client_secret}) passes through: daemon/upstream/oauth.c reads those names.
 */
static int map_zed(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    static const char *const drop[] = {"source", "settings", "command", "timeout", "remote", NULL};
    const char *source = json_get_string(in, "source");
    yajl_val cmd = json_get(in, "command"), secs = json_get(in, "timeout"), out;

    (void)name;
    if ((source && streq(source, "extension")) || (!cmd && !json_get(in, "url"))) {
        *whyp = xstrdup("provided by a Zed extension; mcpd cannot run Zed extensions: give "
                        "it a \"command\" (or \"url\") in mcpd's own mcp.json instead");
        return -EINVAL;
    }
    if (cmd && !YAJL_IS_STRING(cmd) && !YAJL_IS_OBJECT(cmd)) {
        *whyp = xstrdup("\"command\" must be a string or {\"path\", \"args\", \"env\"}");
        return -EINVAL;
    }
    if (secs && (!YAJL_IS_INTEGER(secs) || YAJL_GET_INTEGER(secs) < 0 ||
                 YAJL_GET_INTEGER(secs) > ZED_MAX_TIMEOUT_SECONDS)) {
        *whyp = xasprintf("\"timeout\" must be a whole number of seconds from 0 to %d",
                          ZED_MAX_TIMEOUT_SECONDS);
        return -EINVAL;
    }
    out = source_copy_without(in, drop);
    if (secs && !json_get(in, "callTimeout"))
        json_object_set(out, "callTimeout", json_int_new(YAJL_GET_INTEGER(secs) * 1000));
    if (YAJL_IS_STRING(cmd)) {
        json_object_set(out, "command", json_copy(cmd));
    } else if (cmd) {
        /* The older shape: everything about the process under "command". */
        static const char *const keys[][2] = {
            {"path", "command"}, {"args", "args"}, {"env", "env"}};
        for (size_t i = 0; i < N_ELEMENTS(keys); i++)
            if (json_get(cmd, keys[i][0]))
                json_object_set(out, keys[i][1], json_copy(json_get(cmd, keys[i][0])));
    }
    *outp = out;
    return 0;
}

/*
 * "context_server_timeout" (top level, seconds) is the tool-call timeout of every server without
 * its own "timeout"; the project's settings are merged over the user's, so the project's value
 * wins (settings_content/project.rs: "Can be overridden per-server"). NULL: none set; a value
 * that is not a whole number of seconds in range is a problem naming the file, and unused.
 */
static yajl_val zed_default_timeout(ConfigSet *set, const char *path, yajl_val root)
{
    yajl_val t = json_get(root, "context_server_timeout");

    if (!t || YAJL_IS_NULL(t))
        return NULL;
    if (!YAJL_IS_INTEGER(t) || YAJL_GET_INTEGER(t) < 0 ||
        YAJL_GET_INTEGER(t) > ZED_MAX_TIMEOUT_SECONDS) {
        config_set_problem(set, path, NULL,
                           "\"context_server_timeout\" must be a whole number of seconds from 0 "
                           "to %d; it is ignored: fix it",
                           ZED_MAX_TIMEOUT_SECONDS);
        return NULL;
    }
    return t;
}

/* servers, each entry without "timeout" given dflt (NULL: unchanged); a new value. */
static yajl_val with_default_timeout(yajl_val servers, yajl_val dflt)
{
    yajl_val out = json_copy(servers);

    for (size_t i = 0; dflt && YAJL_IS_OBJECT(out) && i < out->u.object.len; i++) {
        yajl_val e = out->u.object.values[i];
        if (YAJL_IS_OBJECT(e) && !json_get(e, "timeout"))
            json_object_set(e, "timeout", json_copy(dflt));
    }
    return out;
}

/* The project's settings.json, then the user's, both JSONC, read once each. */
void source_zed_collect(const ConfigSource *src, const DiscoverOptions *opt,
                        const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_agent_file("zed");
    _cleanup_free_ char *project = opt->root ? paths_join(opt->root, ".zed/settings.json") : NULL;
    const char *paths[2] = {project, user};
    const ConfigLevel levels[2] = {CONFIG_LEVEL_PROJECT, CONFIG_LEVEL_USER};
    yajl_val roots[2] = {NULL, NULL}, dflt = NULL;

    for (int i = 0; i < 2; i++) {
        if (!paths[i] || source_read_json(set, paths[i], levels[i], true, &roots[i]) < 0)
            continue;
        if (!YAJL_IS_OBJECT(roots[i])) {
            config_set_problem(set, paths[i], NULL,
                               "the top level must be an object with \"context_servers\", not %s",
                               json_type_name(roots[i]));
            roots[i] = json_free(roots[i]);
        }
    }
    for (int i = 0; i < 2 && !dflt; i++)
        dflt = roots[i] ? zed_default_timeout(set, paths[i], roots[i]) : NULL;
    for (int i = 0; i < 2; i++) {
        /* Zed expands nothing: ContextServerConfiguration::from_settings takes the command,
         * args, env and headers as written (crates/project/src/context_server_store.rs). */
        SourceMeta meta = {(char *)src->id, (char *)src->name, (char *)paths[i], levels[i],
                           EXPAND_ALL};
        yajl_val written = json_get(roots[i], "context_servers");
        /* The bound is asked before the copy: a file over it costs no copy of it. */
        if (!roots[i] || (YAJL_IS_OBJECT(written) &&
                          config_too_many_servers(set, paths[i], written->u.object.len)))
            continue;
        _cleanup_json_ yajl_val servers = with_default_timeout(written, dflt);
        config_add_entries(set, servers, "context_servers", &meta, settings, map_zed);
    }
    json_free(roots[0]);
    json_free(roots[1]);
}
