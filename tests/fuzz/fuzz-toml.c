// SPDX-License-Identifier: MIT
// fuzz-toml: libFuzzer target for the TOML subset parser (Codex config.toml).

/*
 * Whatever toml_parse accepts must come out as a JSON object whose text is valid JSON (the
 * tree is what config providers read), and a refusal must carry a "line L, column C" message.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonscan.h"
#include "common/toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *err = NULL;
    yajl_val v = toml_parse((const char *)data, size, &err);

    if (!v) {
        if (!err || strncmp(err, "line ", 5) != 0)
            abort();
        free(err);
        return 0;
    }
    if (!YAJL_IS_OBJECT(v))
        abort();
    StrBuf sb = STRBUF_INIT;
    json_write(&sb, v);
    if (!jsonscan_valid(sb.data, sb.len))
        abort();
    strbuf_deinit(&sb);
    json_free(v);
    free(err);
    return 0;
}
