// SPDX-License-Identifier: MIT
// json: parse, build, query and serialise JSON values (yajl trees) without embedded newlines.

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "common/json.h"

yajl_val json_parse(const char *text, char **errp)
{
    char err[256];
    yajl_val v;

    err[0] = '\0';
    v = yajl_tree_parse(text, err, sizeof(err));
    if (!v && errp) {
        /* yajl's messages span lines and end in a newline; keep the first line only. */
        char *nl = strchr(err, '\n');
        if (nl)
            *nl = '\0';
        *errp = xstrdup(err[0] ? err : "invalid JSON");
    }
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

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 if it is not valid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    size_t len;
    uint32_t cp;

    if (p[0] >= 0x01 && p[0] < 0x80)
        return 1;
    if ((p[0] & 0xe0) == 0xc0)
        len = 2, cp = p[0] & 0x1f;
    else if ((p[0] & 0xf0) == 0xe0)
        len = 3, cp = p[0] & 0x0f;
    else if ((p[0] & 0xf8) == 0xf0)
        len = 4, cp = p[0] & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    /* Reject overlong forms, surrogates and values past U+10FFFF. */
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

yajl_val json_string_new_lossy(const char *s, size_t n)
{
    StrBuf sb = STRBUF_INIT;
    const unsigned char *p = (const unsigned char *)s;
    yajl_val v = node_new(yajl_t_string);

    strbuf_reserve(&sb, n);
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(p + i, n - i);
        if (k) {
            strbuf_append(&sb, p + i, k);
            i += k;
        } else {
            strbuf_append(&sb, "\xef\xbf\xbd", 3);
            i++;
        }
    }
    v->u.string = strbuf_detach(&sb, NULL);
    return v;
}

yajl_val json_number_new_raw(const char *text)
{
    yajl_val v = node_new(yajl_t_number);
    char *end;

    v->u.number.r = xstrdup(text);
    errno = 0;
    v->u.number.i = strtoll(text, &end, 10);
    if (errno == 0 && *end == '\0')
        v->u.number.flags |= YAJL_NUMBER_INT_VALID;
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
            json_object_set(c, v->u.object.keys[i], json_copy(v->u.object.values[i]));
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
        if (a->u.object.len != b->u.object.len)
            return false;
        for (size_t i = 0; i < a->u.object.len; i++) {
            yajl_val bv = json_get(b, a->u.object.keys[i]);
            if (!bv || !json_equal(a->u.object.values[i], bv))
                return false;
        }
        return true;
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
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (streq(obj->u.object.keys[i], key))
            return (ssize_t)i;
    return -1;
}

void json_object_set(yajl_val obj, const char *key, yajl_val val)
{
    ssize_t i = object_index(obj, key);
    size_t n = obj->u.object.len;

    if (i >= 0) {
        json_free(obj->u.object.values[i]);
        obj->u.object.values[i] = val;
        return;
    }
    /* Parsed nodes are sized exactly, so grow by one; realloc amortises in practice. */
    obj->u.object.keys = xrealloc((void *)obj->u.object.keys, (n + 1) * sizeof(char *));
    obj->u.object.values = xrealloc(obj->u.object.values, (n + 1) * sizeof(yajl_val));
    obj->u.object.keys[n] = xstrdup(key);
    obj->u.object.values[n] = val;
    obj->u.object.len = n + 1;
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

    arr->u.array.values = xrealloc(arr->u.array.values, (n + 1) * sizeof(yajl_val));
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
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
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

static int cmp_keys(const void *a, const void *b)
{
    const char *const *x = a, *const *y = b;
    return strcmp(*x, *y);
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
        const char **keys = (const char **)v->u.object.keys;
        _cleanup_free_ const char **order = NULL;

        if (sorted && n > 1) {
            order = xmalloc(n * sizeof(char *));
            memcpy(order, keys, n * sizeof(char *));
            qsort(order, n, sizeof(char *), cmp_keys);
            keys = order;
        }
        strbuf_putc(sb, '{');
        for (size_t i = 0; i < n; i++) {
            if (i)
                strbuf_putc(sb, ',');
            json_write_string(sb, keys[i], strlen(keys[i]));
            strbuf_putc(sb, ':');
            write_value(sb, json_get(v, keys[i]), sorted);
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
