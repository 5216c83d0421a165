// SPDX-License-Identifier: MIT
// source-agents: what the agents' providers share (reading JSON as each agent does, shapes).

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonc.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/claude-json.h"
#include "daemon/config/config-read.h"
#include "daemon/config/source.h"

/*
 * An agent's timeout in seconds above this is refused: Roo Code caps its own at 3600 and no
 * tool call is worth waiting a day for; it also keeps the conversion to ms far from overflow.
 */
#define SOURCE_MAX_TIMEOUT_SECONDS 86400

char *source_config_path(const char *rel)
{
    _cleanup_free_ char *dir = paths_config_home();

    return paths_join(dir, rel);
}

int source_read_json(ConfigSet *set, const char *path, ConfigLevel level, bool jsonc,
                     yajl_val *outp)
{
    _cleanup_free_ char *text = NULL, *why = NULL;
    size_t len;
    int r = config_read_text(set, path, level, &text, &len);

    if (r < 0)
        return r;
    *outp = jsonc ? jsonc_parse(text, len, &why) : jsonc_parse_strict(text, len, &why);
    if (!*outp) {
        config_set_problem(set, path, NULL, "invalid %s: %s; fix the file or move it away",
                           jsonc ? "JSON (comments and trailing commas are allowed here)" : "JSON",
                           why);
        return -EINVAL;
    }
    return 0;
}

void source_load_servers(ConfigSet *set, const char *path, const char *key, const SourceMeta *src,
                         const Settings *settings, ConfigMapFn map, bool jsonc)
{
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta meta = *src;

    meta.path = (char *)path;
    if (source_read_json(set, path, src->level, jsonc, &root) < 0)
        return;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL, "the top level must be an object with \"%s\", not %s",
                           key, json_type_name(root));
        return;
    }
    config_add_entries(set, json_get(root, key), key, &meta, settings, map);
}

void source_load_project_then_user(const ConfigSource *src, const DiscoverOptions *opt,
                                   const Settings *settings, ConfigSet *set,
                                   const char *project_rel, const char *user_path, const char *key,
                                   ConfigMapFn map, bool jsonc)
{
    SourceMeta meta = {(char *)src->id, (char *)src->name, NULL, CONFIG_LEVEL_PROJECT,
                       src->expand_off};

    if (project_rel && opt->root) {
        _cleanup_free_ char *project = paths_join(opt->root, project_rel);
        source_load_servers(set, project, key, &meta, settings, map, jsonc);
    }
    if (user_path) {
        meta.level = CONFIG_LEVEL_USER;
        source_load_servers(set, user_path, key, &meta, settings, map, jsonc);
    }
}

char *source_type_list(const AgentType *types)
{
    StrBuf sb = STRBUF_INIT;

    for (const AgentType *t = types; t->agent; t++)
        strbuf_printf(&sb, "%s\"%s\"", t == types ? "" : ", ", t->agent);
    return strbuf_detach(&sb, NULL);
}

static int map_type(const AgentShape *shape, yajl_val in, yajl_val out, char **whyp)
{
    const char *key = json_get(in, "type") || !shape->type_alias ? "type" : shape->type_alias;
    yajl_val t = json_get(in, key);

    if (!t || !shape->types)
        return 0;
    if (!YAJL_IS_STRING(t)) {
        *whyp = xasprintf("\"%s\" must be a string", key);
        return -EINVAL;
    }
    for (const AgentType *a = shape->types; a->agent; a++) {
        if (streq(a->agent, t->u.string)) {
            json_object_set(out, "type", json_string_new(a->mcpd));
            return 0;
        }
    }
    _cleanup_free_ char *known = source_type_list(shape->types);
    *whyp = xasprintf("\"%s\": \"%s\" is not a transport %s knows (%s); fix the entry", key,
                      t->u.string, shape->agent, known);
    return -EINVAL;
}

/* The members every shape may rename or drop, besides the agent's own drop list. */
static bool shape_drops(const AgentShape *shape, const char *k)
{
    if ((shape->url_alias && streq(k, shape->url_alias)) ||
        (shape->type_alias && streq(k, shape->type_alias)) ||
        (shape->has_disabled && streq(k, "disabled")) ||
        (shape->timeout_seconds && streq(k, shape->timeout_seconds)))
        return true;
    for (const char *const *d = shape->drop; d && *d; d++)
        if (streq(*d, k))
            return true;
    return false;
}

static int map_scalars(const AgentShape *shape, yajl_val in, yajl_val out, char **whyp)
{
    yajl_val url = shape->url_alias ? json_get(in, shape->url_alias) : NULL;
    yajl_val off = shape->has_disabled ? json_get(in, "disabled") : NULL;
    yajl_val secs = shape->timeout_seconds ? json_get(in, shape->timeout_seconds) : NULL;
    int lo = shape->timeout_min,
        hi = shape->timeout_max ? shape->timeout_max : SOURCE_MAX_TIMEOUT_SECONDS;

    if (url && !YAJL_IS_STRING(url)) {
        *whyp = xasprintf("\"%s\" must be a string (the server's URL)", shape->url_alias);
        return -EINVAL;
    }
    if (url && !json_get(in, "url"))
        json_object_set(out, "url", json_copy(url));
    if (off && !YAJL_IS_TRUE(off) && !YAJL_IS_FALSE(off)) {
        *whyp = xstrdup("\"disabled\" must be true or false");
        return -EINVAL;
    }
    if (YAJL_IS_TRUE(off) && !json_get(in, "enabled"))
        json_object_set(out, "enabled", json_bool_new(false));
    if (secs &&
        (!YAJL_IS_DOUBLE(secs) || !(YAJL_GET_DOUBLE(secs) >= lo) || YAJL_GET_DOUBLE(secs) > hi)) {
        /* An agent with its own range refuses the entry outside it: so does mcpd. */
        *whyp = shape->timeout_max
                    ? xasprintf("\"%s\" must be a number of seconds from %d to %d: %s refuses "
                                "the server otherwise, and so does mcpd; set it in that range",
                                shape->timeout_seconds, lo, hi, shape->agent)
                    : xasprintf("\"%s\" must be a number of seconds from %d to %d",
                                shape->timeout_seconds, lo, hi);
        return -EINVAL;
    }
    if (secs && !json_get(in, "callTimeout"))
        json_object_set(out, "callTimeout", json_int_new((int64_t)(YAJL_GET_DOUBLE(secs) * 1000)));
    return 0;
}

int source_map_agent(const AgentShape *shape, yajl_val in, yajl_val *outp, char **whyp)
{
    yajl_val out = json_object_new();
    int r;

    for (size_t i = 0; i < in->u.object.len; i++) {
        const char *k = in->u.object.keys[i];
        if (!shape_drops(shape, k) && !(shape->types && streq(k, "type")))
            json_object_append(out, k, json_copy(in->u.object.values[i])); /* keys unique */
    }
    if ((r = map_type(shape, in, out, whyp)) < 0 || (r = map_scalars(shape, in, out, whyp)) < 0) {
        json_free(out);
        return r;
    }
    *outp = out;
    return 0;
}

int source_read_claude_json(ConfigSet *set, const char *path, yajl_val *outp)
{
    _cleanup_free_ char *why = NULL;
    int r;

    /* Watched like every file: its changes are weighed by claude_json_changes (daemon.c). */
    config_note_file(set, path);
    r = claude_json_read(path, true, outp, &why);

    if (r == -ENOENT || r == -ENOTDIR)
        return -ENOENT;
    if (r < 0)
        config_set_problem(set, path, NULL, "%s; fix the file or move it away",
                           why ? why : strerror(-r));
    return r;
}

yajl_val source_fill_vars(yajl_val v, const char *const *names, const char *const *values)
{
    if (YAJL_IS_OBJECT(v) || YAJL_IS_ARRAY(v)) {
        size_t n = YAJL_IS_OBJECT(v) ? v->u.object.len : v->u.array.len;
        yajl_val *vals = YAJL_IS_OBJECT(v) ? v->u.object.values : v->u.array.values;
        for (size_t i = 0; i < n; i++)
            vals[i] = source_fill_vars(vals[i], names, values);
        return v;
    }
    if (!YAJL_IS_STRING(v) || !strstr(v->u.string, "${"))
        return v;
    StrBuf sb = STRBUF_INIT;
    for (const char *p = v->u.string; *p;) {
        size_t i = 0;
        for (; names[i]; i++)
            if (values[i] && p[0] == '$' && p[1] == '{' && startswith(p + 2, names[i]) &&
                p[2 + strlen(names[i])] == '}')
                break;
        if (names[i]) {
            strbuf_puts(&sb, values[i]);
            p += strlen(names[i]) + 3;
        } else {
            strbuf_putc(&sb, *p++);
        }
    }
    json_free(v);
    v = json_string_new(strbuf_str(&sb));
    strbuf_deinit(&sb);
    return v;
}

/* One string of source_env_or_empty (where: its field); NULL when it holds no reference. */
static char *env_or_empty_string(const char *s, const char *open, const char *where, StrBuf *unset)
{
    size_t no = strlen(open);
    const char *p, *end;
    StrBuf sb = STRBUF_INIT;

    if (!strstr(s, open))
        return NULL;
    while ((p = strstr(s, open)) && (end = strchr(p + no, '}'))) {
        _cleanup_free_ char *var = xstrndup(p + no, (size_t)(end - p - no));
        strbuf_append(&sb, s, (size_t)(p - s));
        strbuf_printf(&sb, "${env:%s:-}", var);
        if (!getenv(var))
            strbuf_printf(unset, "%s\"%s\" uses %s%s}", unset->len ? ", " : "", where, open, var);
        s = end + 1;
    }
    strbuf_puts(&sb, s);
    return strbuf_detach(&sb, NULL);
}

static yajl_val env_or_empty(yajl_val v, const char *open, const char *where, StrBuf *unset)
{
    if (YAJL_IS_OBJECT(v) || YAJL_IS_ARRAY(v)) {
        bool obj = YAJL_IS_OBJECT(v);
        size_t n = obj ? v->u.object.len : v->u.array.len;
        yajl_val *vals = obj ? v->u.object.values : v->u.array.values;
        for (size_t i = 0; i < n; i++) {
            _cleanup_free_ char *sub = !obj       ? xasprintf("%s[%zu]", where, i)
                                       : where[0] ? xasprintf("%s.%s", where, v->u.object.keys[i])
                                                  : xstrdup(v->u.object.keys[i]);
            vals[i] = env_or_empty(vals[i], open, sub, unset);
        }
        return v;
    }
    _cleanup_free_ char *s =
        YAJL_IS_STRING(v) ? env_or_empty_string(v->u.string, open, where, unset) : NULL;
    if (!s)
        return v;
    json_free(v);
    return json_string_new(s);
}

yajl_val source_env_or_empty(yajl_val v, const char *open, StrBuf *unset)
{
    return env_or_empty(v, open, "", unset);
}

char *source_env_unset_note(const char *agent, const StrBuf *unset)
{
    if (!unset->len)
        return NULL;
    return xasprintf("%s, which is not set in mcpd's environment (not your login shell's): %s "
                     "passes it as empty, and so does mcpd; set it where mcpd starts "
                     "(systemctl --user set-environment NAME=...)",
                     strbuf_str(unset), agent);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t source_list_dir(ConfigSet *set, const char *dir, const char *suffix, char **names,
                       size_t max, const char *what)
{
    size_t n = 0, over = 0, ns = suffix ? strlen(suffix) : 0;
    struct dirent *e;
    DIR *d;

    config_note_listing(set, dir);
    if (!(d = opendir(dir)))
        return 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || (suffix ? e->d_type == DT_DIR : e->d_type == DT_REG) ||
            len < ns || !streq(e->d_name + len - ns, suffix ? suffix : ""))
            continue;
        if (n == max)
            over++;
        else
            names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (over)
        config_set_problem(set, dir, NULL, "%zu more %s than the %zu read; remove some", over, what,
                           max);
    qsort(names, n, sizeof(*names), name_cmp);
    return n;
}

size_t source_list_subdirs(ConfigSet *set, const char *dir, char **names, size_t max,
                           const char *what)
{
    return source_list_dir(set, dir, NULL, names, max, what);
}
