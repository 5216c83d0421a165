// SPDX-License-Identifier: MIT
// sandbox-plan: what one contained server's sandbox holds (its mounts in order, the network),
// built once from its policy and carried out by bubblewrap or by mcpd's own namespaces.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

typedef enum SandboxMountKind {
    SANDBOX_MOUNT_WRITE,     /* the host's path, writable */
    SANDBOX_MOUNT_READ,      /* the host's path, read-only (over an allowance inside it) */
    SANDBOX_MOUNT_DENY_DIR,  /* covered by the empty mode-000 directory */
    SANDBOX_MOUNT_DENY_FILE, /* covered by the empty mode-000 file */
} SandboxMountKind;

typedef struct SandboxMount {
    SandboxMountKind kind;
    char *path; /* absolute; it existed when the plan was made */
} SandboxMount;

/*
 * Over a read-only view of the whole host, with a /dev, /proc and /tmp of its own: the mounts
 * in order (a later one covers an earlier one, so denials come last and win).
 */
typedef struct SandboxPlan {
    SandboxMount *mounts;
    size_t n_mounts;
    char *pdir, *pfile; /* the placeholders a denial binds */
    const char *cwd;    /* where the server starts (borrowed from the spec), or NULL */
    bool network;       /* the host's network; otherwise a namespace with only loopback */
} SandboxPlan;

/**
 * The plan of policy's sandbox for a server starting in cwd: the tool caches (made when
 * missing), the working directory, the policy's lists, then every policy's denials (last, so
 * they win over an allowance that contains them). *notep (newly allocated) when the plan differs
 * from what the policy asked; 0, or -errno with *whyp.
 */
int sandbox_plan_build(SandboxPlan *p, yajl_val policy, const char *cwd, char **notep, char **whyp);
/** Free what the plan holds; it is zeroed. */
void sandbox_plan_deinit(SandboxPlan *p);
