// SPDX-License-Identifier: MIT
// server-entry: one server entry's JSON read into a ServerConfig, each field checked (an error
// refuses the entry, a warning names what is ignored).
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/config/configset.h"

/**
 * Build a server entry from one native-format JSON object (mcpServers.<name>). On an invalid
 * entry return NULL and record the reason in set. The source strings are copied.
 */
ServerConfig *server_config_from_json(const char *name, yajl_val obj, const SourceMeta *src,
                                      const Settings *settings, ConfigSet *set);
/**
 * The same, when the entry as written (kept for display) differs from the one whose values
 * are used (after ${VAR} expansion).
 */
ServerConfig *server_config_build(const char *name, yajl_val written, yajl_val obj,
                                  const SourceMeta *src, const Settings *settings, ConfigSet *set);
/** "lazy" or "eager" into *outp; -EINVAL for anything else. */
int config_parse_start(const char *text, ServerStart *outp);
