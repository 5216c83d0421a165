// SPDX-License-Identifier: MIT
// source-vscode: VS Code's <root>/.vscode/mcp.json (top-level "servers", each with a "type"),
// then the user's mcp.json of VS Code, VS Code Insiders and VSCodium (each profile's, and the
// servers an older settings.json still holds).
//
// Format: https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (workspace
// .vscode/mcp.json and the user profile's mcp.json, {"servers": {...}, "inputs": [...]},
// JSONC like every VS Code settings file); the user profile is $XDG_CONFIG_HOME/Code/User
// (Code - Insiders, VSCodium for those builds).

#include <stdlib.h>

#include "common/agents.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/source.h"

/*
 * VS Code's sandbox (its mcpPlatformTypes.ts IMcpSandboxConfiguration, and the "Sandbox
 * configuration" table of the reference above): {"filesystem": {"allowWrite", "denyRead",
 * "denyWrite"}, "network": {"allowedDomains", "deniedDomains"}}, applied when the entry has
 * "sandboxEnabled": true. VS Code also lets the server write its working directory (and ~/.npm,
 * which mcpd's tool caches cover): mcpd's "project-write". mcpd does not filter hosts, so the
 * network stays off and allowedDomains is named in a note; deniedDomains denies nothing more
 * with the network off.
 */
static yajl_val map_sandbox(yajl_val block, StrBuf *notes)
{
    static const char *const fs_keys[] = {"allowWrite", "denyRead", "denyWrite"};
    yajl_val out = json_object_new(), fs = json_get(block, "filesystem"),
             net = json_get(block, "network"), domains = json_get(net, "allowedDomains");

    json_object_set(out, "profile", json_string_new("project-write"));
    for (size_t i = 0; YAJL_IS_OBJECT(fs) && i < fs->u.object.len; i++) {
        bool known = false;
        for (size_t j = 0; j < N_ELEMENTS(fs_keys) && !known; j++)
            known = streq(fs->u.object.keys[i], fs_keys[j]);
        if (known)
            json_object_set(out, fs->u.object.keys[i], json_copy(fs->u.object.values[i]));
        else
            strbuf_printf(notes,
                          "\"sandbox.filesystem.%s\" is not one of VS Code's fields: "
                          "ignored\n",
                          fs->u.object.keys[i]);
    }
    if (json_array_len(domains))
        strbuf_puts(notes, "\"sandbox.network.allowedDomains\" cannot be applied: mcpd does not "
                           "limit a server to named hosts, so its network stays off; to let it "
                           "reach every host, give it mcpd's \"sandbox\": {\"profile\": "
                           "\"project-write-network\"} in ~/.config/mcpd/mcp.json "
                           "(docs/sandbox.md)\n");
    for (size_t i = 0; YAJL_IS_OBJECT(block) && i < block->u.object.len; i++) {
        const char *k = block->u.object.keys[i];
        if (!streq(k, "filesystem") && !streq(k, "network"))
            strbuf_printf(notes, "\"sandbox.%s\" is not one of VS Code's fields: ignored\n", k);
    }
    return out;
}

/*
 * The file VS Code writes is {"inputs": [...], "servers": {"name": {"type": "stdio",
 * "command": ...}}}; the older settings.json shape nests it as {"mcp": {"servers": ...}}.
 * Both are read. ${input:...} prompts cannot be answered by a daemon and stay as written;
 * ${workspaceFolder} expands; envFile is read as VS Code does (config.c). dev is VS Code's own.
 * ${env:NAME} is the variable's value, or empty when it is unset, "as a normal shell does"
 * (VS Code's variableResolver.ts, case 'env'): mcpd's ${env:NAME:-}, with a warning naming it.
 * A bare ${NAME} is no VS Code variable: its resolver returns the match unchanged (the default
 * case), so it is passed as written (the sources' SourceMeta leave EXPAND_VAR off).
 * "sandboxEnabled" and "sandbox" become mcpd's "sandbox" (map_sandbox). Also the mapping of
 * the servers mcpctl setup moved out of VS Code's user files (source-imported.c).
 */
int source_vscode_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    static const char *const drop[] = {"dev", "sandboxEnabled", "sandbox", NULL};
    StrBuf unset = STRBUF_INIT, notes = STRBUF_INIT;
    yajl_val block = json_get(in, "sandbox");
    _cleanup_free_ char *env_note = NULL;

    (void)name;
    *outp = source_env_or_empty(source_copy_without(in, drop), "${env:", &unset);
    env_note = source_env_unset_note("VS Code", &unset);
    if (env_note)
        strbuf_printf(&notes, "%s\n", env_note);
    if (YAJL_IS_TRUE(json_get(in, "sandboxEnabled")))
        json_object_set(*outp, "sandbox", map_sandbox(block, &notes));
    else if (block)
        strbuf_puts(&notes, "\"sandbox\" is ignored without \"sandboxEnabled\": true, as VS "
                            "Code ignores it: the server runs unconfined\n");
    strbuf_deinit(&unset);
    *whyp = notes.len ? strbuf_detach(&notes, NULL) : NULL;
    strbuf_deinit(&notes);
    return 0;
}

/*
 * VS Code's code reads "sandbox" at the top of an mcp.json, for all its servers
 * (mcpResourceScannerService.ts, IScannedMcpServers.sandbox); its reference shows it in an
 * entry. Both are read: an entry's own wins.
 */
yajl_val source_vscode_with_file_sandbox(yajl_val servers, yajl_val block)
{
    yajl_val copy;

    if (!YAJL_IS_OBJECT(block) || !YAJL_IS_OBJECT(servers))
        return NULL;
    copy = json_copy(servers);
    for (size_t i = 0; i < copy->u.object.len; i++) {
        yajl_val e = copy->u.object.values[i];
        if (YAJL_IS_OBJECT(e) && json_get(e, "sandboxEnabled") && !json_get(e, "sandbox"))
            json_object_set(e, "sandbox", json_copy(block));
    }
    return copy;
}

/* The servers of one VS Code file (its "servers", or settings.json's "mcp.servers"). */
static void add_servers(ConfigSet *set, yajl_val file, yajl_val servers, const char *key,
                        const SourceMeta *meta, const Settings *settings)
{
    _cleanup_json_ yajl_val given =
        source_vscode_with_file_sandbox(servers, json_get(file, "sandbox"));

    config_add_entries(set, given ? given : servers, key, meta, settings, source_vscode_map);
}

/* A user's mcp.json (the default profile's, or another's). */
static void load_file(ConfigSet *set, const char *path, const SourceMeta *src,
                      const Settings *settings)
{
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta meta = *src;

    meta.path = (char *)path;
    if (source_read_json(set, path, src->level, true, &root) < 0)
        return;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL,
                           "the top level must be an object with \"servers\", not %s",
                           json_type_name(root));
        return;
    }
    add_servers(set, root, json_get(root, "servers"), "servers", &meta, settings);
}

/*
 * Profiles read per VS Code build at most: users keep a handful; the bound keeps a directory
 * full of entries from costing more than a few reads, and the rest are reported.
 */
#define VSCODE_MAX_PROFILES 64

/*
 * Each other profile's mcp.json (<build>/User/profiles/<id>/mcp.json; VS Code gives every
 * profile its own), in directory name order, after the default profile's: a window uses one
 * profile, mcpd serves them all, the default profile's entry of a name winning.
 */
static void load_profiles(const char *user_dir, const SourceMeta *meta, const Settings *settings,
                          ConfigSet *set)
{
    _cleanup_free_ char *dir = paths_join(user_dir, "profiles");
    char *names[VSCODE_MAX_PROFILES];
    size_t n = source_list_subdirs(set, dir, names, VSCODE_MAX_PROFILES, "profiles");

    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *rel = xasprintf("%s/mcp.json", names[i]);
        _cleanup_free_ char *path = paths_join(dir, rel);
        load_file(set, path, meta, settings);
        free(names[i]);
    }
}

/*
 * Before VS Code 1.102 the user's servers sat in settings.json under "mcp": {"servers": ...};
 * VS Code moves them to mcp.json when it next starts, so until then they are read from there,
 * after mcp.json's (whose entry of a name wins).
 */
static void load_settings_servers(const char *user_dir, const SourceMeta *meta,
                                  const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *path = paths_join(user_dir, "settings.json");
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta m = *meta;

    m.path = path;
    if (source_read_json(set, path, CONFIG_LEVEL_USER, true, &root) < 0 || !YAJL_IS_OBJECT(root))
        return;
    add_servers(set, json_get_object(root, "mcp"),
                json_get(json_get_object(root, "mcp"), "servers"), "mcp.servers", &m, settings);
}

/*
 * For each VS Code build (agents_vscode_builds), in that order: the default profile's mcp.json,
 * the servers still in its settings.json, then the other profiles' mcp.json.
 */
static void load_user_files(const ConfigSource *src, const Settings *settings, ConfigSet *set)
{
    SourceMeta meta = {(char *)src->id, (char *)src->name, NULL, CONFIG_LEVEL_USER, EXPAND_VAR};

    for (const char *const *d = agents_vscode_builds; *d; d++) {
        _cleanup_free_ char *rel = xasprintf("%s/User", *d);
        _cleanup_free_ char *user_dir = source_config_path(rel);
        _cleanup_free_ char *path = paths_join(user_dir, "mcp.json");
        load_file(set, path, &meta, settings);
        load_settings_servers(user_dir, &meta, settings, set);
        load_profiles(user_dir, &meta, settings, set);
    }
}

void source_vscode_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *path = opt->root ? paths_join(opt->root, ".vscode/mcp.json") : NULL;
    _cleanup_json_ yajl_val root = NULL;
    SourceMeta meta = {(char *)src->id, (char *)src->name, path, CONFIG_LEVEL_PROJECT, EXPAND_VAR};
    yajl_val servers, file;

    if (!path || source_read_json(set, path, CONFIG_LEVEL_PROJECT, true, &root) < 0)
        goto user;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(set, path, NULL, "the top level must be an object with \"servers\"");
        goto user;
    }
    servers = json_get(root, "servers");
    file = root;
    if (!servers) {
        file = json_get_object(root, "mcp");
        servers = json_get(file, "servers");
    }
    add_servers(set, file, servers, "servers", &meta, settings);
user:
    load_user_files(src, settings, set);
}
