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
 */

/** Parse one NUL-terminated JSON text; on failure return NULL and, if errp, a message to free. */
yajl_val json_parse(const char *text, char **errp);
/** Release a value; returns NULL. */
yajl_val json_free(yajl_val v);
/** Deep copy. */
yajl_val json_copy(yajl_val v);
/** Deep equality (numbers compare by their text). */
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

/** Set key to val in obj, taking ownership of val; an existing key is replaced. */
void json_object_set(yajl_val obj, const char *key, yajl_val val);
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

static inline yajl_val json_array_at(yajl_val a, size_t i)
{
    return a->u.array.values[i];
}

/** Append the compact serialisation of v to sb (never a raw newline). */
void json_write(StrBuf *sb, yajl_val v);
/** Same, with object keys sorted recursively (stable text for hashing). */
void json_write_sorted(StrBuf *sb, yajl_val v);
/** Append s as a quoted, escaped JSON string. */
void json_write_string(StrBuf *sb, const char *s, size_t n);
/** Serialise v into a new string. */
char *json_to_string(yajl_val v);
/** Short name of a value's type for error messages ("string", "object", ...). */
const char *json_type_name(yajl_val v);

/** Owning-local cleanup for values. */
static inline void json_freep(yajl_val *v)
{
    json_free(*v);
}
#define _cleanup_json_ _cleanup_(json_freep)
