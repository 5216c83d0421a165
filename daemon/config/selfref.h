// SPDX-License-Identifier: MIT
// selfref: recognise mcpd's own bridge, in a config entry or in a connection that comes back.
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "daemon/config/configset.h"

/* What discovery and `mcpctl config` say about an entry that is mcpd's own bridge. */
#define SELFREF_REASON                                                                             \
    "this is mcpd's own bridge (mcpctl bridge): the way an agent reaches mcpd, never started "     \
    "as a server"

/*
 * How far up the process tree a connecting pid is followed. Real chains are short (mcpd, a
 * server, perhaps a shell or npx, the bridge); the bound only stops a pathological walk.
 */
#define SELFREF_MAX_ANCESTRY 64

/**
 * Whether a command and its arguments start mcpd's own bridge: a program whose file name is
 * mcpctl (any path) whose first command word, after mcpctl's own options, is "bridge".
 */
bool selfref_is_bridge_command(const char *command, char *const *args, size_t n_args);
/** The same for a server entry (stdio only: a url is never the bridge). */
bool selfref_is_bridge(const ServerConfig *c);
/**
 * Whether pid descends from this process: a connection from it is a server mcpd started
 * connecting back to mcpd itself. A pid that is gone or unreadable is not.
 */
bool selfref_pid_is_descendant(pid_t pid);
