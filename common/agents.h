// SPDX-License-Identifier: MIT
// agents: the MCP hosts whose files mcpd reads, where each keeps its user-level servers, and
// how each is set up to start only mcpd's bridge (mcpctl setup), or why it is not.
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum AgentFormat { AGENT_FORMAT_JSON, AGENT_FORMAT_TOML, AGENT_FORMAT_YAML } AgentFormat;

/* What an agent's file path is relative to. */
typedef enum AgentBase { AGENT_BASE_HOME, AGENT_BASE_CONFIG } AgentBase;

/* A user-level file: its path under base. */
typedef struct AgentFile {
    AgentBase base;
    const char *rel;
} AgentFile;

typedef struct AgentInfo {
    const char *id, *name;
    AgentFormat format; /* JSON files may hold comments (JSONC) */
    AgentBase base;
    const char *rel;         /* the user-level file, under base: the one setup edits */
    const char *env_dir;     /* a variable that names the file's directory instead, or NULL */
    const char *servers_key; /* the member (or TOML table) that holds its servers */
    const char *shows;       /* what the agent lists once set up */
    const char *prefix;  /* what the agent puts before a tool name: the bridge's --host-prefix */
    bool short_env;      /* starts servers with a short environment: its entry names what to keep */
    const char *why_not; /* NULL: mcpctl setup edits its file; else why not, one sentence */
    /* The bridge's entry in the agent's own format, "@MCPCTL@" for mcpctl's path (by hand). */
    const char *by_hand;
    /* The other user-level files discovery reads for this agent (rel NULL ends it), or NULL. */
    const AgentFile *more;
} AgentInfo;

/** Every agent mcpd reads a user-level file of, in a fixed order (*np: how many). */
const AgentInfo *agents_all(size_t *np);
/** The agent of that id in the table; NULL when there is none. */
const AgentInfo *agents_find(const char *id);
/** The agent's user-level file for the current user and environment (newly allocated). */
char *agents_user_file(const AgentInfo *a);
/** The i-th of the agent's other user-level files (AgentInfo.more), newly allocated; NULL past
 * the last. */
char *agents_more_file(const AgentInfo *a, size_t i);
/** The VS Code builds (Code, Code - Insiders, VSCodium), NULL-terminated: each keeps its user
 * files under $XDG_CONFIG_HOME/<build>/User. */
extern const char *const agents_vscode_builds[];
/** The by-hand entry with mcpctl's path filled in (newly allocated). */
char *agents_by_hand(const AgentInfo *a, const char *mcpctl);
