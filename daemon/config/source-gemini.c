// SPDX-License-Identifier: MIT
// source-gemini: Gemini CLI's ~/.gemini/settings.json and <root>/.gemini/settings.json.

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/source.h"

/*
 * Gemini CLI (geminicli.com/docs/tools/mcp-server): "httpUrl" (deprecated spelling) is
 * Streamable HTTP; "url" with "type" is that transport, and a bare "url" is Streamable HTTP
 * with an SSE fallback (mcpd's "auto"); "command" is stdio. Its timeout is in ms, like mcpd's;
 * cwd, env, headers, args carry over as they are, and so does oauth (clientId, clientSecret,
 * scopes, authorizationUrl, tokenUrl, redirectUri: daemon/upstream/oauth.c reads them);
 * includeTools and excludeTools become enabledTools and disabledTools. trust has no mcpd meaning.
 */
/* Gemini expands $NAME as well as ${NAME} in its settings' strings: spell both as ${NAME}. */
static yajl_val dollar_braced(yajl_val v)
{
    if (YAJL_IS_OBJECT(v))
        for (size_t i = 0; i < v->u.object.len; i++)
            v->u.object.values[i] = dollar_braced(v->u.object.values[i]);
    if (YAJL_IS_ARRAY(v))
        for (size_t i = 0; i < v->u.array.len; i++)
            v->u.array.values[i] = dollar_braced(v->u.array.values[i]);
    if (!YAJL_IS_STRING(v) || !strchr(v->u.string, '$'))
        return v;
    StrBuf sb = STRBUF_INIT;
    for (const char *p = v->u.string; *p;) {
        size_t n = p[0] == '$' && (p[1] == '_' || isalpha((unsigned char)p[1]))
                       ? strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789_")
                       : 0;
        if (n) {
            strbuf_printf(&sb, "${%.*s}", (int)n, p + 1);
            p += n + 1;
        } else {
            strbuf_putc(&sb, *p++);
        }
    }
    json_free(v);
    v = json_string_new(strbuf_str(&sb));
    strbuf_deinit(&sb);
    return v;
}

static int map_gemini(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    static const char *const drop[] = {"httpUrl",      "url",          "trust",
                                       "includeTools", "excludeTools", NULL};
    yajl_val include = json_get(in, "includeTools"), exclude = json_get(in, "excludeTools");
    yajl_val http = json_get(in, "httpUrl"), sse = json_get(in, "url"), out;

    (void)name;
    if ((http && !YAJL_IS_STRING(http)) || (sse && !YAJL_IS_STRING(sse))) {
        *whyp = xstrdup(http && !YAJL_IS_STRING(http) ? "\"httpUrl\" must be a string"
                                                      : "\"url\" must be a string");
        return -EINVAL;
    }
    out = source_copy_without(in, drop);
    /* Gemini's tool filters are mcpd's (excludeTools wins over includeTools). */
    if (include)
        json_object_set(out, "enabledTools", json_copy(include));
    if (exclude)
        json_object_set(out, "disabledTools", json_copy(exclude));
    if (http || sse) {
        json_object_set(out, "url", json_copy(http ? http : sse));
        if (!json_get(in, "type"))
            json_object_set(out, "type", json_string_new(http ? "http" : "auto"));
    }
    *outp = dollar_braced(out);
    return 0;
}

/* Where Gemini CLI reads its system settings on Linux, unless the variable moves them. */
#define GEMINI_SYSTEM_SETTINGS "/etc/gemini-cli/settings.json"

/*
 * Gemini's own order, strongest first: system, then workspace, then user settings. Its
 * mcp.allowed / mcp.excluded (server names) come from the strongest file that sets them and
 * select among all of Gemini's servers.
 */
void source_gemini_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    const char *sys = getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH");
    _cleanup_free_ char *user = source_home_path(".gemini/settings.json");
    _cleanup_free_ char *ws = opt->root ? paths_join(opt->root, ".gemini/settings.json") : NULL;
    _cleanup_free_ char *why_only = NULL, *why_off = NULL;
    const char *paths[] = {sys && sys[0] ? sys : GEMINI_SYSTEM_SETTINGS, ws, user};
    const ConfigLevel levels[] = {CONFIG_LEVEL_USER, CONFIG_LEVEL_PROJECT, CONFIG_LEVEL_USER};
    yajl_val roots[N_ELEMENTS(paths)] = {NULL}, only = NULL, off = NULL;

    /* Gemini CLI reads settings.json as JSONC (comments, trailing commas). */
    for (size_t i = 0; i < N_ELEMENTS(paths); i++) {
        if (!paths[i] || source_read_json(set, paths[i], levels[i], true, &roots[i]) < 0)
            continue;
        if (!YAJL_IS_OBJECT(roots[i])) {
            config_set_problem(set, paths[i], NULL,
                               "the top level must be an object with \"mcpServers\"");
            roots[i] = json_free(roots[i]);
            continue;
        }
        yajl_val mcp = json_get_object(roots[i], "mcp");
        if (!only && json_get_array(mcp, "allowed")) {
            only = json_get_array(mcp, "allowed");
            why_only = xasprintf("not in Gemini CLI's mcp.allowed (%s)", paths[i]);
        }
        if (!off && json_get_array(mcp, "excluded")) {
            off = json_get_array(mcp, "excluded");
            why_off = xasprintf("in Gemini CLI's mcp.excluded (%s)", paths[i]);
        }
    }
    for (size_t i = 0; i < N_ELEMENTS(paths); i++) {
        SourceMeta meta = {(char *)src->id, (char *)src->name, (char *)paths[i], levels[i]};
        if (roots[i])
            source_add_selected(set, json_get(roots[i], "mcpServers"), "mcpServers", &meta,
                                settings, map_gemini, only, off, why_only, why_off);
    }
    for (size_t i = 0; i < N_ELEMENTS(paths); i++)
        json_free(roots[i]);
}

/* The same mapping for the servers mcpctl setup moved out of this agent's file. */
int source_gemini_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    return map_gemini(name, in, outp, whyp);
}
