// SPDX-License-Identifier: MIT
// outbuf: an output queue of plain bytes whose memory stays allocated between writes.
#pragma once

#include <stddef.h>
#include <sys/types.h>

/*
 * A drained buffer at most this big is kept (or handed to its pool) for the next message;
 * a bigger one is freed. Messages up to the batching limit of the writers (64 KiB, the size of
 * one socket read) then never allocate, while a connection that once sent a 16 MiB result does
 * not hold 16 MiB while idle.
 */
#define OUTBUF_KEEP_BYTES (64u * 1024u)
/*
 * A buffer's first allocation: one page holds any usual reply or request (hundreds of bytes to
 * a few KiB) without regrowing.
 */
#define OUTBUF_MIN_CAP 4096u
/*
 * Drained buffers a pool holds for reuse. Replies made in one loop batch each need their own
 * buffer until the batch is written; 256 covers a batch to 256 agents at once (the benchmark's
 * 100, with room); past it buffers are allocated as needed, and freed when drained.
 */
#define OUTBUF_POOL_MAX 256
/*
 * Bytes a pool may hold at most: 256 one-page buffers, so a pool filled once by a burst of
 * large replies gives the memory back instead of keeping up to 256 x 64 KiB.
 */
#define OUTBUF_POOL_BYTES (OUTBUF_POOL_MAX * OUTBUF_MIN_CAP)

/*
 * Drained buffers shared by many queues (one per agent connection), so an idle connection
 * holds no buffer of its own and a busy one does not allocate per message.
 */
typedef struct OutBufPool {
    struct {
        char *data;
        size_t cap;
    } spare[OUTBUF_POOL_MAX];
    size_t n;     /* buffers in spare */
    size_t bytes; /* their capacity, summed */
} OutBufPool;

/* Bytes data[start, len) wait to be written; a zeroed value is an empty queue without a pool. */
typedef struct OutBuf {
    char *data;
    size_t start, len, cap;
    OutBufPool *pool; /* where a drained buffer goes, or NULL: the queue keeps it */
} OutBuf;

/** Set up an empty queue; pool may be NULL (the queue then keeps its drained buffer). */
void outbuf_init(OutBuf *o, OutBufPool *pool);
/** Release the queue's buffer, dropping what it holds; safe on a zeroed value. */
void outbuf_deinit(OutBuf *o);
/** Bytes waiting. */
static inline size_t outbuf_len(const OutBuf *o)
{
    return o->len - o->start;
}
/** The waiting bytes (outbuf_len of them; NULL when none). */
static inline const char *outbuf_peek(const OutBuf *o)
{
    return o->data ? o->data + o->start : NULL;
}
/** Queue n bytes after those waiting. */
void outbuf_append(OutBuf *o, const void *data, size_t n);
/**
 * Room for n more bytes after those waiting, to build a message in place (no copy): write at
 * most n bytes at the pointer returned, then queue them with outbuf_commit.
 */
char *outbuf_reserve(OutBuf *o, size_t n);
/** Queue the n bytes written at what outbuf_reserve returned (n at most what it reserved). */
static inline void outbuf_commit(OutBuf *o, size_t n)
{
    o->len += n;
}
/** Mark the first n waiting bytes written (n <= outbuf_len); a drained buffer is recycled. */
void outbuf_consume(OutBuf *o, size_t n);
/** Drop everything waiting; the buffer is recycled. */
void outbuf_clear(OutBuf *o);
/** One write(2) of the waiting bytes to fd: bytes written, or -errno (-EAGAIN: try later). */
ssize_t outbuf_write(OutBuf *o, int fd);
/** Free every buffer a pool holds; safe on a zeroed value. */
void outbuf_pool_deinit(OutBufPool *pool);
