// SPDX-License-Identifier: MIT
// collect: how discovery takes servers from files: reading them (bounded, last good version kept)
// and the rules every entry passes before it joins the set.
#pragma once

#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "daemon/config/configset.h"

/*
 * Called for every config file discovery reads or looks for (found or not), with the project
 * root of that discovery (NULL: user-level only); quiet previews are not reported.
 */
typedef void (*ConfigReadHook)(const char *path, const char *root, void *userdata);
/** Install the one read hook (NULL to remove). */
void config_set_read_hook(ConfigReadHook fn, void *userdata);
/** Tell the hook that discovery listed dir: a new entry there may be a new source (hot reload). */
void config_note_listing(ConfigSet *set, const char *dir);
/** Note that discovery read (or looked for) path with a reader of its own: it is watched too. */
void config_note_file(ConfigSet *set, const char *path);
/** Forget the last good versions of config files kept for safe reload (daemon exit). */
void config_forget_good(void);

/**
 * Read and parse a JSON file; -ENOENT quietly when missing, other failures recorded in set.
 * level says whose file it is: a project's is not read through a symbolic link.
 */
int config_read_json(ConfigSet *set, const char *path, ConfigLevel level, yajl_val *outp);
/**
 * Read a whole regular file (bounded, never blocking); -ENOENT quietly when missing, other
 * failures (a FIFO, a device, a project file that is a link, ...) recorded in set.
 */
int config_read_text(ConfigSet *set, const char *path, ConfigLevel level, char **textp,
                     size_t *lenp);

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
