// SPDX-License-Identifier: MIT
// bridge: `mcpctl bridge`, a stdio MCP server relaying to mcpd's socket.
#pragma once

#include <stdbool.h>

/**
 * Relay stdin/stdout to mcpd at socket_path until either side closes. The host's initialize
 * gains _meta "mcpd/cwd" (cwd, or the current directory when NULL) and "mcpd/session"
 * ($MCPD_SESSION), and "mcpd/server" when server is set (that one server, under its own names:
 * single-server passthrough). With host_prefix (the prefix the host puts before tool names, e.g.
 * "mcp__mcpd__"), tools are listed under short names that keep prefix + name within 64
 * characters, and tools/call maps them back; NULL leaves names as mcpd gives them. With host_claude
 * (the host is Claude Code), the tools of the project's .mcp.json servers that Claude Code starts
 * itself (setup_claude_own_servers) are left out of tools/list. Returns the exit
 * status: 0 when the host closed stdin, 1 on failure, 3 when mcpd cannot be reached.
 */
int bridge_run(const char *socket_path, const char *cwd, const char *server,
               const char *host_prefix, bool host_claude);

/**
 * Whether mcpd answers at socket_path: 0, or -errno with *whyp (to free) saying that mcpd is not
 * running there and how to start it (the text the bridge gives a host in that case).
 */
int bridge_reach(const char *socket_path, char **whyp);
