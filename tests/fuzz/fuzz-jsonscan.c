// SPDX-License-Identifier: MIT
// fuzz-jsonscan: the allocation-free scanner of the hot path never accepts what yajl rejects.

/*
 * The hot path forwards bytes the scanner validated without parsing them, so the scanner must
 * be at least as strict as the tree parser: anything it accepts yajl parses, and every member
 * span it reports is itself one valid value equal to what the parser finds under that name.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"jsonrpc", "id", "method", "params", "result", "error"};
    JsonSpan v[sizeof(names) / sizeof(names[0])];
    const char *s = (const char *)data;
    char *text;
    yajl_val tree;

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
