// SPDX-License-Identifier: MIT
// http-chunked: a request body in the chunked transfer coding (RFC 9112 7.1), decoded in place
// as it arrives; each bound (size line, chunks, body bytes, trailers) refuses with its status.

#include <stdbool.h>
#include <string.h>

#include "common/util.h"
#include "daemon/downstream/http-chunked.h"

enum { SIZE = 0, DATA, DATA_END, TRAILER, DONE };

/*
 * The chunk-size line line[0..n) (without its CRLF): hex size, then optional white space and
 * extensions, which are ignored. 0 with *sizep, or the status to refuse with.
 */
static int parse_size(const char *line, size_t n, uint64_t room, uint64_t *sizep)
{
    uint64_t v = 0;
    size_t i = 0;

    for (; i < n && hex_digit(line[i]) >= 0; i++) {
        v = v * 16 + (uint64_t)hex_digit(line[i]);
        if (v > room)
            return 413; /* also keeps v from overflowing: room fits in a size_t */
    }
    if (i == 0)
        return 400;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i < n && line[i] != ';')
        return 400;
    for (; i < n; i++)
        if ((unsigned char)line[i] < 0x20 && line[i] != '\t')
            return 400; /* a bare CR or another control inside the line */
    *sizep = v;
    return 0;
}

/* Whether the line starting at p has arrived: *lfp gets the index of its LF. */
static bool line_end(const char *body, size_t p, size_t n, size_t *lfp)
{
    const char *lf = memchr(body + p, '\n', n - p);

    if (lf)
        *lfp = (size_t)(lf - body);
    return lf != NULL;
}

int http_chunked_step(HttpChunked *st, char *body, size_t *np, size_t max_body)
{
    size_t p = st->out, n = *np, lf;
    int r = HTTP_CHUNKED_AGAIN;

    if (st->state == DONE)
        return HTTP_CHUNKED_DONE;
    while (r == HTTP_CHUNKED_AGAIN && p < n) {
        switch (st->state) {
        case SIZE:
            if (!line_end(body, p, n, &lf)) {
                if (n - p >= HTTP_CHUNK_LINE_MAX)
                    r = 400;
                goto out;
            }
            if (lf - p + 1 > HTTP_CHUNK_LINE_MAX || lf == p || body[lf - 1] != '\r') {
                r = 400;
                break;
            }
            if ((r = parse_size(body + p, lf - 1 - p, max_body - st->out, &st->left)) != 0)
                break;
            r = HTTP_CHUNKED_AGAIN;
            p = lf + 1;
            if (st->left == 0) {
                st->state = TRAILER;
            } else if (++st->chunks > HTTP_CHUNKS_MAX) {
                r = 413;
            } else {
                st->state = DATA;
            }
            break;
        case DATA: {
            size_t k = n - p < st->left ? n - p : (size_t)st->left;
            memmove(body + st->out, body + p, k);
            st->out += k;
            st->left -= k;
            p += k;
            if (!st->left)
                st->state = DATA_END;
            break;
        }
        case DATA_END:
            if (n - p < 2)
                goto out;
            if (body[p] != '\r' || body[p + 1] != '\n') {
                r = 400;
                break;
            }
            p += 2;
            st->state = SIZE;
            break;
        case TRAILER:
            if (!line_end(body, p, n, &lf)) {
                if (st->trailer + (n - p) > HTTP_TRAILER_MAX)
                    r = 431;
                goto out;
            }
            if (lf == p || body[lf - 1] != '\r') {
                r = 400;
                break;
            }
            st->trailer += lf + 1 - p;
            if (st->trailer > HTTP_TRAILER_MAX) {
                r = 431;
                break;
            }
            if (lf == p + 1) {
                st->state = DONE;
                r = HTTP_CHUNKED_DONE;
            }
            p = lf + 1;
            break;
        default:
            r = HTTP_CHUNKED_DONE;
            break;
        }
    }
out:
    memmove(body + st->out, body + p, n - p);
    *np = st->out + (n - p);
    return r;
}
