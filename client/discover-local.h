// SPDX-License-Identifier: MIT
// discover-local: mcpctl config without a daemon: run discovery in this process.
#pragma once

#include <yajl/yajl_tree.h>

/**
 * What mcpd/discover would answer for root (NULL: the user workspace), computed here from the
 * same configuration code the daemon runs: {servers, skipped, problems, root, settingsFile}.
 * Nothing is connected. Returns the object (to json_free), or NULL with *whyp (to free) when
 * root cannot be resolved.
 */
yajl_val discover_local(const char *root, char **whyp);
