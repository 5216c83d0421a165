// SPDX-License-Identifier: MIT
// sse: an incremental parser for text/event-stream (bytes in, events out; no I/O).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

/*
 * The WHATWG event-stream rules: lines end in CR, LF or CRLF (also across chunk boundaries), a
 * leading BOM is skipped, ":" starts a comment, "field: value" loses one space after the colon,
 * "data" lines join with "\n", "id" sets the last event id (not when it holds a NUL), "retry"
 * takes digits only, and a blank line dispatches the event if it had a data line. MCP's priming
 * event (`id: X`, `data: ` with nothing after it) is dispatched with empty data: the consumer
 * skips it, and its id is remembered in any case.
 */

/* One dispatched event; the strings are valid only during the callback. */
typedef struct SseEvent {
    const char *event; /* "message" when the stream named none */
    const char *data;  /* NUL-terminated, data_len bytes */
    size_t data_len;
    const char *id; /* the last event id after this event ("" if none yet) */
} SseEvent;

/* Return 0 to go on, anything else to stop feed() (the value is returned). */
typedef int (*SseEventFn)(void *userdata, const SseEvent *ev);

typedef struct SseParser {
    StrBuf line;        /* the current, incomplete line */
    StrBuf data;        /* the event's data so far */
    StrBuf event;       /* the event's type so far */
    StrBuf id;          /* the last event id (persists across events) */
    int64_t retry_ms;   /* the last valid retry field, or -1 */
    size_t max_event;   /* bound on one line and one event's data, bytes */
    bool cr;            /* the last byte was a CR: a following LF belongs to it */
    bool started;       /* past a possible BOM */
    bool oversized;     /* the current event went past max_event: it is dropped */
    bool skip_line;     /* the current line went past max_event: discard up to its end */
    uint64_t n_dropped; /* oversized events dropped so far */
} SseParser;

/** Set up an empty parser; max_event bounds a line and an event's data (0: 16 MiB). */
void sse_parser_init(SseParser *p, size_t max_event);
/** Release the buffers; safe on a zeroed value. */
void sse_parser_deinit(SseParser *p);
/** Forget a partial line and event (a new connection), keeping the last id and retry. */
void sse_parser_reset(SseParser *p);
/**
 * Parse n bytes, calling fn for every complete event. Returns 0, or the first non-zero value
 * fn returned (the rest of the bytes are then not parsed).
 */
int sse_parser_feed(SseParser *p, const char *bytes, size_t n, SseEventFn fn, void *userdata);
