// SPDX-License-Identifier: MIT
// toolset: one server's tools, kept as compact JSON text with an index, not as trees.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "common/tokens.h"

/* Text shared by reference (a tool view, the tool bodies in it): freed with its last reference. */
typedef struct SharedText {
    unsigned refs;
    size_t len;
    char *data; /* NUL-terminated */
} SharedText;

/** Text from a buffer of len bytes (taken; resized to exactly len + 1), one reference. */
SharedText *shared_text_new_take(char *data, size_t len);
/** Drop a reference (safe on NULL); returns NULL. */
SharedText *shared_text_unref(SharedText *st);

/*
 * One tool. Its body is the members agents see as they are, in their exposed form: title,
 * outputSchema, annotations, icons, execution, description, inputSchema (with its type and
 * properties filled in), written "k":v,...,"inputSchema":{...}. The view writes each body whole
 * between the name it assigns and the _meta it adds.
 */
typedef struct ToolSpan {
    size_t off, len;           /* the body, in the set's text */
    size_t meta_off, meta_len; /* the tool's own _meta object in the set's metas (len 0: none) */
    size_t orig_off, orig_len; /* the whole tool in the set's origs, when name, body and _meta
                                  would not give it back as listed (len 0: they do) */
    const char *name;          /* in the set's name arena; NULL when it has none */
    bool has_description;
} ToolSpan;

/*
 * A parsed tree costs about ten times its JSON text (a node, a key array and a malloc'd string
 * per value): 10 000 tools were 50 MB as trees, 4 MB as text. The bodies live once: in the
 * set's own text until a view has been built from them, then in that view's text (rebased),
 * so a workspace keeps one copy of its tools, the one it sends.
 */
typedef struct ToolSet {
    SharedText *text; /* holds every body */
    ToolSpan *spans;
    size_t n;
    char *names; /* every name, NUL-terminated, one after another */
    char *metas; /* every _meta object, one after another (NULL when no tool has one) */
    char *origs; /* the tools kept whole (see ToolSpan), NULL when none is */
    /* what the tools cost a model, counted on the first status after the set was made */
    TokenCost cost;
    bool cost_known;
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
/** Body of tool i (see ToolSpan), not NUL-terminated; *len gets its length. */
const char *toolset_body(const ToolSet *ts, size_t i, size_t *len);
/** The tool's own _meta object as JSON text, or NULL (*len 0) when it has none. */
const char *toolset_meta(const ToolSet *ts, size_t i, size_t *len);
/** The bodies now live in text, tool i at offs[i] (a view written from them): drop the old copy. */
void toolset_rebase(ToolSet *ts, SharedText *text, const size_t *offs);
/** The tools as the server listed them, "[...]" (the caller frees it; *len gets its length). */
char *toolset_json(const ToolSet *ts, size_t *len);
/** A fresh tree of tool i as kept: name, body, _meta (the caller frees it). */
yajl_val toolset_parse(const ToolSet *ts, size_t i);
/** Whether a tool of that name is in the set. */
bool toolset_has(const ToolSet *ts, const char *name);
