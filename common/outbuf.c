// SPDX-License-Identifier: MIT
// outbuf: an output queue of plain bytes whose memory stays allocated between writes.

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/outbuf.h"
#include "common/util.h"

void outbuf_init(OutBuf *o, OutBufPool *pool)
{
    memset(o, 0, sizeof(*o));
    o->pool = pool;
}

/* The buffer is empty: keep it, give it to the pool, or free it when it is big. */
static void recycle(OutBuf *o)
{
    OutBufPool *pool = o->pool;

    o->start = o->len = 0;
    if (!o->data)
        return;
    if (o->cap > OUTBUF_KEEP_BYTES) {
        free(o->data);
    } else if (!pool) {
        return;
    } else if (pool->n < OUTBUF_POOL_MAX && pool->bytes + o->cap <= OUTBUF_POOL_BYTES) {
        pool->spare[pool->n].data = o->data;
        pool->spare[pool->n].cap = o->cap;
        pool->n++;
        pool->bytes += o->cap;
    } else {
        free(o->data);
    }
    o->data = NULL;
    o->cap = 0;
}

void outbuf_deinit(OutBuf *o)
{
    free(o->data);
    o->data = NULL;
    o->start = o->len = o->cap = 0;
}

/* Room for n more bytes after len. */
static void make_room(OutBuf *o, size_t n)
{
    size_t queued = o->len - o->start, cap;

    if (!o->data && o->pool && o->pool->n) {
        OutBufPool *pool = o->pool;
        pool->n--;
        o->data = pool->spare[pool->n].data;
        o->cap = pool->spare[pool->n].cap;
        pool->bytes -= o->cap;
        if (o->cap >= n)
            return;
    }
    /*
     * Written bytes at the front are reclaimed only once they are at least as many as those
     * still waiting, so a slow reader's queue is moved at most once per its length.
     */
    if (o->start && o->start >= queued && queued + n <= o->cap) {
        memmove(o->data, o->data + o->start, queued);
        o->start = 0;
        o->len = queued;
        return;
    }
    cap = o->cap ? o->cap : OUTBUF_MIN_CAP;
    while (cap < o->len + n)
        cap *= 2;
    o->data = xrealloc(o->data, cap);
    o->cap = cap;
}

void outbuf_append(OutBuf *o, const void *data, size_t n)
{
    if (n == 0)
        return;
    if (o->cap - o->len < n)
        make_room(o, n);
    memcpy(o->data + o->len, data, n);
    o->len += n;
}

char *outbuf_reserve(OutBuf *o, size_t n)
{
    if (o->cap - o->len < n || !o->data)
        make_room(o, n ? n : 1);
    return o->data + o->len;
}

void outbuf_consume(OutBuf *o, size_t n)
{
    o->start += n;
    if (o->start >= o->len)
        recycle(o);
}

void outbuf_clear(OutBuf *o)
{
    recycle(o);
}

ssize_t outbuf_write(OutBuf *o, int fd)
{
    ssize_t w;

    if (outbuf_len(o) == 0)
        return 0;
    w = write(fd, o->data + o->start, outbuf_len(o));
    if (w < 0)
        return -errno;
    outbuf_consume(o, (size_t)w);
    return w;
}

void outbuf_pool_deinit(OutBufPool *pool)
{
    while (pool->n) {
        pool->n--;
        free(pool->spare[pool->n].data);
    }
    pool->bytes = 0;
}
