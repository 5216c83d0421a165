// SPDX-License-Identifier: MIT
// collect: a provider's entries taken into the set, each through the rules every entry passes.

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/collect.h"
#include "daemon/config/config-expand.h"
#include "daemon/config/config-read.h"
#include "daemon/config/selfref.h"
#include "daemon/config/server-entry.h"
#include "daemon/config/server-identity.h"

void config_add_invalid(ConfigSet *set, const char *name, const SourceMeta *src, const char *why)
{
    config_set_problem(set, src->path, name, "%s", why);
    config_set_skip(set, name, src, "invalid: %s", why);
}

/* One KEY=VALUE line of a .env file ("export " and surrounding quotes allowed) into env. */
static void env_file_line(yajl_val env, const char *line, size_t n)
{
    _cleanup_free_ char *l = xstrndup(line, n);
    char *p = l, *eq, *v;
    size_t vn;

    p += strspn(p, " \t");
    if (startswith(p, "export "))
        p += strlen("export ");
    if (!*p || *p == '#' || !(eq = strchr(p, '=')) || eq == p)
        return;
    *eq = '\0';
    for (char *e = eq; e > p && (e[-1] == ' ' || e[-1] == '\t');)
        *--e = '\0';
    v = eq + 1;
    v += strspn(v, " \t");
    vn = strlen(v);
    while (vn && (v[vn - 1] == '\r' || v[vn - 1] == ' ' || v[vn - 1] == '\t'))
        v[--vn] = '\0';
    if (vn >= 2 && (v[0] == '"' || v[0] == '\'') && v[vn - 1] == v[0]) {
        v[vn - 1] = '\0';
        v++;
    }
    json_object_append(env, p, json_string_new(v)); /* repeats are dropped by the caller */
}

/*
 * envFile (VS Code, Cursor): the path of a .env file whose variables join env, as the agent fills
 * it in; a relative path starts where the server does (project root or home). Only a stdio
 * entry's (one without a url) counts. NULL when there is none (a bad value is reported).
 */
static char *env_file_path(ConfigSet *set, const char *name, yajl_val written,
                           const SourceMeta *src)
{
    yajl_val v = json_get(written, "envFile");
    _cleanup_json_ yajl_val filled = NULL;
    _cleanup_free_ char *home = NULL;

    if (!v || (json_get(written, "url") && !json_get(written, "command")))
        return NULL;
    if (!YAJL_IS_STRING(v) || !v->u.string[0]) {
        config_set_problem(set, src->path, name,
                           "Server \"%s\": \"envFile\" must be a path; it is ignored", name);
        return NULL;
    }
    filled = config_expand_forms(v, set->root, config_source_forms(src));
    if (filled->u.string[0] == '/')
        return xstrdup(filled->u.string);
    return paths_join(src->level == CONFIG_LEVEL_PROJECT && set->root ? set->root
                                                                      : (home = paths_home()),
                      filled->u.string);
}

/*
 * Read the envFile once: the gate judges these bytes and the server gets them. A file inside the
 * project is a project file (a link there is not followed). A missing file is a problem naming
 * the server, which still starts without it.
 */
static void env_file_read(ConfigSet *set, const char *name, const SourceMeta *src, const char *path,
                          char **textp, size_t *lenp)
{
    bool project = !set->root_is_home && (src->level == CONFIG_LEVEL_PROJECT ||
                                          (set->root && paths_within(path, set->root)));
    int r = config_read_text(set, path, project ? CONFIG_LEVEL_PROJECT : CONFIG_LEVEL_USER, textp,
                             lenp);

    if (r == -ENOENT)
        config_set_problem(set, src->path, name,
                           "Server \"%s\": envFile %s does not exist; the server starts without it",
                           name, path);
}

/* The variables of an envFile's text join c's env (its own env wins). */
static void env_file_apply(ServerConfig *c, const char *text, size_t len)
{
    if (!text || c->type != TRANSPORT_STDIO)
        return;
    if (!c->env)
        c->env = json_object_new();
    for (const char *p = text; p < text + len;) {
        const char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        env_file_line(c->env, p, n);
        p += n + 1;
    }
    /* The entry's own env wins over its envFile, and a file's first line of a name over later
     * ones: one sort, where a lookup per line was quadratic in the file's lines. */
    json_object_dedupe(c->env, JSON_DUP_KEEP_FIRST);
}

/*
 * Placeholders an agent fills in itself and mcpd cannot: a value holding one reaches the server
 * as written, so each is reported with the field it is in and what to do instead.
 */
static const struct {
    const char *mark;
    const char *what;
} unfilled_marks[] = {
    {"${input:", "a VS Code input prompt, which only VS Code can ask"},
    {"${file:", "Windsurf's file substitution, which mcpd does not do"},
    {"{file:", "OpenCode's file substitution, which mcpd does not do"},
    {"${{", "a Continue secret or input template, which only Continue can fill"},
};

/*
 * The first ${NAME} (EXPAND_VAR in forms) or ${env:NAME} (EXPAND_ENV) in s: in an expanded
 * string, one of a form the agent fills is unset with no default (one set to "" expands to "").
 * ${workspaceFolder...} is left out: outside a project it has no value by design. NULL when
 * there is none; else the name (to free).
 */
static char *variable_in(const char *s, unsigned forms)
{
    for (const char *p = strstr(s, "${"); p; p = strstr(p + 2, "${")) {
        bool env = startswith(p + 2, "env:");
        const char *body = env ? p + 6 : p + 2;
        size_t n = strspn(body, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        if (n && body[n] == '}' && !(body[0] >= '0' && body[0] <= '9') &&
            !startswith(body, "workspaceFolder") && (forms & (env ? EXPAND_ENV : EXPAND_VAR)))
            return xstrndup(body, n);
    }
    return NULL;
}

/* Whether v may hold a mark (each has a '{'): its field path is built only then, not per value. */
static bool may_hold_mark(yajl_val v)
{
    return !YAJL_IS_STRING(v) || strchr(v->u.string, '{');
}

/* Warn once for each string under v (named where, a field path) holding an unfilled mark. */
static void note_unfilled(ConfigSet *set, const char *name, const SourceMeta *src, yajl_val v,
                          const char *where)
{
    if (YAJL_IS_STRING(v)) {
        _cleanup_free_ char *var = variable_in(v->u.string, EXPAND_ALL & ~src->expand_off);
        _cleanup_free_ char *kept = var ? NULL : variable_in(v->u.string, src->expand_off);
        if (kept) {
            /* Codex, Zed (and VS Code for a bare ${NAME}) start the server with it as written. */
            config_set_warning(set, src->path, name,
                               "Server \"%s\": \"%s\" holds ${%s}, which %s passes to the server "
                               "as written (it does not expand it), and so does mcpd: write the "
                               "value itself, or have the agent pass the variable on its own "
                               "way (Codex: env_vars = [\"%s\"]; VS Code: ${env:%s})",
                               name, where, kept, src->provider_name, kept, kept);
            return;
        }
        if (var) {
            /* The daemon's environment is not the login shell's: the usual cause. */
            config_set_warning(set, src->path, name,
                               "Server \"%s\": \"%s\" uses ${%s}, which is not set in mcpd's "
                               "environment; it is passed on as written: set it where mcpd "
                               "starts (systemctl --user set-environment %s=...) or give a "
                               "default (${%s:-value})",
                               name, where, var, var, var);
            return;
        }
        for (size_t i = 0; i < N_ELEMENTS(unfilled_marks); i++) {
            if (!strstr(v->u.string, unfilled_marks[i].mark))
                continue;
            config_set_warning(set, src->path, name,
                               "Server \"%s\": \"%s\" uses %s...}, %s; it is passed on as "
                               "written: give the value in the environment (${NAME}) or in "
                               "mcpd's own mcp.json",
                               name, where, unfilled_marks[i].mark, unfilled_marks[i].what);
            return;
        }
    } else if (YAJL_IS_OBJECT(v)) {
        for (size_t i = 0; i < v->u.object.len; i++) {
            if (!may_hold_mark(v->u.object.values[i]))
                continue;
            _cleanup_free_ char *sub = where[0] ? xasprintf("%s.%s", where, v->u.object.keys[i])
                                                : xstrdup(v->u.object.keys[i]);
            note_unfilled(set, name, src, v->u.object.values[i], sub);
        }
    } else if (YAJL_IS_ARRAY(v)) {
        for (size_t i = 0; i < v->u.array.len; i++) {
            if (!may_hold_mark(v->u.array.values[i]))
                continue;
            _cleanup_free_ char *sub = xasprintf("%s[%zu]", where, i);
            note_unfilled(set, name, src, v->u.array.values[i], sub);
        }
    }
}

/* The Exa rule (seed 1.6): an Exa search server is filtered when filterExa is on. */

static bool mentions_exa(const char *s)
{
    return s && strcasestr(s, "mcp.exa.ai") != NULL;
}

/* exaApiKey=<key> in a URL or argument, case-insensitive. */
static char *exa_key_in(const char *s)
{
    const char *p = s ? strcasestr(s, "exaApiKey=") : NULL;
    size_t n;

    if (!p)
        return NULL;
    p += strlen("exaApiKey=");
    n = strcspn(p, "& \t\r\n");
    return n ? xstrndup(p, n) : NULL;
}

bool config_is_exa(const ServerConfig *c, char **keyp)
{
    bool exa = strcasecmp(c->name, "exa") == 0;
    const char *env_key;
    char *key = NULL;

    if (c->type == TRANSPORT_STDIO) {
        for (size_t i = 0; i < c->n_args && !exa; i++)
            exa = mentions_exa(c->args[i]);
    } else {
        exa = exa || mentions_exa(c->url);
    }
    if (exa && keyp) {
        key = exa_key_in(c->url);
        for (size_t i = 0; i < c->n_args && !key; i++)
            key = exa_key_in(c->args[i]);
        if (!key && (env_key = json_get_string(c->env, "EXA_API_KEY")) && env_key[0])
            key = xstrdup(env_key);
        *keyp = key;
    }
    return exa;
}

/* Whether an entry as written starts mcpd's own bridge (never a server of its own). */
static bool written_is_bridge(yajl_val written)
{
    yajl_val args = json_get_array(written, "args");
    const char *command = json_get_string(written, "command");
    size_t n = json_array_len(args);
    _cleanup_free_ char **argv = xcalloc(n + 1, sizeof(char *));

    if (!command || json_get(written, "url"))
        return false;
    for (size_t i = 0; i < n; i++) {
        yajl_val a = json_array_at(args, i);
        if (!YAJL_IS_STRING(a))
            return false;
        argv[i] = a->u.string;
    }
    return selfref_is_bridge_command(command, argv, n);
}

void config_add_entry(ConfigSet *set, const char *name, yajl_val written, const SourceMeta *src,
                      const Settings *settings)
{
    _cleanup_json_ yajl_val expanded = NULL;
    _cleanup_free_ char *env_path = NULL, *env_text = NULL;
    size_t n_problems = set->n_problems, env_len = 0;
    ServerConfig *c, *prev;
    char *key = NULL;

    /* The project filter runs before first-wins, so it never hides a user entry (B7). */
    if (src->level == CONFIG_LEVEL_PROJECT && !settings->enable_project_config) {
        config_set_skip(set, name, src, "project-level config is off (enableProjectConfig)");
        return;
    }
    if (written_is_bridge(written)) {
        config_set_skip(set, name, src, "%s", SELFREF_REASON);
        return;
    }
    if ((env_path = env_file_path(set, name, written, src)))
        env_file_read(set, name, src, env_path, &env_text, &env_len);
    /* The gate sees the entry as written: nothing in it is expanded before it is approved. */
    if (set->gate &&
        !set->gate(set->gate_ctx, set,
                   &(ConfigGateEntry){name, written, src, env_path, env_text, env_len}))
        return;
    expanded = config_expand_forms(written, set->root, config_source_forms(src));
    c = server_config_build(name, written, expanded, src, settings, set);
    if (!c) {
        /* Reported, and it masks nothing: a lower entry of the name may still win (B7). */
        config_set_skip(set, name, src, "invalid: %s",
                        set->n_problems > n_problems ? set->problems[n_problems].message : "?");
        return;
    }
    if (selfref_is_bridge(c)) {
        config_set_skip(set, name, src, "%s", SELFREF_REASON);
        server_config_free(c);
        return;
    }
    env_file_apply(c, env_text, env_len);
    if (settings->filter_exa && config_is_exa(c, &key)) {
        config_set_skip(set, name, src, "Exa server, filtered (filterExa)%s",
                        key ? "; its API key was taken" : "");
        if (key) {
            set->exa_api_keys =
                xrealloc(set->exa_api_keys, (set->n_exa_api_keys + 1) * sizeof(char *));
            set->exa_api_keys[set->n_exa_api_keys++] = key;
        }
        server_config_free(c);
        return;
    }
    if (c->cwd && c->cwd[0] != '/') {
        /* A relative cwd is taken from where the server would start without one. */
        _cleanup_free_ char *home = paths_home();
        char *abs = paths_join(src->level == CONFIG_LEVEL_PROJECT && set->root ? set->root : home,
                               startswith(c->cwd, "./") ? c->cwd + 2 : c->cwd);
        free(c->cwd);
        c->cwd = abs;
    }
    if ((prev = config_set_find(set, name))) {
        /* First wins, whole entry; a disabled winner masks on purpose. */
        config_set_skip(set, name, src, "%s %s (%s)",
                        prev->enabled ? "shadowed by" : "masked by the disabled entry in",
                        prev->source.path ? prev->source.path : "?", prev->source.provider_name);
        server_config_free(c);
        return;
    }
    note_unfilled(set, name, src, expanded, "");
    server_config_hash(c, settings); /* with its envFile and its cwd as the server gets them */
    config_set_add(set, c);
}

bool config_too_many_servers(ConfigSet *set, const char *path, size_t n)
{
    if (n <= CONFIG_MAX_SERVERS_PER_FILE)
        return false;
    config_set_problem(set, path, NULL,
                       "holds %zu servers, more than mcpd reads from one file (%d): none of them "
                       "is used; split it, or remove the entries no agent needs",
                       n, CONFIG_MAX_SERVERS_PER_FILE);
    return true;
}

void config_add_entries(ConfigSet *set, yajl_val servers, const char *key, const SourceMeta *src,
                        const Settings *settings, ConfigMapFn map)
{
    if (!servers || YAJL_IS_NULL(servers))
        return;
    if (!YAJL_IS_OBJECT(servers)) {
        config_set_problem(set, src->path, NULL, "\"%s\" must be an object, not %s", key,
                           json_type_name(servers));
        return;
    }
    if (config_too_many_servers(set, src->path, servers->u.object.len))
        return;
    for (size_t i = 0; i < servers->u.object.len; i++) {
        const char *name = servers->u.object.keys[i];
        yajl_val entry = servers->u.object.values[i];
        _cleanup_json_ yajl_val mapped = NULL;
        _cleanup_free_ char *why = NULL;

        if (map && YAJL_IS_OBJECT(entry)) {
            if (map(name, entry, &mapped, &why) < 0) {
                _cleanup_free_ char *msg = xasprintf("Server \"%s\": %s", name, why);
                config_add_invalid(set, name, src, msg);
                continue;
            }
            entry = mapped;
        }
        config_add_entry(set, name, entry, src, settings);
        config_add_map_notes(set, name, src, why);
    }
}

void config_add_map_notes(ConfigSet *set, const char *name, const SourceMeta *src,
                          const char *notes)
{
    for (const char *p = notes, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        if (n > 0)
            config_set_warning(set, src->path, name, "Server \"%s\": %.*s", name, n, p);
    }
}

void config_load_json_servers(ConfigSet *set, const char *path, const char *key,
                              const SourceMeta *src, const Settings *settings, ConfigMapFn map)
{
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta meta = *src;

    meta.path = (char *)path;
    if (config_read_json(set, path, src->level, &root) < 0)
        return;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL, "the top level must be an object with \"%s\"", key);
        return;
    }
    config_add_entries(set, json_get(root, key), key, &meta, settings, map);
}

void config_load_native_file(ConfigSet *set, const char *path, const char *provider,
                             const char *provider_name, ConfigLevel level, const Settings *settings)
{
    SourceMeta src = {(char *)provider, (char *)provider_name, (char *)path, level,
                      SOURCE_MCPD_REFS};

    config_load_json_servers(set, path, "mcpServers", &src, settings, NULL);
}
