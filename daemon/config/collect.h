// SPDX-License-Identifier: MIT
// collect: a provider's entries taken into the set, each through the rules every entry passes.
#pragma once

#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "daemon/config/configset.h"

/**
 * Add one entry from a source, applying the rules in order: the project filter, validation
 * (an invalid entry is reported and masks nothing), mcpd's own bridge (never a server), the
 * set's gate (set->gate), envFile, the Exa filter, then first wins (a disabled winner masks
 * the names below it). written is the entry as the file has it.
 */
void config_add_entry(ConfigSet *set, const char *name, yajl_val written, const SourceMeta *src,
                      const Settings *settings);
/** An entry a provider could not map: a problem plus a skip, masking nothing. */
void config_add_invalid(ConfigSet *set, const char *name, const SourceMeta *src, const char *why);
/** A mapping's notes (ConfigMapFn; one a line, NULL: none) as warnings naming the server. */
void config_add_map_notes(ConfigSet *set, const char *name, const SourceMeta *src,
                          const char *notes);
/** Whether a server is an Exa search server (seed 1.6); *keyp gets its API key or NULL. */
bool config_is_exa(const ServerConfig *c, char **keyp);

/**
 * Parse one native-format file ({"mcpServers": {...}}) into set, with source metadata.
 * A missing file is not an error. Entries already present in set keep priority (first wins).
 */
void config_load_native_file(ConfigSet *set, const char *path, const char *provider,
                             const char *provider_name, ConfigLevel level,
                             const Settings *settings);

/*
 * Map one entry from a provider's own shape to mcpd's native one: 0 and a new object in *outp,
 * or -EINVAL with a reason in *whyp (to free). On success *whyp may hold notes (one a line, to
 * free): what the agent's entry says that mcpd cannot honour. They become warnings naming the
 * server; the entry is still used.
 */
typedef int (*ConfigMapFn)(const char *name, yajl_val in, yajl_val *outp, char **whyp);

/**
 * Whether n servers are more than one file may give (CONFIG_MAX_SERVERS_PER_FILE); if so, a
 * problem on path says so, and the caller reads none of them. Asked before any work per entry
 * (a name map built with json_object_set is quadratic in its size).
 */
bool config_too_many_servers(ConfigSet *set, const char *path, size_t n);

/**
 * Add every entry of an object of servers (key names it in messages), each mapped through map
 * (NULL: already native), with config_add_entry's rules.
 */
void config_add_entries(ConfigSet *set, yajl_val servers, const char *key, const SourceMeta *src,
                        const Settings *settings, ConfigMapFn map);
/** Read a JSON file and add the servers under its top-level member key. */
void config_load_json_servers(ConfigSet *set, const char *path, const char *key,
                              const SourceMeta *src, const Settings *settings, ConfigMapFn map);
