// SPDX-License-Identifier: MIT
// config: server configurations, daemon settings and the discovery driver over config sources.

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/jsonc.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config.h"
#include "daemon/downstream/peer.h"
#include "daemon/config/selfref.h"
#include "daemon/config/source.h"
#include "daemon/config/trust.h"

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

static GoodFile good[CONFIG_GOOD_MAX];
static size_t n_good, good_bytes;
static ConfigReadHook read_hook;
static void *read_hook_ud;

void config_set_read_hook(ConfigReadHook fn, void *userdata)
{
    read_hook = fn;
    read_hook_ud = userdata;
}

void settings_init(Settings *s)
{
    *s = (Settings){
        .enable_project_config = true,
        .startup_timeout_ms = CONFIG_DEFAULT_STARTUP_MS,
        .max_message_bytes = JSONRPC_MAX_LINE_DEFAULT,
        .cache_ttl_days = 30,
        .timeout_ms = CONFIG_DEFAULT_TIMEOUT_MS,
        .call_timeout_ms = CONFIG_DEFAULT_CALL_TIMEOUT_MS,
        .max_call_timeout_ms = CONFIG_MAX_CALL_TIMEOUT_MS,
        .idle_timeout_ms = 0,
        .workspace_linger_ms = CONFIG_DEFAULT_LINGER_MS,
        .max_tools_per_server = CONFIG_DEFAULT_MAX_TOOLS,
        .max_list_pages = CONFIG_DEFAULT_MAX_PAGES,
        .max_list_bytes = CONFIG_DEFAULT_LIST_BYTES,
        .reconnect = true,
        .filter_exa = true,
        .hot_reload = true,
        .disabled_providers = 0,
        .partial_line_timeout_ms = PEER_PARTIAL_LINE_TIMEOUT_MS,
    };
}

static char *format_va(const char *fmt, va_list ap)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_vprintf(&sb, fmt, ap);
    return strbuf_detach(&sb, NULL);
}

static void problem_add(ConfigSet *set, const char *path, const char *server, bool warning,
                        char *message)
{
    ConfigProblem *p;

    set->problems = xrealloc(set->problems, (set->n_problems + 1) * sizeof(*set->problems));
    p = &set->problems[set->n_problems++];
    p->path = path ? xstrdup(path) : NULL;
    p->server = server ? xstrdup(server) : NULL;
    p->message = message;
    p->warning = warning;
    if (!set->quiet)
        log_full(LOG_WARNING, server, "config", "%s: %s%s", path ? path : "config",
                 warning ? "warning: " : "", p->message);
}

void config_set_problem(ConfigSet *set, const char *path, const char *server, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    problem_add(set, path, server, false, format_va(fmt, ap));
    va_end(ap);
}

void config_set_warning(ConfigSet *set, const char *path, const char *server, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    problem_add(set, path, server, true, format_va(fmt, ap));
    va_end(ap);
}

static void source_copy(SourceMeta *dst, const SourceMeta *src);

static void source_deinit(SourceMeta *s)
{
    free(s->provider);
    free(s->provider_name);
    free(s->path);
}

void config_set_skip(ConfigSet *set, const char *name, const SourceMeta *src, const char *fmt, ...)
{
    ConfigSkip *k;
    va_list ap;

    set->skipped = xrealloc(set->skipped, (set->n_skipped + 1) * sizeof(*set->skipped));
    k = &set->skipped[set->n_skipped++];
    k->name = xstrdup(name);
    source_copy(&k->source, src);
    va_start(ap, fmt);
    k->reason = format_va(fmt, ap);
    va_end(ap);
    if (!set->quiet)
        log_full(LOG_DEBUG, name, "config", "%s: not used: %s", src->path ? src->path : "config",
                 k->reason);
}

void config_set_deinit(ConfigSet *set)
{
    for (size_t i = 0; i < set->n_servers; i++)
        server_config_free(set->servers[i]);
    free(set->servers);
    for (size_t i = 0; i < set->n_problems; i++) {
        free(set->problems[i].path);
        free(set->problems[i].server);
        free(set->problems[i].message);
    }
    free(set->problems);
    for (size_t i = 0; i < set->n_skipped; i++) {
        free(set->skipped[i].name);
        source_deinit(&set->skipped[i].source);
        free(set->skipped[i].reason);
    }
    free(set->skipped);
    for (size_t i = 0; i < set->n_exa_api_keys; i++) {
        explicit_bzero(set->exa_api_keys[i], strlen(set->exa_api_keys[i]));
        free(set->exa_api_keys[i]);
    }
    free(set->exa_api_keys);
    memset(set, 0, sizeof(*set));
}

ServerConfig *config_set_find(const ConfigSet *set, const char *name)
{
    for (size_t i = 0; i < set->n_servers; i++)
        if (streq(set->servers[i]->name, name))
            return set->servers[i];
    return NULL;
}

static void config_set_add(ConfigSet *set, ServerConfig *c)
{
    set->servers = xrealloc(set->servers, (set->n_servers + 1) * sizeof(*set->servers));
    set->servers[set->n_servers++] = c;
}

const char *transport_type_name(TransportType t)
{
    switch (t) {
    case TRANSPORT_STDIO:
        return "stdio";
    case TRANSPORT_HTTP:
        return "http";
    case TRANSPORT_SSE:
        return "sse";
    case TRANSPORT_AUTO:
        return "auto";
    }
    return "?";
}

const char *config_level_name(ConfigLevel level)
{
    return level == CONFIG_LEVEL_PROJECT ? "project" : "user";
}

const char *config_check_name(const char *name)
{
    if (!name[0])
        return "Server name cannot be empty";
    if (strlen(name) > CONFIG_MAX_SERVER_NAME)
        return "Server name is too long (max 100 characters)";
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return "Server name can only contain letters, numbers, dash, underscore, and dot";
    }
    return NULL;
}

static void source_copy(SourceMeta *dst, const SourceMeta *src)
{
    dst->provider = xstrdup(src->provider ? src->provider : "mcpd");
    dst->provider_name = xstrdup(src->provider_name ? src->provider_name : dst->provider);
    dst->path = src->path ? xstrdup(src->path) : NULL;
    dst->level = src->level;
}

ServerConfig *server_config_free(ServerConfig *c)
{
    if (!c)
        return NULL;
    free(c->name);
    free(c->command);
    for (size_t i = 0; i < c->n_args; i++)
        free(c->args[i]);
    free(c->args);
    json_free(c->env);
    free(c->cwd);
    free(c->url);
    json_free(c->headers);
    json_free(c->raw);
    json_free(c->enabled_tools);
    json_free(c->disabled_tools);
    free(c->auth_type);
    free(c->credential_id);
    json_free(c->oauth);
    source_deinit(&c->source);
    free(c);
    return NULL;
}

ServerConfig *server_config_copy(const ServerConfig *c)
{
    ServerConfig *n = xmalloc(sizeof(*n));

    *n = *c;
    n->name = xstrdup(c->name);
    n->command = c->command ? xstrdup(c->command) : NULL;
    n->args = c->n_args ? xmalloc(c->n_args * sizeof(char *)) : NULL;
    for (size_t i = 0; i < c->n_args; i++)
        n->args[i] = xstrdup(c->args[i]);
    n->env = json_copy(c->env);
    n->cwd = c->cwd ? xstrdup(c->cwd) : NULL;
    n->url = c->url ? xstrdup(c->url) : NULL;
    n->headers = json_copy(c->headers);
    n->raw = json_copy(c->raw);
    n->enabled_tools = json_copy(c->enabled_tools);
    n->disabled_tools = json_copy(c->disabled_tools);
    n->auth_type = c->auth_type ? xstrdup(c->auth_type) : NULL;
    n->credential_id = c->credential_id ? xstrdup(c->credential_id) : NULL;
    n->oauth = json_copy(c->oauth);
    source_copy(&n->source, &c->source);
    return n;
}

bool server_config_same(const ServerConfig *a, const ServerConfig *b)
{
    return streq(a->name, b->name) && streq(a->hash, b->hash);
}

/* A field that must be an object of strings (env, headers). */
static int take_string_map(ServerConfig *c, yajl_val obj, const char *field, yajl_val *outp,
                           StrBuf *err)
{
    yajl_val v = json_get(obj, field);

    if (!v || YAJL_IS_NULL(v))
        return 0;
    if (!YAJL_IS_OBJECT(v)) {
        strbuf_printf(err, "Server \"%s\": \"%s\" must be an object of strings", c->name, field);
        return -EINVAL;
    }
    for (size_t i = 0; i < v->u.object.len; i++)
        if (!YAJL_IS_STRING(v->u.object.values[i])) {
            strbuf_printf(err, "Server \"%s\": \"%s.%s\" must be a string", c->name, field,
                          v->u.object.keys[i]);
            return -EINVAL;
        }
    *outp = json_copy(v);
    return 0;
}

/*
 * An optional number of milliseconds. A wrong value is a warning naming the field, and the
 * default stays: a tuning knob written wrong must not take the server away.
 */
static void take_ms(ServerConfig *c, yajl_val obj, const char *field, int64_t *outp, StrBuf *warn)
{
    yajl_val v = json_get(obj, field);

    if (!v || YAJL_IS_NULL(v))
        return;
    if (!YAJL_IS_INTEGER(v) || v->u.number.i < 0 || v->u.number.i > INT32_MAX) {
        strbuf_printf(warn,
                      "Server \"%s\": \"%s\" must be a non-negative number of milliseconds, not "
                      "%s; using the default %" PRId64 "\n",
                      c->name, field, json_type_name(v), *outp);
        return;
    }
    *outp = v->u.number.i;
}

static int take_bool(ServerConfig *c, yajl_val obj, const char *field, bool *outp, StrBuf *err)
{
    int r = json_get_bool(obj, field, outp);

    if (r == -EINVAL) {
        strbuf_printf(err, "Server \"%s\": \"%s\" must be true or false", c->name, field);
        return r;
    }
    return 0;
}

/* enabledTools / disabledTools: arrays of non-empty glob strings. */
static int take_globs(ServerConfig *c, yajl_val obj, const char *field, yajl_val *outp, StrBuf *err)
{
    yajl_val v = json_get(obj, field);

    if (!v || YAJL_IS_NULL(v))
        return 0;
    for (size_t i = 0; YAJL_IS_ARRAY(v) && i < v->u.array.len; i++)
        if (!YAJL_IS_STRING(v->u.array.values[i]) || !v->u.array.values[i]->u.string[0])
            v = NULL;
    if (!YAJL_IS_ARRAY(v)) {
        strbuf_printf(err,
                      "Server \"%s\": \"%s\" must be an array of tool names (globs such as "
                      "\"read_*\")",
                      c->name, field);
        return -EINVAL;
    }
    *outp = json_copy(v);
    return 0;
}

static int take_type(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    yajl_val t = json_get(obj, "type");
    const char *s;

    if (!t || YAJL_IS_NULL(t)) {
        c->type = c->command || !c->url ? TRANSPORT_STDIO : TRANSPORT_AUTO;
        return 0;
    }
    if (!YAJL_IS_STRING(t)) {
        strbuf_printf(err, "Server \"%s\": \"type\" must be a string", c->name);
        return -EINVAL;
    }
    s = t->u.string;
    if (streq(s, "stdio"))
        c->type = TRANSPORT_STDIO;
    else if (streq(s, "http") || streq(s, "streamable-http") || streq(s, "streamableHttp"))
        c->type = TRANSPORT_HTTP;
    else if (streq(s, "sse"))
        c->type = TRANSPORT_SSE;
    else if (streq(s, "auto"))
        c->type = TRANSPORT_AUTO;
    else {
        strbuf_printf(err, "Server \"%s\": unknown server type \"%s\"", c->name, s);
        return -EINVAL;
    }
    return 0;
}

static int take_strings(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    yajl_val v;

    if ((v = json_get(obj, "command")) && !YAJL_IS_NULL(v)) {
        if (!YAJL_IS_STRING(v)) {
            strbuf_printf(err, "Server \"%s\": \"command\" must be a string", c->name);
            return -EINVAL;
        }
        if (v->u.string[0])
            c->command = xstrdup(v->u.string);
    }
    if ((v = json_get(obj, "url")) && !YAJL_IS_NULL(v)) {
        if (!YAJL_IS_STRING(v)) {
            strbuf_printf(err, "Server \"%s\": \"url\" must be a string", c->name);
            return -EINVAL;
        }
        if (v->u.string[0])
            c->url = xstrdup(v->u.string);
    }
    if ((v = json_get(obj, "cwd")) && !YAJL_IS_NULL(v)) {
        if (!YAJL_IS_STRING(v)) {
            strbuf_printf(err, "Server \"%s\": \"cwd\" must be a string", c->name);
            return -EINVAL;
        }
        if (v->u.string[0])
            c->cwd = xstrdup(v->u.string);
    }
    if ((v = json_get(obj, "args")) && !YAJL_IS_NULL(v)) {
        if (!YAJL_IS_ARRAY(v)) {
            strbuf_printf(err, "Server \"%s\": \"args\" must be an array of strings", c->name);
            return -EINVAL;
        }
        c->args = v->u.array.len ? xcalloc(v->u.array.len, sizeof(char *)) : NULL;
        for (size_t i = 0; i < v->u.array.len; i++) {
            yajl_val a = v->u.array.values[i];
            if (!YAJL_IS_STRING(a)) {
                strbuf_printf(err, "Server \"%s\": \"args[%zu]\" must be a string", c->name, i);
                return -EINVAL;
            }
            c->args[c->n_args++] = xstrdup(a->u.string);
        }
    }
    return 0;
}

/* auth: {type: "oauth" | "apikey", credentialId?: string} (seed 1.5). */
static int take_auth(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    yajl_val a = json_get(obj, "auth"), t, id;

    c->oauth = YAJL_IS_OBJECT(json_get(obj, "oauth")) ? json_copy(json_get(obj, "oauth")) : NULL;
    if (!a || YAJL_IS_NULL(a))
        return 0;
    t = json_get(a, "type");
    id = json_get(a, "credentialId");
    if (!YAJL_IS_OBJECT(a) || (t && !YAJL_IS_STRING(t)) || (id && !YAJL_IS_STRING(id))) {
        strbuf_printf(err,
                      "Server \"%s\": \"auth\" must be an object {\"type\": \"oauth\" or "
                      "\"apikey\", \"credentialId\": string}",
                      c->name);
        return -EINVAL;
    }
    if (t && !streq(t->u.string, "oauth") && !streq(t->u.string, "apikey")) {
        strbuf_printf(err, "Server \"%s\": unknown auth type \"%s\" (oauth or apikey)", c->name,
                      t->u.string);
        return -EINVAL;
    }
    c->auth_type = t ? xstrdup(t->u.string) : NULL;
    c->credential_id = id && id->u.string[0] ? xstrdup(id->u.string) : NULL;
    return 0;
}

/* The seed's validateServerConfig messages (reference/seed-origin.md 2.1). */
static int validate(ServerConfig *c, StrBuf *err)
{
    /* In mcpd's own file {"enabled": false} alone is a mask: it names a server to switch off. */
    if (!c->enabled && !c->command && !c->url && streq(c->source.provider, "mcpd"))
        return 0;
    if (c->command && c->url) {
        strbuf_printf(err,
                      "Server \"%s\": both \"command\" and \"url\" are set - server should be "
                      "either stdio (command) OR http/sse (url), not both",
                      c->name);
        return -EINVAL;
    }
    if (c->type == TRANSPORT_STDIO && !c->command) {
        strbuf_printf(err, "Server \"%s\": stdio server requires \"command\" field", c->name);
        return -EINVAL;
    }
    if (c->type != TRANSPORT_STDIO && !c->url) {
        strbuf_printf(err, "Server \"%s\": %s server requires \"url\" field", c->name,
                      c->type == TRANSPORT_SSE ? "sse" : "http");
        return -EINVAL;
    }
    return 0;
}

/* Fields mcpd reads from a server entry. */
static const char *const known_fields[] = {
    "type",           "command", "args",      "env",          "cwd",           "url",
    "headers",        "enabled", "reconnect", "timeout",      "callTimeout",   "idleTimeoutMs",
    "pingIntervalMs", "auth",    "oauth",     "enabledTools", "disabledTools", "protocol",
};

/*
 * Fields other agents keep in the same entries for themselves: not mcpd's, not typos, so not
 * worth a warning (Cline/Roo, Windsurf, Gemini CLI, VS Code, Claude Desktop extensions).
 */
static const char *const foreign_fields[] = {
    "disabled",     "autoApprove", "alwaysAllow", "description", "trust", "includeTools",
    "excludeTools", "envFile",     "httpUrl",     "serverUrl",   "name",  "transport",
    "timeoutMs",    "gallery",     "version",     "id",          "dev",   "note",
    "comment",      "$comment",    "metadata",    "tools",
};

static bool in_list(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (streq(list[i], s))
            return true;
    return false;
}

/* Edit distance, capped: only near misses matter for "did you mean". */
static unsigned edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned row[32], prev_diag, tmp;

    if (lb >= N_ELEMENTS(row) || la >= 64)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        prev_diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            tmp = row[j];
            unsigned sub =
                prev_diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), sub);
            prev_diag = tmp;
        }
    }
    return row[lb];
}

/* Unknown fields are ignored, with a warning that names them (and the near miss, if any). */
static void check_unknown_fields(ServerConfig *c, yajl_val obj, StrBuf *warn)
{
    for (size_t i = 0; i < obj->u.object.len; i++) {
        const char *k = obj->u.object.keys[i], *best = NULL;
        unsigned best_d = 3; /* a typo is one or two edits away */

        if (in_list(known_fields, N_ELEMENTS(known_fields), k) ||
            in_list(foreign_fields, N_ELEMENTS(foreign_fields), k))
            continue;
        for (size_t j = 0; j < N_ELEMENTS(known_fields); j++) {
            unsigned d = edit_distance(k, known_fields[j]);
            if (d < best_d) {
                best_d = d;
                best = known_fields[j];
            }
        }
        strbuf_printf(warn, "Server \"%s\": unknown field \"%s\" ignored%s%s%s\n", c->name, k,
                      best ? " (did you mean \"" : "", best ? best : "", best ? "\"?)" : "");
    }
}

/* Errors refuse the entry (err); warnings (warn, one per line) leave it usable. */
static int fill_fields(ServerConfig *c, yajl_val obj, StrBuf *err, StrBuf *warn)
{
    int r;

    check_unknown_fields(c, obj, warn);
    take_ms(c, obj, "timeout", &c->timeout_ms, warn);
    take_ms(c, obj, "callTimeout", &c->call_timeout_ms, warn);
    take_ms(c, obj, "idleTimeoutMs", &c->idle_timeout_ms, warn);
    take_ms(c, obj, "pingIntervalMs", &c->ping_interval_ms, warn);
    if ((r = take_strings(c, obj, err)) < 0 || (r = take_type(c, obj, err)) < 0 ||
        (r = take_string_map(c, obj, "env", &c->env, err)) < 0 ||
        (r = take_string_map(c, obj, "headers", &c->headers, err)) < 0 ||
        (r = take_bool(c, obj, "enabled", &c->enabled, err)) < 0 ||
        (r = take_bool(c, obj, "reconnect", &c->reconnect, err)) < 0 ||
        (r = take_auth(c, obj, err)) < 0 || (r = server_config_take_protocol(c, obj, err)) < 0 ||
        (r = take_globs(c, obj, "enabledTools", &c->enabled_tools, err)) < 0 ||
        (r = take_globs(c, obj, "disabledTools", &c->disabled_tools, err)) < 0)
        return r;
    return validate(c, err);
}

/* Each line of warn as a warning about the entry. */
static void add_warnings(ConfigSet *set, const SourceMeta *src, const char *name, StrBuf *warn)
{
    char *line = warn->data, *nl;

    while (line && (nl = strchr(line, '\n'))) {
        *nl = '\0';
        config_set_warning(set, src->path, name, "%s", line);
        line = nl + 1;
    }
}

ServerConfig *server_config_from_json(const char *name, yajl_val obj, const SourceMeta *src,
                                      const Settings *settings, ConfigSet *set)
{
    return server_config_build(name, obj, obj, src, settings, set);
}

ServerConfig *server_config_build(const char *name, yajl_val written, yajl_val obj,
                                  const SourceMeta *src, const Settings *settings, ConfigSet *set)
{
    ServerConfig *c;
    StrBuf err = STRBUF_INIT, text = STRBUF_INIT, warn = STRBUF_INIT;
    const char *bad_name = config_check_name(name);

    if (bad_name) {
        config_set_problem(set, src->path, name, "%s", bad_name);
        return NULL;
    }
    if (!YAJL_IS_OBJECT(obj)) {
        config_set_problem(set, src->path, name, "Server \"%s\": entry must be an object, not %s",
                           name, json_type_name(obj));
        return NULL;
    }
    c = xcalloc(1, sizeof(*c));
    c->name = xstrdup(name);
    c->enabled = true;
    c->timeout_ms = settings->timeout_ms;
    c->call_timeout_ms = settings->call_timeout_ms;
    c->idle_timeout_ms = settings->idle_timeout_ms;
    c->reconnect = settings->reconnect;
    source_copy(&c->source, src);
    c->allow_commands = streq(src->provider, "mcpd");
    if (fill_fields(c, obj, &err, &warn) < 0) {
        config_set_problem(set, src->path, name, "%s", strbuf_str(&err));
        strbuf_deinit(&err);
        strbuf_deinit(&warn);
        return server_config_free(c);
    }
    add_warnings(set, src, name, &warn);
    strbuf_deinit(&warn);
    if (c->call_timeout_ms > settings->max_call_timeout_ms)
        c->call_timeout_ms = settings->max_call_timeout_ms;
    c->raw = json_copy(written);
    json_write_sorted(&text, obj);
    sha256_hex(c->hash, text.data, text.len);
    strbuf_deinit(&text);
    return c;
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
int config_read_text(ConfigSet *set, const char *path, ConfigLevel level, char **textp,
                     size_t *lenp)
{
    _cleanup_free_ char *why = NULL;
    int r;

    /* Hot reload watches what discovery looked at, found or not. */
    if (read_hook && !set->quiet)
        read_hook(path, set->root, read_hook_ud);
    r = paths_read_regular(path, level != CONFIG_LEVEL_PROJECT, CONFIG_MAX_FILE_BYTES, NULL, textp,
                           lenp, &why);
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
    while (n_good)
        good_forget(good[0].path);
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
    int r = config_read_text(set, path, level, &text, &len);

    if (r == -ENOENT)
        good_forget(path);
    if (r < 0)
        return r;
    /* Errors name the line and column; a duplicate key keeps its last value (JSON.parse). */
    *outp = jsonc_parse_strict(text, len, &why);
    if (*outp) {
        if (set->keep_last_good)
            good_keep(path, text);
        return 0;
    }
    where = json_error_where(why);
    /* Only discovery falls back: approvals (trust.json) and settings must not outlive a typo. */
    g = set->keep_last_good ? good_find(path) : NULL;
    if (g) {
        config_set_problem(set, path, NULL,
                           "invalid JSON at %s%s%s: %s; kept its servers as they were before "
                           "this change (fix the file and reload)",
                           path, where ? ":" : "", where ? where : "", why);
        *outp = jsonc_parse_strict(g->text, strlen(g->text), NULL);
        return *outp ? 0 : -EINVAL;
    }
    config_set_problem(set, path, NULL, "invalid JSON at %s%s%s: %s; fix the file or move it away",
                       path, where ? ":" : "", where ? where : "", why);
    return -EINVAL;
}

static void redact_url_secrets(yajl_val v)
{
    if (YAJL_IS_STRING(v) && strstr(v->u.string, "://")) {
        char *shown = url_redact_secrets(v->u.string);
        free(v->u.string);
        v->u.string = shown;
    }
    for (size_t i = 0; YAJL_IS_ARRAY(v) && i < v->u.array.len; i++)
        redact_url_secrets(v->u.array.values[i]);
    for (size_t i = 0; YAJL_IS_OBJECT(v) && i < v->u.object.len; i++)
        redact_url_secrets(v->u.object.values[i]);
}

/*
 * The entry as written, with every env, headers and oauth value shown as "***", and so the secrets
 * of any URL (the password in http://user:pw@host, an ?apiKey= parameter), in url or in a
 * proxy's args.
 */
static yajl_val masked_raw(yajl_val raw)
{
    static const char *const secret_maps[] = {"env", "headers", "oauth"};
    yajl_val out = json_copy(raw);

    redact_url_secrets(out);

    for (size_t i = 0; i < N_ELEMENTS(secret_maps); i++) {
        yajl_val m = json_get(out, secret_maps[i]);
        for (size_t j = 0; YAJL_IS_OBJECT(m) && j < m->u.object.len; j++) {
            json_free(m->u.object.values[j]);
            m->u.object.values[j] = json_string_new("***");
        }
    }
    return out;
}

static void describe_source(yajl_val o, const SourceMeta *src)
{
    json_object_set(o, "provider", json_string_new(src->provider));
    json_object_set(o, "providerName", json_string_new(src->provider_name));
    if (src->path)
        json_object_set(o, "path", json_string_new(src->path));
    json_object_set(o, "level", json_string_new(config_level_name(src->level)));
}

yajl_val config_problems_json(const ConfigSet *set)
{
    yajl_val arr = json_array_new();

    for (size_t i = 0; i < set->n_problems; i++) {
        const ConfigProblem *p = &set->problems[i];
        yajl_val o = json_object_new();
        if (p->path)
            json_object_set(o, "path", json_string_new(p->path));
        if (p->server)
            json_object_set(o, "server", json_string_new(p->server));
        json_object_set(o, "error", json_string_new(p->message));
        if (p->warning)
            json_object_set(o, "severity", json_string_new("warning"));
        json_array_push(arr, o);
    }
    return arr;
}

yajl_val config_describe(const ConfigSet *set)
{
    yajl_val o = json_object_new(), servers = json_array_new(), skipped = json_array_new();

    for (size_t i = 0; i < set->n_servers; i++) {
        const ServerConfig *c = set->servers[i];
        yajl_val e = json_object_new();
        json_object_set(e, "name", json_string_new(c->name));
        describe_source(e, &c->source);
        json_object_set(e, "transport", json_string_new(transport_type_name(c->type)));
        json_object_set(e, "enabled", json_bool_new(c->enabled));
        json_object_set(e, "config", masked_raw(c->raw));
        json_array_push(servers, e);
    }
    for (size_t i = 0; i < set->n_skipped; i++) {
        const ConfigSkip *k = &set->skipped[i];
        yajl_val e = json_object_new();
        json_object_set(e, "name", json_string_new(k->name));
        describe_source(e, &k->source);
        json_object_set(e, "reason", json_string_new(k->reason));
        json_array_push(skipped, e);
    }
    json_object_set(o, "servers", servers);
    json_object_set(o, "skipped", skipped);
    json_object_set(o, "problems", config_problems_json(set));
    json_object_set(o, "exaApiKeysFound", json_int_new((int64_t)set->n_exa_api_keys));
    return o;
}

/* ---- ${VAR} expansion (seed 1.3) ---- */

/* The value of one ${...} body, or NULL when unset and without a default. */
static const char *expand_lookup(const char *body, size_t n, const char *root, char **homep)
{
    _cleanup_free_ char *name = NULL;
    const char *dflt = NULL, *v;
    size_t name_len = n;

    for (size_t i = 0; i + 1 < n; i++)
        if (body[i] == ':' && body[i + 1] == '-') {
            name_len = i;
            dflt = body + i + 2;
            break;
        }
    name = xstrndup(body, name_len);
    if (streq(name, "workspaceFolder"))
        v = root;
    else if (streq(name, "userHome"))
        v = *homep ? *homep : (*homep = paths_home());
    else
        v = getenv(startswith(name, "env:") ? name + 4 : name);
    if (v && v[0])
        return v;
    return dflt; /* points into body: the caller copies up to the closing brace */
}

static char *expand_string(const char *s, const char *root, char **homep)
{
    StrBuf sb = STRBUF_INIT;

    for (const char *p = s; *p;) {
        const char *close = startswith(p, "${") ? strchr(p + 2, '}') : NULL;
        if (!close || close == p + 2) {
            strbuf_putc(&sb, *p++);
            continue;
        }
        const char *body = p + 2, *v = expand_lookup(body, (size_t)(close - body), root, homep);
        if (!v)
            strbuf_append(&sb, p, (size_t)(close + 1 - p)); /* unset: left as written */
        else if (v >= body && v <= close)
            strbuf_append(&sb, v, (size_t)(close - v)); /* the default */
        else
            strbuf_puts(&sb, v);
        p = close + 1;
    }
    return strbuf_detach(&sb, NULL);
}

static yajl_val expand_value(yajl_val v, const char *root, char **homep)
{
    yajl_val out;

    if (YAJL_IS_STRING(v)) {
        _cleanup_free_ char *e = expand_string(v->u.string, root, homep);
        return json_string_new(e);
    }
    if (YAJL_IS_OBJECT(v)) {
        out = json_object_new();
        for (size_t i = 0; i < v->u.object.len; i++)
            json_object_set(out, v->u.object.keys[i],
                            expand_value(v->u.object.values[i], root, homep));
        return out;
    }
    if (YAJL_IS_ARRAY(v)) {
        out = json_array_new();
        for (size_t i = 0; i < v->u.array.len; i++)
            json_array_push(out, expand_value(v->u.array.values[i], root, homep));
        return out;
    }
    return json_copy(v);
}

yajl_val config_expand(yajl_val v, const char *root)
{
    _cleanup_free_ char *home = NULL;

    return expand_value(v, root, &home);
}

/* ---- tool filters ---- */

static bool globs_match(yajl_val globs, const char *tool)
{
    for (size_t i = 0; i < json_array_len(globs); i++)
        if (fnmatch(json_array_at(globs, i)->u.string, tool, 0) == 0)
            return true;
    return false;
}

bool config_tool_allowed(const ServerConfig *c, const char *tool)
{
    if (c->enabled_tools && !globs_match(c->enabled_tools, tool))
        return false;
    return !globs_match(c->disabled_tools, tool);
}

size_t config_filter_tools(const ServerConfig *c, yajl_val tools)
{
    size_t kept = 0, n = json_array_len(tools);

    if (!c->enabled_tools && !c->disabled_tools)
        return 0;
    for (size_t i = 0; i < n; i++) {
        yajl_val t = tools->u.array.values[i];
        const char *name = json_get_string(t, "name");
        if (name && !config_tool_allowed(c, name))
            json_free(t);
        else
            tools->u.array.values[kept++] = t;
    }
    tools->u.array.len = kept;
    return n - kept;
}

/* ---- Exa (seed 1.6) ---- */

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

/* ---- the rules ---- */

void config_add_invalid(ConfigSet *set, const char *name, const SourceMeta *src, const char *why)
{
    config_set_problem(set, src->path, name, "%s", why);
    config_set_skip(set, name, src, "invalid: %s", why);
}

/* The command line or URL the server would run, for the person deciding whether it may. */
static char *shown_command(const ServerConfig *c)
{
    StrBuf sb = STRBUF_INIT;

    if (!c->command)
        return xstrdup(c->url ? c->url : "(nothing: a disabled entry)");
    for (size_t i = 0; i <= c->n_args; i++) {
        const char *a = i ? c->args[i - 1] : c->command;
        bool plain = a[0] && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789-_./=:,@%+") == strlen(a);
        if (i)
            strbuf_putc(&sb, ' ');
        if (plain) {
            strbuf_puts(&sb, a);
            continue;
        }
        strbuf_putc(&sb, '\'');
        for (const char *p = a; *p; p++)
            strbuf_puts(&sb, *p == '\'' ? "'\\''" : (char[]){*p, 0});
        strbuf_putc(&sb, '\'');
    }
    return strbuf_detach(&sb, NULL);
}

/*
 * The project trust gate: an entry from a file inside the project runs only once approved
 * (mcpd's store or the owning agent's own answer), and never from a file another user owns.
 * Held-back entries mask nothing and are both a skip (mcpctl config) and a problem (status).
 */
static bool trust_gate(ConfigSet *set, const char *name, yajl_val written, const ServerConfig *c)
{
    _cleanup_free_ char *shown = NULL, *why = NULL;
    TrustVerdict v;

    if (!set->trust)
        return true;
    shown = shown_command(c);
    v = trust_check(set->trust, &c->source, name, written, shown, &why);
    if (v == TRUST_APPROVED)
        return true;
    config_set_problem(set, c->source.path, name, "%s", why);
    config_set_skip(set, name, &c->source, "%s", why);
    return false;
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
    if (!json_get(env, p)) /* the entry's own env wins over its envFile */
        json_object_set(env, p, json_string_new(v));
}

/*
 * envFile (VS Code, Cursor): a .env file whose variables join env. A relative path starts
 * where the server does (project root or home). A missing or unreadable file is a problem
 * naming the server; the server still starts without it.
 */
static void take_env_file(ConfigSet *set, ServerConfig *c, yajl_val expanded)
{
    yajl_val v = json_get(expanded, "envFile");
    _cleanup_free_ char *home = NULL, *path = NULL, *text = NULL;
    size_t len = 0;

    if (!v || c->type != TRANSPORT_STDIO)
        return;
    if (!YAJL_IS_STRING(v) || !v->u.string[0]) {
        config_set_problem(set, c->source.path, c->name,
                           "Server \"%s\": \"envFile\" must be a path; it is ignored", c->name);
        return;
    }
    if (v->u.string[0] == '/')
        path = xstrdup(v->u.string);
    else
        path =
            paths_join(c->source.level == CONFIG_LEVEL_PROJECT && set->root ? set->root
                                                                            : (home = paths_home()),
                       v->u.string);
    int r = config_read_text(set, path, c->source.level, &text, &len);
    if (r == -ENOENT)
        config_set_problem(set, c->source.path, c->name,
                           "Server \"%s\": envFile %s does not exist; the server starts without it",
                           c->name, path);
    if (r < 0)
        return;
    if (!c->env)
        c->env = json_object_new();
    for (const char *p = text; p < text + len;) {
        const char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        env_file_line(c->env, p, n);
        p += n + 1;
    }
}

void config_add_entry(ConfigSet *set, const char *name, yajl_val written, const SourceMeta *src,
                      const Settings *settings)
{
    _cleanup_json_ yajl_val expanded = NULL;
    size_t n_problems = set->n_problems;
    ServerConfig *c, *prev;
    char *key = NULL;

    /* The project filter runs before first-wins, so it never hides a user entry (B7). */
    if (src->level == CONFIG_LEVEL_PROJECT && !settings->enable_project_config) {
        config_set_skip(set, name, src, "project-level config is off (enableProjectConfig)");
        return;
    }
    expanded = config_expand(written, set->root);
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
    if (!trust_gate(set, name, written, c)) {
        server_config_free(c);
        return;
    }
    take_env_file(set, c, expanded);
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
    config_set_add(set, c);
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
    SourceMeta src = {(char *)provider, (char *)provider_name, (char *)path, level};

    config_load_json_servers(set, path, "mcpServers", &src, settings, NULL);
}

/* Priority order: DESIGN section 6. */
const ConfigSource config_sources[] = {
    {"mcpd", "mcpd", source_native_collect},
    {"imported", "mcpctl setup", source_imported_collect},
    {"claude", "Claude Code", source_claude_collect},
    {"codex", "OpenAI Codex", source_codex_collect},
    {"gemini", "Gemini CLI", source_gemini_collect},
    {"cursor", "Cursor", source_cursor_collect},
    {"windsurf", "Windsurf", source_windsurf_collect},
    {"vscode", "VS Code", source_vscode_collect},
    {"mcp-json", "MCP Config", source_plain_collect},
    {"copilot", "GitHub Copilot CLI", source_copilot_collect},
    {"claude-desktop", "Claude Desktop", source_claude_desktop_collect},
    {"opencode", "OpenCode", source_opencode_collect},
    {"zed", "Zed", source_zed_collect},
    {"cline", "Cline", source_cline_collect},
    {"roo", "Roo Code", source_roo_collect},
    {"kiro", "Kiro", source_kiro_collect},
    {"antigravity", "Google Antigravity", source_antigravity_collect},
    {"goose", "Goose", source_goose_collect},
    {"continue", "Continue", source_continue_collect},
    {NULL, NULL, NULL},
};

int config_source_index(const char *id)
{
    for (int i = 0; config_sources[i].id; i++)
        if (streq(config_sources[i].id, id))
            return i;
    return -1;
}

/* A switched-off provider is still read, so discover can show what it would have given. */
static void collect_disabled(const ConfigSource *s, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *out)
{
    ConfigSet tmp = {.quiet = true, .root = out->root, .trust = out->trust};

    s->collect(s, opt, settings, &tmp);
    for (size_t i = 0; i < tmp.n_servers; i++)
        config_set_skip(out, tmp.servers[i]->name, &tmp.servers[i]->source,
                        "provider \"%s\" is in disabledProviders", s->id);
    config_set_deinit(&tmp);
}

/*
 * The seed's critical discovery failure: a root that is not a readable directory gives the
 * workspace no servers at all and one error, filed under the project's .mcp.json, rather
 * than a partial set.
 */
static int check_root(ConfigSet *out, const char *root)
{
    _cleanup_free_ char *mcp = NULL;
    struct stat st;
    int r = stat(root, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;

    /* A directory mcpd may not list or enter would give a partial set and an error per file. */
    if (r == 0 && access(root, R_OK | X_OK) < 0)
        r = -errno;

    if (r == 0)
        return 0;
    mcp = paths_join(root, ".mcp.json");
    config_set_problem(out, mcp, NULL, "discovery failed for %s: %s; no servers for it", root,
                       strerror(-r));
    return r;
}

static int discover(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings,
                    bool quiet, Trust *trust)
{
    int r;

    memset(out, 0, sizeof(*out));
    out->quiet = quiet;
    out->keep_last_good = true;
    out->root = opt->root;
    out->trust = trust;
    if (opt->root && !opt->config_file && (r = check_root(out, opt->root)) < 0)
        return r;
    if (opt->config_file) {
        config_load_native_file(out, opt->config_file, "mcpd", "mcpd (--config)", CONFIG_LEVEL_USER,
                                settings);
        return 0;
    }
    for (int i = 0; config_sources[i].id; i++) {
        const ConfigSource *s = &config_sources[i];
        if (settings->disabled_providers & (1u << i))
            collect_disabled(s, opt, settings, out);
        else
            s->collect(s, opt, settings, out);
    }
    return 0;
}

/* Discovery for a project goes through its trust gate, loaded fresh each time. */
static int discover_gated(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings,
                          bool quiet)
{
    _cleanup_free_ char *why = NULL;
    Trust trust;
    int r;

    if (!opt->root || opt->config_file)
        return discover(out, opt, settings, quiet, NULL);
    trust_init(&trust, opt->root, &why);
    r = discover(out, opt, settings, quiet, &trust);
    out->trust = NULL;
    if (why)
        config_set_problem(out, NULL, NULL,
                           "project approvals not read (nothing they approve runs): %s", why);
    trust_deinit(&trust);
    return r;
}

int config_discover(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings)
{
    return discover_gated(out, opt, settings, false);
}

int config_discover_quiet(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings)
{
    return discover_gated(out, opt, settings, true);
}

int config_discover_trust(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings,
                          Trust *trust)
{
    return discover(out, opt, settings, true, trust);
}

static int settings_ms(ConfigSet *set, const char *path, yajl_val root, const char *key,
                       int64_t min, int64_t max, int64_t *outp)
{
    yajl_val v = json_get(root, key);

    if (!v)
        return 0;
    if (!YAJL_IS_INTEGER(v) || v->u.number.i < min || v->u.number.i > max) {
        config_set_problem(set, path, NULL, "\"%s\" must be an integer from %lld to %lld", key,
                           (long long)min, (long long)max);
        return -EINVAL;
    }
    *outp = v->u.number.i;
    return 0;
}

static void settings_bool(ConfigSet *set, const char *path, yajl_val root, const char *key,
                          bool *outp)
{
    if (json_get_bool(root, key, outp) == -EINVAL)
        config_set_problem(set, path, NULL, "\"%s\" must be true or false", key);
}

/* disabledProviders: an array of provider ids from config_sources[]. */
static void settings_providers(ConfigSet *set, const char *path, yajl_val root, unsigned *outp)
{
    yajl_val v = json_get(root, "disabledProviders");
    StrBuf known = STRBUF_INIT;
    unsigned mask = 0;

    if (!v)
        return;
    for (int i = 0; config_sources[i].id; i++)
        strbuf_printf(&known, "%s\"%s\"", i ? ", " : "", config_sources[i].id);
    if (!YAJL_IS_ARRAY(v)) {
        config_set_problem(set, path, NULL,
                           "\"disabledProviders\" must be an array of provider ids (%s)",
                           strbuf_str(&known));
        strbuf_deinit(&known);
        return;
    }
    for (size_t i = 0; i < v->u.array.len; i++) {
        yajl_val e = v->u.array.values[i];
        int k = YAJL_IS_STRING(e) ? config_source_index(e->u.string) : -1;
        if (k < 0) {
            _cleanup_free_ char *shown = json_to_string(e);
            config_set_problem(set, path, NULL,
                               "\"disabledProviders[%zu]\": unknown provider %s (known: %s)", i,
                               shown, strbuf_str(&known));
            continue;
        }
        mask |= 1u << k;
    }
    *outp = mask;
    strbuf_deinit(&known);
}

static const char *const settings_keys[] = {
    "enableProjectConfig",  "filterExa",         "disabledProviders", "startupTimeoutMs",
    "maxMessageBytes",      "cacheTtlDays",      "timeout",           "callTimeout",
    "maxCallTimeout",       "idleTimeoutMs",     "reconnect",         "workspaceLingerMs",
    "partialLineTimeoutMs", "maxToolsPerServer", /* the bounds on one server's tool list: config.h
                                                  */
    "maxListPages",         "maxListBytes",      "hotReload",         NULL,
};

/* A typo in a key would silently do nothing: say so. */
static void settings_unknown_keys(ConfigSet *set, const char *path, yajl_val root)
{
    for (size_t i = 0; i < root->u.object.len; i++) {
        const char *k = root->u.object.keys[i];
        bool known = false;
        for (size_t j = 0; settings_keys[j] && !known; j++)
            known = streq(settings_keys[j], k);
        if (!known && k[0] != '$') /* "$schema" and the like are comments */
            config_set_problem(set, path, NULL, "unknown setting \"%s\" (ignored)", k);
    }
}

int settings_load(Settings *s, const char *path, ConfigSet *problems)
{
    _cleanup_json_ yajl_val root = NULL;
    int r = config_read_json(problems, path, CONFIG_LEVEL_USER, &root);

    if (r == -ENOENT)
        return 0;
    if (r < 0)
        return r;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(problems, path, NULL, "the top level must be an object");
        return -EINVAL;
    }
    settings_unknown_keys(problems, path, root);
    settings_bool(problems, path, root, "enableProjectConfig", &s->enable_project_config);
    settings_bool(problems, path, root, "filterExa", &s->filter_exa);
    settings_bool(problems, path, root, "reconnect", &s->reconnect);
    settings_bool(problems, path, root, "hotReload", &s->hot_reload);
    settings_providers(problems, path, root, &s->disabled_providers);
    settings_ms(problems, path, root, "startupTimeoutMs", 0, 600000, &s->startup_timeout_ms);
    settings_ms(problems, path, root, "maxMessageBytes", 4096, INT32_MAX, &s->max_message_bytes);
    settings_ms(problems, path, root, "cacheTtlDays", 0, 3650, &s->cache_ttl_days);
    settings_ms(problems, path, root, "timeout", 0, INT32_MAX, &s->timeout_ms);
    settings_ms(problems, path, root, "callTimeout", 0, INT32_MAX, &s->call_timeout_ms);
    settings_ms(problems, path, root, "maxCallTimeout", 0, INT32_MAX, &s->max_call_timeout_ms);
    settings_ms(problems, path, root, "idleTimeoutMs", 0, INT32_MAX, &s->idle_timeout_ms);
    settings_ms(problems, path, root, "workspaceLingerMs", 0, INT32_MAX, &s->workspace_linger_ms);
    settings_ms(problems, path, root, "partialLineTimeoutMs", 100, INT32_MAX,
                &s->partial_line_timeout_ms);
    /* Raising these is for a user who trusts a server with a very large tool list. */
    settings_ms(problems, path, root, "maxToolsPerServer", 1, 1000000, &s->max_tools_per_server);
    settings_ms(problems, path, root, "maxListPages", 1, 100000, &s->max_list_pages);
    settings_ms(problems, path, root, "maxListBytes", 4096, CONFIG_MAX_LIST_BYTES,
                &s->max_list_bytes);
    return 0;
}
