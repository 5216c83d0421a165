// SPDX-License-Identifier: MIT
// test-json: unit tests for parsing, building, querying and writing JSON values.

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "tests/unit/test.h"

static const char FFFD[] = "\xef\xbf\xbd";

/* Serialise v (compact, in place order) into a new string. */
static char *write_str(yajl_val v)
{
    return json_to_string(v);
}

static char *write_sorted_str(yajl_val v)
{
    StrBuf sb = STRBUF_INIT;

    json_write_sorted(&sb, v);
    return strbuf_detach(&sb, NULL);
}

/* Strict UTF-8 check (no overlongs, surrogates, values past U+10FFFF or NULs). */
static bool utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;

    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t len;
        uint32_t cp;
        if (c == 0)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf)
            len = 2, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            len = 3, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            len = 4, cp = c & 0x07;
        else
            return false;
        if (i + len > n)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (p[i + k] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
            return false;
        i += len;
    }
    return true;
}

/* s with every U+FFFD removed (newly allocated); *countp gets how many there were. */
static char *strip_fffd(const char *s, size_t *countp)
{
    StrBuf sb = STRBUF_INIT;
    size_t count = 0;

    while (*s) {
        if (strncmp(s, FFFD, 3) == 0) {
            count++;
            s += 3;
        } else {
            strbuf_putc(&sb, *s++);
        }
    }
    *countp = count;
    return strbuf_detach(&sb, NULL);
}

static void test_parse_valid(void)
{
    char *err = NULL;
    _cleanup_json_ yajl_val v =
        json_parse("{\"s\":\"x\",\"n\":-12,\"d\":1.5,\"t\":true,\"f\":false,\"z\":null,"
                   "\"a\":[1,2,3],\"o\":{\"k\":\"v\"}}",
                   &err);

    CHECK(v != NULL);
    CHECK(err == NULL);
    CHECK(YAJL_IS_OBJECT(v));
    CHECK_STREQ(json_get_string(v, "s"), "x");
    CHECK(YAJL_IS_INTEGER(json_get(v, "n")));
    CHECK(YAJL_IS_DOUBLE(json_get(v, "d")));
    CHECK(YAJL_IS_TRUE(json_get(v, "t")));
    CHECK(YAJL_IS_FALSE(json_get(v, "f")));
    CHECK(YAJL_IS_NULL(json_get(v, "z")));
    CHECK_INTEQ(json_array_len(json_get_array(v, "a")), 3);
    CHECK_STREQ(json_get_string(json_get_object(v, "o"), "k"), "v");

    /* Scalars at the top level are JSON texts too. */
    _cleanup_json_ yajl_val s = json_parse("\"top\"", NULL);
    CHECK(YAJL_IS_STRING(s));
    CHECK_STREQ(s ? s->u.string : NULL, "top");
}

static void test_parse_invalid(void)
{
    static const char *const bad[] = {
        "",     "{",       "[1,]",    "{\"a\":}", "{\"a\" 1}", "nul", "\"unterminated",
        "{} x", "[1] [2]", "{'a':1}",
    };

    for (size_t i = 0; i < N_ELEMENTS(bad); i++) {
        char *err = NULL;
        yajl_val v = json_parse(bad[i], &err);
        CHECK(v == NULL);
        CHECK(err != NULL);
        if (err) {
            CHECK(err[0] != '\0');
            /* yajl's multi-line message is cut to one line. */
            CHECK(strchr(err, '\n') == NULL);
        }
        if (v || !err)
            fprintf(stderr, "  input %zu: %s\n", i, bad[i]);
        free(err);
        json_free(v);
    }
    /* errp is optional. */
    CHECK(json_parse("{", NULL) == NULL);
}

static void test_object_set_replace_take(void)
{
    _cleanup_json_ yajl_val o = json_object_new();
    _cleanup_free_ char *text = NULL;

    json_object_set(o, "a", json_int_new(1));
    json_object_set(o, "b", json_string_new("two"));
    CHECK_INTEQ(o->u.object.len, 2);
    /* Replacing keeps one entry and its position. */
    json_object_set(o, "a", json_string_new("one"));
    CHECK_INTEQ(o->u.object.len, 2);
    CHECK_STREQ(json_get_string(o, "a"), "one");
    text = write_str(o);
    CHECK_STREQ(text, "{\"a\":\"one\",\"b\":\"two\"}");

    yajl_val t = json_object_take(o, "a");
    CHECK(t != NULL);
    CHECK_STREQ(t ? t->u.string : NULL, "one");
    CHECK_INTEQ(o->u.object.len, 1);
    CHECK(json_get(o, "a") == NULL);
    CHECK_STREQ(json_get_string(o, "b"), "two");
    json_free(t);

    CHECK(json_object_take(o, "missing") == NULL);
    CHECK_INTEQ(o->u.object.len, 1);
    _cleanup_json_ yajl_val arr = json_array_new();
    CHECK(json_object_take(arr, "a") == NULL);
    CHECK(json_object_take(NULL, "a") == NULL);
}

static void test_edit_parsed_in_place(void)
{
    _cleanup_json_ yajl_val v = json_parse("{\"a\":1,\"b\":[true],\"c\":\"x\"}", NULL);
    _cleanup_free_ char *text = NULL;

    CHECK(v != NULL);
    if (!v)
        return;
    json_object_set(v, "d", json_null_new());
    json_object_set(v, "a", json_string_new("replaced"));
    json_array_push(json_get_array(v, "b"), json_int_new(7));
    json_free(json_object_take(v, "c"));
    text = write_str(v);
    CHECK_STREQ(text, "{\"a\":\"replaced\",\"b\":[true,7],\"d\":null}");
}

static void test_arrays(void)
{
    _cleanup_json_ yajl_val a = json_array_new();
    _cleanup_free_ char *text = NULL;

    CHECK_INTEQ(json_array_len(a), 0);
    for (int i = 0; i < 100; i++)
        json_array_push(a, json_int_new(i));
    CHECK_INTEQ(json_array_len(a), 100);
    CHECK_INTEQ(json_array_at(a, 0)->u.number.i, 0);
    CHECK_INTEQ(json_array_at(a, 99)->u.number.i, 99);

    _cleanup_json_ yajl_val small = json_array_new();
    json_array_push(small, json_string_new("x"));
    json_array_push(small, json_array_new());
    json_array_push(small, json_object_new());
    text = write_str(small);
    CHECK_STREQ(text, "[\"x\",[],{}]");

    /* Non-arrays have no length. */
    _cleanup_json_ yajl_val o = json_object_new();
    CHECK_INTEQ(json_array_len(o), 0);
    CHECK_INTEQ(json_array_len(NULL), 0);
}

static void test_copy_equal(void)
{
    const char *text = "{\"a\":[1,2.50,\"s\",null,true,false,{\"x\":{}}],\"b\":{\"c\":\"d\"},"
                       "\"e\":-0}";
    _cleanup_json_ yajl_val v = json_parse(text, NULL);
    _cleanup_json_ yajl_val c = json_copy(v);
    _cleanup_free_ char *vt = NULL, *ct = NULL;

    CHECK(v && c && v != c);
    CHECK(json_equal(v, c));
    vt = write_str(v);
    ct = write_str(c);
    CHECK_STREQ(ct, vt);

    /* The copy is deep: changing it leaves the original alone. */
    json_object_set(json_get_object(c, "b"), "c", json_string_new("changed"));
    CHECK(!json_equal(v, c));
    CHECK_STREQ(json_get_string(json_get_object(v, "b"), "c"), "d");

    CHECK(json_copy(NULL) == NULL);
}

static void test_equal_rules(void)
{
    struct {
        const char *a, *b;
        bool equal;
    } cases[] = {
        {"{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}", true}, /* key order does not matter */
        {"[1,2]", "[2,1]", false},                        /* element order does */
        {"[1,2]", "[1,2,3]", false},
        {"{\"a\":1}", "{\"a\":1,\"b\":1}", false},
        {"{\"a\":1,\"b\":1}", "{\"a\":1}", false},
        {"{\"a\":1}", "{\"b\":1}", false},
        {"1", "1", true},
        {"1", "1.0", false}, /* numbers compare by text */
        {"1", "\"1\"", false},
        {"true", "false", false},
        {"null", "null", true},
        {"\"x\"", "\"x\"", true},
        {"\"x\"", "\"y\"", false},
        {"{\"a\":[{\"b\":null}]}", "{\"a\":[{\"b\":null}]}", true},
        {"{\"a\":[{\"b\":null}]}", "{\"a\":[{\"b\":false}]}", false},
    };

    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        yajl_val a = json_parse(cases[i].a, NULL), b = json_parse(cases[i].b, NULL);
        CHECK(a && b);
        if (json_equal(a, b) != cases[i].equal || json_equal(b, a) != cases[i].equal) {
            CHECK(!"json_equal gave the wrong answer");
            fprintf(stderr, "  %s vs %s\n", cases[i].a, cases[i].b);
        }
        json_free(a);
        json_free(b);
    }
    _cleanup_json_ yajl_val n = json_null_new();
    CHECK(json_equal(NULL, NULL));
    CHECK(!json_equal(n, NULL));
    CHECK(!json_equal(NULL, n));
}

static void test_write_escaping(void)
{
    _cleanup_json_ yajl_val s = json_string_new("q\"b\\s/\x01\x1f\n\r\t\b\f\x7f é");
    _cleanup_free_ char *text = write_str(s);

    CHECK_STREQ(text, "\"q\\\"b\\\\s/\\u0001\\u001f\\n\\r\\t\\u0008\\u000c\x7f é\"");

    /* Embedded NUL through the length-taking writer. */
    StrBuf sb = STRBUF_INIT;
    json_write_string(&sb, "a\0b", 3);
    CHECK_STREQ(strbuf_str(&sb), "\"a\\u0000b\"");
    strbuf_reset(&sb);
    json_write_string(&sb, "", 0);
    CHECK_STREQ(strbuf_str(&sb), "\"\"");
    strbuf_deinit(&sb);

    /* Every control character is escaped; the output parses back to the same string. */
    char all[32];
    for (int i = 1; i < 32; i++)
        all[i - 1] = (char)i;
    all[31] = '\0';
    _cleanup_json_ yajl_val ctl = json_string_new(all);
    _cleanup_free_ char *ctl_text = write_str(ctl);
    bool raw_ctl = false;
    for (const char *p = ctl_text; *p; p++)
        if ((unsigned char)*p < 0x20)
            raw_ctl = true;
    CHECK(!raw_ctl);
    _cleanup_json_ yajl_val back = json_parse(ctl_text, NULL);
    CHECK(back && YAJL_IS_STRING(back));
    CHECK_STREQ(back ? back->u.string : NULL, all);
}

static void test_write_no_raw_newline(void)
{
    /* Newlines in keys, values and nested values: the line framing must never see one. */
    _cleanup_json_ yajl_val o = json_object_new();
    _cleanup_json_ yajl_val inner = json_array_new();

    json_array_push(inner, json_string_new("line1\nline2\r\n"));
    json_object_set(o, "key\nwith newline", json_string_new("\n\n"));
    json_object_set(o, "arr", inner);
    inner = NULL;
    _cleanup_free_ char *text = write_str(o);
    _cleanup_free_ char *sorted = write_sorted_str(o);
    CHECK(strchr(text, '\n') == NULL);
    CHECK(strchr(text, '\r') == NULL);
    CHECK(strchr(sorted, '\n') == NULL);
    CHECK_STREQ(text, "{\"key\\nwith newline\":\"\\n\\n\",\"arr\":[\"line1\\nline2\\r\\n\"]}");

    _cleanup_json_ yajl_val back = json_parse(text, NULL);
    CHECK(json_equal(back, o));
}

static void test_numbers_keep_text(void)
{
    const char *text = "[1.50,1e2,1E+2,-0,12345678901234567890,0.1,-7,1.0e-10]";
    _cleanup_json_ yajl_val v = json_parse(text, NULL);
    _cleanup_free_ char *out = write_str(v);

    CHECK_STREQ(out, text);

    _cleanup_json_ yajl_val raw = json_number_new_raw("2.50");
    _cleanup_free_ char *raw_text = write_str(raw);
    CHECK_STREQ(raw_text, "2.50");
    CHECK(YAJL_IS_DOUBLE(raw));
    CHECK(!YAJL_IS_INTEGER(raw));

    _cleanup_json_ yajl_val i = json_int_new(INT64_MIN);
    _cleanup_free_ char *i_text = write_str(i);
    CHECK_STREQ(i_text, "-9223372036854775808");
    CHECK(YAJL_IS_INTEGER(i));
    CHECK(i->u.number.i == INT64_MIN);

    _cleanup_json_ yajl_val d = json_double_new(0.5);
    _cleanup_free_ char *d_text = write_str(d);
    CHECK_STREQ(d_text, "0.5");

    /* Not representable in JSON: written as null rather than as invalid text. */
    _cleanup_json_ yajl_val nan = json_double_new(NAN);
    _cleanup_json_ yajl_val inf = json_double_new(INFINITY);
    _cleanup_free_ char *nan_text = write_str(nan), *inf_text = write_str(inf);
    CHECK_STREQ(nan_text, "null");
    CHECK_STREQ(inf_text, "null");

    /* A copy keeps the text as well. */
    _cleanup_json_ yajl_val c = json_copy(v);
    _cleanup_free_ char *c_text = write_str(c);
    CHECK_STREQ(c_text, text);
}

static void test_write_sorted(void)
{
    const char *text = "{\"b\":1,\"a\":{\"d\":[{\"z\":1,\"y\":{\"q\":0,\"p\":1}}],\"c\":2},"
                       "\"B\":null,\"aa\":[]}";
    _cleanup_json_ yajl_val v = json_parse(text, NULL);
    _cleanup_free_ char *sorted = write_sorted_str(v);
    _cleanup_free_ char *plain = write_str(v);

    CHECK_STREQ(sorted,
                "{\"B\":null,\"a\":{\"c\":2,\"d\":[{\"y\":{\"p\":1,\"q\":0},\"z\":1}]},\"aa\":[],"
                "\"b\":1}");
    /* Sorting is on output only: the value itself keeps its order. */
    CHECK_STREQ(plain, text);

    /* Two objects equal up to key order give identical sorted text. */
    _cleanup_json_ yajl_val w =
        json_parse("{\"aa\":[],\"B\":null,\"a\":{\"c\":2,\"d\":[{\"y\":{\"p\":1,\"q\":0},"
                   "\"z\":1}]},\"b\":1}",
                   NULL);
    _cleanup_free_ char *w_sorted = write_sorted_str(w);
    CHECK_STREQ(w_sorted, sorted);
}

static void test_lossy_valid_kept(void)
{
    /* ASCII, 2-, 3- and 4-byte sequences, and the edges of the valid range. */
    static const char *const valid[] = {
        "plain ascii",
        "h\xc3\xa9llo",                     /* é */
        "\xe2\x82\xac 10",                  /* € */
        "\xf0\x9d\x84\x9e clef",            /* U+1D11E */
        "\xc2\x80\xdf\xbf",                 /* U+0080, U+07FF */
        "\xe0\xa0\x80\xef\xbf\xbf",         /* U+0800, U+FFFF */
        "\xed\x9f\xbf\xee\x80\x80",         /* U+D7FF, U+E000 around the surrogates */
        "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", /* U+10000, U+10FFFF */
        "\xef\xbf\xbd",                     /* U+FFFD itself */
        "",
    };

    for (size_t i = 0; i < N_ELEMENTS(valid); i++) {
        _cleanup_json_ yajl_val v = json_string_new_lossy(valid[i], strlen(valid[i]));
        CHECK(YAJL_IS_STRING(v));
        if (!streq(v->u.string, valid[i])) {
            CHECK(!"valid UTF-8 was changed");
            fprintf(stderr, "  case %zu\n", i);
        }
    }
}

static void test_lossy_invalid_replaced(void)
{
    /* Input (with its length, NULs allowed) and what must survive around the replacement. */
    static const struct {
        const char *in;
        size_t n;
        const char *kept;
    } cases[] = {
        {"a\xc0\xafz", 4, "az"},                     /* overlong '/' */
        {"a\xe0\x80\xafz", 5, "az"},                 /* 3-byte overlong */
        {"a\xf0\x80\x80\xafz", 6, "az"},             /* 4-byte overlong */
        {"a\xc1\xbfz", 4, "az"},                     /* overlong U+007F */
        {"a\xed\xa0\x80z", 5, "az"},                 /* high surrogate U+D800 */
        {"a\xed\xbf\xbfz", 5, "az"},                 /* low surrogate U+DFFF */
        {"a\xed\xa0\xbd\xed\xb8\x80z", 8, "az"},     /* CESU-8 surrogate pair */
        {"a\xf4\x90\x80\x80z", 6, "az"},             /* past U+10FFFF */
        {"a\xe2\x82", 3, "a"},                       /* truncated at the end */
        {"a\xe2\x82z", 4, "az"},                     /* truncated before ASCII: z is kept */
        {"a\xf0\x9d\x84z", 5, "az"},                 /* truncated 4-byte */
        {"a\xc3", 2, "a"},                           /* lone lead byte at the end */
        {"a\x80z", 3, "az"},                         /* stray continuation byte */
        {"a\xff\xfez", 4, "az"},                     /* bytes never valid in UTF-8 */
        {"a\0z", 3, "az"},                           /* NUL */
        {"\xe2\x82\xe2\x82\xac", 5, "\xe2\x82\xac"}, /* truncated then a valid € */
        {"\xc3\xa9\xc3", 3, "\xc3\xa9"},             /* valid é then a lone lead */
    };

    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        _cleanup_json_ yajl_val v = json_string_new_lossy(cases[i].in, cases[i].n);
        size_t n_fffd = 0;
        _cleanup_free_ char *rest = strip_fffd(v->u.string, &n_fffd);
        bool ok = utf8_valid(v->u.string, strlen(v->u.string)) && n_fffd >= 1 &&
                  streq(rest, cases[i].kept);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  case %zu: %zu replacement(s), rest \"%s\"\n", i, n_fffd, rest);

        /* The result is valid JSON text when written. */
        _cleanup_free_ char *text = write_str(v);
        _cleanup_json_ yajl_val back = json_parse(text, NULL);
        CHECK(back && json_equal(back, v));
    }

    /* A lone invalid byte becomes exactly one replacement character. */
    _cleanup_json_ yajl_val one = json_string_new_lossy("\xff", 1);
    CHECK_STREQ(one->u.string, FFFD);
}

static void test_get_int(void)
{
    _cleanup_json_ yajl_val v =
        json_parse("{\"i\":42,\"neg\":-3,\"d\":1.5,\"one\":1.0,\"s\":\"42\",\"t\":true,\"z\":null,"
                   "\"big\":12345678901234567890,\"max\":9223372036854775807}",
                   NULL);
    int64_t out = 0;

    CHECK_INTEQ(json_get_int(v, "i", &out), 0);
    CHECK_INTEQ(out, 42);
    CHECK_INTEQ(json_get_int(v, "neg", &out), 0);
    CHECK_INTEQ(out, -3);
    CHECK_INTEQ(json_get_int(v, "max", &out), 0);
    CHECK(out == INT64_MAX);

    out = 777;
    CHECK_INTEQ(json_get_int(v, "missing", &out), -ENOENT);
    CHECK_INTEQ(json_get_int(v, "d", &out), -EINVAL);
    CHECK_INTEQ(json_get_int(v, "one", &out), -EINVAL);
    CHECK_INTEQ(json_get_int(v, "s", &out), -EINVAL);
    CHECK_INTEQ(json_get_int(v, "t", &out), -EINVAL);
    CHECK_INTEQ(json_get_int(v, "z", &out), -EINVAL);
    CHECK_INTEQ(json_get_int(v, "big", &out), -EINVAL);
    /* Failures leave the output alone. */
    CHECK_INTEQ(out, 777);

    _cleanup_json_ yajl_val arr = json_array_new();
    CHECK_INTEQ(json_get_int(arr, "i", &out), -ENOENT);
    CHECK_INTEQ(json_get_int(NULL, "i", &out), -ENOENT);
}

static void test_get_bool(void)
{
    _cleanup_json_ yajl_val v =
        json_parse("{\"t\":true,\"f\":false,\"n\":1,\"s\":\"true\",\"z\":null}", NULL);
    bool out = false;

    CHECK_INTEQ(json_get_bool(v, "t", &out), 0);
    CHECK(out == true);
    CHECK_INTEQ(json_get_bool(v, "f", &out), 0);
    CHECK(out == false);

    out = true;
    CHECK_INTEQ(json_get_bool(v, "missing", &out), -ENOENT);
    CHECK_INTEQ(json_get_bool(v, "n", &out), -EINVAL);
    CHECK_INTEQ(json_get_bool(v, "s", &out), -EINVAL);
    CHECK_INTEQ(json_get_bool(v, "z", &out), -EINVAL);
    CHECK(out == true);
    CHECK_INTEQ(json_get_bool(NULL, "t", &out), -ENOENT);
}

static void test_typed_getters(void)
{
    _cleanup_json_ yajl_val v = json_parse("{\"s\":\"x\",\"o\":{},\"a\":[],\"n\":1}", NULL);

    CHECK_STREQ(json_get_string(v, "s"), "x");
    CHECK(json_get_string(v, "n") == NULL);
    CHECK(json_get_string(v, "o") == NULL);
    CHECK(json_get_object(v, "o") != NULL);
    CHECK(json_get_object(v, "a") == NULL);
    CHECK(json_get_array(v, "a") != NULL);
    CHECK(json_get_array(v, "o") == NULL);
    CHECK(json_get(v, "missing") == NULL);
    /* json_get on a non-object is NULL, not a crash. */
    CHECK(json_get(json_get(v, "a"), "s") == NULL);
    CHECK(json_get(NULL, "s") == NULL);

    CHECK_STREQ(json_type_name(json_get(v, "s")), "string");
    CHECK_STREQ(json_type_name(json_get(v, "o")), "object");
    CHECK_STREQ(json_type_name(json_get(v, "a")), "array");
    CHECK_STREQ(json_type_name(json_get(v, "n")), "number");
    CHECK_STREQ(json_type_name(NULL), "null");
    _cleanup_json_ yajl_val b = json_bool_new(false);
    CHECK_STREQ(json_type_name(b), "boolean");
}

static void test_builders_write(void)
{
    _cleanup_json_ yajl_val o = json_object_new();
    _cleanup_free_ char *text = NULL;

    json_object_set(o, "t", json_bool_new(true));
    json_object_set(o, "f", json_bool_new(false));
    json_object_set(o, "z", json_null_new());
    json_object_set(o, "n", json_string_newn("abcdef", 3));
    json_object_set(o, "i", json_int_new(-1));
    text = write_str(o);
    CHECK_STREQ(text, "{\"t\":true,\"f\":false,\"z\":null,\"n\":\"abc\",\"i\":-1}");

    /* A NULL value serialises as null. */
    _cleanup_free_ char *null_text = write_str(NULL);
    CHECK_STREQ(null_text, "null");
    CHECK(json_free(NULL) == NULL);
}

/* A text of n nested arrays (or objects {"a":...}) around a 0. */
static char *nested(size_t n, bool objects)
{
    StrBuf sb = STRBUF_INIT;

    for (size_t i = 0; i < n; i++)
        strbuf_puts(&sb, objects ? "{\"a\":" : "[");
    strbuf_putc(&sb, '0');
    for (size_t i = 0; i < n; i++)
        strbuf_putc(&sb, objects ? '}' : ']');
    return strbuf_detach(&sb, NULL);
}

static int parse_code(const char *text, JsonUtf8Mode mode, char **errp)
{
    yajl_val v = NULL;
    int r = json_parse_full(&v, text, strlen(text), mode, errp);

    CHECK((r == 0) == (v != NULL));
    json_free(v);
    return r;
}

static void test_depth_limit(void)
{
    for (int objects = 0; objects <= 1; objects++) {
        _cleanup_free_ char *ok = nested(JSON_MAX_DEPTH, objects);
        _cleanup_free_ char *deep = nested(JSON_MAX_DEPTH + 1, objects);
        _cleanup_free_ char *huge = nested(1000000, objects);
        _cleanup_free_ char *err = NULL, *err2 = NULL;
        CHECK_INTEQ(parse_code(ok, JSON_UTF8_REFUSE, NULL), 0);
        CHECK_INTEQ(parse_code(deep, JSON_UTF8_REFUSE, &err), JSON_E_DEPTH);
        CHECK_STREQ(err, "JSON nested deeper than 128 levels (mcpd's limit)");
        /* A million levels stop at the limit: no stack, no tree of a million nodes. */
        CHECK_INTEQ(parse_code(huge, JSON_UTF8_REPAIR, &err2), JSON_E_DEPTH);
    }
    /* A value at the deepest level still counts within the limit. */
    CHECK_INTEQ(parse_code("[[{\"a\":[]}]]", JSON_UTF8_REFUSE, NULL), 0);
}

/* An array holding n - 1 zeros: n values with the array itself. */
static char *zeros(size_t n_values)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "[0");
    for (size_t i = 2; i < n_values; i++)
        strbuf_append(&sb, ",0", 2);
    strbuf_putc(&sb, ']');
    return strbuf_detach(&sb, NULL);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_values_limit(void)
{
    _cleanup_free_ char *most = zeros(JSON_MAX_VALUES), *over = zeros(JSON_MAX_VALUES + 1);
    _cleanup_free_ char *err = NULL;
    yajl_val v = NULL;
    double t0 = now_s();

    /* The worst message accepted: the time is printed for the record, never checked. */
    CHECK_INTEQ(json_parse_full(&v, most, strlen(most), JSON_UTF8_REFUSE, NULL), 0);
    fprintf(stderr, "parse of %d values (%zu bytes): %.3f s\n", JSON_MAX_VALUES, strlen(most),
            now_s() - t0);
    CHECK_INTEQ(json_array_len(v), JSON_MAX_VALUES - 1);
    json_free(v);
    CHECK_INTEQ(parse_code(over, JSON_UTF8_REFUSE, &err), JSON_E_VALUES);
    CHECK_STREQ(err, "more than 1048576 values in one JSON text (mcpd's limit)");
    /* Fewer commas than values: the limit is met while building, not by the comma count. */
    StrBuf sb = STRBUF_INIT;
    _cleanup_free_ char *err2 = NULL;
    strbuf_puts(&sb, "[[0]");
    for (size_t i = 1; i <= JSON_MAX_VALUES / 2; i++)
        strbuf_puts(&sb, ",[0]");
    strbuf_putc(&sb, ']');
    CHECK_INTEQ(parse_code(sb.data, JSON_UTF8_REFUSE, &err2), JSON_E_VALUES);
    CHECK_STREQ(err2, "more than 1048576 values in one JSON text (mcpd's limit)");
    strbuf_deinit(&sb);
}

/*
 * A text that needed UTF-8 repair is refused on its comma count too, before any of it is built:
 * the same answer as its clean twin. (Commas only, so the tree builder, which would stop at the
 * second comma with a syntax error, cannot be what gives it.)
 */
static void test_values_limit_repaired(void)
{
    for (int bad = 0; bad <= 1; bad++) {
        StrBuf sb = STRBUF_INIT;
        _cleanup_free_ char *err = NULL;
        strbuf_puts(&sb, bad ? "[\"\xff\"" : "[\"x\"");
        for (size_t i = 0; i < JSON_MAX_VALUES; i++)
            strbuf_putc(&sb, ',');
        strbuf_putc(&sb, ']');
        CHECK_INTEQ(parse_code(sb.data, JSON_UTF8_REPAIR, &err), JSON_E_VALUES);
        CHECK_STREQ(err, "more than 1048576 values in one JSON text (mcpd's limit)");
        strbuf_deinit(&sb);
    }
}

static void test_utf8_repair_or_refuse(void)
{
    static const char bad[] = "{\"d\":\"a\xc0\xaf"
                              "b\\ud800c\\udc00\"}";
    _cleanup_free_ char *err = NULL;
    _cleanup_json_ yajl_val v = NULL;

    CHECK_INTEQ(parse_code(bad, JSON_UTF8_REFUSE, &err), JSON_E_UTF8);
    CHECK_STREQ(err, "invalid UTF-8 at byte 7 (overlong form); send UTF-8 text");
    CHECK_INTEQ(json_parse_full(&v, bad, strlen(bad), JSON_UTF8_REPAIR, NULL), 0);
    CHECK_STREQ(json_get_string(v, "d"), "a\xef\xbf\xbd\xef\xbf\xbd"
                                         "b\xef\xbf\xbd"
                                         "c\xef\xbf\xbd");
    /* Valid pairs decode; \u0000 cannot live in a C string and becomes U+FFFD. */
    _cleanup_json_ yajl_val pair = json_parse("[\"\\ud83d\\ude00\", \"x\\u0000y\"]", NULL);
    CHECK_STREQ(json_array_at(pair, 0)->u.string, "\xf0\x9f\x98\x80");
    CHECK_STREQ(json_array_at(pair, 1)->u.string, "x\xef\xbf\xbdy");
    _cleanup_json_ yajl_val key = json_parse("{\"k\\u0000\":1}", NULL);
    CHECK(json_get(key, "k\xef\xbf\xbd") != NULL);
    /* A quote in a comment cannot hide an escape from the check. */
    static const char hidden[] = "/* \" */ {\"d\":\"\\udc00\"}";
    _cleanup_json_ yajl_val h = NULL;
    CHECK_INTEQ(parse_code(hidden, JSON_UTF8_REFUSE, NULL), JSON_E_UTF8);
    CHECK_INTEQ(json_parse_full(&h, hidden, strlen(hidden), JSON_UTF8_REPAIR, NULL), 0);
    CHECK_STREQ(json_get_string(h, "d"), "\xef\xbf\xbd");
    /* Comments stay allowed (editors' config files carry them). */
    _cleanup_json_ yajl_val c = json_parse("/* c */ {\"a\": 1 // d\n}", NULL);
    CHECK(json_get(c, "a") != NULL);
}

/* Strings built from raw bytes are written as valid UTF-8 all the same. */
static void test_write_repairs_utf8(void)
{
    _cleanup_json_ yajl_val v = json_string_new("a\xc0\xaf\xe2\x82\xac\xed\xa0\x80"
                                                "b\xe2\x82");
    _cleanup_free_ char *text = write_str(v);

    CHECK_STREQ(text, "\"a\xef\xbf\xbd\xef\xbf\xbd\xe2\x82\xac\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                      "b\xef\xbf\xbd\xef\xbf\xbd\"");
}

static void test_int64_limits(void)
{
    _cleanup_json_ yajl_val v = json_parse("[-9223372036854775808, 9223372036854775807, "
                                           "9223372036854775808]",
                                           NULL);
    _cleanup_free_ char *text = write_str(v);

    CHECK(YAJL_IS_INTEGER(json_array_at(v, 0)));
    CHECK(json_array_at(v, 0)->u.number.i == INT64_MIN);
    CHECK(YAJL_IS_INTEGER(json_array_at(v, 1)));
    CHECK(json_array_at(v, 1)->u.number.i == INT64_MAX);
    CHECK(!YAJL_IS_INTEGER(json_array_at(v, 2)));
    CHECK_STREQ(text, "[-9223372036854775808,9223372036854775807,9223372036854775808]");
}

int main(void)
{
    RUN(test_parse_valid);
    RUN(test_parse_invalid);
    RUN(test_object_set_replace_take);
    RUN(test_edit_parsed_in_place);
    RUN(test_arrays);
    RUN(test_copy_equal);
    RUN(test_equal_rules);
    RUN(test_write_escaping);
    RUN(test_write_no_raw_newline);
    RUN(test_numbers_keep_text);
    RUN(test_write_sorted);
    RUN(test_lossy_valid_kept);
    RUN(test_lossy_invalid_replaced);
    RUN(test_get_int);
    RUN(test_get_bool);
    RUN(test_typed_getters);
    RUN(test_builders_write);
    RUN(test_depth_limit);
    RUN(test_values_limit);
    RUN(test_values_limit_repaired);
    RUN(test_utf8_repair_or_refuse);
    RUN(test_int64_limits);
    RUN(test_write_repairs_utf8);
    return test_main_result();
}
