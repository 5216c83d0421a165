// SPDX-License-Identifier: MIT
// fuzz-http-request: libFuzzer target for the parser of agents' HTTP requests (http-parse.c).

/*
 * The first byte picks a chunk size; the rest is offered to the parser once whole and once
 * growing by that many bytes at a time, as the server reads it (the scan position carried
 * between calls). Both must give the same outcome, and a head that parses must point only
 * inside the buffer; the field lookups must hold on whatever parsed. A chunked head's body
 * (what follows the head) is decoded the same two ways (http-chunked.c): the same outcome, the
 * same body, never more than the bound. A Last-Event-ID that parses, printed, reads back the same.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/downstream/http-chunked.h"
#include "daemon/downstream/http-parse.h"
#include "daemon/downstream/http-resume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const char *buf, size_t n, const char *p, size_t len)
{
    if (len && (p < buf || p + len > buf + n))
        abort();
}

static int parse_growing(HttpHead *h, const char *buf, size_t n, size_t chunk)
{
    size_t scan = 0;
    int r = HTTP_PARSE_AGAIN;

    for (size_t have = chunk < n ? chunk : n;; have = have + chunk < n ? have + chunk : n) {
        r = http_parse_head(h, buf, have, &scan);
        if (r != HTTP_PARSE_AGAIN || have == n)
            return r;
    }
}

/* A body bound small enough for the fuzzer to pass it. */
#define FUZZ_MAX_BODY 4096

/*
 * Decode raw[0..n) as a chunked body, offered whole (step n) or step bytes at a time; *outp
 * (caller frees) gets the decoded body and *lenp its length when it ended.
 */
static int dechunk(const char *raw, size_t n, size_t step, char **outp, size_t *lenp)
{
    char *buf = malloc(n ? n : 1);
    size_t have = 0, len = 0;
    HttpChunked st = {0};
    int r = HTTP_CHUNKED_AGAIN;

    while (r == HTTP_CHUNKED_AGAIN && have < n) {
        size_t k = step < n - have ? step : n - have;
        memcpy(buf + len, raw + have, k);
        have += k;
        len += k;
        r = http_chunked_step(&st, buf, &len, FUZZ_MAX_BODY);
        if (st.out > FUZZ_MAX_BODY || len > n || st.out > len)
            abort();
    }
    *outp = buf;
    *lenp = st.out;
    return r;
}

static void check_chunked(const char *raw, size_t n, size_t step)
{
    char *a, *b;
    size_t an, bn;
    int ra = dechunk(raw, n, n ? n : 1, &a, &an), rb = dechunk(raw, n, step, &b, &bn);

    if (ra != rb || (ra == HTTP_CHUNKED_DONE && (an != bn || memcmp(a, b, an) != 0)))
        abort();
    if (ra != HTTP_CHUNKED_DONE && ra != HTTP_CHUNKED_AGAIN && (ra < 400 || ra > 599))
        abort();
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    HttpHead whole, grown;
    size_t scan = 0, len;

    if (size < 1)
        return 0;
    size_t chunk = (size_t)data[0] % 64 + 1;
    /* A copy of its own, so reading past the input is caught. */
    char *buf = malloc(size - 1 ? size - 1 : 1);
    memcpy(buf, data + 1, size - 1);
    int a = http_parse_head(&whole, buf, size - 1, &scan);
    int b = parse_growing(&grown, buf, size - 1, chunk);
    if (a != b)
        abort();
    if (a == HTTP_PARSE_OK) {
        if (whole.head_len != grown.head_len || whole.n_fields != grown.n_fields ||
            whole.content_length != grown.content_length || whole.head_len > size - 1)
            abort();
        inside(buf, size - 1, whole.method, whole.method_len);
        inside(buf, size - 1, whole.target, whole.target_len);
        for (size_t i = 0; i < whole.n_fields; i++) {
            inside(buf, size - 1, whole.fields[i].name, whole.fields[i].name_len);
            inside(buf, size - 1, whole.fields[i].value, whole.fields[i].value_len);
        }
        (void)http_field(&whole, "Content-Type", &len);
        (void)http_field_lists(&whole, "Accept", "text/event-stream");
        (void)http_field_is(&whole, "Connection", "close");
        (void)http_method_is(&whole, "POST");
        const char *last = http_field(&whole, "Last-Event-ID", &len);
        uint32_t stream;
        uint64_t seq;
        char id[HTTP_EVENT_ID_LEN];
        if (last && http_replay_parse_id(last, len, &stream, &seq)) {
            /* An id that parses is one mcpd could have written: it reads back the same. */
            HttpReplay *r = http_replay_new(stream);
            http_replay_id(r, seq, id);
            http_replay_free(r);
            uint32_t stream2;
            uint64_t seq2;
            if (!http_replay_parse_id(id, strlen(id), &stream2, &seq2) || stream2 != stream ||
                seq2 != seq)
                abort();
        }
        if (whole.chunked)
            check_chunked(buf + whole.head_len, size - 1 - whole.head_len, chunk);
    } else if (a != HTTP_PARSE_AGAIN && (a < 400 || a > 599)) {
        abort();
    }
    free(buf);
    return 0;
}
