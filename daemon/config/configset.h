// SPDX-License-Identifier: MIT
// configset: the config model every config module shares: server entries (ServerConfig), the
// set discovery gathers them in (ConfigSet) with its problems and skips, and the settings.
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include <yajl/yajl_tree.h>

#include "common/hash.h"

typedef enum TransportType {
    TRANSPORT_STDIO,
    TRANSPORT_HTTP,
    TRANSPORT_SSE,
    TRANSPORT_AUTO, /* a url without a type: probe Streamable HTTP, fall back to SSE */
} TransportType;

/* Which MCP protocol era a server is spoken to in (the "protocol" field). */
typedef enum ProtocolEra {
    PROTOCOL_AUTO,   /* probe server/discover, fall back to initialize */
    PROTOCOL_MODERN, /* 2026-07-28: stateless, per-request _meta */
    PROTOCOL_LEGACY, /* 2024-11-05 .. 2025-11-25: initialize and a session */
} ProtocolEra;

typedef enum ConfigLevel {
    CONFIG_LEVEL_USER,
    CONFIG_LEVEL_PROJECT,
} ConfigLevel;

/*
 * The ${...} forms config_expand fills in. Each agent fills only its own (ConfigSource's
 * expand_off: Codex and Zed none, VS Code and Cursor no bare ${VAR}, ...); the others stay as
 * written, as that agent passes them.
 */
enum {
    EXPAND_VAR = 1u << 0,    /* ${VAR}, ${VAR:-default} (Claude Code, Gemini CLI, mcpd) */
    EXPAND_ENV = 1u << 1,    /* ${env:VAR} (VS Code, Cursor, Windsurf, Cline) */
    EXPAND_EDITOR = 1u << 2, /* ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome},
                                ${pathSeparator}, ${/} (VS Code's and Cursor's predefined ones) */
    EXPAND_ALL = EXPAND_VAR | EXPAND_ENV | EXPAND_EDITOR,
    /*
     * ${mcpd:env:VAR}: no agent's form, written by mcpd's own mappings (Codex's env_vars,
     * env_http_headers, bearer_token_env_var) so the entry as shown holds no secret; always
     * filled, whatever the agent's forms.
     */
    EXPAND_MCPD = 1u << 3,
};
#define EXPAND_MCPD_ENV "mcpd:env:"
/*
 * Not a form, a mark in SourceMeta.expand_off: the source's mapping writes ${mcpd:env:NAME}
 * (mcpd's own files, Codex's env_vars), so that form is filled there. In any other agent's file
 * it is text the agent passes on as written; filling it would let a repository's file have mcpd
 * send any variable of the user's (a token, in a header).
 */
#define SOURCE_MCPD_REFS (1u << 8)

/* Where a server entry came from (the seed's SourceMeta). */
typedef struct SourceMeta {
    char *provider;      /* provider id, e.g. "mcpd" */
    char *provider_name; /* display name, e.g. "mcpd (user)" */
    char *path;          /* the file */
    ConfigLevel level;
    /*
     * EXPAND_* forms its agent leaves as written (0: it fills them all), and SOURCE_MCPD_REFS
     * when its mapping writes ${mcpd:env:NAME} references, the only case that form is filled.
     */
    unsigned expand_off;
} SourceMeta;

/*
 * When a stdio server starts (docs/processes.md, "On demand"): lazy ones whose tools are in the
 * cache wait for their first call; eager ones start with mcpd and stay up.
 */
typedef enum ServerStart {
    CONFIG_START_LAZY,
    CONFIG_START_EAGER,
} ServerStart;

typedef struct ServerConfig {
    char *name;
    TransportType type;
    char *command;
    char **args; /* n_args strings */
    size_t n_args;
    yajl_val env; /* object of string values, or NULL */
    char *cwd;
    char *url;
    yajl_val headers; /* object of string values, or NULL */
    bool enabled;
    int64_t timeout_ms;       /* handshake and first tools/list */
    int64_t call_timeout_ms;  /* tools/call, reset by progress */
    int64_t idle_timeout_ms;  /* 0: never stop an idle server */
    bool idle_timeout_set;    /* idleTimeoutMs written in the entry (an eager one then stops) */
    ServerStart start;        /* "start": lazy or eager (the settings' default) */
    int64_t ping_interval_ms; /* 0: no health pings */
    bool reconnect;
    ProtocolEra protocol;
    char *auth_type;      /* auth.type ("oauth", "apikey"), or NULL */
    char *credential_id;  /* auth.credentialId: a key of the credential store, or NULL */
    char *headers_helper; /* Claude Code's headersHelper: a shell command printing headers */
    yajl_val oauth; /* the "oauth" sign-in options (daemon/upstream/oauth.c checks them), or NULL */
    yajl_val raw;   /* the entry as written (before ${VAR} expansion), for display */
    bool allow_commands; /* "!cmd" values run: only in mcpd's own files (other agents: literal) */
    yajl_val enabled_tools;  /* enabledTools: array of globs; only matching tools, or NULL: all */
    yajl_val disabled_tools; /* disabledTools: array of globs never shown, or NULL */
    yajl_val sandbox;        /* the policy it runs under (sandbox-policy.h), or NULL: unconfined */
    /*
     * The server's identity (server_config_hash): over what it runs or reaches, after expansion,
     * whatever the form it is written in. A changed variable is a changed server; "type":
     * "stdio" added is not. The tool cache and the era are kept by it.
     */
    char hash[2 * SHA256_DIGEST_SIZE + 1];
    SourceMeta source;
} ServerConfig;

/* A discovery problem: the file, the server (may be NULL) and what is wrong. */
typedef struct ConfigProblem {
    char *path;
    char *server;
    char *field; /* the field at fault, as the message quotes it ("args[2]", "env.KEY"), or NULL */
    char *message;
    bool warning; /* noted, nothing refused (an unknown field, a bad optional value ignored) */
} ConfigProblem;

/* An entry discovery saw and did not use, and why (shadowed, filtered, invalid, ...). */
typedef struct ConfigSkip {
    char *name;
    SourceMeta source;
    char *reason;
} ConfigSkip;

/*
 * A file discovery read, with the fstat of the descriptor it was read from: the trust gate checks
 * who owns the file whose bytes it is judging, not whatever the path names a moment later.
 */
typedef struct ConfigFileStat {
    char *path;
    struct stat st;
} ConfigFileStat;

/*
 * One entry as the gate sees it: as written, before anything in it is expanded, interpreted or
 * run. Its envFile is read once, before the gate: the bytes approved are the bytes the server
 * gets.
 */
typedef struct ConfigGateEntry {
    const char *name;
    yajl_val written; /* the entry as the file has it (mapped to mcpd's shape), unexpanded */
    const SourceMeta *src;
    const char *env_file; /* the envFile path read (a stdio entry's), or NULL: none */
    const char *env_text; /* what it held, or NULL: missing or unreadable */
    size_t env_len;
} ConfigGateEntry;

struct ConfigSet;
/* Whether an entry may join set; a false answer has recorded why in set. */
typedef bool (*ConfigGateFn)(void *ctx, struct ConfigSet *set, const ConfigGateEntry *e);

/*
 * The agents' own trust in a project folder (ConfigSet.folder_trust): a project's settings file
 * of that agent says anything (its allow and deny lists too) only once the user trusted the
 * folder there, as the agent itself does.
 */
enum {
    CONFIG_FOLDER_TRUST_CLAUDE = 1u << 0, /* Claude Code's trust dialog accepted for the root */
    CONFIG_FOLDER_TRUST_GEMINI = 1u << 1, /* Gemini CLI's trustedFolders (or folder trust off) */
};

typedef struct ConfigSet {
    ServerConfig **servers; /* winners, in priority order (disabled ones too: they mask) */
    size_t n_servers;
    void *by_name; /* the same by name (a tsearch tree): one lookup per entry, not a walk */
    ConfigProblem *problems;
    size_t n_problems;
    size_t n_entry_problems; /* of the last problem's entry, in a row (problem_add's bound) */
    ConfigSkip *skipped;     /* in the order they were seen */
    size_t n_skipped;
    char **exa_api_keys; /* keys found in filtered Exa servers (secrets: never shown) */
    size_t n_exa_api_keys;
    bool quiet;          /* problems are not logged (mcpd/discover previews) */
    bool keep_last_good; /* discovery: a file that stops parsing gives its last good version */
    const char *root;    /* borrowed: the project root during discovery, for ${workspaceFolder} */
    /*
     * The project trust gate during discovery (the driver installs trust_gate_entry of
     * daemon/config/trust-gate.h): false holds the entry back, the reason already recorded in
     * the set. NULL lets every entry through.
     */
    ConfigGateFn gate;
    void *gate_ctx;        /* borrowed: the gate's state (a Trust) */
    unsigned folder_trust; /* CONFIG_FOLDER_TRUST_* the gate found (meaningful with a gate) */
    /*
     * The root is the user's home directory: its files are the user's own, read as such by
     * each agent's provider, never a second time as a project's (config_read_text).
     */
    bool root_is_home;
    /*
     * Every file read into the set, one per path (a re-read replaces it): bounded by the files
     * the providers read, which are themselves bounded.
     */
    ConfigFileStat *read_files;
    size_t n_read_files;
    /*
     * Discovery on a thread (config_discover_off_loop): the files it looked at, kept for the
     * read hook, which runs on the loop only (config_set_pass_notes). Bounded like read_files.
     */
    bool defer_notes;
    struct ConfigNote *notes;
    size_t n_notes;
} ConfigSet;

/* A file a discovery off the loop looked at, and what it was then (config_set_stale). */
typedef struct ConfigNote {
    char *path;
    bool found; /* st holds its stat; false: it was not there */
    struct stat st;
} ConfigNote;

/* The setting "audit": where an entry per tool call goes (daemon/core/audit.c). */
typedef enum SettingsAudit {
    SETTINGS_AUDIT_AUTO, /* "auto": the journal when mcpd logs to it, else nowhere */
    SETTINGS_AUDIT_OFF,  /* "off" */
    SETTINGS_AUDIT_LOG,  /* "log": the journal, or a log line on stderr without it */
    SETTINGS_AUDIT_FILE, /* "file": JSON lines in $XDG_STATE_HOME/mcpd/audit.jsonl */
} SettingsAudit;

/* Daemon settings (mcpd.json); every field has a default. */
typedef struct Settings {
    bool enable_project_config;
    int64_t startup_timeout_ms;
    int64_t max_message_bytes;
    int64_t cache_ttl_days;
    int64_t timeout_ms;
    int64_t call_timeout_ms;
    int64_t max_call_timeout_ms;
    int64_t idle_timeout_ms; /* servers' default; eager ones use it only when written */
    ServerStart start;       /* servers' default "start" */
    int64_t workspace_linger_ms;
    int64_t max_tools_per_server; /* tools kept from one server's list */
    int64_t max_list_pages;       /* pages fetched for one tools/list */
    int64_t max_list_bytes;       /* bytes of pages read for one tools/list */
    bool reconnect;
    bool filter_exa;
    bool hot_reload;             /* reload when a watched config file changes (watch.h) */
    unsigned disabled_providers; /* bit i: config_sources[i] is switched off */
    /* mcpd.json's "sandboxProfiles" that passed their checks (sandbox-policy.h), or NULL. */
    yajl_val sandbox_profiles;
    /* Hidden (tests): an agent's unfinished line older than this closes it (peer.h). */
    int64_t partial_line_timeout_ms;
    SettingsAudit audit;  /* where each tool call's audit entry goes (docs/audit.md) */
    bool audit_arguments; /* the entries carry the call's arguments, redacted */
    /* listen: the loopback address and port mcpd also serves HTTP on ("": none; docs/http.md);
     * read at start-up only. 64 bytes hold any "[::1]:PORT" or "127.x.y.z:PORT". */
    char listen[64];
} Settings;

/* What discovery looks at. */
typedef struct DiscoverOptions {
    const char *config_file; /* --config: this file only, instead of the providers */
    const char *root;        /* project root, or NULL for the user workspace */
} DiscoverOptions;

/* Defaults named once: the seed's constants (reference/seed-origin.md section 9). */
#define CONFIG_DEFAULT_TIMEOUT_MS      30000
#define CONFIG_DEFAULT_CALL_TIMEOUT_MS 60000
#define CONFIG_MAX_CALL_TIMEOUT_MS     600000
#define CONFIG_DEFAULT_STARTUP_MS      0 /* cached servers: listed at once */
#define CONFIG_MAX_SERVER_NAME         100
/*
 * A lazy stdio server stops after this long without a call. A Node or Python server holds
 * 40-120 MB while it waits; starting it again costs its cold start (0.3-2 s for npx) on the
 * next call. Ten minutes keeps a server up through a working session's pauses between tool
 * calls and gives its memory back during a meeting or over lunch.
 */
#define CONFIG_DEFAULT_IDLE_TIMEOUT_MS 600000
/*
 * Servers read from one config file. Agents' files hold a few dozen at most; a file with more
 * is built to load the daemon (a cloned repository's .cursor/mcp.json with 300 000 entries made
 * 300 000 problems, as many log lines and a status no client could read): the rest of it is
 * left out, with one problem that says so.
 */
#define CONFIG_MAX_SERVERS_PER_FILE 1000
#define CONFIG_DEFAULT_LINGER_MS    300000
/*
 * An agent's unfinished line older than this closes it: the default of the hidden setting
 * partialLineTimeoutMs, equal to PEER_PARTIAL_LINE_TIMEOUT_MS (daemon/downstream/peer.h gives
 * the reason for 30 s); config sits below downstream, so the value is named here for Settings.
 */
#define CONFIG_DEFAULT_PARTIAL_LINE_MS 30000
/*
 * Work one server may cause with its tool list (mcpd.json maxToolsPerServer, maxListPages,
 * maxListBytes). 10 000 tools is ten times the largest real server seen (a few hundred tools),
 * while 10 000 modest tools still fit an agent's tools/list answer. 100 pages lets a server page
 * 100 tools at a time up to that. 16 MiB matches the default message bound: one page's worth.
 */
#define CONFIG_DEFAULT_MAX_TOOLS  10000
#define CONFIG_DEFAULT_MAX_PAGES  100
#define CONFIG_DEFAULT_LIST_BYTES (16 * 1024 * 1024)
/*
 * The most maxListBytes may be raised to: a list must still fit in its cache file
 * (CACHE_MAX_FILE_BYTES in cache.c, 32 MiB), or a warm start could never serve it.
 */
#define CONFIG_MAX_LIST_BYTES (32 * 1024 * 1024)

/** Release a set; safe on a zeroed value. */
void config_set_deinit(ConfigSet *set);
/**
 * Whether a file such a discovery looked at changed since (written, made, removed): it may have
 * changed before the watcher heard of it, so the discovery is out of date.
 */
bool config_set_stale(const ConfigSet *set);
/** Note that path was read, st the fstat of the descriptor read (a later read replaces it). */
void config_set_note_read(ConfigSet *set, const char *path, const struct stat *st);
/** The fstat noted when path was last read into set, or NULL when it was not. */
const struct stat *config_set_read_stat(const ConfigSet *set, const char *path);
/** Record a problem. */
void config_set_problem(ConfigSet *set, const char *path, const char *server, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/** Record a warning: something noted and ignored, nothing refused. */
void config_set_warning(ConfigSet *set, const char *path, const char *server, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/** Record an entry that was seen and not used; the source strings are copied. */
void config_set_skip(ConfigSet *set, const char *name, const SourceMeta *src, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/** Append a winner; the set takes c. */
void config_set_add(ConfigSet *set, ServerConfig *c);
/** Find a server by name, or NULL. */
ServerConfig *config_set_find(const ConfigSet *set, const char *name);

/**
 * A new entry named name, from src (its strings copied), with the settings' defaults: enabled,
 * the timeouts, start and reconnect; what an entry that says nothing more is.
 */
ServerConfig *server_config_new(const char *name, const SourceMeta *src, const Settings *settings);
/** Deep copy. */
ServerConfig *server_config_copy(const ServerConfig *c);
/**
 * Give dst (the same server: equal hashes) the origin of from: where it was found and the entry
 * as written there, so status and the tool view name the entry that wins now.
 */
void server_config_take_origin(ServerConfig *dst, const ServerConfig *from);
/** Release; returns NULL. */
ServerConfig *server_config_free(ServerConfig *c);
/** "stdio", "http", "sse" or "auto". */
const char *transport_type_name(TransportType t);
/** "user" or "project". */
const char *config_level_name(ConfigLevel level);

/**
 * Whether a project's settings file of the agent whose folder trust is bit (a
 * CONFIG_FOLDER_TRUST_*) may say anything yet: always without a gate (no project, or none to
 * guard), else only once the user trusted the folder in that agent.
 */
bool config_folder_trusted(const ConfigSet *set, unsigned bit);
