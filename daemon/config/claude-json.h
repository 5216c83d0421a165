// SPDX-License-Identifier: MIT
// claude-json: a streaming reader for ~/.claude.json that keeps only what discovery needs.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

/*
 * ~/.claude.json is where Claude Code keeps its servers and also its chat history, tips and
 * caches: commonly 15-240 MB. It is read in chunks through yajl's event parser, with no
 * size cap, keeping only the top-level "mcpServers" and, for each project, "mcpServers" and
 * the approval keys; memory is bounded by what is kept (CLAUDE_JSON_MAX_KEPT_BYTES).
 */

/**
 * Read path into *outp: {"mcpServers"?: ..., "projects"?: {"<dir>": {kept keys}}}; a
 * duplicate key keeps its last value, as JSON.parse does. follow: whether a symbolic link
 * is followed (a user-level file is; dotfile managers link it). Return 0; -ENOENT or
 * -ENOTDIR quietly when it is not there; another -errno with *whyp (to free, without the
 * path) saying what is wrong: "line L, column C: ..." for invalid JSON.
 */
int claude_json_read(const char *path, bool follow, yajl_val *outp, char **whyp);

/**
 * What changed in path since it was last read (claude_json_read): the roots whose part changed
 * into *rootsp (each to free), "" for the top-level "mcpServers" (the user level: every
 * workspace); none when only what discovery does not keep changed (Claude Code's counters,
 * history, tips). A file never read, or unreadable now, is "" (reload all, as before). The file
 * is read once here; discovery then finds it read already.
 */
void claude_json_changes(const char *path, char ***rootsp, size_t *np);

/** The same over a buffer (tests, fuzzing): 0 or -EINVAL with *whyp. */
int claude_json_parse(const char *text, size_t len, yajl_val *outp, char **whyp);
