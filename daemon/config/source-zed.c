// SPDX-License-Identifier: MIT
// source-zed: Zed's context_servers in <root>/.zed/settings.json, then ~/.config/zed/settings.json.
//
// Format: https://zed.dev/docs/ai/mcp ("As Custom Servers": {"context_servers": {"name":
// {"command", "args", "env"} or {"url", "headers"}}}) and zed's
// crates/settings/src/settings_content/project.rs (ContextServerSettingsContent: stdio
// {enabled, remote, command, args, env, timeout}, http {enabled, url, headers, timeout, oauth},
// extension {enabled, remote, settings}; timeout in seconds, for tool calls; "source": "custom"
// in older files; the older {"command": {"path", "args", "env"}}). Settings files
// are JSONC (https://zed.dev/docs/configuring-zed); project settings override the user's.

#include <errno.h>
#include <stdlib.h>

#include "common/json.h"
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

void source_zed_collect(const ConfigSource *src, const DiscoverOptions *opt,
                        const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_config_path("zed/settings.json");

    source_load_project_then_user(src, opt, settings, set, ".zed/settings.json", user,
                                  "context_servers", map_zed, true);
}
