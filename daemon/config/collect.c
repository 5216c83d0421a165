// SPDX-License-Identifier: MIT
// collect: how discovery takes servers from files: reading them (bounded, last good version kept)
// and the rules every entry passes before it joins the set.

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonc.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/collect.h"
#include "daemon/config/selfref.h"

/* A config file larger than this is not a config file; refuse rather than slurp it. */
#define CONFIG_MAX_FILE_BYTES (4u * 1024u * 1024u)
/*
 * Config files whose last good text is kept for safe reload: every provider's user and project
 * files for a few dozen live projects; and at most this many bytes of them in all (the largest
 * usual file, ~/.claude.json with its history, is a few MiB).
 */
#define CONFIG_GOOD_MAX       64
#define CONFIG_GOOD_MAX_BYTES (32u * 1024u * 1024u)

/* Kept as text, not as a parsed tree: a tree of a large ~/.claude.json is several times larger. */
typedef struct GoodFile {
    char *path;
    char *text;
} GoodFile;

/* Discovery runs on the loop and on threads (discover-async.c): good[] is used under good_lock. */
static pthread_mutex_t good_lock = PTHREAD_MUTEX_INITIALIZER;
static GoodFile good[CONFIG_GOOD_MAX];
static size_t n_good, good_bytes;
static ConfigReadHook read_hook;
static void *read_hook_ud;

void config_set_read_hook(ConfigReadHook fn, void *userdata)
{
    read_hook = fn;
    read_hook_ud = userdata;
}

void config_note_listing(ConfigSet *set, const char *dir)
{
    _cleanup_free_ char *listing = xasprintf("%s/", dir);

    config_note_file(set, listing);
}

/*
 * Project-level files sit inside a repository someone else may have written: a link there
 * could point at any file of the user's (a key, another agent's config full of tokens) and
 * have it parsed and quoted back in errors, so it is not followed. User-level files are the
 * user's own, and dotfile managers (stow, chezmoi, home-manager) commonly make ~/.claude.json
 * or ~/.codex/config.toml links into a dotfiles repository: those are followed, but the target
 * must still be a regular file. Either way nothing but a regular file is read, so a FIFO or a
 * device never blocks the loop.
 */
void config_note_file(ConfigSet *set, const char *path)
{
    /* Hot reload watches what discovery looked at, found or not. */
    if (set->quiet)
        return;
    if (set->defer_notes) {
        ConfigNote *n;
        set->notes = xrealloc(set->notes, (set->n_notes + 1) * sizeof(*set->notes));
        n = &set->notes[set->n_notes++];
        n->path = xstrdup(path);
        /* Before the read: a change after this point makes the set stale, never lost. */
        n->found = stat(path, &n->st) == 0;
    } else if (read_hook) {
        read_hook(path, set->root, read_hook_ud);
    }
}

void config_set_pass_notes(ConfigSet *set)
{
    for (size_t i = 0; read_hook && i < set->n_notes; i++)
        read_hook(set->notes[i].path, set->root, read_hook_ud);
}

int config_read_text(ConfigSet *set, const char *path, ConfigLevel level, char **textp,
                     size_t *lenp)
{
    _cleanup_free_ char *why = NULL;
    struct stat st;
    int r;

    config_note_file(set, path);
    /* $HOME is never a project of its own files (~/.codex/config.toml is the user's). */
    if (level == CONFIG_LEVEL_PROJECT && set->root_is_home)
        return -ENOENT;
    r = paths_read_regular(path, level != CONFIG_LEVEL_PROJECT, CONFIG_MAX_FILE_BYTES, &st, textp,
                           lenp, &why);
    if (r == 0)
        config_set_note_read(set, path, &st); /* the trust gate judges this file, not the path */
    if (r == -ENOENT || r == -ENOTDIR)
        return -ENOENT;
    if (r < 0)
        config_set_problem(set, path, NULL, "%s", why ? why : strerror(-r));
    return r;
}

/*
 * "LINE:COLUMN" of a jsonc error ("line L, column C: what"), so the problem reads like a
 * compiler's path:line:column; NULL when the text failed a limit rather than the syntax.
 */
static char *json_error_where(const char *why)
{
    size_t line, col;

    if (!why || sscanf(why, "line %zu, column %zu", &line, &col) != 2)
        return NULL;
    return xasprintf("%zu:%zu", line, col);
}

/* The last version of a JSON file that parsed, kept by path. */
static const GoodFile *good_find(const char *path)
{
    for (size_t i = 0; i < n_good; i++)
        if (streq(good[i].path, path))
            return &good[i];
    return NULL;
}

static void good_forget(const char *path)
{
    for (size_t i = 0; i < n_good; i++)
        if (streq(good[i].path, path)) {
            good_bytes -= strlen(good[i].text);
            free(good[i].path);
            free(good[i].text);
            good[i] = good[--n_good];
            return;
        }
}

static void good_keep(const char *path, const char *text)
{
    const GoodFile *g = good_find(path);

    if (g && streq(g->text, text))
        return;
    good_forget(path);
    /* The oldest kept go first: they are the least likely to be mid-edit. */
    while (n_good &&
           (n_good >= CONFIG_GOOD_MAX || good_bytes + strlen(text) > CONFIG_GOOD_MAX_BYTES)) {
        good_bytes -= strlen(good[0].text);
        free(good[0].path);
        free(good[0].text);
        memmove(good, good + 1, (n_good - 1) * sizeof(*good));
        n_good--;
    }
    good[n_good].path = xstrdup(path);
    good[n_good++].text = xstrdup(text);
    good_bytes += strlen(text);
}

void config_forget_good(void)
{
    pthread_mutex_lock(&good_lock);
    while (n_good)
        good_forget(good[0].path);
    pthread_mutex_unlock(&good_lock);
}

/**
 * Read and parse a JSON config file. A missing file returns -ENOENT quietly; every other
 * failure is recorded in set with the path. A file that parsed before and does not now (a
 * typo, an editor's half-written save) gives its last good version instead, and says so with
 * file:line:column: one typo never takes away every server of a file.
 */
int config_read_json(ConfigSet *set, const char *path, ConfigLevel level, yajl_val *outp)
{
    _cleanup_free_ char *text = NULL, *why = NULL, *where = NULL;
    const GoodFile *g;
    size_t len = 0;
    _cleanup_free_ char *kept = NULL;
    int r = config_read_text(set, path, level, &text, &len);

    if (r == -ENOENT) {
        pthread_mutex_lock(&good_lock);
        good_forget(path);
        pthread_mutex_unlock(&good_lock);
    }
    if (r < 0)
        return r;
    /* Errors name the line and column; a duplicate key keeps its last value (JSON.parse). */
    *outp = jsonc_parse_strict(text, len, &why);
    if (*outp) {
        if (set->keep_last_good) {
            pthread_mutex_lock(&good_lock);
            good_keep(path, text);
            pthread_mutex_unlock(&good_lock);
        }
        return 0;
    }
    where = json_error_where(why);
    /* Only discovery falls back: approvals (trust.json) and settings must not outlive a typo. */
    if (set->keep_last_good) {
        pthread_mutex_lock(&good_lock);
        g = good_find(path);
        kept = g ? xstrdup(g->text) : NULL;
        pthread_mutex_unlock(&good_lock);
    }
    if (kept) {
        config_set_problem(set, path, NULL,
                           "invalid JSON at %s%s%s: %s; kept its servers as they were before "
                           "this change (fix the file and reload)",
                           path, where ? ":" : "", where ? where : "", why);
        *outp = jsonc_parse_strict(kept, strlen(kept), NULL);
        return *outp ? 0 : -EINVAL;
    }
    config_set_problem(set, path, NULL, "invalid JSON at %s%s%s: %s; fix the file or move it away",
                       path, where ? ":" : "", where ? where : "", why);
    return -EINVAL;
}

/* ---- the rules ---- */

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
