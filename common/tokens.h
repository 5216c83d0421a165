// SPDX-License-Identifier: MIT
// tokens: an estimate of the tokens a model's tokenizer makes of a text (tool definitions).
#pragma once

#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "common/strbuf.h"

/**
 * Tokens a BPE tokenizer of today's models (o200k, cl100k) makes of text, estimated without
 * its vocabulary: each run of letters is one token per 8 letters begun (a camelCase part is its
 * own run), each run of digits one per 3 begun, a space before a word goes with it, and each run
 * of other bytes one token per 4 begun. tests/bench/search-bench.c compares it with a real
 * tokenizer on the search corpus (docs/search.md gives the figures).
 */
size_t tokens_estimate(const char *text, size_t len);

/* What tool definitions cost an agent: tools, bytes and estimated tokens of their host text. */
typedef struct TokenCost {
    size_t tools, bytes, tokens;
} TokenCost;

/**
 * Append what a host sends its model for one tool: {"name","description","inputSchema"} as
 * compact JSON (no _meta, annotations or outputSchema: hosts leave them out), under name (the
 * tool's own when NULL).
 */
void tokens_tool_text(StrBuf *sb, const char *name, yajl_val tool);
/** Add one tool's host text to c. */
void tokens_cost_add(TokenCost *c, const char *name, yajl_val tool);
