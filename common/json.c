// SPDX-License-Identifier: MIT
// json: parse, build, query and serialise JSON values (yajl trees) without embedded newlines.

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>

#include <yajl/yajl_parse.h>

#include "common/json.h"
#include "common/utf8.h"

/* One open container while parsing; the stack never holds more than JSON_MAX_DEPTH of them. */
typedef struct Frame {
    yajl_val node;
    size_t cap; /* slots allocated in node's keys/values */
    char *key;  /* an object's member name waiting for its value */
} Frame;

typedef struct Builder {
    Frame stack[JSON_MAX_DEPTH];
    size_t depth;
    size_t n_values;
    yajl_val root;
    int error; /* JSON_E_DEPTH or JSON_E_VALUES when a callback stopped the parse */
} Builder;

static yajl_val node_new(yajl_type t);

static void frame_grow(Frame *f, size_t n, bool object)
{
    if (n < f->cap)
        return;
    f->cap = f->cap ? 2 * f->cap : 4;
    if (object) {
        f->node->u.object.keys = xrealloc((void *)f->node->u.object.keys, f->cap * sizeof(char *));
        f->node->u.object.values = xrealloc(f->node->u.object.values, f->cap * sizeof(yajl_val));
    } else {
        f->node->u.array.values = xrealloc(f->node->u.array.values, f->cap * sizeof(yajl_val));
    }
}

/* Attach v where the parse is; takes ownership. Returns 0 to stop yajl when a limit is hit. */
static int builder_add(Builder *b, yajl_val v)
{
    Frame *f;

    if (++b->n_values > JSON_MAX_VALUES) {
        b->error = JSON_E_VALUES;
        json_free(v);
        return 0;
    }
    if (b->depth == 0) {
        b->root = v;
        return 1;
    }
    f = &b->stack[b->depth - 1];
    if (YAJL_IS_OBJECT(f->node)) {
        size_t n = f->node->u.object.len;
        frame_grow(f, n, true);
        f->node->u.object.keys[n] = f->key;
        f->node->u.object.values[n] = v;
        f->node->u.object.len = n + 1;
        f->key = NULL;
    } else {
        size_t n = f->node->u.array.len;
        frame_grow(f, n, false);
        f->node->u.array.values[n] = v;
        f->node->u.array.len = n + 1;
    }
    return 1;
}

static int builder_open(Builder *b, yajl_type t)
{
    yajl_val v;

    if (b->depth >= JSON_MAX_DEPTH) {
        b->error = JSON_E_DEPTH;
        return 0;
    }
    v = node_new(t);
    if (!builder_add(b, v))
        return 0;
    b->stack[b->depth++] = (Frame){.node = v};
    return 1;
}

static int on_start_map(void *ctx)
{
    return builder_open(ctx, yajl_t_object);
}

static int on_start_array(void *ctx)
{
    return builder_open(ctx, yajl_t_array);
}

static int on_end(void *ctx)
{
    Builder *b = ctx;

    b->depth--;
    return 1;
}

static int on_map_key(void *ctx, const unsigned char *s, size_t n)
{
    Builder *b = ctx;
    Frame *f = &b->stack[b->depth - 1];

    free(f->key);
    /* The text was checked as UTF-8 already; only a \u0000 escape can still need repair. */
    if (memchr(s, '\0', n)) {
        yajl_val k = json_string_new_lossy((const char *)s, n);
        f->key = k->u.string;
        free(k);
    } else {
        f->key = xstrndup((const char *)s, n);
    }
    return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n)
{
    const char *c = (const char *)s;

    return builder_add(ctx,
                       memchr(s, '\0', n) ? json_string_new_lossy(c, n) : json_string_newn(c, n));
}

static int on_number(void *ctx, const char *s, size_t n)
{
    char buf[64];
    _cleanup_free_ char *big = NULL;

    if (n < sizeof(buf)) {
        memcpy(buf, s, n);
        buf[n] = '\0';
        return builder_add(ctx, json_number_new_raw(buf));
    }
    big = xstrndup(s, n);
    return builder_add(ctx, json_number_new_raw(big));
}

static int on_null(void *ctx)
{
    return builder_add(ctx, json_null_new());
}

static int on_boolean(void *ctx, int value)
{
    return builder_add(ctx, json_bool_new(value));
}

static const yajl_callbacks builder_callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

static char *values_message(void)
{
    return xasprintf("more than %d values in one JSON text (mcpd's limit)", JSON_MAX_VALUES);
}

/* Run yajl over text (already known to be valid UTF-8) into b; return 0 or a JSON_E_*. */
static int builder_run(Builder *b, const char *text, size_t n, char **errp)
{
    yajl_handle h = yajl_alloc(&builder_callbacks, NULL, b);
    yajl_status st;

    /* Comments stay allowed as before (editors' mcp.json files carry them). The strings were
     * validated strictly by utf8_json_check(), which yajl's own check is weaker than. */
    yajl_config(h, yajl_allow_comments, 1);
    yajl_config(h, yajl_dont_validate_strings, 1);
    st = yajl_parse(h, (const unsigned char *)text, n);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    if (st != yajl_status_ok && !b->error) {
        unsigned char *e = yajl_get_error(h, 0, (const unsigned char *)text, n);
        char *nl = strchr((char *)e, '\n');
        if (nl)
            *nl = '\0';
        if (errp)
            *errp = xstrdup(e[0] ? (char *)e : "invalid JSON");
        yajl_free_error(h, e);
        b->error = JSON_E_SYNTAX;
    } else if (b->error == JSON_E_DEPTH && errp) {
        *errp = xasprintf("JSON nested deeper than %d levels (mcpd's limit)", JSON_MAX_DEPTH);
    } else if (b->error == JSON_E_VALUES && errp) {
        *errp = values_message();
    }
    yajl_free(h);
    for (size_t i = 0; i < b->depth; i++)
        free(b->stack[i].key);
    if (b->error)
        b->root = json_free(b->root);
    return b->error;
}

int json_parse_full(yajl_val *outp, const char *text, size_t n, JsonUtf8Mode mode, char **errp)
{
    _cleanup_free_ Builder *b = xcalloc(1, sizeof(*b));
    _cleanup_free_ char *fixed = NULL;
    Utf8Problem prob;
    size_t n_commas = 0;
    int r;

    *outp = NULL;
    if (!utf8_json_check(text, n, &prob, &n_commas)) {
        if (mode == JSON_UTF8_REFUSE) {
            if (errp)
                *errp = xasprintf("invalid UTF-8 at byte %zu (%s); send UTF-8 text", prob.offset,
                                  prob.why);
            return JSON_E_UTF8;
        }
        fixed = utf8_json_repair(text, n, NULL);
        text = fixed;
        n = strlen(fixed);
        /* The check stopped at the first problem: count the repaired text's commas in full. */
        utf8_json_check(text, n, NULL, &n_commas);
    }
    /* Values outnumber commas: refuse a text that must be too large before building any of it,
     * so the refusal costs one pass over the bytes, not a tree of JSON_MAX_VALUES. */
    if (n_commas >= JSON_MAX_VALUES) {
        if (errp)
            *errp = values_message();
        return JSON_E_VALUES;
    }
    r = builder_run(b, text, n, errp);
    *outp = b->root;
    return r;
}

yajl_val json_parse(const char *text, char **errp)
{
    yajl_val v;

    json_parse_full(&v, text, strlen(text), JSON_UTF8_REPAIR, errp);
    return v;
}

yajl_val json_free(yajl_val v)
{
    if (v)
        yajl_tree_free(v);
    return NULL;
}

static yajl_val node_new(yajl_type t)
{
    yajl_val v = xcalloc(1, sizeof(*v));
    v->type = t;
    return v;
}

yajl_val json_object_new(void)
{
    return node_new(yajl_t_object);
}

yajl_val json_array_new(void)
{
    return node_new(yajl_t_array);
}

yajl_val json_string_newn(const char *s, size_t n)
{
    yajl_val v = node_new(yajl_t_string);
    v->u.string = xstrndup(s, n);
    return v;
}

yajl_val json_string_new(const char *s)
{
    return json_string_newn(s, strlen(s));
}

yajl_val json_string_new_lossy(const char *s, size_t n)
{
    StrBuf sb = STRBUF_INIT;
    const unsigned char *p = (const unsigned char *)s;
    yajl_val v = node_new(yajl_t_string);

    strbuf_reserve(&sb, n);
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq_len(p + i, n - i);
        if (k) {
            strbuf_append(&sb, p + i, k);
            i += k;
        } else {
            strbuf_append(&sb, UTF8_REPLACEMENT, UTF8_REPLACEMENT_LEN);
            i++;
        }
    }
    v->u.string = strbuf_detach(&sb, NULL);
    return v;
}

/* Integers of at most 53 bits are exactly representable as doubles (IEEE 754 binary64). */
#define EXACT_DOUBLE_INT (INT64_C(1) << 53)

yajl_val json_number_new_raw(const char *text)
{
    yajl_val v = node_new(yajl_t_number);
    char *end;

    v->u.number.r = xstrdup(text);
    errno = 0;
    v->u.number.i = strtoll(text, &end, 10);
    if (errno == 0 && *end == '\0') {
        v->u.number.flags |= YAJL_NUMBER_INT_VALID;
        /* Integers up to 2^53 convert exactly, without strtod (the slow half of a parse). */
        if (v->u.number.i >= -EXACT_DOUBLE_INT && v->u.number.i <= EXACT_DOUBLE_INT) {
            v->u.number.d = (double)v->u.number.i;
            v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
            return v;
        }
    }
    errno = 0;
    v->u.number.d = strtod(text, &end);
    if (errno == 0 && *end == '\0')
        v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
    return v;
}

yajl_val json_int_new(int64_t i)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%" PRId64, i);
    return json_number_new_raw(buf);
}

yajl_val json_double_new(double d)
{
    char buf[64];

    if (!isfinite(d))
        return json_null_new();
    snprintf(buf, sizeof(buf), "%.17g", d);
    return json_number_new_raw(buf);
}

yajl_val json_bool_new(bool b)
{
    return node_new(b ? yajl_t_true : yajl_t_false);
}

yajl_val json_null_new(void)
{
    return node_new(yajl_t_null);
}

yajl_val json_copy(yajl_val v)
{
    yajl_val c;

    if (!v)
        return NULL;
    switch (v->type) {
    case yajl_t_string:
        return json_string_new(v->u.string);
    case yajl_t_number:
        return json_number_new_raw(v->u.number.r);
    case yajl_t_object:
        c = json_object_new();
        for (size_t i = 0; i < v->u.object.len; i++)
            json_object_append(c, v->u.object.keys[i], json_copy(v->u.object.values[i]));
        return c;
    case yajl_t_array:
        c = json_array_new();
        for (size_t i = 0; i < v->u.array.len; i++)
            json_array_push(c, json_copy(v->u.array.values[i]));
        return c;
    default:
        return node_new(v->type);
    }
}

_Thread_local uint64_t json_n_key_compares;

/* A member's key and position, to order members by key. */
typedef struct KeyIndex {
    const char *key;
    size_t index;
} KeyIndex;

static int key_index_cmp(const void *a, const void *b)
{
    const KeyIndex *x = a, *y = b;
    int r = strcmp(x->key, y->key);

    return r ? r : (x->index < y->index ? -1 : x->index > y->index);
}

/* The members of obj ordered by key, then by position (to free); NULL for none. */
static KeyIndex *members_by_key(yajl_val obj)
{
    size_t n = obj->u.object.len;
    KeyIndex *idx = n ? xmalloc(n * sizeof(*idx)) : NULL;

    for (size_t i = 0; i < n; i++)
        idx[i] = (KeyIndex){obj->u.object.keys[i], i};
    if (n > 1)
        qsort(idx, n, sizeof(*idx), key_index_cmp);
    return idx;
}

/*
 * Objects up to this many members compare by looking each key up in the other: cheaper than
 * sorting both for the small objects most comparisons see, and at most 8 * 8 comparisons.
 */
#define EQUAL_LOOKUP_MAX 8

static bool objects_equal(yajl_val a, yajl_val b)
{
    size_t n = a->u.object.len;
    _cleanup_free_ KeyIndex *ka = NULL, *kb = NULL;

    if (n != b->u.object.len)
        return false;
    if (n <= EQUAL_LOOKUP_MAX) {
        for (size_t i = 0; i < n; i++) {
            yajl_val bv = json_get(b, a->u.object.keys[i]);
            if (!bv || !json_equal(a->u.object.values[i], bv))
                return false;
        }
        return true;
    }
    ka = members_by_key(a);
    kb = members_by_key(b);
    for (size_t i = 0; i < n; i++)
        if (!streq(ka[i].key, kb[i].key) ||
            !json_equal(a->u.object.values[ka[i].index], b->u.object.values[kb[i].index]))
            return false;
    return true;
}

bool json_equal(yajl_val a, yajl_val b)
{
    if (!a || !b)
        return a == b;
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case yajl_t_string:
        return streq(a->u.string, b->u.string);
    case yajl_t_number:
        return streq(a->u.number.r, b->u.number.r);
    case yajl_t_object:
        return objects_equal(a, b);
    case yajl_t_array:
        if (a->u.array.len != b->u.array.len)
            return false;
        for (size_t i = 0; i < a->u.array.len; i++)
            if (!json_equal(a->u.array.values[i], b->u.array.values[i]))
                return false;
        return true;
    default:
        return true;
    }
}

static ssize_t object_index(yajl_val obj, const char *key)
{
    for (size_t i = 0; i < obj->u.object.len; i++) {
        json_n_key_compares++;
        if (streq(obj->u.object.keys[i], key))
            return (ssize_t)i;
    }
    return -1;
}

/*
 * Room for one more element in an array of n pointers: doubled when full. Parsed nodes are
 * sized exactly, so the room is asked of the allocator rather than kept; growing by one was a
 * copy per element wherever realloc cannot grow in place (always under ASan), quadratic in a
 * long array: 65536 TOML tables took 47 s and 1.5 GiB.
 */
static void *grow_for_one(void *v, size_t n, size_t size)
{
    if (v && (n + 1) * size <= malloc_usable_size(v))
        return v;
    return xrealloc(v, MAX(n * 2, (size_t)4) * size);
}

void json_object_set(yajl_val obj, const char *key, yajl_val val)
{
    ssize_t i = object_index(obj, key);

    if (i >= 0) {
        json_free(obj->u.object.values[i]);
        obj->u.object.values[i] = val;
        return;
    }
    json_object_append(obj, key, val);
}

void json_object_append(yajl_val obj, const char *key, yajl_val val)
{
    size_t n = obj->u.object.len;

    obj->u.object.keys = grow_for_one((void *)obj->u.object.keys, n, sizeof(char *));
    obj->u.object.values = grow_for_one(obj->u.object.values, n, sizeof(yajl_val));
    obj->u.object.keys[n] = xstrdup(key);
    obj->u.object.values[n] = val;
    obj->u.object.len = n + 1;
}

void json_object_dedupe(yajl_val obj, JsonDupRule rule)
{
    size_t n = YAJL_IS_OBJECT(obj) ? obj->u.object.len : 0, kept = 0;
    _cleanup_free_ KeyIndex *idx = NULL;
    _cleanup_free_ bool *drop = NULL;

    if (n < 2)
        return;
    idx = members_by_key(obj);
    drop = xcalloc(n, sizeof(*drop));
    /* Equal keys are next to each other, in the order they appear: the first of each run stays
     * where it is, with the last one's value for KEEP_LAST. */
    for (size_t i = 0, end; i < n; i = end) {
        for (end = i + 1; end < n && streq(idx[i].key, idx[end].key); end++)
            drop[idx[end].index] = true;
        if (rule == JSON_DUP_KEEP_LAST && end - i > 1) {
            yajl_val *vals = obj->u.object.values, last = vals[idx[end - 1].index];
            vals[idx[end - 1].index] = vals[idx[i].index];
            vals[idx[i].index] = last;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (drop[i]) {
            free((char *)obj->u.object.keys[i]);
            json_free(obj->u.object.values[i]);
            continue;
        }
        obj->u.object.keys[kept] = obj->u.object.keys[i];
        obj->u.object.values[kept++] = obj->u.object.values[i];
    }
    obj->u.object.len = kept;
}

yajl_val json_object_take(yajl_val obj, const char *key)
{
    ssize_t i;
    yajl_val v;

    if (!YAJL_IS_OBJECT(obj) || (i = object_index(obj, key)) < 0)
        return NULL;
    v = obj->u.object.values[i];
    free((void *)obj->u.object.keys[i]);
    for (size_t j = (size_t)i + 1; j < obj->u.object.len; j++) {
        obj->u.object.keys[j - 1] = obj->u.object.keys[j];
        obj->u.object.values[j - 1] = obj->u.object.values[j];
    }
    obj->u.object.len--;
    return v;
}

void json_array_push(yajl_val arr, yajl_val val)
{
    size_t n = arr->u.array.len;

    arr->u.array.values = grow_for_one(arr->u.array.values, n, sizeof(yajl_val));
    arr->u.array.values[n] = val;
    arr->u.array.len = n + 1;
}

yajl_val json_get(yajl_val obj, const char *key)
{
    ssize_t i;

    if (!YAJL_IS_OBJECT(obj) || (i = object_index(obj, key)) < 0)
        return NULL;
    return obj->u.object.values[i];
}

const char *json_get_string(yajl_val obj, const char *key)
{
    yajl_val v = json_get(obj, key);
    return YAJL_IS_STRING(v) ? v->u.string : NULL;
}

yajl_val json_get_object(yajl_val obj, const char *key)
{
    yajl_val v = json_get(obj, key);
    return YAJL_IS_OBJECT(v) ? v : NULL;
}

yajl_val json_get_array(yajl_val obj, const char *key)
{
    yajl_val v = json_get(obj, key);
    return YAJL_IS_ARRAY(v) ? v : NULL;
}

int json_get_int(yajl_val obj, const char *key, int64_t *outp)
{
    yajl_val v = json_get(obj, key);

    if (!v)
        return -ENOENT;
    if (!YAJL_IS_INTEGER(v))
        return -EINVAL;
    *outp = v->u.number.i;
    return 0;
}

int json_get_bool(yajl_val obj, const char *key, bool *outp)
{
    yajl_val v = json_get(obj, key);

    if (!v)
        return -ENOENT;
    if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
        return -EINVAL;
    *outp = YAJL_IS_TRUE(v);
    return 0;
}

void json_write_string(StrBuf *sb, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;

    strbuf_reserve(sb, n + 2);
    strbuf_putc(sb, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')
            continue;
        if (c >= 0x80) {
            /* Parsed strings are valid already; this catches text built from raw bytes
             * (stderr lines, file names), so mcpd never writes invalid UTF-8. */
            size_t k = utf8_seq_len((const unsigned char *)s + i, n - i);
            if (k) {
                i += k - 1;
                continue;
            }
            strbuf_append(sb, s + run, i - run);
            strbuf_append(sb, UTF8_REPLACEMENT, UTF8_REPLACEMENT_LEN);
            run = i + 1;
            continue;
        }
        strbuf_append(sb, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            strbuf_append(sb, "\\\"", 2);
            break;
        case '\\':
            strbuf_append(sb, "\\\\", 2);
            break;
        case '\n':
            strbuf_append(sb, "\\n", 2);
            break;
        case '\r':
            strbuf_append(sb, "\\r", 2);
            break;
        case '\t':
            strbuf_append(sb, "\\t", 2);
            break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
            strbuf_append(sb, u, sizeof(u));
        }
        }
    }
    strbuf_append(sb, s + run, n - run);
    strbuf_putc(sb, '"');
}

static void write_value(StrBuf *sb, yajl_val v, bool sorted)
{
    switch (v ? v->type : yajl_t_null) {
    case yajl_t_string:
        json_write_string(sb, v->u.string, strlen(v->u.string));
        break;
    case yajl_t_number:
        strbuf_puts(sb, v->u.number.r);
        break;
    case yajl_t_true:
        strbuf_append(sb, "true", 4);
        break;
    case yajl_t_false:
        strbuf_append(sb, "false", 5);
        break;
    case yajl_t_array:
        strbuf_putc(sb, '[');
        for (size_t i = 0; i < v->u.array.len; i++) {
            if (i)
                strbuf_putc(sb, ',');
            write_value(sb, v->u.array.values[i], sorted);
        }
        strbuf_putc(sb, ']');
        break;
    case yajl_t_object: {
        size_t n = v->u.object.len;
        _cleanup_free_ KeyIndex *order = sorted ? members_by_key(v) : NULL;

        strbuf_putc(sb, '{');
        for (size_t i = 0; i < n; i++) {
            size_t k = order ? order[i].index : i;
            if (i)
                strbuf_putc(sb, ',');
            json_write_string(sb, v->u.object.keys[k], strlen(v->u.object.keys[k]));
            strbuf_putc(sb, ':');
            write_value(sb, v->u.object.values[k], sorted);
        }
        strbuf_putc(sb, '}');
        break;
    }
    default:
        strbuf_append(sb, "null", 4);
    }
}

void json_write(StrBuf *sb, yajl_val v)
{
    write_value(sb, v, false);
}

void json_write_sorted(StrBuf *sb, yajl_val v)
{
    write_value(sb, v, true);
}

char *json_to_string(yajl_val v)
{
    StrBuf sb = STRBUF_INIT;

    json_write(&sb, v);
    return strbuf_detach(&sb, NULL);
}

char *json_members_text(yajl_val v)
{
    StrBuf sb = STRBUF_INIT;

    if (!YAJL_IS_OBJECT(v) || !v->u.object.len)
        return xstrdup("");
    json_write(&sb, v);
    sb.data[sb.len - 1] = '\0';
    memmove(sb.data, sb.data + 1, sb.len - 1);
    return strbuf_detach(&sb, NULL);
}

const char *json_type_name(yajl_val v)
{
    switch (v ? v->type : yajl_t_null) {
    case yajl_t_string:
        return "string";
    case yajl_t_number:
        return "number";
    case yajl_t_object:
        return "object";
    case yajl_t_array:
        return "array";
    case yajl_t_true:
    case yajl_t_false:
        return "boolean";
    default:
        return "null";
    }
}
