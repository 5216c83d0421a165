// SPDX-License-Identifier: MIT
// sandbox: a stdio server's command wrapped in bubblewrap as its policy says (reads allowed
// but the secrets' places, writes only where allowed, a private /tmp, the network off or on).
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/sys/child.h"

/* The program that contains the server, looked up in mcpd's own PATH. */
#define SANDBOX_BWRAP "bwrap"

/**
 * Make spec run its command under bubblewrap with policy (a sandbox-policy.h policy):
 * spec->file and spec->argv are replaced, the new argv in *argvp (to free with
 * sandbox_argv_free; spec's own strings are borrowed, not copied). spec->cwd is where the
 * server starts; it stays readable, and writable with "projectWrite" unless it is the home
 * directory or "/" (then *notep says so, to free). Return 0 or -errno with *whyp.
 */
int sandbox_wrap(ChildSpec *spec, yajl_val policy, char ***argvp, char **notep, char **whyp);
/** Release what sandbox_wrap made. */
void sandbox_argv_free(char **argv);
/**
 * The reason a contained server could not be started (bwrap missing or failing to run), built
 * from child_spawn's: what to install or do, and that mcpd never runs it unconfined instead.
 */
char *sandbox_spawn_error(const char *server, const char *why);
/**
 * The hint for a contained server that ended on its own: where the sandbox's refusals show and
 * what bwrap's own failures mean (newly allocated, one line).
 */
char *sandbox_exit_hint(const char *server, yajl_val policy);
/** "project-write (bubblewrap; network off)": the one-line form of a policy for logs. */
char *sandbox_describe(yajl_val policy);
