// SPDX-License-Identifier: MIT
// test-outbuf: the output queue that keeps its buffer: order across partial writes, front
// reclaim, release of big buffers, and the pool's bounds.

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/outbuf.h"
#include "common/strbuf.h"
#include "tests/unit/test.h"

/* Appends between partial writes keep the byte order; the buffer is kept when drained. */
static void test_partial_writes_keep_order(void)
{
    OutBuf o;
    StrBuf want = STRBUF_INIT, got = STRBUF_INIT;
    int sv[2];
    char chunk[4096];

    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
    outbuf_init(&o, NULL);
    for (int round = 0; round < 2000; round++) {
        char line[64];
        int n = snprintf(line, sizeof(line), "{\"line\":%d,\"pad\":\"%.*s\"}\n", round, round % 23,
                         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        outbuf_append(&o, line, (size_t)n);
        strbuf_append(&want, line, (size_t)n);
        /* Write a little at a time: the reader takes at most 100 bytes per round. */
        if (round % 3 == 0) {
            ssize_t w = outbuf_write(&o, sv[0]);
            CHECK(w > 0 || w == -EAGAIN);
        }
        ssize_t r = recv(sv[1], chunk, round % 5 == 0 ? 100 : 1, MSG_DONTWAIT);
        if (r > 0)
            strbuf_append(&got, chunk, (size_t)r);
    }
    while (outbuf_len(&o) > 0) {
        ssize_t w = outbuf_write(&o, sv[0]);
        CHECK(w > 0 || w == -EAGAIN);
        ssize_t r = recv(sv[1], chunk, sizeof(chunk), MSG_DONTWAIT);
        if (r > 0)
            strbuf_append(&got, chunk, (size_t)r);
    }
    CHECK(o.data != NULL); /* no pool: a small drained buffer stays */
    CHECK(o.cap <= OUTBUF_KEEP_BYTES);
    shutdown(sv[0], SHUT_WR);
    for (ssize_t r; (r = read(sv[1], chunk, sizeof(chunk))) > 0;)
        strbuf_append(&got, chunk, (size_t)r);
    CHECK_INTEQ(got.len, want.len);
    CHECK_STREQ(strbuf_str(&got), strbuf_str(&want));
    outbuf_deinit(&o);
    strbuf_deinit(&want);
    strbuf_deinit(&got);
    close(sv[0]);
    close(sv[1]);
}

/*
 * A queue that is written about as fast as it is filled reuses the front of its buffer instead
 * of growing: 80 KB pass through a queue that never holds more than 2 KB, in one first-size
 * buffer, in order.
 */
static void test_front_reclaimed(void)
{
    OutBuf o;
    StrBuf want = STRBUF_INIT, got = STRBUF_INIT;
    char line[41];

    outbuf_init(&o, NULL);
    for (int round = 0; round < 2000; round++) {
        snprintf(line, sizeof(line), "%039d\n", round);
        outbuf_append(&o, line, 40);
        strbuf_append(&want, line, 40);
        size_t n = MIN(outbuf_len(&o), (size_t)39);
        strbuf_append(&got, outbuf_peek(&o), n);
        outbuf_consume(&o, n);
        CHECK(outbuf_len(&o) <= 2000);
    }
    CHECK_INTEQ(o.cap, OUTBUF_MIN_CAP);
    strbuf_append(&got, outbuf_peek(&o), outbuf_len(&o));
    outbuf_consume(&o, outbuf_len(&o));
    CHECK_INTEQ(outbuf_len(&o), 0);
    CHECK_STREQ(strbuf_str(&got), strbuf_str(&want));
    outbuf_deinit(&o);
    strbuf_deinit(&want);
    strbuf_deinit(&got);
}

/* A buffer grown past OUTBUF_KEEP_BYTES is freed once drained, with or without a pool. */
static void test_big_released(void)
{
    static OutBufPool pool;
    OutBuf a, b;
    size_t n = 3 * OUTBUF_KEEP_BYTES;
    char *big = calloc(1, n);

    outbuf_init(&a, NULL);
    outbuf_init(&b, &pool);
    outbuf_append(&a, big, n);
    outbuf_append(&b, big, n);
    CHECK(a.cap >= n);
    outbuf_consume(&a, n - 1);
    CHECK(a.data != NULL); /* one byte still waits */
    outbuf_consume(&a, 1);
    CHECK(a.data == NULL);
    outbuf_clear(&b);
    CHECK(b.data == NULL);
    CHECK_INTEQ(pool.n, 0);
    free(big);
    outbuf_deinit(&a);
    outbuf_deinit(&b);
    outbuf_pool_deinit(&pool);
}

/* The pool hands buffers back in turn and holds at most OUTBUF_POOL_MAX / OUTBUF_POOL_BYTES. */
static void test_pool_bounds(void)
{
    static OutBufPool pool;
    static OutBuf q[OUTBUF_POOL_MAX + 10];
    size_t n_q = sizeof(q) / sizeof(q[0]);

    for (size_t i = 0; i < n_q; i++) {
        outbuf_init(&q[i], &pool);
        outbuf_append(&q[i], "x\n", 2);
    }
    CHECK_INTEQ(pool.n, 0);
    for (size_t i = 0; i < n_q; i++)
        outbuf_clear(&q[i]);
    CHECK_INTEQ(pool.n, OUTBUF_POOL_MAX);
    CHECK(pool.bytes <= OUTBUF_POOL_BYTES);
    /* Taken again: no new buffer while the pool has one. */
    char *top = pool.spare[pool.n - 1].data;
    outbuf_append(&q[0], "y\n", 2);
    CHECK(q[0].data == top);
    CHECK_INTEQ(pool.n, OUTBUF_POOL_MAX - 1);
    outbuf_clear(&q[0]);
    /* Big-but-kept buffers count by bytes: a pool of 64 KiB buffers holds far fewer. */
    outbuf_pool_deinit(&pool);
    char *mid = calloc(1, OUTBUF_KEEP_BYTES / 2);
    for (size_t i = 0; i < 40; i++) {
        outbuf_append(&q[i], mid, OUTBUF_KEEP_BYTES / 2);
        CHECK(q[i].cap <= OUTBUF_KEEP_BYTES);
    }
    for (size_t i = 0; i < 40; i++)
        outbuf_clear(&q[i]);
    CHECK(pool.bytes <= OUTBUF_POOL_BYTES);
    CHECK(pool.n < 40);
    free(mid);
    for (size_t i = 0; i < n_q; i++)
        outbuf_deinit(&q[i]);
    outbuf_pool_deinit(&pool);
}

int main(void)
{
    RUN(test_partial_writes_keep_order);
    RUN(test_front_reclaimed);
    RUN(test_big_released);
    RUN(test_pool_bounds);
    return test_main_result();
}
