// SPDX-License-Identifier: MIT
// resolve: connect-time values (!command, environment-variable names, OAuth credentials), on the
// loop.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "daemon/config/config.h"

/* The seed's executeShell bound for a !command (reference/seed-origin.md 2.2). */
#define RESOLVE_COMMAND_TIMEOUT_MS 10000
/* ${keyring:NAME}: a Secret Service item's secret, in mcpd's own files only (resolve_start). */
#define RESOLVE_KEYRING_FORM "keyring:"
/* A secret is short; a command printing more than this is not printing a secret. */
#define RESOLVE_MAX_OUTPUT (64u * 1024u)

typedef struct Resolve Resolve;

typedef struct ResolveOptions {
    int64_t command_timeout_ms;   /* 0: RESOLVE_COMMAND_TIMEOUT_MS */
    const char *credentials_path; /* NULL: $XDG_CONFIG_HOME/mcpd/credentials.json */
} ResolveOptions;

/*
 * Called once, from the loop, never from resolve_start(). On success resolved is the
 * config to connect with (the caller owns it; it holds secrets: hand it to the transport and
 * free it, never show or store it) and error is NULL. On failure resolved is NULL, error
 * names the server and the key, and retryable says whether trying again later may help.
 * The Resolve is freed after the callback returns.
 */
typedef void (*ResolveDoneFn)(void *userdata, ServerConfig *resolved, const char *error,
                              bool retryable);

/**
 * Resolve cfg's env (stdio) or headers (http, sse): a value "!cmd" (written so in the file,
 * not produced by ${VAR} expansion) is replaced by the trimmed
 * stdout of `/bin/sh -c cmd` (run in parallel, bounded by the timeout, only from config files
 * owned by the user and not writable by group or others); a value naming a set environment
 * variable by that variable (also only from mcpd's own files); ${keyring:NAME} in a value of
 * mcpd's own files by the secret of the Secret Service item with attribute mcpd=NAME (a bounded
 * synchronous lookup, daemon/sys/keyring.h); empty results drop the key. Then
 * auth.type "oauth" with a credentialId adds "Authorization: Bearer <token>" (http, sse) or
 * OAUTH_ACCESS_TOKEN (stdio) from the credential store. Returns 0 (fn will run) or -errno.
 */
int resolve_start(Resolve **rp, struct event_base *base, const ServerConfig *cfg,
                  const ResolveOptions *opt, ResolveDoneFn fn, void *userdata);
/** Stop: commands still running are killed and reaped, and fn never runs. NULL is allowed. */
void resolve_cancel(Resolve *r);

/**
 * Whether !commands may run from this config file: owned by the user, not writable by group
 * or others. Return 0, or -EPERM (or -errno) with *whyp set, to free.
 */
int resolve_check_file(const char *path, char **whyp);
/** The credential store's default path (newly allocated; daemon/config/credentials.h reads it). */
char *resolve_credentials_path(void);
