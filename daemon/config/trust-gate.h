// SPDX-License-Identifier: MIT
// trust-gate: the gate for project-level servers (mcpd's approval store and the agents' own
// approvals), consulted by discovery for every project entry.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "common/hash.h"
#include "daemon/config/configset.h"

struct stat;

/* An approval names one entry of one file as written: a changed entry needs approving again. */
typedef char TrustHash[2 * SHA256_DIGEST_SIZE + 1];

/* A project entry discovery held back, for mcpd/trust to approve. */
typedef struct TrustPending {
    char *name;
    char *path;
    char *shown; /* all it would run and send, as written (trust-show.h) */
    TrustHash hash;
    bool above; /* from a .mcp.json above the root: approved only when named (trust_approve) */
    bool reads_project; /* a user's entry gated for the project file it reads (envFile) */
} TrustPending;

/* What decides, for one project root, which of its entries may run. */
typedef struct Trust {
    char *root;       /* realpath of the project */
    char *store_path; /* mcpd's approvals: $XDG_STATE_HOME/mcpd/trust.json */
    yajl_val store;   /* {"version": 1, "projects": {root: {name: [hash, ...]}}} */
    /* Claude Code's answers for <root>/.mcp.json (~/.claude.json projects[root]). */
    bool claude_folder; /* its trust dialog accepted for root or a parent: answers count */
    bool claude_all;
    yajl_val claude_enabled;  /* array of names, or NULL */
    yajl_val claude_disabled; /* array of names, or NULL */
    bool codex_trusted;       /* [projects."<root>"] trust_level = "trusted" */
    bool gemini_trusted;      /* ~/.gemini/trustedFolders.json, or folder trust switched off */
    bool store_broken;        /* the store exists but could not be read: never overwrite it */
    unsigned folder_trust;    /* CONFIG_FOLDER_TRUST_*: the agents that trust the folder */
    TrustPending *pending;    /* entries held back, in the order seen */
    size_t n_pending;
} Trust;

typedef enum TrustVerdict {
    TRUST_APPROVED, /* not gated, or approved by mcpd or the owning agent */
    TRUST_PENDING,  /* held back until approved; *whyp says how to approve it */
    TRUST_REJECTED, /* rejected by the owning agent (the user said no there) */
    TRUST_FOREIGN,  /* the file is not the user's own: never runs anything */
} TrustVerdict;

/* Old approvals kept per server name: a few edits back, not an unbounded history. */
#define TRUST_MAX_HASHES_PER_SERVER 16

/**
 * Load the approvals that apply to root (a realpath): mcpd's store and each agent's own keys.
 * Unreadable or malformed files approve nothing; their problems are returned in *whyp (to
 * free, NULL when none) so the caller can report them.
 */
void trust_init(Trust *t, const char *root, char **whyp);
/** Release; safe on a zeroed value. */
void trust_deinit(Trust *t);
/** mcpd's store path (newly allocated). */
char *trust_store_path(void);

/**
 * Decide for one entry e (as written, with its envFile as read), st the fstat of the descriptor
 * its file was read from and env_st that of its envFile (NULL: the path is looked at, links not
 * followed). Gated: entries of files inside the project root (and Claude Code's .mcp.json above
 * it), and the user's own entries that read a file inside it (an envFile, or a command there).
 * On anything but TRUST_APPROVED, *whyp (to free) says why, what the entry would run and send,
 * and what to do; a TRUST_PENDING entry is also remembered in t->pending.
 */
TrustVerdict trust_check(Trust *t, const ConfigGateEntry *e, const struct stat *st,
                         const struct stat *env_st, char **whyp);

/**
 * Approve the pending entries (those inside the root, or those named server wherever they are)
 * in mcpd's store and write it
 * durably. *np: how many were approved. Returns 0 or -errno with *whyp (to free); a store
 * that could not be read is never overwritten (-EIO).
 */
int trust_approve(Trust *t, const char *server, size_t *np, char **whyp);
/** Whether trust_approve(..., server, ...) approves p: named, or (no name) inside the root. */
bool trust_pending_chosen(const TrustPending *p, const char *server);
/** Remove mcpd's approvals for the root (all, or server's). Returns 0 or -errno with *whyp. */
int trust_revoke(Trust *t, const char *server, size_t *np, char **whyp);

/**
 * The ConfigGateFn discovery installs for a project (ctx: its Trust): an entry from a file
 * inside the project runs only once approved (mcpd's store or the owning agent's own answer),
 * and never from a file another user owns. A held-back entry masks nothing and is recorded as
 * both a skip (mcpctl config) and a problem (status); returns whether it may join.
 */
bool trust_gate_entry(void *ctx, ConfigSet *set, const ConfigGateEntry *e);
