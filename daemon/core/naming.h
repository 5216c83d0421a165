// SPDX-License-Identifier: MIT
// naming: exposed tool names mcp_<server>_<tool>, sanitised, capped and collision-free.
#pragma once

#include <stddef.h>

/* Many hosts (and OpenAI-style tool APIs) reject names over 64 characters. */
#define NAMING_MAX_LEN 64
/* Hex digits of the hash suffix that keeps a cut or colliding name unique. */
#define NAMING_HASH_DIGITS 6

/**
 * Sanitise one part: lower-case, runs outside [a-z0-9] folded to one '_', trimmed of '_';
 * an empty result becomes fallback. Returns a new string.
 */
char *naming_sanitize(const char *part, const char *fallback);

/** The name for one tool, before collision handling (capped at NAMING_MAX_LEN). */
char *naming_tool_name(const char *server, const char *tool);

/* One tool to name: inputs server and tool, output name. */
typedef struct NamingEntry {
    const char *server;
    const char *tool;
    char *name;   /* set by naming_assign, owned by the caller afterwards */
    int collided; /* set when this entry got a suffix because another had its name */
    void *data;   /* the caller's, carried along */
} NamingEntry;

/**
 * Name n entries deterministically: entries are taken in (server, tool) order and a later
 * entry whose name is taken gets a hash suffix. The array is left sorted by name.
 */
void naming_assign(NamingEntry *entries, size_t n);
