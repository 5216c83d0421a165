// SPDX-License-Identifier: MIT
// test-jsonscan-diff: the iterative scanner accepts, refuses and records exactly as the old one.

/*
 * tests/fuzz/jsonscan-old.c is the recursive scanner that common/jsonscan.c replaced. Every
 * text here goes through both (validity, members, nested members, plain strings) and they must
 * agree byte for byte; the cases that matter most are also checked against fixed answers.
 */

#include <stdlib.h>
#include <time.h>

#include "common/json.h"
#include "common/jsonscan.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/fuzz/jsonscan-old.c"
#include "tests/unit/test.h"

/* Names looked for: a JSON-RPC message's, and the params of a tools/call (as the callers do). */
static const char *const top_names[] = {"jsonrpc", "id", "method", "params", "result", "error"};
static const char *const inner_names[] = {"name", "arguments", "_meta"};
/* Names of 0, 1, 8, 9 and 13 bytes: every length path of the name compare. */
static const char *const odd_names[] = {"", "a", "jsonrpc2", "arguments", "progressToken"};
#define N_TOP   N_ELEMENTS(top_names)
#define N_INNER N_ELEMENTS(inner_names)
#define N_ODD   N_ELEMENTS(odd_names)

/* Texts compared by agree() so far, and those both scanners accepted. */
static size_t n_compared, n_accepted;

static bool same_spans(const JsonSpan *a, const JsonSpan *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].p != b[i].p || a[i].n != b[i].n)
            return false;
    return true;
}

/* Bit i of plain says whether out[i] is a string without escapes, as the old scanner finds. */
static bool plain_bits_right(uint32_t plain, const JsonSpan *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((plain >> i) & 1) != old_jsonscan_is_plain_string(out[i]))
            return false;
    return true;
}

/* jsonscan_object() finds what the old nested scan found (r, b, c, ib), and the plain strings. */
static bool object_agrees(const char *s, size_t n, size_t nested, int r, const JsonSpan *b, int c,
                          const JsonSpan *ib)
{
    JsonSpan o[N_TOP], io[N_INNER], plain_out[N_TOP];
    JsonscanLevel top = {top_names, N_TOP, o, -2, 0}, in = {inner_names, N_INNER, io, -2, 0};
    JsonscanLevel alone = {top_names, N_TOP, o, -2, 0};

    if (jsonscan_object(s, n, &top, nested, &in) != r || top.count != r || in.count != c)
        return false;
    if (r >= 0 &&
        (!same_spans(o, b, N_TOP) || !same_spans(io, ib, N_INNER) ||
         !plain_bits_right(top.plain, o, N_TOP) || !plain_bits_right(in.plain, io, N_INNER)))
        return false;
    /* Without an inner level nothing is looked into: the old plain scan's answer. */
    int rp = old_jsonscan_members(s, n, top_names, N_TOP, plain_out);
    if (jsonscan_object(s, n, &alone, nested, NULL) != rp || alone.count != rp)
        return false;
    return rp < 0 || (same_spans(o, plain_out, N_TOP) && plain_bits_right(alone.plain, o, N_TOP));
}

/*
 * Whether both scanners agree on s[0..n) in every function; s is copied into a buffer of exactly
 * n bytes first, so that a read past the end is an ASan report.
 */
static bool agree(const char *text, size_t n)
{
    char *s = xmalloc(n ? n : 1);
    JsonSpan a[N_TOP], b[N_TOP], ia[N_INNER], ib[N_INNER];
    bool ok = true;

    memcpy(s, text, n);
    n_compared++;
    bool valid = jsonscan_valid(s, n);
    ok &= valid == old_jsonscan_valid(s, n);
    n_accepted += valid;
    ok &= jsonscan_is_plain_string((JsonSpan){s, n}) ==
          old_jsonscan_is_plain_string((JsonSpan){s, n});
    int ra = jsonscan_members(s, n, top_names, N_TOP, a);
    int rb = old_jsonscan_members(s, n, top_names, N_TOP, b);
    ok &= ra == rb && (ra < 0 || same_spans(a, b, N_TOP));
    ra = jsonscan_members(s, n, odd_names, N_ODD, a);
    rb = old_jsonscan_members(s, n, odd_names, N_ODD, b);
    ok &= ra == rb && (ra < 0 || same_spans(a, b, N_ODD));
    for (size_t nested = 0; nested <= N_TOP; nested += 3) {
        int ca = -2, cb = -2;
        ra = jsonscan_members_nested(s, n, top_names, N_TOP, a, nested, inner_names, N_INNER, ia,
                                     &ca);
        rb = old_jsonscan_members_nested(s, n, top_names, N_TOP, b, nested, inner_names, N_INNER,
                                         ib, &cb);
        ok &= ra == rb && ca == cb &&
              (ra < 0 || (same_spans(a, b, N_TOP) && same_spans(ia, ib, N_INNER)));
        ok &= object_agrees(s, n, nested, ra, b, cb, ib);
    }
    if (!ok)
        fprintf(stderr, "scanners disagree on %zu bytes: %.*s\n", n, (int)n, s);
    free(s);
    return ok;
}

/* Texts with every kind of value, member and whitespace, valid as they stand. */
static const char *const templates[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
    "\"arguments\":{\"text\":\"hi\",\"n\":[1,-2.5e+3,true,false,null]},\"_meta\":{}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
    "\"caf\xc3\xa9 \\u00e9\\n\"}],\"isError\":false}}",
    " { \"a\" : [ 0 , { } , [ ] , \"\" ] , \"\" : 1 , \"arguments\" : null } ",
    "[1,[2,[3,{\"x\":[]}]],\"progressToken\",-0.0e-0]",
};

/*
 * Each byte value in place of each byte of each template, and inserted before it: every byte
 * class (whitespace, each value start, each separator, bad bytes) at every offset of every
 * state of the scanner.
 */
static void test_every_byte_everywhere(void)
{
    for (size_t t = 0; t < N_ELEMENTS(templates); t++) {
        const char *tpl = templates[t];
        size_t n = strlen(tpl);
        char *buf = xmalloc(n + 1);
        CHECK(agree(tpl, n));
        for (size_t at = 0; at <= n; at++) {
            for (unsigned c = 0; c < 256; c++) {
                if (at < n) {
                    memcpy(buf, tpl, n);
                    buf[at] = (char)c;
                    CHECK(agree(buf, n));
                }
                memcpy(buf, tpl, at);
                buf[at] = (char)c;
                memcpy(buf + at + 1, tpl + at, n - at);
                CHECK(agree(buf, n + 1));
            }
            CHECK(agree(tpl, at)); /* cut short there */
        }
        free(buf);
    }
}

/*
 * depth containers (all '[', all '{"a":', or alternating) around a 0, inside the value of
 * "params" (so at depth 1 and, with nested = 3, scanned by the nested scan) when in_member.
 */
static char *nest(int depth, int kind, bool in_member, size_t *np)
{
    StrBuf sb = STRBUF_INIT;

    if (in_member)
        strbuf_puts(&sb, "{\"params\":");
    for (int i = 0; i < depth; i++)
        strbuf_puts(&sb, kind == 0 || (kind == 2 && i % 2) ? "[ " : "{\"a\": ");
    strbuf_puts(&sb, "0");
    for (int i = depth - 1; i >= 0; i--)
        strbuf_puts(&sb, kind == 0 || (kind == 2 && i % 2) ? "]" : " }");
    if (in_member)
        strbuf_puts(&sb, "}");
    *np = sb.len;
    return sb.data;
}

/* Nesting at exactly JSONSCAN_MAX_DEPTH is accepted, one more is refused, by both scanners. */
static void test_depth_limit(void)
{
    static const char *const names[] = {"params"};
    JsonSpan out[1];

    for (int kind = 0; kind < 3; kind++) {
        size_t n;
        char *s = nest(JSONSCAN_MAX_DEPTH, kind, false, &n);
        CHECK(jsonscan_valid(s, n));
        CHECK(agree(s, n));
        free(s);
        s = nest(JSONSCAN_MAX_DEPTH + 1, kind, false, &n);
        CHECK(!jsonscan_valid(s, n));
        CHECK(agree(s, n));
        free(s);
        /* The member value starts at depth 1: one container fewer fits. */
        s = nest(JSONSCAN_MAX_DEPTH - 1, kind, true, &n);
        CHECK(jsonscan_valid(s, n));
        CHECK_INTEQ(jsonscan_members(s, n, names, 1, out), 1);
        CHECK(agree(s, n));
        free(s);
        s = nest(JSONSCAN_MAX_DEPTH, kind, true, &n);
        CHECK(!jsonscan_valid(s, n));
        CHECK_INTEQ(jsonscan_members(s, n, names, 1, out), -1);
        CHECK(agree(s, n));
        free(s);
    }
    /* Many containers opened and closed at the limit, one after the other. */
    StrBuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "[");
    for (int k = 0; k < 3; k++) {
        size_t n;
        char *s = nest(JSONSCAN_MAX_DEPTH - 1, k, false, &n);
        strbuf_append(&sb, s, n);
        strbuf_puts(&sb, k < 2 ? "," : "]");
        free(s);
    }
    CHECK(jsonscan_valid(sb.data, sb.len));
    CHECK(agree(sb.data, sb.len));
    strbuf_deinit(&sb);
}

/* count values, the last one c: "{"params":{"arguments":[0,0,...,c]}}" (3 + elements). */
static char *values_text(size_t count, const char *last, size_t *np)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"params\":{\"arguments\":[");
    for (size_t i = 4; i < count; i++)
        strbuf_append(&sb, "0,", 2);
    strbuf_puts(&sb, last);
    strbuf_puts(&sb, "]}}");
    *np = sb.len;
    return sb.data;
}

/* Exactly JSON_MAX_VALUES values are accepted, one more is refused, whatever the last one is. */
static void test_values_limit(void)
{
    static const char *const lasts[] = {"0", "\"s\"", "true", "[]", "{}"};

    for (size_t k = 0; k < N_ELEMENTS(lasts); k++) {
        for (size_t extra = 0; extra <= 1; extra++) {
            size_t n;
            char *s = values_text(JSON_MAX_VALUES + extra, lasts[k], &n);
            JsonSpan v[N_TOP], pv[N_INNER];
            int ic;
            int r = jsonscan_members_nested(s, n, top_names, N_TOP, v, 3, inner_names, N_INNER, pv,
                                            &ic);
            CHECK(jsonscan_valid(s, n) == !extra);
            CHECK_INTEQ(r, extra ? -1 : 1);
            CHECK_INTEQ(ic, extra ? -1 : 1);
            CHECK(agree(s, n));
            free(s);
        }
    }
}

/* String spans of every length, with an escape or special byte at every offset, exactly sized. */
static void test_plain_string_spans(void)
{
    static const char *const specials[] = {"\\n", "\\u00e9", "\xc3\xa9", "\x01", "\"", "\\"};

    for (size_t len = 0; len <= 40; len++) {
        char buf[64];
        memset(buf, 'x', sizeof(buf));
        buf[0] = '"';
        buf[len + 1] = '"';
        CHECK(jsonscan_is_plain_string((JsonSpan){buf, len + 2}));
        CHECK(agree(buf, len + 2));
        for (size_t at = 0; at < len; at++) {
            for (size_t k = 0; k < N_ELEMENTS(specials); k++) {
                size_t sn = strlen(specials[k]);
                memset(buf, 'x', sizeof(buf));
                buf[0] = '"';
                memcpy(buf + 1 + at, specials[k], sn);
                buf[len + 1 + sn] = '"';
                CHECK(agree(buf, len + 2 + sn));
            }
        }
    }
}

/* Longest string body, name or value, test_string_lengths() tries: past two vectors. */
#define STRING_LEN_MAX 40
/* Trailing bytes after the string's member: the string ends 0..this far from the text's end. */
#define TAIL_MAX 20

/*
 * {"<name>":"<value>"<tail>} for every length of name or value (0..STRING_LEN_MAX, around the
 * word and vector sizes the string scan tests at once) and every distance from the end of the
 * text (a tail member and whitespace), plain or with an escape, a UTF-8 sequence or a control
 * byte first or last: the short-string path near the end of a text (where the last whole vector
 * is tested instead) and in texts shorter than a vector, against the old scanner and by value.
 */
static void test_string_lengths(void)
{
    static const char *const specials[] = {"", "\\n", "\xc3\xa9", "\x01", "\\u0041"};
    static const char *const names[] = {"id", "x", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};

    for (size_t len = 0; len <= STRING_LEN_MAX; len++) {
        for (size_t k = 0; k < N_ELEMENTS(specials); k++) {
            for (size_t tail = 0; tail <= TAIL_MAX; tail++) {
                for (int as_name = 0; as_name <= 1; as_name++) {
                    for (int last = 0; last <= 1; last++) {
                        StrBuf sb = STRBUF_INIT;
                        StrBuf body = STRBUF_INIT;
                        if (!last)
                            strbuf_puts(&body, specials[k]);
                        for (size_t i = 0; i < len; i++)
                            strbuf_putc(&body, 'a');
                        if (last)
                            strbuf_puts(&body, specials[k]);
                        if (as_name)
                            strbuf_printf(&sb, "{\"%s\":1", body.data ? body.data : "");
                        else
                            strbuf_printf(&sb, "{\"id\":\"%s\"", body.data ? body.data : "");
                        /* A tail of tail bytes: whitespace, or a member when it fits. */
                        if (tail >= 6) {
                            strbuf_puts(&sb, ",\"x\":");
                            for (size_t i = 6; i < tail; i++)
                                strbuf_putc(&sb, '7');
                            strbuf_putc(&sb, '0');
                        } else {
                            for (size_t i = 0; i < tail; i++)
                                strbuf_putc(&sb, ' ');
                        }
                        strbuf_putc(&sb, '}');
                        CHECK_MSG(agree(sb.data, sb.len), "%s", sb.data);
                        /* The value's span and plain bit by themselves. */
                        JsonSpan v[N_ELEMENTS(names)];
                        JsonscanLevel lv = {names, N_ELEMENTS(names), v, -2, 0};
                        bool valid = k != 3; /* a raw control byte is never valid */
                        int r = jsonscan_object(sb.data, sb.len, &lv, SIZE_MAX, NULL);
                        if (as_name) {
                            /* An escaped name is refused; a plain one is found by its bytes. */
                            bool escaped = k == 1 || k == 4;
                            CHECK(r == (valid && !escaped ? (tail >= 6 ? 2 : 1) : -1));
                            if (r >= 0)
                                CHECK((v[2].p != NULL) == (k == 0 && len == STRING_LEN_MAX));
                        } else {
                            CHECK(r == (valid ? (tail >= 6 ? 2 : 1) : -1));
                            if (r >= 0) {
                                CHECK(v[0].p && v[0].n == body.len + 2 && v[0].p[0] == '"');
                                CHECK(((lv.plain & 1u) != 0) == (k == 0 || k == 2));
                            }
                        }
                        strbuf_deinit(&body);
                        strbuf_deinit(&sb);
                    }
                }
            }
        }
    }
}

/*
 * Member names next to the wanted ones: one byte short or long, one byte changed at every
 * offset, the same length; names past the unrolled compare (16 bytes) changed at every offset;
 * the empty name. Each key is found exactly when it is the wanted name.
 */
static void test_name_neighbours(void)
{
    static const char *const wanted[] = {"jsonrpc",
                                         "id",
                                         "",
                                         "a234567890123456",
                                         "b2345678901234567",
                                         "c234567890123456789012345678901234",
                                         "progressToken"};
    char key[64];

    for (size_t w = 0; w < N_ELEMENTS(wanted); w++) {
        size_t wl = strlen(wanted[w]);
        for (int kind = 0; kind < 4; kind++) {
            for (size_t at = 0; at <= wl; at++) {
                size_t kl = wl;
                memcpy(key, wanted[w], wl);
                if (kind == 0 && at == 0)
                    ; /* the wanted name itself */
                else if (kind == 1 && at < wl)
                    key[at] ^= 0x01; /* one byte changed */
                else if (kind == 2 && at == 0 && wl)
                    kl = wl - 1; /* one byte short */
                else if (kind == 3 && at == 0)
                    key[kl++] = 'x'; /* one byte long */
                else
                    continue;
                bool same = kl == wl && memcmp(key, wanted[w], wl) == 0;
                char text[160];
                int n = snprintf(text, sizeof(text), "{\"%.*s\":5,\"zz\":6}", (int)kl, key);
                JsonSpan v[N_ELEMENTS(wanted)];
                JsonscanLevel lv = {wanted, N_ELEMENTS(wanted), v, -2, 0};
                CHECK_INTEQ(jsonscan_object(text, (size_t)n, &lv, SIZE_MAX, NULL), 2);
                for (size_t i = 0; i < N_ELEMENTS(wanted); i++)
                    CHECK_MSG((v[i].p != NULL) == (same && i == w), "%s: name %zu", text, i);
                CHECK(agree(text, (size_t)n));
            }
        }
    }
}

/* More names than a level had bits for before (64), duplicates of the first and last ones. */
static void test_many_names(void)
{
    enum { N = 70 };
    static char storage[N][8];
    const char *names[N];
    JsonSpan v[N];

    for (int i = 0; i < N; i++) {
        snprintf(storage[i], sizeof(storage[i]), "n%d", i);
        names[i] = storage[i];
    }
    const char *s = "{\"n69\":1,\"n0\":2,\"n64\":[3],\"other\":4,\"other\":5}";
    JsonscanLevel lv = {names, N, v, -2, 0};
    CHECK_INTEQ(jsonscan_object(s, strlen(s), &lv, SIZE_MAX, NULL), 5);
    CHECK(jsonscan_span_eq(v[69], "1") && jsonscan_span_eq(v[0], "2"));
    CHECK(jsonscan_span_eq(v[64], "[3]"));
    for (int i = 1; i < N; i++)
        if (i != 64 && i != 69)
            CHECK(!v[i].p);
    /* A repeated wanted name, first or past the 64th: refused, and every span absent. */
    static const char *const dups[] = {"{\"n0\":1,\"n1\":2,\"n0\":3}", "{\"n69\":1,\"n69\":1}",
                                       "{\"n65\":{},\"x\":0,\"n65\":[]}"};
    for (size_t k = 0; k < N_ELEMENTS(dups); k++) {
        CHECK_INTEQ(jsonscan_object(dups[k], strlen(dups[k]), &lv, SIZE_MAX, NULL), -1);
        CHECK_INTEQ(lv.count, -1);
        for (int i = 0; i < N; i++)
            CHECK(!v[i].p);
    }
}

/*
 * The last byte of the text (once trailing whitespace is cut) is what the scan relies on to
 * stop: texts where it closes an inner container, belongs to a string or a literal, or is not
 * a closer at all, each cut at every length.
 */
static void test_last_byte(void)
{
    static const char *const texts[] = {
        "{\"a\":{\"b\":1}",
        "{\"a\":[1]",
        "{\"a\":[1]}",
        "{\"a\":{}}",
        "{\"a\":\"}",
        "{\"a\":\"}\"}",
        "{\"a\":tru}",
        "{\"a\":true}",
        "{\"a\":1}",
        "{\"a\":-}",
        "{\"a\":1e}",
        "{\"a\":1.}",
        "{\"a\":[{\"b\":[]}]}",
        "[{}]",
        "[[]",
        "{}}",
        " {\"params\":{\"name\":\"x\"}} \n",
        "{\"params\":{\"name\":\"x\"}",
        "{\"params\":{\"name\":{}}}",
        "{\"id\":1,\"params\":[]}",
    };

    for (size_t t = 0; t < N_ELEMENTS(texts); t++) {
        size_t n = strlen(texts[t]);
        for (size_t cut = 0; cut <= n; cut++)
            CHECK_MSG(agree(texts[t], cut), "%.*s", (int)cut, texts[t]);
    }
}

/* Random texts from JSON pieces, good and bad: the scanners agree on every one. */
static void test_random_pieces(void)
{
    static const char *const pieces[] = {
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "\\",
        "a",
        "1",
        "-",
        ".",
        "e",
        "0",
        " ",
        "\n",
        "true",
        "null",
        "false",
        "\"id\"",
        "\"params\"",
        "\"name\"",
        "\"\"",
        "\"jsonrpc\"",
        "\"v\"",
        "\xc3\xa9",
        "\xff",
        "\\u0041",
        "\\n",
        "\t",
        "2",
        "+",
        "E",
        "\"arguments\"",
        "\"_meta\"",
        "\"result\"",
        "\"progressToken\"",
        "\"jsonrpc2\"",
    };
    unsigned seed = 2026;
    size_t before = n_accepted;
    int bad = 0;

    for (int round = 0; round < 300000; round++) {
        char buf[96];
        size_t n = 0;
        int k = 1 + (int)(rand_r(&seed) % 24);
        for (int i = 0; i < k; i++) {
            const char *p = pieces[rand_r(&seed) % N_ELEMENTS(pieces)];
            size_t l = strlen(p);
            if (n + l > sizeof(buf))
                break;
            memcpy(buf + n, p, l);
            n += l;
        }
        if (!agree(buf, n) && ++bad > 5)
            break;
    }
    CHECK(bad == 0);
    /* The generator does produce JSON, so the comparison means something. */
    CHECK(n_accepted - before > 3000);
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Timed scans of the big reply per scanner: enough for a best time, few enough under ASan. */
#define BIG_ROUNDS 7

/* A tools/list reply of about 1 MiB; timed for both scanners (printed, never asserted). */
static void test_big_reply(void)
{
    static const char *const names[] = {"jsonrpc", "id", "result", "error", "method"};
    StrBuf sb = STRBUF_INIT;
    JsonSpan a[5], b[5];

    strbuf_puts(&sb, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":[");
    for (int i = 0; sb.len < (1u << 20) - 400; i++)
        strbuf_printf(&sb,
                      "%s{\"name\":\"tool_%05d\",\"description\":\"Return the text unchanged, "
                      "caf\xc3\xa9 \\\"quoted\\\" \\u00e9.\",\"inputSchema\":{\"type\":\"object\","
                      "\"properties\":{\"text\":{\"type\":\"string\"},\"count\":{\"type\":"
                      "\"integer\",\"minimum\":0,\"maximum\":1e6}},\"required\":[\"text\"]},"
                      "\"annotations\":{\"readOnlyHint\":true,\"destructiveHint\":null}}",
                      i ? ",\n " : "", i);
    strbuf_puts(&sb, "]}}");
    /* Best of BIG_ROUNDS each, alternating, so that neither gains from the other's cache. */
    double best_new = 1e9, best_old = 1e9;
    int ra = -2, rb = -2;
    for (int round = 0; round < BIG_ROUNDS; round++) {
        double t0 = now_s();
        ra = jsonscan_members(sb.data, sb.len, names, 5, a);
        double t1 = now_s();
        rb = old_jsonscan_members(sb.data, sb.len, names, 5, b);
        double t2 = now_s();
        best_new = t1 - t0 < best_new ? t1 - t0 : best_new;
        best_old = t2 - t1 < best_old ? t2 - t1 : best_old;
    }
    CHECK_INTEQ(ra, 3);
    CHECK(ra == rb && same_spans(a, b, 5));
    printf("     %zu-byte reply, best of %d: scanner %.3f ms, old scanner %.3f ms (this build)\n",
           sb.len, BIG_ROUNDS, best_new * 1e3, best_old * 1e3);
    strbuf_deinit(&sb);
}

int main(void)
{
    RUN(test_every_byte_everywhere);
    RUN(test_depth_limit);
    RUN(test_values_limit);
    RUN(test_plain_string_spans);
    RUN(test_string_lengths);
    RUN(test_name_neighbours);
    RUN(test_many_names);
    RUN(test_last_byte);
    RUN(test_random_pieces);
    RUN(test_big_reply);
    printf("     %zu texts compared, %zu accepted\n", n_compared, n_accepted);
    return test_main_result();
}
