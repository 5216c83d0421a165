// SPDX-License-Identifier: MIT
// claude-policy: Claude Code's settings files as discovery needs them: which plugins are on, and
// the MCP server policy an administrator (or the user) set in them.
#pragma once

#include <stdbool.h>

#include <yajl/yajl_tree.h>

#include "daemon/config/configset.h"

/* Claude Code's settings files, strongest first (code.claude.com/docs/en/settings, precedence). */
typedef enum ClaudeScopeId {
    CLAUDE_SCOPE_MANAGED, /* /etc/claude-code/managed-settings.json */
    CLAUDE_SCOPE_LOCAL,   /* <root>/.claude/settings.local.json */
    CLAUDE_SCOPE_PROJECT, /* <root>/.claude/settings.json */
    CLAUDE_SCOPE_USER,    /* <claude dir>/settings.json */
    CLAUDE_N_SCOPES,
} ClaudeScopeId;

typedef struct ClaudeScope {
    char *path;    /* NULL: not looked for (no project) */
    yajl_val root; /* the parsed object, or NULL (missing or broken) */
    bool broken;   /* exists but could not be read or is not an object (reported) */
} ClaudeScope;

/* Where a Claude Code server comes from, for the policy's rules. */
typedef enum ClaudeOrigin {
    CLAUDE_ORIGIN_USER,     /* ~/.claude.json or <root>/.mcp.json: the user's or project's own */
    CLAUDE_ORIGIN_PLUGIN,   /* a plugin's plugin.json or .mcp.json */
    CLAUDE_ORIGIN_MANAGED,  /* managed-mcp.json: the organization's, unless it uses ${VAR} */
    CLAUDE_ORIGIN_PROVIDED, /* managedMcpServers of the managed settings: the organization's */
} ClaudeOrigin;

/*
 * Plugin seed directories read from $CLAUDE_CODE_PLUGIN_SEED_DIR at most: an image has one, a
 * layered one (base, organization, team) a few; more are reported and left out.
 */
#define CLAUDE_MAX_SEEDS 16

typedef struct ClaudeSettings {
    char *dir;                     /* $CLAUDE_CONFIG_DIR, else ~/.claude */
    char *plugins;                 /* $CLAUDE_CODE_PLUGIN_CACHE_DIR, else <dir>/plugins */
    char *seeds[CLAUDE_MAX_SEEDS]; /* $CLAUDE_CODE_PLUGIN_SEED_DIR, split at ':', in order */
    size_t n_seeds;
    const char *root;
    ClaudeScope scopes[CLAUDE_N_SCOPES];
    bool strict_mcp; /* strictPluginOnlyCustomization locks the "mcp" surface */
    /*
     * The project's own files (.claude/settings.json, settings.local.json) may set the MCP
     * allow and deny lists: only once the user accepted Claude Code's trust dialog for the
     * folder, as Claude Code ignores a folder's settings before (config_folder_trusted).
     */
    bool project_lists;
    yajl_val provided_urls; /* URLs of the managedMcpServers loaded (array, owned), or NULL */
    yajl_val managed_parts; /* each managed file read, by path: base, then fragments (owned) */
} ClaudeSettings;

/**
 * Read Claude Code's settings files for a discovery of root (NULL: user level only); problems
 * (a broken file, a key of the wrong type) are recorded in set. Deinit with
 * claude_settings_deinit.
 */
void claude_settings_load(ClaudeSettings *cs, ConfigSet *set, const char *root);
/** Release; safe on a zeroed value. */
void claude_settings_deinit(ClaudeSettings *cs);
/** Claude Code's directory: $CLAUDE_CONFIG_DIR, else ~/.claude (newly allocated). */
char *claude_config_dir(void);
/** The managed settings file: $MCPD_CLAUDE_MANAGED_SETTINGS, ... (see the .c; to free). */
char *claude_managed_settings_path(void);
/**
 * Claude Code's managed settings: the file at path, then each *.json of the managed-settings.d
 * directory beside it (no dot files), in name order, merged over it as Claude Code merges
 * settings (objects key by key, lists joined without repeats, other values replaced). A
 * fragment that cannot be read or is not an object is a problem and is left out. -ENOENT when
 * neither the file nor a fragment exists; other failures of the file are recorded in set.
 * partsp (may be NULL): each file read, by path, so that a rule can name its own file.
 */
int claude_managed_read(ConfigSet *set, const char *path, yajl_val *outp, yajl_val *partsp);

/**
 * Whether Claude Code's policy keeps the server name (entry as written, agent variables
 * already filled) from loading: deniedMcpServers of any file, allowedMcpServers (the managed
 * file's alone with allowManagedMcpServersOnly), strictPluginOnlyCustomization. *whyp: the
 * reason (to free) when it does.
 */
bool claude_policy_blocks(const ClaudeSettings *cs, const char *name, yajl_val entry,
                          ClaudeOrigin origin, char **whyp);
/**
 * servers (an object) without the entries the policy blocks, each of which becomes a problem
 * and a skip naming the rule (it masks nothing). Returns a new object, or NULL when servers is
 * not an object.
 */
yajl_val claude_policy_filter(ClaudeSettings *cs, ConfigSet *set, yajl_val servers,
                              const SourceMeta *src, ClaudeOrigin origin);
/**
 * The managedMcpServers of the managed settings that pass Claude Code's checks (remote, https,
 * nothing to run, no ${VAR}); each refused entry is a problem. A new object, or NULL.
 */
yajl_val claude_managed_servers(ClaudeSettings *cs, ConfigSet *set);
/** Whether any string in v (keys aside) holds needle. */
bool claude_value_holds(yajl_val v, const char *needle);
