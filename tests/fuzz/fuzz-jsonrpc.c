// SPDX-License-Identifier: MIT
// fuzz-jsonrpc: libFuzzer target for the NDJSON framer and the JSON-RPC message parser.

/*
 * The input is cut into reads the way a socket would deliver it: the first byte picks the read
 * size, so lines arrive whole, split and merged. Its low bit picks the line limit: a small one,
 * so the too-long path (report once, skip to the newline) runs often, or the daemon's own, so
 * that inputs up to -max_len (fuzz-jsonrpc.options: over 1 MiB) reach the parser whole: deep
 * nesting and huge values only show there. Every parsed message is written back out the way the
 * daemon answers, which runs the writers on hostile ids and values.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"

/* Small enough that a few kilobytes of input cross it. */
#define FUZZ_SMALL_LINE 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void handle_line(const char *line, size_t len)
{
    JsonrpcMsg m;
    char *err = NULL;
    StrBuf sb = STRBUF_INIT;
    int r = jsonrpc_msg_parse(&m, line, len, &err);

    if (r != 0) {
        /* What the peer does on a bad line: answer with the id when one could be read. */
        if (!err)
            abort(); /* every failure must explain itself */
        jsonrpc_write_error(&sb, m.id, JSONRPC_INVALID_REQUEST, err, NULL);
    } else if (m.kind == JSONRPC_REQUEST) {
        if (!m.method || !m.id)
            abort();
        jsonrpc_write_result(&sb, m.id, m.params);
    } else if (m.kind == JSONRPC_NOTIFICATION) {
        jsonrpc_write_notification(&sb, m.method, m.params);
    } else {
        json_write_sorted(&sb, m.root);
    }
    free(err);
    jsonrpc_msg_deinit(&m);
    strbuf_deinit(&sb);
}

/*
 * Inputs whose first byte has bit 1 set are expanded first: bytes 1-2 give a count n, byte 3
 * two unit lengths (1 to 16 each), then come the two units, then a head and a tail split at the
 * first newline. The input becomes head, unit1 x n, unit2 x n, tail and a newline. A few bytes
 * ("[", "]" inside a request) then stand for nesting tens of thousands deep, which plain
 * mutation grows towards far too slowly to ever reach (nesting gives no new coverage to steer
 * by). At most 2 x 65535 x 16 bytes (2 MiB) are added, the order of -max_len.
 */
static const uint8_t *expand(const uint8_t *data, size_t size, StrBuf *sb, size_t *sizep)
{
    size_t n, u1, u2;

    *sizep = size;
    if (!(data[0] & 2) || size < 4)
        return data;
    n = (size_t)data[1] | (size_t)data[2] << 8;
    u1 = (size_t)(data[3] & 15) + 1;
    u2 = (size_t)(data[3] >> 4) + 1;
    if (size < 4 + u1 + u2)
        return data;
    const uint8_t *unit1 = data + 4, *unit2 = unit1 + u1, *head = unit2 + u2, *end = data + size;
    const uint8_t *nl = memchr(head, '\n', (size_t)(end - head)), *tail = nl ? nl + 1 : end;
    strbuf_putc(sb, (char)data[0]);
    strbuf_append(sb, head, (size_t)((nl ? nl : end) - head));
    for (size_t i = 0; i < n; i++)
        strbuf_append(sb, unit1, u1);
    for (size_t i = 0; i < n; i++)
        strbuf_append(sb, unit2, u2);
    strbuf_append(sb, tail, (size_t)(end - tail));
    strbuf_putc(sb, '\n');
    *sizep = sb->len;
    return (const uint8_t *)sb->data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    StrBuf expanded = STRBUF_INIT;
    Framer f;
    size_t chunk, off = 1, max;
    char *line;
    size_t len;
    int r;

    if (size == 0)
        return 0;
    chunk = (size_t)data[0] + 1;
    max = data[0] & 1 ? FUZZ_SMALL_LINE : JSONRPC_MAX_LINE_DEFAULT;
    data = expand(data, size, &expanded, &size);
    framer_init(&f, max);
    while (off < size) {
        size_t n = size - off < chunk ? size - off : chunk;
        framer_feed(&f, data + off, n);
        off += n;
        while ((r = framer_next(&f, &line, &len)) != FRAMER_E_AGAIN) {
            if (r == FRAMER_E_TOOBIG)
                continue;
            if (len > max || line[len] != '\0')
                abort();
            handle_line(line, len);
        }
        if (framer_pending(&f) > max + chunk)
            abort(); /* a skipped line must not be buffered */
    }
    framer_deinit(&f);
    strbuf_deinit(&expanded);
    return 0;
}
