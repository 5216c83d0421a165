// SPDX-License-Identifier: MIT
// config-expand: the ${...} forms of a server entry filled in, each agent's own (seed 1.3).
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/config/configset.h"

/**
 * Expand ${VAR}, ${VAR:-default}, ${env:VAR}, ${workspaceFolder} (root) and ${userHome} in
 * every string of v (keys untouched); an unset variable without a default stays as written.
 * Returns a new value.
 */
yajl_val config_expand(yajl_val v, const char *root);
/** config_expand filling only the EXPAND_* forms in forms; the others stay as written. */
yajl_val config_expand_forms(yajl_val v, const char *root, unsigned forms);
/** The EXPAND_* forms filled in an entry from src: its agent's own, and mcpd's references. */
unsigned config_source_forms(const SourceMeta *src);
