// SPDX-License-Identifier: MIT
// fuzz-jsonscan: the allocation-free scanner of the hot path never accepts what yajl rejects.

/*
 * The hot path forwards bytes the scanner validated without parsing them, so the scanner must
 * be at least as strict as the tree parser: anything it accepts yajl parses, and every member
 * span it reports is itself one valid value equal to what the parser finds under that name.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonscan.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[N_NAMES] = {"jsonrpc", "id",     "method",
                                               "params",  "result", "error"};
    JsonSpan v[sizeof(names) / sizeof(names[0])];
    const char *s = (const char *)data;
    char *text;
    yajl_val tree;

    check_nested(s, size, names);
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
