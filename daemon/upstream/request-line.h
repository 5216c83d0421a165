// SPDX-License-Identifier: MIT
// request-line: the text of a legacy JSON-RPC request to an upstream, written from pieces in one
// pass (the hot path of every tools/call: no printf, no escaping of what is known plain).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

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
