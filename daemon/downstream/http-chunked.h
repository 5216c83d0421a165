// SPDX-License-Identifier: MIT
// http-chunked: a request body in the chunked transfer coding (RFC 9112 7.1), decoded in place
// as it arrives, bounded.
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Bytes of one chunk-size line (hex size, extensions, CRLF): a size is at most 16 hex digits
 * and clients send no extensions (curl, undici, Python's http.client send none); 256 leaves
 * room for a short one and refuses a line that never ends.
 */
#define HTTP_CHUNK_LINE_MAX 256
/*
 * Chunks in one body: every chunk but the last carries a byte at least, so maxMessageBytes
 * bounds them already; this bounds the work for a body sent a byte at a time. Clients write
 * a JSON-RPC message in one chunk or a few (one per write); 65536 is far past any of them.
 */
#define HTTP_CHUNKS_MAX 65536
/*
 * Bytes of the trailer section after the last chunk: clients send none; it is read and
 * ignored (RFC 9112 7.1.2 lets a server drop trailers), 4 KiB of it at most.
 */
#define HTTP_TRAILER_MAX 4096

/* Outcomes of http_chunked_step() besides an HTTP status code for a refusal. */
enum {
    HTTP_CHUNKED_DONE = 0,
    HTTP_CHUNKED_AGAIN = 1, /* more input is needed */
};

/* Where the decoding of one body is; all zero to start one. */
typedef struct HttpChunked {
    size_t out;     /* decoded bytes, at the start of the body's buffer */
    uint64_t left;  /* bytes of the current chunk's data still to come */
    size_t chunks;  /* chunks seen */
    size_t trailer; /* bytes of the trailer section seen */
    int state;      /* private */
} HttpChunked;

/**
 * Decode what arrived of a chunked body, in place: body[0..st->out) is what is decoded so far,
 * body[st->out..*np) what arrived since. The bytes taken are decoded and what is left of them
 * (an unfinished size line, or bytes after the body) is moved down to body + st->out, *np its
 * end. Returns HTTP_CHUNKED_DONE when the body ended: body[0..st->out) is it and
 * body[st->out..*np) what followed it (a next request); HTTP_CHUNKED_AGAIN when more must be
 * read; or the status to refuse with: 400 (malformed), 413 (more than max_body bytes, or more
 * than HTTP_CHUNKS_MAX chunks), 431 (the trailer section past HTTP_TRAILER_MAX).
 */
int http_chunked_step(HttpChunked *st, char *body, size_t *np, size_t max_body);
