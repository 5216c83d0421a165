// SPDX-License-Identifier: MIT
// http-resume: the events of one 2025-era SSE stream, numbered and kept (bounded) so that a
// client whose connection dropped can resume with Last-Event-ID (2025-11-25 transports).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Events one stream keeps for a resume: what is sent on a POST's stream before its answer
 * (progress, log messages, a server's request) and the answer, or the GET stream's latest
 * notifications. A call's progress comes a few times a second; 64 events span the seconds a
 * client takes to reconnect (the SDK waits 1 s, then 1.5 s). Older events are dropped first.
 */
#define HTTP_REPLAY_EVENTS 64
/*
 * ... and their bytes: 1 MiB holds an answer as large as agents see (a big tools/list is some
 * hundreds of KiB) with its progress; the newest event is kept even past it, so an answer is
 * never lost to the bound.
 */
#define HTTP_REPLAY_BYTES (1024 * 1024)
/*
 * How long a stream whose connection dropped waits for its client to resume it: SDK clients
 * reconnect within seconds (retry, then backoff up to 30 s); past 5 minutes it is forgotten
 * (what it held is lost, as on a server with no event store).
 */
#define HTTP_RESUME_WINDOW_MS (5 * 60 * 1000)
/* Bytes of an event id as text: "<stream>-<seq>", two decimal numbers. */
#define HTTP_EVENT_ID_LEN 48

typedef struct HttpReplayEvent {
    uint64_t seq;
    char *data;
    size_t n;
} HttpReplayEvent;

typedef struct HttpReplay {
    uint32_t stream; /* the stream's number in its session */
    uint64_t next;   /* the number of the next event (0 is the priming event's) */
    HttpReplayEvent ev[HTTP_REPLAY_EVENTS]; /* a ring, oldest at first */
    size_t first, count, bytes;
} HttpReplay;

/** A new replay for stream number stream of its session. */
HttpReplay *http_replay_new(uint32_t stream);
void http_replay_free(HttpReplay *r);
/** Keep a copy of data (n bytes) as the next event; returns its number. */
uint64_t http_replay_add(HttpReplay *r, const char *data, size_t n);
/** The id of event seq of r as text, in buf (HTTP_EVENT_ID_LEN). */
void http_replay_id(const HttpReplay *r, uint64_t seq, char *buf);
/** Parse a Last-Event-ID value into its stream and event numbers; false when it is not ours. */
bool http_replay_parse_id(const char *v, size_t n, uint32_t *streamp, uint64_t *seqp);
/** Call fn for each event kept after seq, oldest first. */
void http_replay_after(const HttpReplay *r, uint64_t seq,
                       void (*fn)(void *ctx, uint64_t seq, const char *data, size_t n), void *ctx);
