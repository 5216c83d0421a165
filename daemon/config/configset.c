// SPDX-License-Identifier: MIT
// configset: the config model: server entries (ServerConfig) and the set discovery gathers them
// in (ConfigSet), with the problems and skips it records.

#include <search.h>
#include <stdarg.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/configset.h"

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

bool config_folder_trusted(const ConfigSet *set, unsigned bit)
{
    return !set->gate || (set->folder_trust & bit);
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

static void source_copy(SourceMeta *dst, const SourceMeta *src)
{
    dst->provider = xstrdup(src->provider ? src->provider : "mcpd");
    dst->provider_name = xstrdup(src->provider_name ? src->provider_name : dst->provider);
    dst->path = src->path ? xstrdup(src->path) : NULL;
    dst->level = src->level;
    dst->expand_off = src->expand_off;
}

ServerConfig *server_config_new(const char *name, const SourceMeta *src, const Settings *settings)
{
    ServerConfig *c = xcalloc(1, sizeof(*c));

    c->name = xstrdup(name);
    c->enabled = true;
    c->timeout_ms = settings->timeout_ms;
    c->call_timeout_ms = settings->call_timeout_ms;
    c->idle_timeout_ms = settings->idle_timeout_ms;
    c->start = settings->start;
    c->reconnect = settings->reconnect;
    source_copy(&c->source, src);
    return c;
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
