// SPDX-License-Identifier: MIT
// sandbox-ns: a sandbox plan carried out by mcpd itself in the server's own child, between
// fork and exec: user, mount, PID, IPC (and network) namespaces, the mounts, no capabilities.
#pragma once

#include <sys/types.h>

#include "daemon/upstream/sandbox-plan.h"

/* What the child needs, prepared before the fork: it may only make system calls after it. */
typedef struct SandboxNs {
    const SandboxPlan *plan;
    char uid_map[48], gid_map[48]; /* the user's own ids, the same inside */
} SandboxNs;

/** Prepare ns for plan (borrowed: it must outlive the spawn). */
void sandbox_ns_init(SandboxNs *ns, const SandboxPlan *plan);
/** The namespaces (CLONE_NEW*) the child starts in. */
int sandbox_ns_clone_flags(const SandboxPlan *plan);
/**
 * In the child, started in sandbox_ns_clone_flags's namespaces: set the sandbox up (a
 * ChildContainFn). Only system calls (the parent may have threads). 0, or -errno with what[0]
 * naming the step the kernel refused and what[1] its path or NULL.
 */
int sandbox_ns_contain(void *arg, const char *what[2]);
