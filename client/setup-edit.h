// SPDX-License-Identifier: MIT
// setup-edit: byte-exact text edits of agents' config files (JSON with comments, and TOML).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

/* One replacement of the bytes [start, end) by text (owned). */
typedef struct SetupEdit {
    size_t start, end;
    char *text;
} SetupEdit;

typedef struct SetupEdits {
    SetupEdit *v;
    size_t n;
} SetupEdits;

/* Where one member of a JSON object sits: its key (without quotes) and its value. */
typedef struct SetupMember {
    size_t key_start, key_end, val_start, val_end;
} SetupMember;

/** Add an edit (text is taken). Edits must not overlap. */
void setup_edits_add(SetupEdits *e, size_t start, size_t end, char *text);
/** The text with every edit applied (to free); *lenp its length. */
char *setup_edits_apply(const char *s, size_t n, const SetupEdits *e, size_t *lenp);
/** Release; safe on a zeroed value. */
void setup_edits_deinit(SetupEdits *e);

/** Index of the first byte of the top-level value (after whitespace and comments), or n. */
size_t setup_json_start(const char *s, size_t n);
/**
 * The members of the object whose '{' is at s[obj], in file order (*outp to free). The text
 * must already have parsed (json_parse): this only locates, it does not validate. -EINVAL if
 * s[obj] is not '{'.
 */
int setup_json_members(const char *s, size_t n, size_t obj, SetupMember **outp, size_t *np);
/** Whether a member's key is exactly key (written without escapes). */
bool setup_json_key_is(const char *s, const SetupMember *m, const char *key);
/** The member's key, decoded (to free). */
char *setup_json_key(const char *s, const SetupMember *m);
/** The whitespace that starts pos's line if nothing else precedes pos on it, else NULL. */
char *setup_json_line_indent(const char *s, size_t pos);
/** Add the edit that removes member a of the n members m (with its comma) to e. */
void setup_json_remove_member(const SetupMember *m, size_t n, size_t a, SetupEdits *e);
/** v as JSON text, pretty when indent is not NULL (nested lines get indent + unit). */
char *setup_json_format(yajl_val v, const char *indent, const char *unit);

/* A run of TOML lines: [start, end) bytes. */
typedef struct SetupTomlBlock {
    size_t start, end;
} SetupTomlBlock;

/**
 * The byte ranges of every [mcp_servers...] table (header to the next header), in order.
 * -EINVAL with *whyp when mcp_servers is written in a way these line edits cannot carry (a
 * top-level "mcp_servers" key or dotted key, or an array of tables).
 */
int setup_toml_blocks(const char *s, size_t n, SetupTomlBlock **outp, size_t *np, char **whyp);
/** A TOML basic string for s (to free). */
char *setup_toml_string(const char *s);
