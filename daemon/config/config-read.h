// SPDX-License-Identifier: MIT
// config-read: how discovery reads a config file: bounded, regular files only, noted for hot
// reload, a JSON file's last good version kept.
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
/** On the loop: give the read hook the files a discovery with defer_notes looked at. */
void config_set_pass_notes(ConfigSet *set);
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
