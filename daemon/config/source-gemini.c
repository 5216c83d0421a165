// SPDX-License-Identifier: MIT
// source-gemini: Gemini CLI's ~/.gemini/settings.json and <root>/.gemini/settings.json, and the
// servers of its installed extensions (~/.gemini/extensions/<name>/gemini-extension.json).

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config-read.h"
#include "daemon/config/source.h"

/*
 * Gemini CLI (geminicli.com/docs/tools/mcp-server): "httpUrl" (deprecated spelling) is
 * Streamable HTTP; "url" with "type" is that transport, and a bare "url" is Streamable HTTP
 * with an SSE fallback (mcpd's "auto"); "command" is stdio. Its timeout is in ms, like mcpd's,
 * and bounds every request (packages/core/src/tools/mcp-client.ts: the connection, the listings
 * and each tool call, DiscoveredMCPTool's timeout), so it is both mcpd's timeout and callTimeout;
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
    if (json_get(in, "timeout") && !json_get(in, "callTimeout"))
        json_object_set(out, "callTimeout", json_copy(json_get(in, "timeout")));
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
 * Extensions read from ~/.gemini/extensions at most: a user has a handful; the bound keeps a
 * directory full of entries from costing more than a few reads, and the rest are reported.
 */
#define GEMINI_MAX_EXTENSIONS 256

/*
 * Gemini's extension enablement (~/.gemini/extensions/extension-enablement.json, written by
 * `gemini extensions disable|enable [--scope]`): {"<extension>": {"overrides": [rules]}}, a
 * rule being a directory with a trailing slash, ending in a star to take its subdirectories
 * too, with "!" in front to disable. The last rule matching the working directory wins;
 * extensions are enabled by default.
 */
static bool extension_enabled(yajl_val enablement, const char *ext, const char *dir)
{
    yajl_val rules = json_get_array(json_get_object(enablement, ext), "overrides");
    _cleanup_free_ char *at = xasprintf("%s/", dir);
    bool enabled = true;

    for (size_t i = 0; i < json_array_len(rules); i++) {
        if (!YAJL_IS_STRING(json_array_at(rules, i)))
            continue;
        const char *rule = json_array_at(rules, i)->u.string;
        bool off = rule[0] == '!';
        _cleanup_free_ char *base = xstrdup(rule + off);
        size_t n = strlen(base);
        bool subdirs = n && base[n - 1] == '*';
        if (subdirs)
            base[n - 1] = '\0';
        if (subdirs ? startswith(at, base) : streq(at, base))
            enabled = !off;
    }
    return enabled;
}

/*
 * One installed extension: <dir>/gemini-extension.json, or for a linked one (`gemini extensions
 * link`, .gemini-extension-install.json {"type": "link", "source": dir}) the manifest in its
 * source directory. Its mcpServers, with the extension's variables filled in, are added after
 * the settings' servers: a settings.json entry of the same name wins, as in Gemini CLI.
 */
static void load_extension(ConfigSet *set, const char *dir, const DiscoverOptions *opt,
                           const SourceMeta *src, const Settings *settings, yajl_val enablement,
                           yajl_val only, yajl_val off, const char *why_only, const char *why_off)
{
    _cleanup_free_ char *install = paths_join(dir, ".gemini-extension-install.json");
    _cleanup_json_ yajl_val meta = NULL, manifest = NULL;
    _cleanup_free_ char *ext_dir = NULL, *path = NULL, *home = paths_home();
    SourceMeta m = *src;

    if (source_read_json(set, install, CONFIG_LEVEL_USER, false, &meta) == 0 &&
        streq(json_get_string(meta, "type") ? json_get_string(meta, "type") : "", "link") &&
        json_get_string(meta, "source"))
        ext_dir = xstrdup(json_get_string(meta, "source"));
    else
        ext_dir = xstrdup(dir);
    path = paths_join(ext_dir, "gemini-extension.json");
    if (source_read_json(set, path, CONFIG_LEVEL_USER, false, &manifest) < 0)
        return;
    const char *name = json_get_string(manifest, "name");
    m.path = path;
    if (!name) {
        config_set_problem(set, path, NULL,
                           "the extension has no \"name\"; its servers are not read (Gemini CLI "
                           "does not load it either)");
        return;
    }
    yajl_val servers = json_get(manifest, "mcpServers");
    if (!extension_enabled(enablement, name, opt->root ? opt->root : home)) {
        for (size_t i = 0; YAJL_IS_OBJECT(servers) && i < servers->u.object.len; i++)
            config_set_skip(set, servers->u.object.keys[i], &m,
                            "the Gemini CLI extension \"%s\" is disabled here "
                            "(extension-enablement.json)",
                            name);
        return;
    }
    /* The variables Gemini fills in an extension's entries. */
    static const char *const vars[] = {"extensionPath", "workspacePath", NULL};
    const char *const values[] = {ext_dir, opt->root};
    servers = source_fill_vars(json_copy(servers), vars, values);
    source_add_selected(set, servers, "mcpServers", &m, settings, map_gemini, only, off, why_only,
                        why_off);
    json_free(servers);
}

/* Every extension under ~/.gemini/extensions, in name order. */
static void load_extensions(ConfigSet *set, const DiscoverOptions *opt, const SourceMeta *src,
                            const Settings *settings, yajl_val only, yajl_val off,
                            const char *why_only, const char *why_off)
{
    _cleanup_free_ char *root = source_home_path(".gemini/extensions");
    _cleanup_free_ char *en_path = paths_join(root, "extension-enablement.json");
    _cleanup_json_ yajl_val enablement = NULL;
    char *names[GEMINI_MAX_EXTENSIONS];
    struct stat st;

    config_note_listing(set, root); /* an extension installed later is read then */
    if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode))
        return;
    int r = source_read_json(set, en_path, CONFIG_LEVEL_USER, false, &enablement);
    if (r < 0 && r != -ENOENT)
        return; /* Gemini CLI fails closed: with this file unreadable, every extension is off. */
    size_t n = source_list_subdirs(set, root, names, GEMINI_MAX_EXTENSIONS, "extensions");
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *dir = paths_join(root, names[i]);
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            load_extension(set, dir, opt, src, settings, enablement, only, off, why_only, why_off);
        free(names[i]);
    }
}

/*
 * Gemini's own order, strongest first: system, then workspace, then user settings, then the
 * user's extensions. Its mcp.allowed / mcp.excluded (server names) come from the strongest
 * file that sets them and select among all of Gemini's servers; the workspace's only once the
 * folder is trusted there (before, they would hide the user's own servers).
 */
void source_gemini_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    const char *sys = getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH");
    _cleanup_free_ char *user = source_agent_file("gemini");
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
        /*
         * Settings files from before Gemini CLI's nested format (which it still migrates on
         * load) name the lists allowMCPServers and excludeMCPServers at the top level.
         */
        /* Gemini CLI ignores an untrusted folder's settings, its lists of servers included. */
        if (levels[i] == CONFIG_LEVEL_PROJECT &&
            !config_folder_trusted(set, CONFIG_FOLDER_TRUST_GEMINI))
            continue;
        yajl_val mcp = json_get_object(roots[i], "mcp");
        const char *allow_key = json_get_array(mcp, "allowed") ? "mcp.allowed" : "allowMCPServers";
        const char *excl_key =
            json_get_array(mcp, "excluded") ? "mcp.excluded" : "excludeMCPServers";
        yajl_val allow = json_get_array(mcp, "allowed")
                             ? json_get_array(mcp, "allowed")
                             : json_get_array(roots[i], "allowMCPServers");
        yajl_val excl = json_get_array(mcp, "excluded")
                            ? json_get_array(mcp, "excluded")
                            : json_get_array(roots[i], "excludeMCPServers");
        if (!only && allow) {
            only = allow;
            why_only = xasprintf("not in Gemini CLI's %s (%s)", allow_key, paths[i]);
        }
        if (!off && excl) {
            off = excl;
            why_off = xasprintf("in Gemini CLI's %s (%s)", excl_key, paths[i]);
        }
    }
    for (size_t i = 0; i < N_ELEMENTS(paths); i++) {
        SourceMeta meta = {(char *)src->id, (char *)src->name, (char *)paths[i], levels[i],
                           src->expand_off};
        if (roots[i])
            source_add_selected(set, json_get(roots[i], "mcpServers"), "mcpServers", &meta,
                                settings, map_gemini, only, off, why_only, why_off);
    }
    SourceMeta ext = {(char *)src->id, (char *)src->name, NULL, CONFIG_LEVEL_USER, 0};
    load_extensions(set, opt, &ext, settings, only, off, why_only, why_off);
    for (size_t i = 0; i < N_ELEMENTS(paths); i++)
        json_free(roots[i]);
}

/* The same mapping for the servers mcpctl setup moved out of this agent's file. */
int source_gemini_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    return map_gemini(name, in, outp, whyp);
}
