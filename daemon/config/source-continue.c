// SPDX-License-Identifier: MIT
// source-continue: Continue's <root>/.continue/mcpServers/*.yaml|*.yml|*.json, then
// ~/.continue/config.yaml (or, without it, the older ~/.continue/config.json).
//
// Format: https://docs.continue.dev/customize/deep-dives/mcp (block files in
// .continue/mcpServers/ at the workspace root: YAML {name, version, schema, mcpServers:
// [{name, type: "stdio" | "sse" | "streamable-http", command, args, env, cwd, url,
// requestOptions: {headers}}]}, or JSON files copied from Claude Desktop, Cursor or Cline,
// {"mcpServers": {"name": {...}}}) and https://docs.continue.dev/reference (config.yaml's
// top-level mcpServers list). Block files are read in name order.

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/config-read.h"
#include "daemon/config/source.h"
#include "daemon/config/yaml-tree.h"

/*
 * Block files read from one directory at most. A workspace has a handful; 256 bounds the
 * work a repository full of files can cause, and the rest are reported, not read.
 */
#define CONTINUE_MAX_BLOCK_FILES 256

static bool endswith(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && streq(s + n - m, suffix);
}

static const AgentType continue_types[] = {
    {"stdio", "stdio"},         {"sse", "sse"},   {"streamable-http", "http"},
    {"streamableHttp", "http"}, {"http", "http"}, {NULL, NULL},
};

static const AgentShape continue_shape = {
    .agent = "Continue",
    .drop = (const char *const[]){"name", "requestOptions", "connectionTimeout", NULL},
    .types = continue_types,
    .has_disabled = true,
};

/*
 * Continue's connectionTimeout is in milliseconds and bounds connecting and the first listings
 * (core/context/mcp/MCPConnection.ts: options.timeout, default 20 s), which is what mcpd's
 * "timeout" bounds. Continue accepts any number above 0 and hands it to setTimeout, which cannot
 * wait longer than 2^31 - 1 ms; mcpd's "timeout" has the same ceiling.
 */
#define CONTINUE_MAX_CONNECTION_TIMEOUT_MS INT32_MAX

/*
 * connectionTimeout becomes mcpd's "timeout" (rounded up to a whole millisecond); one Continue
 * would refuse is named in a warning and the default is kept. Returns the note (to free) or NULL.
 */
static char *map_connection_timeout(yajl_val in, yajl_val out)
{
    yajl_val v = json_get(in, "connectionTimeout");

    if (!v || json_get(in, "timeout"))
        return NULL;
    if (!YAJL_IS_DOUBLE(v))
        return xasprintf("\"connectionTimeout\" must be a number of milliseconds, not %s; mcpd "
                         "keeps its default \"timeout\"",
                         json_type_name(v));
    if (!(YAJL_GET_DOUBLE(v) > 0) || YAJL_GET_DOUBLE(v) > CONTINUE_MAX_CONNECTION_TIMEOUT_MS)
        return xasprintf("\"connectionTimeout\" must be above 0 and at most %d milliseconds, not "
                         "%g; mcpd keeps its default \"timeout\"",
                         CONTINUE_MAX_CONNECTION_TIMEOUT_MS, YAJL_GET_DOUBLE(v));
    int64_t ms = (int64_t)YAJL_GET_DOUBLE(v);
    json_object_set(out, "timeout", json_int_new(ms < YAJL_GET_DOUBLE(v) ? ms + 1 : ms));
    return NULL;
}

/* The shape every file shares; requestOptions.headers are the headers sent to a server. */
static int map_shape(yajl_val in, yajl_val *outp, char **whyp)
{
    yajl_val headers = json_get(json_get(in, "requestOptions"), "headers");

    if (source_map_agent(&continue_shape, in, outp, whyp) < 0)
        return -EINVAL;
    if (headers && !json_get(in, "headers"))
        json_object_set(*outp, "headers", json_copy(headers));
    return 0;
}

static int map_continue(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    (void)name;
    if (map_shape(in, outp, whyp) < 0)
        return -EINVAL;
    *whyp = map_connection_timeout(in, *outp);
    return 0;
}

/*
 * A JSON block file is converted by Continue from Claude Desktop's shape, keeping only command,
 * args, env, url, type and headers (config-yaml convertJson.ts): its connectionTimeout is not
 * used there, so not here either, with a warning.
 */
static int map_continue_json(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    (void)name;
    if (map_shape(in, outp, whyp) < 0)
        return -EINVAL;
    if (json_get(in, "connectionTimeout"))
        *whyp = xstrdup("\"connectionTimeout\" is ignored: Continue reads it from YAML files "
                        "only, not from a JSON block file; move the server to a .yaml block to "
                        "set it");
    return 0;
}

/* YAML's list of {name, ...} as an object keyed by name; unnamed entries are problems. */
static yajl_val list_by_name(ConfigSet *set, const char *path, yajl_val list)
{
    yajl_val obj = json_object_new();

    if (config_too_many_servers(set, path, list->u.array.len))
        return obj;
    for (size_t i = 0; i < list->u.array.len; i++) {
        yajl_val e = list->u.array.values[i];
        const char *name = json_get_string(e, "name"), *uses = json_get_string(e, "uses");
        if (uses && (!name || !name[0])) {
            /* A Hub block ("uses: owner/block"): its server is defined on Continue's Hub. */
            config_set_problem(set, path, uses,
                               "\"mcpServers[%zu]\" is the Continue Hub block \"%s\" (uses:), "
                               "which mcpd cannot fetch: write its server out in the file "
                               "(name, command or url) or in mcpd's own mcp.json",
                               i, uses);
            continue;
        }
        if (!name || !name[0]) {
            config_set_problem(set, path, NULL,
                               "\"mcpServers[%zu]\" has no \"name\"; give it one or remove it", i);
            continue;
        }
        json_object_append(obj, name, json_copy(e));
    }
    /* A later entry of a name wins: one sort, where a search per entry was quadratic. */
    json_object_dedupe(obj, JSON_DUP_KEEP_LAST);
    return obj;
}

static void add_servers(ConfigSet *set, const char *path, yajl_val root, const SourceMeta *meta,
                        const Settings *settings)
{
    yajl_val servers = json_get(root, "mcpServers");
    _cleanup_json_ yajl_val named = NULL;
    SourceMeta m = *meta;

    m.path = (char *)path;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL, "the top level must be a mapping with \"mcpServers\"");
        return;
    }
    if (YAJL_IS_ARRAY(servers)) {
        servers = named = list_by_name(set, path, servers);
    } else if (servers && !YAJL_IS_OBJECT(servers) && !YAJL_IS_NULL(servers)) {
        config_set_problem(set, path, NULL,
                           "\"mcpServers\" must be a list of servers (each with a \"name\"), "
                           "not %s",
                           json_type_name(servers));
        return;
    }
    config_add_entries(set, servers, "mcpServers", &m, settings,
                       endswith(path, ".json") ? map_continue_json : map_continue);
}

static void load_file(ConfigSet *set, const char *path, const SourceMeta *meta,
                      const Settings *settings)
{
    _cleanup_free_ char *text = NULL, *why = NULL;
    _cleanup_json_ yajl_val root = NULL;
    size_t len;

    if (endswith(path, ".json")) {
        if (source_read_json(set, path, meta->level, false, &root) == 0)
            add_servers(set, path, root, meta, settings);
        return;
    }
    if (config_read_text(set, path, meta->level, &text, &len) < 0)
        return;
    if (!(root = yaml_tree_parse(text, len, &why))) {
        config_set_problem(set, path, NULL, "%s; fix the file or move it away", why);
        return;
    }
    add_servers(set, path, root, meta, settings);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_block_file(const char *name)
{
    return name[0] != '.' &&
           (endswith(name, ".yaml") || endswith(name, ".yml") || endswith(name, ".json"));
}

static void load_blocks(ConfigSet *set, const char *dir, const SourceMeta *meta,
                        const Settings *settings)
{
    char *names[CONTINUE_MAX_BLOCK_FILES];
    size_t n = 0, over = 0;
    struct dirent *e;
    struct stat st;
    DIR *d;

    /* Like a project's files, its directory is not followed through a link. */
    if (lstat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        config_set_problem(set, dir, NULL, "not read: it is %s, not a directory",
                           paths_type_name(st.st_mode));
        return;
    }
    if (!(d = opendir(dir))) {
        if (errno != ENOENT && errno != ENOTDIR)
            config_set_problem(set, dir, NULL, "cannot list: %s", strerror(errno));
        return;
    }
    while ((e = readdir(d))) {
        if (!is_block_file(e->d_name))
            continue;
        if (n == CONTINUE_MAX_BLOCK_FILES)
            over++;
        else
            names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (over)
        config_set_problem(set, dir, NULL, "%zu more block files than the %d read; merge them",
                           over, CONTINUE_MAX_BLOCK_FILES);
    qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *path = paths_join(dir, names[i]);
        load_file(set, path, meta, settings);
        free(names[i]);
    }
}

/*
 * Continue's config.json (still loaded when there is no config.yaml, and converted by Continue
 * when it moves to YAML): "experimental": {"modelContextProtocolServers": [{"name",
 * "transport": {"type": "stdio" | "sse" | "websocket", "command", "args", "env", "url"},
 * "timeout" (ms; core/index.d.ts ExperimentalMCPOptions), "faviconUrl"}]}. Each becomes a
 * config.yaml-style entry; one without a name (Continue numbered them) is called mcp-<n>, with a
 * warning. mcpd has no WebSocket transport: such an entry is reported and not used.
 */
static void load_legacy_json(ConfigSet *set, const char *path, const SourceMeta *meta,
                             const Settings *settings)
{
    _cleanup_json_ yajl_val root = NULL, named = json_object_new();
    SourceMeta m = *meta;
    static const char *const fields[] = {"type", "command", "args", "env", "url", "headers", NULL};

    m.path = (char *)path;
    if (source_read_json(set, path, meta->level, true, &root) < 0)
        return;
    yajl_val list = json_get(json_get_object(root, "experimental"), "modelContextProtocolServers");
    if (list && !YAJL_IS_ARRAY(list)) {
        config_set_problem(set, path, NULL,
                           "\"experimental.modelContextProtocolServers\" must be a list, not %s",
                           json_type_name(list));
        return;
    }
    /* The bound is asked before any entry is looked at or copied. */
    if (config_too_many_servers(set, path, json_array_len(list)))
        return;
    for (size_t i = 0; i < json_array_len(list); i++) {
        yajl_val e = json_array_at(list, i), transport = json_get(e, "transport");
        const char *given = json_get_string(e, "name"), *type = json_get_string(transport, "type");
        _cleanup_free_ char *name =
            given && given[0] ? xstrdup(given) : xasprintf("mcp-%zu", i + 1);
        if (!given || !given[0])
            config_set_warning(set, path, name,
                               "experimental.modelContextProtocolServers[%zu] has no \"name\"; "
                               "mcpd calls it \"%s\" (give it a name to choose another)",
                               i, name);
        if (!YAJL_IS_OBJECT(transport)) {
            config_add_invalid(set, name, &m,
                               "\"transport\" must be an object with \"type\" and \"command\" "
                               "or \"url\"; fix the entry");
            continue;
        }
        if (type && streq(type, "websocket")) {
            config_add_invalid(set, name, &m,
                               "its WebSocket transport is not one mcpd speaks (stdio, Streamable "
                               "HTTP, SSE); use the server's HTTP endpoint if it has one");
            continue;
        }
        yajl_val flat = json_object_new();
        for (const char *const *f = fields; *f; f++)
            if (json_get(transport, *f))
                json_object_set(flat, *f, json_copy(json_get(transport, *f)));
        /* The entry's own "timeout" (ms) is what config.yaml calls connectionTimeout. */
        yajl_val ms = json_get(e, "connectionTimeout") ? json_get(e, "connectionTimeout")
                                                       : json_get(e, "timeout");
        if (ms)
            json_object_set(flat, "connectionTimeout", json_copy(ms));
        json_object_append(named, name, flat);
    }
    json_object_dedupe(named, JSON_DUP_KEEP_LAST); /* a later entry of a name wins */
    config_add_entries(set, named, "experimental.modelContextProtocolServers", &m, settings,
                       map_continue);
}

void source_continue_collect(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_agent_file("continue");
    _cleanup_free_ char *legacy = source_home_path(".continue/config.json");
    SourceMeta meta = {(char *)src->id, (char *)src->name, NULL, CONFIG_LEVEL_PROJECT, 0};

    if (opt->root) {
        _cleanup_free_ char *dir = paths_join(opt->root, ".continue/mcpServers");
        load_blocks(set, dir, &meta, settings);
    }
    meta.level = CONFIG_LEVEL_USER;
    load_file(set, user, &meta, settings);
    /* Continue reads config.json only while there is no config.yaml. */
    if (access(user, F_OK) < 0)
        load_legacy_json(set, legacy, &meta, settings);
}
