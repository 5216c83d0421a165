// SPDX-License-Identifier: MIT
// json: parse, build, query and serialise JSON values (yajl trees) without embedded newlines.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "common/strbuf.h"

/*
 * Values are yajl trees. yajl_tree_free() releases nodes with free(), so nodes built here with
 * malloc() mix freely with parsed ones: a parsed request can be edited in place and written out.
 *
 * The walks over trees (json_free, json_copy, json_equal, json_write, and expand_value in
 * daemon/config/config.c) recurse once per level. That is safe because every tree is shallow:
 * json_parse_full() refuses texts deeper than JSON_MAX_DEPTH before building anything; code only
 * wraps parsed values in a fixed number of levels; toml_parse() bounds inline nesting and the
 * parts of a dotted key to TOML_MAX_DEPTH each, so a TOML tree has at most a few thousand levels
 * (64 nested inline tables, each under a 64-part key), far from any stack limit. Parsing itself
 * never recurses (yajl keeps its own stack).
 */

/*
 * Nesting limit for every JSON text mcpd reads (sockets, stdio, HTTP bodies, SSE events, cache
 * and config files), enforced while parsing, before a tree exists. Real tool inputSchemas nest
 * well under 20 levels (object, properties, a property, items, ...); 128 leaves ample room while
 * bounding every recursive walk of a tree (free, copy, write, compare) to a few KiB of stack.
 * Trees built by code wrap parsed values in a fixed, small number of levels (a merged tools/list
 * re-embeds each inputSchema at the same depth the server sent it, under result.tools[i]), so
 * they stay within JSON_MAX_DEPTH plus a constant. jsonscan uses the same limit.
 */
#define JSON_MAX_DEPTH 128

/*
 * Values (scalars, arrays, objects) in one JSON text. A 16 MiB message can hold 8M of them,
 * which takes seconds and ~660 MiB to build as a tree while every other agent waits. The
 * largest legitimate texts seen (a tools/list of 1000 tools with rich schemas, a structured
 * result of a large table) hold a few hundred thousand. The worst text accepted at 1M (2^20), an
 * array of a million numbers, parses in 0.17-0.21 s (-O2, busy 2-core box) into a tree of
 * ~90 MiB. A text with as many commas as the limit is refused after one pass over its bytes
 * (values outnumber commas); any other text past it stops building there. jsonscan counts values
 * the same way.
 */
#define JSON_MAX_VALUES (1024 * 1024)

/* Outcomes of json_parse_full() beyond 0. */
enum {
    JSON_E_SYNTAX = 1, /* not JSON */
    JSON_E_DEPTH,      /* nested deeper than JSON_MAX_DEPTH */
    JSON_E_VALUES,     /* more than JSON_MAX_VALUES values */
    JSON_E_UTF8,       /* invalid UTF-8 or a lone surrogate escape (JSON_UTF8_REFUSE only) */
};

/*
 * What to do with invalid UTF-8 (overlong forms, surrogates raw or as lone \uD800 escapes, values
 * past U+10FFFF, truncated sequences). Either way no invalid text enters a tree, so none is
 * ever forwarded. mcpd refuses it from agents (they can fix and resend their request) and
 * repairs it from servers, files and everything else (one bad tool description must not lose a
 * whole server).
 */
typedef enum JsonUtf8Mode {
    JSON_UTF8_REPAIR, /* each bad byte or lone surrogate escape becomes U+FFFD */
    JSON_UTF8_REFUSE, /* the text is refused with JSON_E_UTF8 */
} JsonUtf8Mode;

/**
 * Parse text[0..n) into *outp. Return 0, or a positive JSON_E_* with *outp NULL and, if errp,
 * a message (to free) naming the problem or the limit.
 */
int json_parse_full(yajl_val *outp, const char *text, size_t n, JsonUtf8Mode mode, char **errp);
/** Parse one NUL-terminated JSON text, repairing UTF-8; on failure NULL and *errp (to free). */
yajl_val json_parse(const char *text, char **errp);
/** Release a value; returns NULL. */
yajl_val json_free(yajl_val v);
/** Deep copy, member for member (a repeated key stays repeated); linear in the size of v. */
yajl_val json_copy(yajl_val v);
/**
 * Deep equality (numbers compare by their text); objects compare as sets of members, whatever
 * their order, in O(n log n) comparisons.
 */
bool json_equal(yajl_val a, yajl_val b);

yajl_val json_object_new(void);
yajl_val json_array_new(void);
yajl_val json_string_new(const char *s);
yajl_val json_string_newn(const char *s, size_t n);
/** A string from arbitrary bytes: invalid UTF-8 and NULs become U+FFFD. */
yajl_val json_string_new_lossy(const char *s, size_t n);
yajl_val json_int_new(int64_t i);
yajl_val json_double_new(double d);
yajl_val json_bool_new(bool b);
yajl_val json_null_new(void);
/** Parse a number token ("12", "-1.5e3") into a number node, keeping its text. */
yajl_val json_number_new_raw(const char *text);

/**
 * Set key to val in obj, taking ownership of val; an existing key is replaced. It looks for key
 * member by member: fine for the few members code names, quadratic when building an object of
 * many members from another one (json_object_append is for that).
 */
void json_object_set(yajl_val obj, const char *key, yajl_val val);
/**
 * Add key (copied) and val (owned) at the end of obj without looking for key: for building from
 * a source whose keys are unique already (a copy, a mapping of a parsed object), or followed by
 * json_object_dedupe. Building n members costs n, where json_object_set costs n^2/2 comparisons.
 */
void json_object_append(yajl_val obj, const char *key, yajl_val val);

/* Which member json_object_dedupe keeps of a key that appears more than once. */
typedef enum JsonDupRule {
    JSON_DUP_KEEP_FIRST, /* the first, where it is (an entry's own env over its envFile) */
    JSON_DUP_KEEP_LAST,  /* the last value, at the first one's place (JSON.parse's rule) */
} JsonDupRule;

/** Drop the repeated keys of obj (this level only) by rule, in O(n log n) comparisons. */
void json_object_dedupe(yajl_val obj, JsonDupRule rule);

/*
 * Key comparisons made by json_get, json_object_set and json_object_take in this thread (a
 * thread-local counter, as cheap as a local). Tests read it to prove that a path does not search
 * an object member by member for each of its members: code never does anything with it.
 */
extern _Thread_local uint64_t json_n_key_compares;
/** Detach and return the value of key (NULL if absent); the caller owns it. */
yajl_val json_object_take(yajl_val obj, const char *key);
/** Append val to arr, taking ownership. */
void json_array_push(yajl_val arr, yajl_val val);

/** Member of an object, or NULL when obj is not an object or lacks key. */
yajl_val json_get(yajl_val obj, const char *key);
/** String member or NULL. */
const char *json_get_string(yajl_val obj, const char *key);
/** Object member or NULL. */
yajl_val json_get_object(yajl_val obj, const char *key);
/** Array member or NULL. */
yajl_val json_get_array(yajl_val obj, const char *key);
/** Integer member into *outp; return 0, -ENOENT when absent, -EINVAL when not an integer. */
int json_get_int(yajl_val obj, const char *key, int64_t *outp);
/** Boolean member into *outp; return 0, -ENOENT when absent, -EINVAL when not a boolean. */
int json_get_bool(yajl_val obj, const char *key, bool *outp);

static inline size_t json_array_len(yajl_val a)
{
    return YAJL_IS_ARRAY(a) ? a->u.array.len : 0;
}

/** Element i, or NULL when a is not an array or is shorter. */
static inline yajl_val json_array_at(yajl_val a, size_t i)
{
    return i < json_array_len(a) ? a->u.array.values[i] : NULL;
}

/** Append the compact serialisation of v to sb (never a raw newline). */
void json_write(StrBuf *sb, yajl_val v);
/** Same, with object keys sorted recursively (stable text for hashing). */
void json_write_sorted(StrBuf *sb, yajl_val v);
/** Append s as a quoted, escaped JSON string; invalid UTF-8 in s is written as U+FFFD. */
void json_write_string(StrBuf *sb, const char *s, size_t n);
/** Serialise v into a new string. */
char *json_to_string(yajl_val v);
/** The members of object v as JSON text without its braces ("" for none or not an object). */
char *json_members_text(yajl_val v);
/** Short name of a value's type for error messages ("string", "object", ...). */
const char *json_type_name(yajl_val v);

/** Owning-local cleanup for values. */
static inline void json_freep(yajl_val *v)
{
    json_free(*v);
}
#define _cleanup_json_ _cleanup_(json_freep)
