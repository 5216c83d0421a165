// SPDX-License-Identifier: MIT
// trust: what mcpd/trust does to a project root: approve the entries discovery held back there,
// or revoke approvals.
#pragma once

#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "daemon/config/trust-gate.h"

struct Settings;

/**
 * What mcpctl trust does: discover root (a realpath) through its gate and approve what it held
 * back: every entry of a file inside root, or the entries named server wherever they are.
 * *approvedp (may be NULL): [{name, path, command}] approved; *abovep (may be NULL): the same
 * for entries of a .mcp.json above root left waiting (they need --server). Returns 0, -ENOENT
 * when server is named and nothing of that name waits, or -errno; *whyp on failure.
 */
int trust_approve_root(const char *root, const struct Settings *settings, const char *server,
                       yajl_val *approvedp, yajl_val *abovep, char **whyp);
/** What mcpctl untrust does; *np: approvals removed. Returns 0 or -errno with *whyp. */
int trust_revoke_root(const char *root, const char *server, size_t *np, char **whyp);
