// SPDX-License-Identifier: MIT
// configset: server entries (ServerConfig) and the set discovery builds (ConfigSet): checks,
// problems and skips, ${VAR} expansion, tool filters, the Exa rule, and the JSON mcpd/discover
// shows.

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/redact.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/configset.h"
#include "daemon/config/sandbox-policy.h"

static char *format_va(const char *fmt, va_list ap)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_vprintf(&sb, fmt, ap);
    return strbuf_detach(&sb, NULL);
}

/*
 * The field a message is about, from the shapes mcpd's messages take: after an optional
 * 'Server "<name>": ', a leading '"<field>"', 'unknown field "<field>"' or
 * 'requires "<field>" field'. NULL when the message is about no one field.
 */
static char *problem_field(const char *server, const char *message)
{
    static const char *const lead_ins[] = {"", "unknown field ", "OpenCode's tool switch "};
    const char *m = message, *end;
    _cleanup_free_ char *prefix = server ? xasprintf("Server \"%s\": ", server) : NULL;

    if (prefix && startswith(m, prefix))
        m += strlen(prefix);
    for (size_t i = 0; i < N_ELEMENTS(lead_ins); i++) {
        const char *q = startswith(m, lead_ins[i]) ? m + strlen(lead_ins[i]) : NULL;
        if (q && q[0] == '"' && (end = strchr(q + 1, '"')) && end > q + 1)
            return xstrndup(q + 1, (size_t)(end - q - 1));
    }
    if (startswith(m, "unknown server type "))
        return xstrdup("type");
    if ((m = strstr(m, " requires \"")) && (end = strchr(m + 11, '"')) && end > m + 11 &&
        startswith(end, "\" field"))
        return xstrndup(m + 11, (size_t)(end - m - 11));
    return NULL;
}

/* Room for one more of n items at *arrayp: doubled at 0 and each power of two (linear in all). */
static void grow_doubling(void *arrayp, size_t n, size_t size)
{
    void **a = arrayp;

    if ((n & (n - 1)) == 0)
        *a = xrealloc(*a, (n ? 2 * n : 1) * size);
}

/*
 * Problems kept in a row about one server entry. An entry holds a handful of fields; one with
 * 200 000 unknown fields, or as many unset ${VAR}s, made as many problems and log lines, and a
 * status no client could read. Past the bound one more problem says the rest is not listed.
 */
#define CONFIG_MAX_PROBLEMS_PER_ENTRY 32

/* Whether a problem about server in path is past the bound; the one at the bound says so. */
static bool problem_over_bound(ConfigSet *set, const char *path, const char *server,
                               char **messagep)
{
    const ConfigProblem *last = set->n_problems ? &set->problems[set->n_problems - 1] : NULL;

    if (!server || !last || !streq(last->server, server) || !streq(last->path, path)) {
        set->n_entry_problems = 1;
        return false;
    }
    if (++set->n_entry_problems < CONFIG_MAX_PROBLEMS_PER_ENTRY)
        return false;
    if (set->n_entry_problems > CONFIG_MAX_PROBLEMS_PER_ENTRY) {
        free(*messagep);
        return true;
    }
    free(*messagep);
    *messagep = xasprintf("Server \"%s\": more problems with this entry are not listed (mcpd "
                          "lists %d per entry): fix those above and reload to see the rest",
                          server, CONFIG_MAX_PROBLEMS_PER_ENTRY - 1);
    return false;
}

static void problem_add(ConfigSet *set, const char *path, const char *server, bool warning,
                        char *message)
{
    ConfigProblem *p;

    if (problem_over_bound(set, path, server, &message))
        return;
    grow_doubling(&set->problems, set->n_problems, sizeof(*set->problems));
    p = &set->problems[set->n_problems++];
    p->path = path ? xstrdup(path) : NULL;
    p->server = server ? xstrdup(server) : NULL;
    p->field = problem_field(server, message);
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

    grow_doubling(&set->skipped, set->n_skipped, sizeof(*set->skipped));
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

static void by_name_keep(void *c)
{
    (void)c; /* owned by servers[] */
}

void config_set_deinit(ConfigSet *set)
{
    tdestroy(set->by_name, by_name_keep);
    for (size_t i = 0; i < set->n_servers; i++)
        server_config_free(set->servers[i]);
    free(set->servers);
    for (size_t i = 0; i < set->n_problems; i++) {
        free(set->problems[i].path);
        free(set->problems[i].server);
        free(set->problems[i].field);
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
    for (size_t i = 0; i < set->n_read_files; i++)
        free(set->read_files[i].path);
    free(set->read_files);
    for (size_t i = 0; i < set->n_notes; i++)
        free(set->notes[i].path);
    free(set->notes);
    memset(set, 0, sizeof(*set));
}

void config_set_note_read(ConfigSet *set, const char *path, const struct stat *st)
{
    for (size_t i = 0; i < set->n_read_files; i++)
        if (streq(set->read_files[i].path, path)) {
            set->read_files[i].st = *st;
            return;
        }
    set->read_files = xrealloc(set->read_files, (set->n_read_files + 1) * sizeof(*set->read_files));
    set->read_files[set->n_read_files].path = xstrdup(path);
    set->read_files[set->n_read_files++].st = *st;
}

const struct stat *config_set_read_stat(const ConfigSet *set, const char *path)
{
    for (size_t i = 0; path && i < set->n_read_files; i++)
        if (streq(set->read_files[i].path, path))
            return &set->read_files[i].st;
    return NULL;
}

static int by_name_cmp(const void *a, const void *b)
{
    return strcmp(((const ServerConfig *)a)->name, ((const ServerConfig *)b)->name);
}

bool config_set_stale(const ConfigSet *set)
{
    for (size_t i = 0; i < set->n_notes; i++) {
        const ConfigNote *was = &set->notes[i];
        struct stat now;
        bool found = stat(was->path, &now) == 0;

        /* Gone, come, or another file or size or time than when discovery looked at it. */
        if (found != was->found ||
            (found && (now.st_ino != was->st.st_ino || now.st_size != was->st.st_size ||
                       now.st_mtim.tv_sec != was->st.st_mtim.tv_sec ||
                       now.st_mtim.tv_nsec != was->st.st_mtim.tv_nsec)))
            return true;
    }
    return false;
}

ServerConfig *config_set_find(const ConfigSet *set, const char *name)
{
    ServerConfig key = {.name = (char *)name};
    ServerConfig **node = tfind(&key, &set->by_name, by_name_cmp);

    return node ? *node : NULL;
}

void config_set_add(ConfigSet *set, ServerConfig *c)
{
    grow_doubling(&set->servers, set->n_servers, sizeof(*set->servers));
    set->servers[set->n_servers++] = c;
    /* First wins: a later entry of a name never replaces the one found. */
    xtsearch(c, &set->by_name, by_name_cmp);
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

static bool name_char_plain(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

const char *config_check_name(const char *name)
{
    if (!name[0])
        return "Server name cannot be empty";
    if (strlen(name) > CONFIG_MAX_SERVER_NAME)
        return "Server name is too long (max 100 characters)";
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return "Server name cannot contain control characters";
    return NULL;
}

char *config_plain_name(const char *name)
{
    char *plain;
    const char *p = name;

    while (*p && name_char_plain(*p))
        p++;
    if (!*p)
        return NULL;
    plain = xstrdup(name);
    for (char *q = plain; *q; q++)
        if (!name_char_plain(*q))
            *q = '_';
    return plain;
}

static void source_copy(SourceMeta *dst, const SourceMeta *src)
{
    dst->provider = xstrdup(src->provider ? src->provider : "mcpd");
    dst->provider_name = xstrdup(src->provider_name ? src->provider_name : dst->provider);
    dst->path = src->path ? xstrdup(src->path) : NULL;
    dst->level = src->level;
    dst->expand_off = src->expand_off;
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
    json_free(c->sandbox);
    free(c->auth_type);
    free(c->credential_id);
    free(c->headers_helper);
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
    n->sandbox = json_copy(c->sandbox);
    n->auth_type = c->auth_type ? xstrdup(c->auth_type) : NULL;
    n->credential_id = c->credential_id ? xstrdup(c->credential_id) : NULL;
    n->headers_helper = c->headers_helper ? xstrdup(c->headers_helper) : NULL;
    n->oauth = json_copy(c->oauth);
    source_copy(&n->source, &c->source);
    return n;
}

void server_config_take_origin(ServerConfig *dst, const ServerConfig *from)
{
    if (dst == from)
        return;
    source_deinit(&dst->source);
    source_copy(&dst->source, &from->source);
    json_free(dst->raw);
    dst->raw = json_copy(from->raw);
    /* Not part of the identity (it changes when, not what, runs): the latest wins. */
    dst->start = from->start;
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

int config_parse_start(const char *text, ServerStart *outp)
{
    if (text && streq(text, "lazy"))
        *outp = CONFIG_START_LAZY;
    else if (text && streq(text, "eager"))
        *outp = CONFIG_START_EAGER;
    else
        return -EINVAL;
    return 0;
}

/* "start": "lazy" or "eager"; absent: the settings' default (already set). */
static int take_start(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    yajl_val v = json_get(obj, "start");

    if (!v || YAJL_IS_NULL(v))
        return 0;
    if (config_parse_start(YAJL_IS_STRING(v) ? v->u.string : NULL, &c->start) < 0) {
        strbuf_printf(err, "Server \"%s\": \"start\" must be \"lazy\" or \"eager\"", c->name);
        return -EINVAL;
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
    else if (streq(s, "ws")) {
        /* Claude Code's WebSocket transport (code.claude.com/docs/en/mcp). */
        strbuf_printf(err,
                      "Server \"%s\": unknown server type \"ws\": mcpd does not speak "
                      "WebSocket, so it does not start this server; if the server also serves "
                      "Streamable HTTP or SSE, give that url with \"type\": \"http\" or "
                      "\"sse\", otherwise use it from the agent directly",
                      c->name);
        return -EINVAL;
    } else {
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

/*
 * headersHelper: Claude Code's command whose stdout gives a remote server's headers (resolve.c
 * runs it at connect). Only Claude Code's entries (and mcpd's own, which may copy one) mean it:
 * another agent never runs it, so neither does mcpd.
 */
static int take_headers_helper(ServerConfig *c, yajl_val obj, StrBuf *err, StrBuf *warn)
{
    yajl_val h = json_get(obj, "headersHelper");

    if (!h || YAJL_IS_NULL(h))
        return 0;
    if (!YAJL_IS_STRING(h) || !h->u.string[0]) {
        strbuf_printf(err,
                      "Server \"%s\": \"headersHelper\" must be a command (a non-empty string)",
                      c->name);
        return -EINVAL;
    }
    if (!streq(c->source.provider, "claude") && !streq(c->source.provider, "mcpd"))
        strbuf_printf(warn,
                      "Server \"%s\": \"headersHelper\" is ignored (Claude Code's command that "
                      "prints request headers; %s does not run it, so neither does mcpd)\n",
                      c->name, c->source.provider_name);
    else if (c->type == TRANSPORT_STDIO)
        strbuf_printf(warn,
                      "Server \"%s\": \"headersHelper\" is ignored (it gives the headers of a "
                      "remote server; this one runs a command)\n",
                      c->name);
    else
        c->headers_helper = xstrdup(h->u.string);
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
    "type",         "command",       "args",           "env",       "cwd",
    "url",          "headers",       "enabled",        "reconnect", "timeout",
    "callTimeout",  "idleTimeoutMs", "pingIntervalMs", "auth",      "oauth",
    "enabledTools", "disabledTools", "protocol",       "sandbox",   "start",
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

/*
 * Agents' fields that change how the server is reached and that mcpd does not honour: each is
 * a warning saying what it does and what to write instead (not a "did you mean").
 */
static const char *const unhonoured_fields[][2] = {
    {"sandboxEnabled", "VS Code's switch, read in VS Code's own files only: in this file write "
                       "mcpd's \"sandbox\" (docs/sandbox.md)"},
};

/*
 * Members of an "oauth" object other agents write that mcpd's sign-in (daemon/upstream/oauth.c)
 * does not read, with what to write instead: each is a warning, the rest of the object stands.
 */
static const char *const unhonoured_oauth[][2] = {
    {"authServerMetadataUrl",
     "Claude Code's override of where the authorization server's metadata is: mcpd finds it from "
     "the server (RFC 9728, then RFC 8414); if that fails, give \"oauth.authorizationUrl\" and "
     "\"oauth.tokenUrl\""},
};

static void check_oauth(ServerConfig *c, StrBuf *warn)
{
    for (size_t i = 0; i < N_ELEMENTS(unhonoured_oauth); i++)
        if (json_get(c->oauth, unhonoured_oauth[i][0]))
            strbuf_printf(warn, "Server \"%s\": \"oauth.%s\" is ignored (%s)\n", c->name,
                          unhonoured_oauth[i][0], unhonoured_oauth[i][1]);
}

/* Unknown fields are ignored, with a warning that names them (and the near miss, if any). */
static void check_unknown_fields(ServerConfig *c, yajl_val obj, StrBuf *warn)
{
    for (size_t i = 0; i < obj->u.object.len; i++) {
        const char *k = obj->u.object.keys[i], *best = NULL;
        unsigned best_d = 3; /* a typo is one or two edits away */
        bool unhonoured = false;

        if (in_list(known_fields, N_ELEMENTS(known_fields), k) ||
            in_list(foreign_fields, N_ELEMENTS(foreign_fields), k))
            continue;
        if (streq(k, "headersHelper"))
            continue; /* take_headers_helper says where it is ignored */
        for (size_t j = 0; j < N_ELEMENTS(unhonoured_fields) && !unhonoured; j++) {
            if (streq(unhonoured_fields[j][0], k)) {
                strbuf_printf(warn, "Server \"%s\": \"%s\" (%s) is ignored\n", c->name, k,
                              unhonoured_fields[j][1]);
                unhonoured = true;
            }
        }
        if (unhonoured)
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
    c->idle_timeout_set = json_get(obj, "idleTimeoutMs") != NULL;
    take_ms(c, obj, "pingIntervalMs", &c->ping_interval_ms, warn);
    if ((r = take_strings(c, obj, err)) < 0 || (r = take_type(c, obj, err)) < 0 ||
        (r = take_string_map(c, obj, "env", &c->env, err)) < 0 ||
        (r = take_string_map(c, obj, "headers", &c->headers, err)) < 0 ||
        (r = take_bool(c, obj, "enabled", &c->enabled, err)) < 0 ||
        (r = take_bool(c, obj, "reconnect", &c->reconnect, err)) < 0 ||
        (r = take_start(c, obj, err)) < 0 || (r = take_auth(c, obj, err)) < 0 ||
        (r = server_config_take_protocol(c, obj, err)) < 0 ||
        (r = take_headers_helper(c, obj, err, warn)) < 0 ||
        (r = take_globs(c, obj, "enabledTools", &c->enabled_tools, err)) < 0 ||
        (r = take_globs(c, obj, "disabledTools", &c->disabled_tools, err)) < 0)
        return r;
    check_oauth(c, warn);
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
    StrBuf err = STRBUF_INIT, warn = STRBUF_INIT;
    const char *bad_name = config_check_name(name);
    _cleanup_free_ char *plain = NULL;

    if (bad_name) {
        config_set_problem(set, src->path, name, "%s", bad_name);
        return NULL;
    }
    if ((plain = config_plain_name(name))) {
        /* Served under a name that is safe in tool names, file names and URIs; said once. */
        config_set_warning(set, src->path, plain,
                           "Server \"%s\" is served as \"%s\" (mcpctl commands take that "
                           "name): mcpd names hold only letters, digits, '-', '_' and '.'",
                           name, plain);
        name = plain;
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
    c->start = settings->start;
    c->reconnect = settings->reconnect;
    source_copy(&c->source, src);
    c->allow_commands = streq(src->provider, "mcpd");
    if (fill_fields(c, obj, &err, &warn) < 0 ||
        sandbox_policy_from_json(&c->sandbox, json_get(obj, "sandbox"), settings->sandbox_profiles,
                                 name, &err, &warn) < 0) {
        config_set_problem(set, src->path, name, "%s", strbuf_str(&err));
        strbuf_deinit(&err);
        strbuf_deinit(&warn);
        return server_config_free(c);
    }
    if (c->sandbox && c->type != TRANSPORT_STDIO) {
        /* Nothing of a remote server runs here: there is no process to contain. */
        strbuf_printf(&warn,
                      "Server \"%s\": \"sandbox\" is ignored: only a stdio server's "
                      "process runs in a sandbox\n",
                      name);
        c->sandbox = json_free(c->sandbox);
    }
    add_warnings(set, src, name, &warn);
    strbuf_deinit(&warn);
    if (c->call_timeout_ms > settings->max_call_timeout_ms)
        c->call_timeout_ms = settings->max_call_timeout_ms;
    c->raw = json_copy(written);
    server_config_hash(c, settings);
    return c;
}

/* A member of the identity text: "key": value, with the comma before all but the first. */
static void identity_key(StrBuf *sb, const char *key)
{
    if (sb->len > 1)
        strbuf_putc(sb, ',');
    json_write_string(sb, key, strlen(key));
    strbuf_putc(sb, ':');
}

static void identity_string(StrBuf *sb, const char *key, const char *value)
{
    if (!value)
        return;
    identity_key(sb, key);
    json_write_string(sb, value, strlen(value));
}

/* An object or array, sorted; absent and empty are the same ("env": {} is no env). */
static void identity_json(StrBuf *sb, const char *key, yajl_val v)
{
    if (!v || YAJL_IS_NULL(v) || (YAJL_IS_OBJECT(v) && !v->u.object.len))
        return;
    identity_key(sb, key);
    json_write_sorted(sb, v);
}

/* A tuning value, only when it is not the default every entry gets from the settings. */
static void identity_ms(StrBuf *sb, const char *key, int64_t v, int64_t dflt)
{
    if (v == dflt)
        return;
    identity_key(sb, key);
    strbuf_printf(sb, "%" PRId64, v);
}

/* Whether a value of env or headers is one mcpd's own "!command" or variable-name rule reads. */
static bool has_command_or_name(yajl_val map)
{
    for (size_t i = 0; YAJL_IS_OBJECT(map) && i < map->u.object.len; i++) {
        const char *v =
            YAJL_IS_STRING(map->u.object.values[i]) ? map->u.object.values[i]->u.string : "";
        size_t n = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        if (v[0] == '!' || (n && !v[n] && !(v[0] >= '0' && v[0] <= '9')))
            return true;
    }
    return false;
}

void server_config_hash(ServerConfig *c, const Settings *settings)
{
    static const char *const protocols[] = {"auto", "2026-07-28", "legacy"};
    StrBuf sb = STRBUF_INIT;

    /*
     * What the server is, whoever wrote it and however: the transport as resolved, the values
     * after expansion, env and headers by name, empty and absent alike, and the settings'
     * defaults left out. Two agents' entries that differ only in form ("type": "stdio" given or
     * not, "env": {}, key order, another provider) are one server, so a reload that makes
     * another of them win restarts nothing (issue 38 item 5).
     */
    strbuf_putc(&sb, '{');
    identity_string(&sb, "type", transport_type_name(c->type));
    identity_string(&sb, "command", c->command);
    if (c->n_args) {
        identity_key(&sb, "args");
        strbuf_putc(&sb, '[');
        for (size_t i = 0; i < c->n_args; i++) {
            if (i)
                strbuf_putc(&sb, ',');
            json_write_string(&sb, c->args[i], strlen(c->args[i]));
        }
        strbuf_putc(&sb, ']');
    }
    identity_json(&sb, "env", c->env);
    identity_string(&sb, "cwd", c->cwd);
    identity_string(&sb, "url", c->url);
    identity_json(&sb, "headers", c->headers);
    identity_string(&sb, "auth", c->auth_type);
    identity_string(&sb, "credentialId", c->credential_id);
    identity_string(&sb, "headersHelper", c->headers_helper);
    identity_json(&sb, "oauth", c->oauth);
    if (c->protocol != PROTOCOL_AUTO)
        identity_string(&sb, "protocol", protocols[c->protocol]);
    identity_json(&sb, "enabledTools", c->enabled_tools);
    identity_json(&sb, "disabledTools", c->disabled_tools);
    identity_json(&sb, "sandbox", c->sandbox);
    identity_ms(&sb, "timeout", c->timeout_ms, settings->timeout_ms);
    identity_ms(&sb, "callTimeout", c->call_timeout_ms, settings->call_timeout_ms);
    identity_ms(&sb, "idleTimeoutMs", c->idle_timeout_ms, settings->idle_timeout_ms);
    identity_ms(&sb, "pingIntervalMs", c->ping_interval_ms, 0);
    identity_ms(&sb, "reconnect", c->reconnect, settings->reconnect);
    /* Only mcpd's own files run "!commands" and read variable names: it matters only then. */
    if (c->allow_commands && (has_command_or_name(c->env) || has_command_or_name(c->headers)))
        identity_string(&sb, "commands", "mcpd");
    strbuf_putc(&sb, '}');
    sha256_hex(c->hash, sb.data, sb.len);
    strbuf_deinit(&sb);
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
        if (p->field)
            json_object_set(o, "field", json_string_new(p->field));
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

/* How one config_expand call expands: the forms it fills, the project root, $HOME once. */
typedef struct Expander {
    unsigned forms;
    const char *root;
    char *home;
} Expander;

/* The value of one ${...} body, or NULL when unset and without a default (or not filled). */
static const char *expand_lookup(const char *body, size_t n, Expander *x)
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
    /* VS Code's and Cursor's predefined variables (their variables reference), then the env. */
    bool editor = streq(name, "workspaceFolder") || streq(name, "workspaceFolderBasename") ||
                  streq(name, "pathSeparator") || streq(name, "/") || streq(name, "userHome");
    bool own = startswith(name, EXPAND_MCPD_ENV);
    unsigned form = editor                     ? EXPAND_EDITOR
                    : own                      ? EXPAND_MCPD
                    : startswith(name, "env:") ? EXPAND_ENV
                                               : EXPAND_VAR;
    /* A form the agent does not fill is passed as written, default and all (VS Code: "match"). */
    if (!(x->forms & form))
        return NULL;
    if (streq(name, "workspaceFolder"))
        v = x->root;
    else if (streq(name, "workspaceFolderBasename"))
        v = x->root && strrchr(x->root, '/') ? strrchr(x->root, '/') + 1 : NULL;
    else if (streq(name, "pathSeparator") || streq(name, "/"))
        v = "/";
    else if (streq(name, "userHome"))
        v = x->home ? x->home : (x->home = paths_home());
    else
        v = getenv(own                        ? name + strlen(EXPAND_MCPD_ENV)
                   : startswith(name, "env:") ? name + 4
                                              : name);
    /*
     * A variable set to "" is set: the agents substitute it empty, default or not (Claude Code's
     * envExpansion.ts: envValue !== undefined; Gemini CLI, VS Code, OpenCode likewise).
     */
    if (v)
        return v;
    return dflt; /* points into body: the caller copies up to the closing brace */
}

static char *expand_string(const char *s, Expander *x)
{
    StrBuf sb = STRBUF_INIT;

    for (const char *p = s; *p;) {
        const char *close = NULL;
        if (p[0] == '$' && p[1] == '{' && !(close = strchr(p + 2, '}'))) {
            /* No '}' after here: nothing more expands (looking again for each "${" of the rest
             * made a string of many of them quadratic). */
            strbuf_puts(&sb, p);
            break;
        }
        if (!close || close == p + 2) {
            strbuf_putc(&sb, *p++);
            continue;
        }
        const char *body = p + 2, *v = expand_lookup(body, (size_t)(close - body), x);
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

static yajl_val expand_value(yajl_val v, Expander *x)
{
    yajl_val out;

    if (YAJL_IS_STRING(v)) {
        if (!strstr(v->u.string, "${"))
            return json_string_new(v->u.string);
        out = json_string_new("");
        free(out->u.string);
        out->u.string = expand_string(v->u.string, x);
        return out;
    }
    if (YAJL_IS_OBJECT(v)) {
        out = json_object_new();
        for (size_t i = 0; i < v->u.object.len; i++)
            json_object_append(out, v->u.object.keys[i], expand_value(v->u.object.values[i], x));
        return out;
    }
    if (YAJL_IS_ARRAY(v)) {
        out = json_array_new();
        for (size_t i = 0; i < v->u.array.len; i++)
            json_array_push(out, expand_value(v->u.array.values[i], x));
        return out;
    }
    return json_copy(v);
}

yajl_val config_expand_forms(yajl_val v, const char *root, unsigned forms)
{
    Expander x = {forms, root, NULL};
    yajl_val out = expand_value(v, &x);

    free(x.home);
    return out;
}

yajl_val config_expand(yajl_val v, const char *root)
{
    return config_expand_forms(v, root, EXPAND_ALL | EXPAND_MCPD);
}

unsigned config_source_forms(const SourceMeta *src)
{
    return (EXPAND_ALL & ~src->expand_off) | (src->expand_off & SOURCE_MCPD_REFS ? EXPAND_MCPD : 0);
}

bool config_folder_trusted(const ConfigSet *set, unsigned bit)
{
    return !set->gate || (set->folder_trust & bit);
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
