// SPDX-License-Identifier: MIT
// modern-state: requestState tokens for 2026-07-28 agents (methods-modern.c): mcpd's own
// unguessable tokens, and a modern server's requestStates kept under them for the retry.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

/*
 * How long mcpd keeps a call whose input_required went out, waiting for the retry: a person
 * may be filling a form. After it the call is cancelled upstream and the requestState is void.
 */
#define MODERN_RETRY_WAIT_MS (10 * 60 * 1000)
/* A modern server's requestStates kept per connection (wrapped, for retries). */
#define MODERN_MAX_WRAPPED 64
/* Random bytes in a requestState token: unguessable by another agent. */
#define MODERN_TOKEN_BYTES 16

typedef struct Wrapped Wrapped;

/* One connection's wrapped requestStates, newest first. */
typedef struct WrapTable {
    Wrapped *head;
    size_t n;
} WrapTable;

/** A fresh token (2 * MODERN_TOKEN_BYTES hex digits and a NUL), or false (logged). */
bool modern_new_token(char *out);
/** Keep a copy of state under a fresh token (the oldest goes when full); NULL when no token. */
const char *wrap_table_put(WrapTable *t, yajl_val state);
/** The state kept under token, taken out of the table (the caller frees it), or NULL. */
yajl_val wrap_table_take(WrapTable *t, const char *token);
/** Free every entry. */
void wrap_table_clear(WrapTable *t);
