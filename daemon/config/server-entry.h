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
/**
 * Check a server name as an agent's file gives it; return NULL or a message (static). Any
 * text of 1 to CONFIG_MAX_SERVER_NAME bytes without control characters is a name: agents
 * accept them ("github/github-mcp-server" is how VS Code's gallery names its entries).
 */
const char *config_check_name(const char *name);
/**
 * The name mcpd serves a server under: name itself when it holds only letters, digits, '-',
 * '_' and '.', else a copy with every other byte replaced by '_' (new string, or NULL when the
 * name is already plain). Tool names, cache files and mcpd:// URIs are built from it.
 */
char *config_plain_name(const char *name);
