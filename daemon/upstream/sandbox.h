// SPDX-License-Identifier: MIT
// sandbox: a stdio server started contained as its policy says (reads allowed but the secrets'
// places, writes only where allowed, a private /tmp, the network off or on): the plan, and its
// start in mcpd's own namespaces or, where the kernel refuses those, under bubblewrap.
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/sys/child.h"

/* How a sandbox was set up (status "sandboxedBy", the log): */
#define SANDBOX_HOW_NS    "namespaces" /* by mcpd in the server's child (sandbox-ns.c) */
#define SANDBOX_HOW_BWRAP "bubblewrap"

/**
 * Start spec's command contained by policy (a sandbox-policy.h policy), as child_spawn does:
 * in namespaces mcpd sets up in the child itself, or under bubblewrap once the kernel refused
 * those (or MCPD_SANDBOX=bubblewrap), *howp saying which (a SANDBOX_HOW_* literal).
 * spec->cwd stays readable, and writable with "projectWrite" unless it is the home directory
 * or "/" (the log says so). Return 0, or -errno with *whyp (a server that cannot be contained
 * is never started unconfined).
 */
int sandbox_spawn(Child **cp, const ChildSpec *spec, yajl_val policy, const char *server,
                  ChildExitFn on_exit, void *userdata, const char **howp, char **whyp);
/**
 * The reason a contained server could not be started, built from what failed: what to install
 * or do, and that mcpd never runs it unconfined instead.
 */
char *sandbox_spawn_error(const char *server, const char *why);
/**
 * The hint for a contained server that ended on its own: where the sandbox's refusals show and
 * what bwrap's own failures mean (newly allocated, one line).
 */
char *sandbox_exit_hint(const char *server, yajl_val policy, const char *how);
/** "\"project-write\" (namespaces; network off)": the one-line form of a policy for logs. */
char *sandbox_describe(yajl_val policy, const char *how);
