// SPDX-License-Identifier: MIT
// fuzz-jsonscan: the allocation-free scanner of the hot path never accepts what yajl rejects.

/*
 * The hot path forwards bytes the scanner validated without parsing them, so the scanner must
 * be at least as strict as the tree parser: anything it accepts yajl parses, and every member
 * span it reports is itself one valid value equal to what the parser finds under that name.
 * It must also agree byte for byte with the recursive scanner it replaced (jsonscan-old.c):
 * the same texts accepted, the same counts and spans recorded.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonscan.h"
#include "tests/fuzz/jsonscan-old.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_NAMES 6
#define N_INNER 3

static bool same_spans(const JsonSpan *a, const JsonSpan *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].p != b[i].p || a[i].n != b[i].n)
            return false;
    return true;
}

/* The one-pass nested scan finds exactly what a scan of the object and one of params find. */
static void check_nested(const char *s, size_t size, const char *const *names)
{
    static const char *const inner[N_INNER] = {"name", "arguments", "_meta"};
    JsonSpan top[N_NAMES], top2[N_NAMES], in[N_INNER], in2[N_INNER];
    int ic = -2, r = jsonscan_members(s, size, names, N_NAMES, top);
    int r2 = jsonscan_members_nested(s, size, names, N_NAMES, top2, 3, inner, N_INNER, in2, &ic);

    if (r < 0) {
        if (r2 != -1)
            abort(); /* the one pass accepted what the plain scan refused */
        return;
    }
    if (!top[3].p || top[3].p[0] != '{') {
        if (r2 != r || ic != -1 || !same_spans(top, top2, N_NAMES))
            abort();
        for (size_t i = 0; i < N_INNER; i++)
            if (in2[i].p)
                abort();
        return;
    }
    int ri = jsonscan_members(top[3].p, top[3].n, inner, N_INNER, in);
    if (ri < 0) {
        if (r2 != -1)
            abort(); /* params the plain scan refuses (an escaped or repeated name) */
        return;
    }
    if (r2 != r || ic != ri || !same_spans(top, top2, N_NAMES) || !same_spans(in, in2, N_INNER))
        abort();
}

/* The scanner and the old one agree on members for one array of names (distinct). */
static void check_old_members(const char *s, size_t size, const char *const *names, size_t n)
{
    JsonSpan a[N_NAMES], b[N_NAMES];
    int ra = jsonscan_members(s, size, names, n, a),
        rb = old_jsonscan_members(s, size, names, n, b);

    if (ra != rb || (ra >= 0 && !same_spans(a, b, n)))
        abort();
}

/* Bit i of plain says whether out[i] is a string without escapes, as the old scanner finds. */
static bool plain_bits_right(uint32_t plain, const JsonSpan *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((plain >> i) & 1) != old_jsonscan_is_plain_string(out[i]))
            return false;
    return true;
}

/* jsonscan_object() finds what jsonscan_members_nested() found (r, a, c, ia) and plain strings. */
static void check_object(const char *s, size_t size, const char *const *names, size_t nested, int r,
                         const JsonSpan *a, int c, const JsonSpan *ia)
{
    static const char *const inner[N_INNER] = {"name", "arguments", "_meta"};
    JsonSpan o[N_NAMES], io[N_INNER];
    JsonscanLevel top = {names, N_NAMES, o, -2, 0}, in = {inner, N_INNER, io, -2, 0};

    if (jsonscan_object(s, size, &top, nested, &in) != r || top.count != r || in.count != c)
        abort();
    if (r < 0)
        return;
    if (!same_spans(o, a, N_NAMES) || !same_spans(io, ia, N_INNER) ||
        !plain_bits_right(top.plain, o, N_NAMES) || !plain_bits_right(in.plain, io, N_INNER))
        abort();
}

/* The scanner and the old one agree on everything (names: of the nested scan, 6 of them). */
static void check_old(const char *s, size_t size, const char *const *names)
{
    /* The empty name, names of 1, 8, 9 and 13 bytes: every path of the name compare. */
    static const char *const odd[] = {"", "a", "jsonrpc2", "arguments", "progressToken"};
    static const char *const inner[N_INNER] = {"name", "arguments", "_meta"};
    JsonSpan a[N_NAMES], b[N_NAMES], ia[N_INNER], ib[N_INNER];
    int ca = -2, cb = -2;

    if (jsonscan_valid(s, size) != old_jsonscan_valid(s, size) ||
        jsonscan_is_plain_string((JsonSpan){s, size}) !=
            old_jsonscan_is_plain_string((JsonSpan){s, size}))
        abort();
    check_old_members(s, size, names, N_NAMES);
    check_old_members(s, size, odd, sizeof(odd) / sizeof(odd[0]));
    check_old_members(s, size, names + 1, 1);
    for (size_t nested = 0; nested <= N_NAMES; nested += 3) {
        int ra =
            jsonscan_members_nested(s, size, names, N_NAMES, a, nested, inner, N_INNER, ia, &ca);
        int rb = old_jsonscan_members_nested(s, size, names, N_NAMES, b, nested, inner, N_INNER, ib,
                                             &cb);
        if (ra != rb || ca != cb ||
            (ra >= 0 && (!same_spans(a, b, N_NAMES) || !same_spans(ia, ib, N_INNER))))
            abort();
        check_object(s, size, names, nested, ra, a, ca, ia);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[N_NAMES] = {"jsonrpc", "id",     "method",
                                               "params",  "result", "error"};
    JsonSpan v[sizeof(names) / sizeof(names[0])];
    const char *s = (const char *)data;
    char *text;
    yajl_val tree;

    check_nested(s, size, names);
    check_old(s, size, names);
    if (!jsonscan_valid(s, size))
        return 0;
    text = malloc(size + 1);
    memcpy(text, s, size);
    text[size] = '\0';
    tree = json_parse(text, NULL);
    if (!tree)
        abort(); /* the scanner accepted what the parser refuses */
    if (jsonscan_members(s, size, names, sizeof(names) / sizeof(names[0]), v) >= 0) {
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            if (!v[i].p) {
                if (json_get(tree, names[i]))
                    abort(); /* a member the scan missed */
                continue;
            }
            /* Compared as text written back, so duplicate names inside count as they stand. */
            char *one = strndup(v[i].p, v[i].n);
            yajl_val got = json_parse(one, NULL);
            if (!jsonscan_valid(v[i].p, v[i].n) || !got)
                abort();
            char *a = json_to_string(got), *b = json_to_string(json_get(tree, names[i]));
            if (strcmp(a, b) != 0)
                abort();
            free(a);
            free(b);
            json_free(got);
            free(one);
        }
    }
    json_free(tree);
    free(text);
    return 0;
}
