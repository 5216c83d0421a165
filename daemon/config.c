// SPDX-License-Identifier: MIT
// config: server configurations, daemon settings and the discovery driver over config sources.

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config.h"
#include "daemon/source.h"

/* A config file larger than this is not a config file; refuse rather than slurp it. */
#define CONFIG_MAX_FILE_BYTES (4u * 1024u * 1024u)

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
        .reconnect = true,
    };
}

void config_set_problem(ConfigSet *set, const char *path, const char *server, const char *fmt, ...)
{
    ConfigProblem *p;
    StrBuf sb = STRBUF_INIT;
    va_list ap;

    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    set->problems = xrealloc(set->problems, (set->n_problems + 1) * sizeof(*set->problems));
    p = &set->problems[set->n_problems++];
    p->path = path ? xstrdup(path) : NULL;
    p->server = server ? xstrdup(server) : NULL;
    p->message = strbuf_detach(&sb, NULL);
    log_full(LOG_WARNING, server, "config", "%s: %s", path ? path : "config", p->message);
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
    free(c->source.provider);
    free(c->source.provider_name);
    free(c->source.path);
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

static int take_ms(ServerConfig *c, yajl_val obj, const char *field, int64_t *outp, StrBuf *err)
{
    yajl_val v = json_get(obj, field);

    if (!v || YAJL_IS_NULL(v))
        return 0;
    if (!YAJL_IS_INTEGER(v) || v->u.number.i < 0 || v->u.number.i > INT32_MAX) {
        strbuf_printf(err, "Server \"%s\": \"%s\" must be a non-negative number of milliseconds",
                      c->name, field);
        return -EINVAL;
    }
    *outp = v->u.number.i;
    return 0;
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

/* The seed's validateServerConfig messages (reference/seed-origin.md 2.1). */
static int validate(ServerConfig *c, StrBuf *err)
{
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

static int fill_fields(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    int r;

    if ((r = take_strings(c, obj, err)) < 0 || (r = take_type(c, obj, err)) < 0 ||
        (r = take_string_map(c, obj, "env", &c->env, err)) < 0 ||
        (r = take_string_map(c, obj, "headers", &c->headers, err)) < 0 ||
        (r = take_bool(c, obj, "enabled", &c->enabled, err)) < 0 ||
        (r = take_bool(c, obj, "reconnect", &c->reconnect, err)) < 0 ||
        (r = take_ms(c, obj, "timeout", &c->timeout_ms, err)) < 0 ||
        (r = take_ms(c, obj, "callTimeout", &c->call_timeout_ms, err)) < 0 ||
        (r = take_ms(c, obj, "idleTimeoutMs", &c->idle_timeout_ms, err)) < 0 ||
        (r = take_ms(c, obj, "pingIntervalMs", &c->ping_interval_ms, err)) < 0)
        return r;
    return validate(c, err);
}

ServerConfig *server_config_from_json(const char *name, yajl_val obj, const SourceMeta *src,
                                      const Settings *settings, ConfigSet *set)
{
    ServerConfig *c;
    StrBuf err = STRBUF_INIT, text = STRBUF_INIT;
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
    if (fill_fields(c, obj, &err) < 0) {
        config_set_problem(set, src->path, name, "%s", strbuf_str(&err));
        strbuf_deinit(&err);
        return server_config_free(c);
    }
    if (c->call_timeout_ms > settings->max_call_timeout_ms)
        c->call_timeout_ms = settings->max_call_timeout_ms;
    c->raw = json_copy(obj);
    json_write_sorted(&text, c->raw);
    sha256_hex(c->hash, text.data, text.len);
    strbuf_deinit(&text);
    return c;
}

static int read_file(const char *path, char **textp, char **whyp)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    StrBuf sb = STRBUF_INIT;
    struct stat st;

    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        *whyp = xstrdup("not a regular file");
        return -EINVAL;
    }
    if ((uint64_t)st.st_size > CONFIG_MAX_FILE_BYTES) {
        *whyp = xasprintf("file is larger than %u bytes", CONFIG_MAX_FILE_BYTES);
        return -EFBIG;
    }
    for (;;) {
        strbuf_reserve(&sb, 8192);
        ssize_t n = read(fd, sb.data + sb.len, sb.cap - sb.len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int r = -errno;
            *whyp = xasprintf("cannot read: %s", strerror(-r));
            strbuf_deinit(&sb);
            return r;
        }
        if (n == 0)
            break;
        sb.len += (size_t)n;
        sb.data[sb.len] = '\0';
        if (sb.len > CONFIG_MAX_FILE_BYTES) {
            *whyp = xasprintf("file is larger than %u bytes", CONFIG_MAX_FILE_BYTES);
            strbuf_deinit(&sb);
            return -EFBIG;
        }
    }
    *textp = strbuf_detach(&sb, NULL);
    return 0;
}

/**
 * Read and parse a JSON config file. A missing file returns -ENOENT quietly; every other
 * failure is recorded in set with the path.
 */
int config_read_json(ConfigSet *set, const char *path, yajl_val *outp)
{
    _cleanup_free_ char *text = NULL, *why = NULL;
    int r = read_file(path, &text, &why);

    if (r == -ENOENT || r == -ENOTDIR)
        return -ENOENT;
    if (r < 0) {
        config_set_problem(set, path, NULL, "%s", why ? why : strerror(-r));
        return r;
    }
    *outp = json_parse(text, &why);
    if (!*outp) {
        config_set_problem(set, path, NULL, "invalid JSON: %s; fix the file or move it away", why);
        return -EINVAL;
    }
    return 0;
}

void config_add_entries(ConfigSet *set, yajl_val servers, const SourceMeta *src,
                        const Settings *settings)
{
    if (!servers || YAJL_IS_NULL(servers))
        return;
    if (!YAJL_IS_OBJECT(servers)) {
        config_set_problem(set, src->path, NULL, "\"mcpServers\" must be an object, not %s",
                           json_type_name(servers));
        return;
    }
    for (size_t i = 0; i < servers->u.object.len; i++) {
        const char *name = servers->u.object.keys[i];
        ServerConfig *c, *prev = config_set_find(set, name);

        c = server_config_from_json(name, servers->u.object.values[i], src, settings, set);
        if (!c)
            continue; /* invalid entries are reported and never mask lower ones */
        if (prev) {
            log_full(LOG_DEBUG, name, "config", "%s: shadowed by %s", src->path,
                     prev->source.path ? prev->source.path : prev->source.provider_name);
            server_config_free(c);
            continue;
        }
        config_set_add(set, c);
    }
}

void config_load_native_file(ConfigSet *set, const char *path, const char *provider,
                             const char *provider_name, ConfigLevel level, const Settings *settings)
{
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta src = {(char *)provider, (char *)provider_name, (char *)path, level};

    if (config_read_json(set, path, &root) < 0)
        return;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL, "the top level must be an object with \"mcpServers\"");
        return;
    }
    config_add_entries(set, json_get(root, "mcpServers"), &src, settings);
}

/* Priority order: DESIGN section 6. */
const ConfigSource config_sources[] = {
    {"mcpd", "mcpd", source_native_collect},
    {NULL, NULL, NULL},
};

int config_discover(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings)
{
    memset(out, 0, sizeof(*out));
    if (opt->config_file) {
        config_load_native_file(out, opt->config_file, "mcpd", "mcpd (--config)", CONFIG_LEVEL_USER,
                                settings);
        return 0;
    }
    for (const ConfigSource *s = config_sources; s->id; s++)
        s->collect(s, opt, settings, out);
    return 0;
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

int settings_load(Settings *s, const char *path, ConfigSet *problems)
{
    _cleanup_json_ yajl_val root = NULL;
    int r = config_read_json(problems, path, &root);

    if (r == -ENOENT)
        return 0;
    if (r < 0)
        return r;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(problems, path, NULL, "the top level must be an object");
        return -EINVAL;
    }
    settings_bool(problems, path, root, "enableProjectConfig", &s->enable_project_config);
    settings_bool(problems, path, root, "reconnect", &s->reconnect);
    settings_ms(problems, path, root, "startupTimeoutMs", 0, 600000, &s->startup_timeout_ms);
    settings_ms(problems, path, root, "maxMessageBytes", 4096, INT32_MAX, &s->max_message_bytes);
    settings_ms(problems, path, root, "cacheTtlDays", 0, 3650, &s->cache_ttl_days);
    settings_ms(problems, path, root, "timeout", 0, INT32_MAX, &s->timeout_ms);
    settings_ms(problems, path, root, "callTimeout", 0, INT32_MAX, &s->call_timeout_ms);
    settings_ms(problems, path, root, "maxCallTimeout", 0, INT32_MAX, &s->max_call_timeout_ms);
    settings_ms(problems, path, root, "idleTimeoutMs", 0, INT32_MAX, &s->idle_timeout_ms);
    return 0;
}
