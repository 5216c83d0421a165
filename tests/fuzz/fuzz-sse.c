// SPDX-License-Identifier: MIT
// fuzz-sse: libFuzzer target for the SSE parser: any bytes, split anywhere, give the same events.

/*
 * The first input byte picks a chunk size; the rest is fed once whole and once in chunks of
 * that size. Both runs must dispatch the same events (type, data, id) in the same order and
 * end with the same retry value: a split between reads never changes what a stream means.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "daemon/upstream/sse.h"

/* Small, so oversized events and lines are reached too. */
#define FUZZ_MAX_EVENT 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every event as "type\0data\0id\0", appended. */
static int record(void *userdata, const SseEvent *ev)
{
    StrBuf *sb = userdata;

    if (strlen(ev->data) != ev->data_len && memchr(ev->data, '\0', ev->data_len) == NULL)
        abort(); /* data_len must describe data */
    strbuf_append(sb, ev->event, strlen(ev->event) + 1);
    strbuf_append(sb, ev->data, ev->data_len);
    strbuf_putc(sb, '\0');
    strbuf_append(sb, ev->id, strlen(ev->id) + 1);
    return 0;
}

static int64_t run(const char *bytes, size_t n, size_t chunk, StrBuf *out)
{
    SseParser p;
    int64_t retry;

    sse_parser_init(&p, FUZZ_MAX_EVENT);
    for (size_t off = 0; off < n; off += chunk)
        sse_parser_feed(&p, bytes + off, n - off < chunk ? n - off : chunk, record, out);
    retry = p.retry_ms;
    sse_parser_deinit(&p);
    return retry;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    StrBuf whole = STRBUF_INIT, split = STRBUF_INIT;

    if (size < 1)
        return 0;
    size_t chunk = 1 + data[0] % 17;
    const char *bytes = (const char *)data + 1;
    size_t n = size - 1;
    int64_t r1 = run(bytes, n, n ? n : 1, &whole), r2 = run(bytes, n, chunk, &split);
    if (r1 != r2 || whole.len != split.len ||
        (whole.len && memcmp(whole.data, split.data, whole.len) != 0))
        abort();
    strbuf_deinit(&whole);
    strbuf_deinit(&split);
    return 0;
}
