// SPDX-License-Identifier: MIT
// child-env: the environment a child starts with (mcpd's own with a config entry's laid over).
#pragma once

#include <yajl/yajl_tree.h>

/**
 * A NULL-terminated environment, every string and the array malloc'd: first (taken; NULL for
 * none) in front, then base's entries in order, less those whose name over sets or that are
 * reserved=..., then over's members as NAME=VALUE in order (the one named reserved skipped).
 * A base entry without '=' is named by all of it; duplicates in base are kept, as execve would
 * pass them, unless over names them. Linear in base and over (a hash of over's names).
 */
char **child_env_merge(char *const *base, yajl_val over, const char *reserved, char *first);
