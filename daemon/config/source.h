// SPDX-License-Identifier: MIT
// source: the config provider interface: ConfigSource, each provider's collect function
// (source-*.c) and the helpers they share (source.c); the table in priority order is config.c's.
#pragma once

#include <yajl/yajl_tree.h>

#include "common/strbuf.h"

#include "daemon/config/collect.h"
#include "daemon/config/configset.h"

typedef struct ConfigSource ConfigSource;

/* One provider: collect its servers into set (first wins; invalid entries reported). */
struct ConfigSource {
    const char *id;
    const char *name;
    void (*collect)(const ConfigSource *src, const DiscoverOptions *opt, const Settings *settings,
                    ConfigSet *set);
    /* The EXPAND_* forms (configset.h) this agent leaves as written in its files (0: none). */
    unsigned expand_off;
};

/** The providers, highest priority first, ending with a zeroed entry. */
extern const ConfigSource config_sources[];

/** The index of a provider id in config_sources[], or -1. */
int config_source_index(const char *id);

/** Whether arr (an array, or NULL) holds the string s. */
bool source_names_contain(yajl_val arr, const char *s);
/**
 * config_add_entries for the servers an agent's own lists select: a name in off, or (when only
 * is an array) a name not in only, is skipped with why_off / why_only and masks nothing.
 */
void source_add_selected(ConfigSet *set, yajl_val servers, const char *key, const SourceMeta *src,
                         const Settings *settings, ConfigMapFn map, yajl_val only, yajl_val off,
                         const char *why_only, const char *why_off);

/** A copy of obj without the listed members (NULL-terminated), for the mapping functions. */
yajl_val source_copy_without(yajl_val obj, const char *const *drop);
/** path under the home directory (newly allocated). */
char *source_home_path(const char *rel);
/**
 * An agent's per-project table (Claude Code's projects, Codex's [projects]) is keyed by the
 * directory the agent started in, maybe through a symlink; root is a realpath. The exact key
 * wins, else one that resolves to root. NULL when none.
 */
yajl_val source_project_entry(yajl_val projects, const char *root);
/**
 * The user-level file of the agent of that id in common/agents.c's table, the one home of where
 * each agent keeps its servers (mcpctl setup reads the same); newly allocated.
 */
char *source_agent_file(const char *id);
/** The i-th of the agent's other user-level files (agents_more_file), or NULL past the last. */
char *source_agent_more_file(const char *id, size_t i);
/** Claude Code's .claude.json: in $CLAUDE_CONFIG_DIR when set, else in home (newly allocated). */
char *source_claude_json_path(void);
/** Codex's user config.toml: in $CODEX_HOME when set, else ~/.codex (newly allocated). */
char *source_codex_config_path(void);

/**
 * The usual provider shape: user_path (user level), then <root>/<project_rel> (project level),
 * either may be NULL; the servers sit under the top-level member key.
 */
void source_load_pair(const ConfigSource *src, const DiscoverOptions *opt, const Settings *settings,
                      ConfigSet *set, const char *user_path, const char *project_rel,
                      const char *key, ConfigMapFn map);

/* Provider entry points (one source-*.c each), in priority order. */
void source_native_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set);
void source_claude_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set);
void source_codex_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set);
void source_gemini_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set);
void source_cursor_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set);
void source_windsurf_collect(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set);
void source_vscode_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set);
void source_plain_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set);

/* ---- helpers for the agents' providers (source-agents.c) ---- */

/** path under $XDG_CONFIG_HOME (or ~/.config), newly allocated. */
char *source_config_path(const char *rel);
/**
 * Read and parse a JSON file as its agent does: jsonc allows comments and trailing commas.
 * A duplicate key keeps its last value; errors name the line and column. -ENOENT quietly
 * when missing; other failures are recorded in set.
 */
int source_read_json(ConfigSet *set, const char *path, ConfigLevel level, bool jsonc,
                     yajl_val *outp);
/** config_load_json_servers through source_read_json. */
void source_load_servers(ConfigSet *set, const char *path, const char *key, const SourceMeta *src,
                         const Settings *settings, ConfigMapFn map, bool jsonc);

/* An agent's spelling of a transport and mcpd's ("auto" when the agent probes). */
typedef struct AgentType {
    const char *agent;
    const char *mcpd;
} AgentType;

/* How an agent's entry differs from mcpd's, for source_map_agent. */
typedef struct AgentShape {
    const char *agent;            /* for messages: "Roo Code" */
    const char *const *drop;      /* members with no mcpd meaning (NULL-terminated, or NULL) */
    const char *url_alias;        /* another name for url ("serverUrl"), or NULL */
    const char *type_alias;       /* an older name for type ("transportType"), or NULL */
    const AgentType *types;       /* the agent's transports (ending in {NULL}), or NULL */
    bool has_disabled;            /* "disabled": true means off */
    const char *timeout_seconds;  /* member holding the call timeout in seconds, or NULL */
    int timeout_min, timeout_max; /* the agent's range for it in seconds (0, 0: 0 to a day) */
} AgentShape;

/** Map an entry of an agent's mcpServers-like shape to mcpd's (see AgentShape). */
int source_map_agent(const AgentShape *shape, yajl_val in, yajl_val *outp, char **whyp);
/**
 * Fill the agent's own ${NAME} variables in every string of v (keys untouched): names and
 * values are parallel, names NULL-terminated; a NULL value leaves its variable as written.
 * Takes v and returns the new value.
 */
yajl_val source_fill_vars(yajl_val v, const char *const *names, const char *const *values);
/**
 * An agent's environment reference that reads as empty when the variable is unset (VS Code's
 * "${env:NAME}", OpenCode's "{env:NAME}": open is "${env:" or "{env:") rewritten in every
 * string of v (keys untouched) as mcpd's "${env:NAME:-}", which does the same; the names that are
 * unset in mcpd's environment are appended to unset as "<field>" uses <reference>. Takes v,
 * returns the new value.
 */
yajl_val source_env_or_empty(yajl_val v, const char *open, StrBuf *unset);
/** The map note for the names source_env_or_empty found unset (to free), or NULL for none. */
char *source_env_unset_note(const char *agent, const StrBuf *unset);
/**
 * The entries of dir that may be directories (no dot files, no regular files), sorted by name,
 * at most max into names (each to free); more are reported as "<n> more <what>". 0 when dir
 * cannot be listed.
 */
size_t source_list_subdirs(ConfigSet *set, const char *dir, char **names, size_t max,
                           const char *what);
/**
 * With suffix NULL, source_list_subdirs; else the entries of dir that are not directories and
 * whose names end in suffix (no dot files), sorted by name, likewise.
 */
size_t source_list_dir(ConfigSet *set, const char *dir, const char *suffix, char **names,
                       size_t max, const char *what);
/** The agent's transport names as "a", "b", "c" (for messages; to free). */
char *source_type_list(const AgentType *types);
/**
 * The project file first, then the user's (for agents where the project's entry wins):
 * <root>/<project_rel> (when there is a root) and user_path; either may be NULL.
 */
void source_load_project_then_user(const ConfigSource *src, const DiscoverOptions *opt,
                                   const Settings *settings, ConfigSet *set,
                                   const char *project_rel, const char *user_path, const char *key,
                                   ConfigMapFn map, bool jsonc);

/* The agents' providers (one source-<id>.c each). */
void source_copilot_collect(const ConfigSource *src, const DiscoverOptions *opt,
                            const Settings *settings, ConfigSet *set);
void source_claude_desktop_collect(const ConfigSource *src, const DiscoverOptions *opt,
                                   const Settings *settings, ConfigSet *set);
void source_opencode_collect(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set);
void source_zed_collect(const ConfigSource *src, const DiscoverOptions *opt,
                        const Settings *settings, ConfigSet *set);
void source_cline_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set);
void source_roo_collect(const ConfigSource *src, const DiscoverOptions *opt,
                        const Settings *settings, ConfigSet *set);
void source_kiro_collect(const ConfigSource *src, const DiscoverOptions *opt,
                         const Settings *settings, ConfigSet *set);
void source_antigravity_collect(const ConfigSource *src, const DiscoverOptions *opt,
                                const Settings *settings, ConfigSet *set);
void source_antigravity_cli_collect(const ConfigSource *src, const DiscoverOptions *opt,
                                    const Settings *settings, ConfigSet *set);
void source_goose_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set);
void source_continue_collect(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set);
/**
 * Read ~/.claude.json (or a file in its shape) streaming, with no size cap, keeping only
 * the servers and approval keys (claude-json.h); -ENOENT quietly, failures recorded in set.
 */
int source_read_claude_json(ConfigSet *set, const char *path, yajl_val *outp);
/* Entry mappings of the providers whose shape differs from mcpd's (also used for imported files).
 */
int source_codex_map(const char *name, yajl_val in, yajl_val *outp, char **whyp);
int source_gemini_map(const char *name, yajl_val in, yajl_val *outp, char **whyp);
int source_windsurf_map(const char *name, yajl_val in, yajl_val *outp, char **whyp);
int source_cline_map(const char *name, yajl_val in, yajl_val *outp, char **whyp);
int source_roo_map(const char *name, yajl_val in, yajl_val *outp, char **whyp);
int source_kiro_map(const char *name, yajl_val in, yajl_val *outp, char **whyp);
int source_antigravity_map(const char *name, yajl_val in, yajl_val *outp, char **whyp);
int source_vscode_map(const char *name, yajl_val in, yajl_val *outp, char **whyp);
/**
 * VS Code's servers with the block of the file's top-level "sandbox" given to each entry that
 * has "sandboxEnabled" and no "sandbox" of its own (a new object), or NULL: none to give.
 */
yajl_val source_vscode_with_file_sandbox(yajl_val servers, yajl_val block);
struct ClaudeSettings;
/**
 * Claude Code's plugins the user installed and enabled (user and managed scope; with a project
 * root, also that project's installs and its settings' say), as the settings files read into cs
 * decide: the servers of each one's plugin.json mcpServers and .mcp.json, ${CLAUDE_PLUGIN_ROOT}
 * and ${CLAUDE_PLUGIN_DATA} filled in, each passing Claude Code's MCP policy.
 */
void source_claude_plugins(const ConfigSource *src, const Settings *settings, ConfigSet *set,
                           struct ClaudeSettings *cs);
/* The servers mcpctl setup moved out of agents' files ($XDG_CONFIG_HOME/mcpd/imported/). */
void source_imported_collect(const ConfigSource *src, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *set);
