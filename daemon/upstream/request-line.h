// SPDX-License-Identifier: MIT
// request-line: the text of a legacy JSON-RPC request to an upstream, written from pieces in one
// pass (the hot path of every tools/call: no printf, no escaping of what is known plain).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mcp.h"
#include "common/strbuf.h"

/*
 * What mcpd honours for its agents (both eras): roots are answered from the workspace root when
 * no agent does; sampling and elicitation (form and url mode) go to the agent whose call asked
 * for them, when it declared that capability (a url-mode completion follows it there).
 */
#define CLIENT_CAPABILITIES_JSON                                                                   \
    "{\"roots\":{\"listChanged\":true},\"sampling\":{},\"elicitation\":{\"form\":{},\"url\":{}}}"

/* A piece of a request's params text, not NUL-terminated. */
typedef struct UpstreamPart {
    const char *p;
    size_t n;
} UpstreamPart;

/** Total bytes of n parts. */
size_t request_parts_len(const UpstreamPart *parts, size_t n);
/** The parts as one string (to free). */
char *request_parts_join(const UpstreamPart *parts, size_t n);
/**
 * Replace sb's text with {"jsonrpc":"2.0","id":id,"method":method,"params":{...}} and a newline:
 * params are _meta (progressToken id when progress, then the members in meta, NULL or "" for
 * none) and the body parts, in order.
 */
void request_line_legacy(StrBuf *sb, uint64_t id, const char *method, const char *meta,
                         const UpstreamPart *body, size_t n_body, bool progress);
/**
 * The same for a 2026-07-28 server (or server/discover): _meta carries what mcpd is (version,
 * capabilities, client info), progressToken id when progress, the agent's level (a static MCP
 * level name, or NULL) unless its own meta has one, and the members of meta (its own
 * io.modelcontextprotocol/ keys dropped: mcpd is the client here); then body (NULL or "": none).
 */
void request_line_modern(StrBuf *sb, uint64_t id, const char *method, const char *meta,
                         const char *body, bool progress, const char *level);
