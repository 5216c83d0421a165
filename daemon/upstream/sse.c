// SPDX-License-Identifier: MIT
// sse: an incremental parser for text/event-stream (bytes in, events out; no I/O).

#include <string.h>

#include "daemon/upstream/sse.h"

/* The JSON-RPC line bound (common/jsonrpc.h): an event carries one message. */
#define SSE_MAX_EVENT_DEFAULT (16u * 1024u * 1024u)

void sse_parser_init(SseParser *p, size_t max_event)
{
    memset(p, 0, sizeof(*p));
    p->retry_ms = -1;
    p->max_event = max_event ? max_event : SSE_MAX_EVENT_DEFAULT;
}

void sse_parser_deinit(SseParser *p)
{
    strbuf_deinit(&p->line);
    strbuf_deinit(&p->data);
    strbuf_deinit(&p->event);
    strbuf_deinit(&p->id);
}

void sse_parser_reset(SseParser *p)
{
    strbuf_reset(&p->line);
    strbuf_reset(&p->data);
    strbuf_reset(&p->event);
    p->cr = false;
    p->started = false;
    p->oversized = false;
    p->skip_line = false;
}

static int dispatch(SseParser *p, SseEventFn fn, void *userdata)
{
    SseEvent ev;
    int r = 0;

    if (p->oversized)
        p->n_dropped++;
    else if (p->data.len > 0) {
        /* The buffer ends in the "\n" every data line added: drop the last one. */
        p->data.len--;
        p->data.data[p->data.len] = '\0';
        ev.event = p->event.len ? strbuf_str(&p->event) : "message";
        ev.data = strbuf_str(&p->data);
        ev.data_len = p->data.len;
        ev.id = strbuf_str(&p->id);
        r = fn(userdata, &ev);
    }
    strbuf_reset(&p->data);
    strbuf_reset(&p->event);
    p->oversized = false;
    return r;
}

static void set_retry(SseParser *p, const char *v, size_t n)
{
    int64_t ms = 0;

    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return;
        if (ms > INT64_MAX / 10 - 10)
            return;
        ms = ms * 10 + (v[i] - '0');
    }
    p->retry_ms = ms;
}

static void process_field(SseParser *p, const char *name, size_t nn, const char *v, size_t vn)
{
    if (nn == 4 && memcmp(name, "data", 4) == 0) {
        if (p->oversized || p->data.len + vn + 1 > p->max_event) {
            p->oversized = true;
            strbuf_reset(&p->data);
            return;
        }
        strbuf_append(&p->data, v, vn);
        strbuf_putc(&p->data, '\n');
    } else if (nn == 5 && memcmp(name, "event", 5) == 0) {
        strbuf_reset(&p->event);
        strbuf_append(&p->event, v, vn);
    } else if (nn == 2 && memcmp(name, "id", 2) == 0) {
        if (!memchr(v, '\0', vn)) {
            strbuf_reset(&p->id);
            strbuf_append(&p->id, v, vn);
        }
    } else if (nn == 5 && memcmp(name, "retry", 5) == 0) {
        set_retry(p, v, vn);
    }
    /* Any other field is ignored, as the standard says. */
}

static int process_line(SseParser *p, SseEventFn fn, void *userdata)
{
    const char *l = strbuf_str(&p->line), *colon;
    size_t n = p->line.len, nn, vn;
    int r = 0;

    if (n == 0)
        r = dispatch(p, fn, userdata);
    else if (l[0] != ':') {
        colon = memchr(l, ':', n);
        nn = colon ? (size_t)(colon - l) : n;
        const char *v = colon ? colon + 1 : l + n;
        vn = n - nn - (colon ? 1 : 0);
        if (vn > 0 && v[0] == ' ')
            v++, vn--;
        process_field(p, l, nn, v, vn);
    }
    strbuf_reset(&p->line);
    return r;
}

int sse_parser_feed(SseParser *p, const char *bytes, size_t n, SseEventFn fn, void *userdata)
{
    size_t i = 0;
    int r;

    if (!p->started && n > 0) {
        /* A UTF-8 BOM may open the stream; it may arrive split over chunks. */
        static const char bom[] = "\xEF\xBB\xBF";
        size_t have = p->line.len;
        while (i < n && have + i < 3 && bytes[i] == bom[have + i])
            i++;
        if (have + i < 3 && i == n) {
            strbuf_append(&p->line, bytes, n);
            return 0;
        }
        if (have + i == 3)
            strbuf_reset(&p->line);
        else {
            i = 0; /* not a BOM: what was held back is ordinary text */
        }
        p->started = true;
    }
    while (i < n) {
        char c = bytes[i];
        if (c == '\n' && p->cr) {
            p->cr = false;
            i++;
            continue;
        }
        p->cr = false;
        if (c == '\r' || c == '\n') {
            p->cr = c == '\r';
            i++;
            if (p->skip_line) {
                p->skip_line = false;
                continue;
            }
            if ((r = process_line(p, fn, userdata)) != 0)
                return r;
            continue;
        }
        /* Copy the run up to the next line end at once. */
        size_t j = i;
        while (j < n && bytes[j] != '\r' && bytes[j] != '\n')
            j++;
        if (p->skip_line) {
            /* still inside an over-long line */
        } else if (p->line.len + (j - i) > p->max_event) {
            /* A line past the bound cannot be a valid message: drop its event. */
            p->oversized = true;
            p->skip_line = true;
            strbuf_reset(&p->line);
            strbuf_reset(&p->data);
        } else {
            strbuf_append(&p->line, bytes + i, j - i);
        }
        i = j;
    }
    return 0;
}
