// SPDX-License-Identifier: MIT
// sandbox-bwrap: a sandbox plan carried out by bubblewrap: its command line around the server's.
#pragma once

#include "daemon/sys/child.h"
#include "daemon/upstream/sandbox-plan.h"

/* The program that contains the server where the kernel refuses mcpd's own namespaces. */
#define SANDBOX_BWRAP "bwrap"

/**
 * The plan as bubblewrap's arguments, around spec's command, bwrap itself found in mcpd's own
 * PATH (to free with sandbox_bwrap_argv_free). 0, or -ENOENT with *whyp.
 */
int sandbox_bwrap_argv(char ***argvp, const SandboxPlan *p, const ChildSpec *spec, char **whyp);
/** Free what sandbox_bwrap_argv made (NULL is fine). */
void sandbox_bwrap_argv_free(char **argv);
