// SPDX-License-Identifier: MIT
// fuzz-hostline: libFuzzer target for the per-line work on a stdio host's stream.

/*
 * The input is lines: those starting with '>' come from the host (hostline_from_host), the
 * others from mcpd (hostline_to_host, and hostline_to_host_start on their first bytes), with a
 * host prefix and servers left out so that every rewrite runs. What comes out for mcpd must be
 * whole lines; the count of requests awaited must never exceed the requests the host sent.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hostline.h"
#include "common/json.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = xmalloc(size + 1), *line, *save = NULL;
    yajl_val identity = json_object_new(), left = json_array_new();
    size_t from_host = 0;
    HostLine h;

    memcpy(text, data, size);
    text[size] = '\0';
    json_object_set(identity, "mcpd/cwd", json_string_new("/p"));
    json_array_push(left, json_string_new("own"));
    hostline_init(&h, identity);
    if (hostline_set_prefix(&h, "mcp__mcpd__", NULL) != 0)
        abort();
    hostline_leave_out(&h, left);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        StrBuf out = STRBUF_INIT;
        size_t len = strlen(line);
        if (line[0] == '>') {
            from_host += 1 + (size_t)(strchr(line, ',') != NULL) * len; /* batches: many */
            if (hostline_from_host(&h, &out, line + 1, len - 1) == HOSTLINE_REWRITTEN &&
                (!out.len || out.data[out.len - 1] != '\n'))
                abort();
        } else {
            char *copy = xmalloc(len + 2);
            memcpy(copy, line, len);
            copy[len] = '\n';
            copy[len + 1] = '\0';
            (void)hostline_to_host_start(&h, copy, len);
            if (hostline_to_host(&h, &out, copy, len) &&
                (!out.len || out.data[out.len - 1] != '\n'))
                abort();
            free(copy);
        }
        strbuf_deinit(&out);
        if (hostline_unanswered(&h) > from_host)
            abort();
    }
    hostline_deinit(&h);
    free(text);
    return 0;
}
