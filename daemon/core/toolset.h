// SPDX-License-Identifier: MIT
// toolset: one server's tools, kept as compact JSON text with an index, not as trees.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

/* One tool: its bytes in the set's text, and its name (NULL when it has none). */
typedef struct ToolSpan {
    size_t off, len;
    const char *name; /* in the set's name arena */
} ToolSpan;

/*
 * A parsed tree costs about ten times its JSON text (a node, a key array and a malloc'd string
 * per value): 10 000 tools were 50 MB as trees, 4 MB as text. Trees are made again, one tool
 * at a time, only where one is needed (the view's rebuild).
 */
typedef struct ToolSet {
    char *text; /* "[tool,tool,...]", NUL-terminated */
    size_t len;
    ToolSpan *spans;
    size_t n;
    char *names; /* every name, NUL-terminated, one after another */
} ToolSet;

/** A set from a JSON array of tools (consumed; anything but an array makes an empty set). */
ToolSet *toolset_new_take(yajl_val tools);
/** After the trees of n tools were freed: hand their memory back to the system if n is large. */
void toolset_trim_after(size_t n);
/** Free the set (safe on NULL); returns NULL. */
ToolSet *toolset_free(ToolSet *ts);
/** Number of tools (0 for NULL). */
size_t toolset_len(const ToolSet *ts);
/** Name of tool i, or NULL when it has none. */
const char *toolset_name(const ToolSet *ts, size_t i);
/** A fresh tree of tool i (the caller frees it). */
yajl_val toolset_parse(const ToolSet *ts, size_t i);
/** Whether a tool of that name is in the set. */
bool toolset_has(const ToolSet *ts, const char *name);
