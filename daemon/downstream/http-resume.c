// SPDX-License-Identifier: MIT
// http-resume: numbered events of one 2025-era SSE stream kept in a bounded ring for a client's
// Last-Event-ID resumption.

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "daemon/downstream/http-resume.h"

HttpReplay *http_replay_new(uint32_t stream)
{
    HttpReplay *r = xcalloc(1, sizeof(*r));

    r->stream = stream;
    r->next = 1; /* 0 is the priming event, which carries no message */
    return r;
}

static void drop_oldest(HttpReplay *r)
{
    HttpReplayEvent *e = &r->ev[r->first];

    r->bytes -= e->n;
    free(e->data);
    e->data = NULL;
    r->first = (r->first + 1) % HTTP_REPLAY_EVENTS;
    r->count--;
}

void http_replay_free(HttpReplay *r)
{
    if (!r)
        return;
    while (r->count)
        drop_oldest(r);
    free(r);
}

uint64_t http_replay_add(HttpReplay *r, const char *data, size_t n)
{
    while (r->count && (r->count == HTTP_REPLAY_EVENTS || r->bytes + n > HTTP_REPLAY_BYTES))
        drop_oldest(r);
    HttpReplayEvent *e = &r->ev[(r->first + r->count) % HTTP_REPLAY_EVENTS];
    e->seq = r->next++;
    e->data = xmalloc(n ? n : 1);
    memcpy(e->data, data, n);
    e->n = n;
    r->bytes += n;
    r->count++;
    return e->seq;
}

void http_replay_id(const HttpReplay *r, uint64_t seq, char *buf)
{
    snprintf(buf, HTTP_EVENT_ID_LEN, "%" PRIu32 "-%" PRIu64, r->stream, seq);
}

/* A decimal number of at most max, from *p up to end or stop; false when there is none. */
static bool number(const char **p, const char *end, char stop, uint64_t max, uint64_t *vp)
{
    uint64_t v = 0;
    const char *s = *p;

    for (; *p < end && **p != stop; (*p)++) {
        if (**p < '0' || **p > '9' || v > (max - (uint64_t)(**p - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(**p - '0');
    }
    *vp = v;
    return *p > s;
}

bool http_replay_parse_id(const char *v, size_t n, uint32_t *streamp, uint64_t *seqp)
{
    const char *p = v, *end = v + n;
    uint64_t stream;

    if (!number(&p, end, '-', UINT32_MAX, &stream) || p == end)
        return false;
    p++;
    if (!number(&p, end, 0, UINT64_MAX, seqp) || p != end)
        return false;
    *streamp = (uint32_t)stream;
    return true;
}

void http_replay_after(const HttpReplay *r, uint64_t seq,
                       void (*fn)(void *ctx, uint64_t seq, const char *data, size_t n), void *ctx)
{
    for (size_t i = 0; i < r->count; i++) {
        const HttpReplayEvent *e = &r->ev[(r->first + i) % HTTP_REPLAY_EVENTS];
        if (e->seq > seq)
            fn(ctx, e->seq, e->data, e->n);
    }
}
