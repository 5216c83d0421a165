// SPDX-License-Identifier: MIT
// test-peer: a peer's output queue (plain bytes in a kept buffer, zero-copy references in an
// evbuffer): exact byte order across both stores, the queue bound over both, buffer reuse.

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/strbuf.h"
#include "daemon/downstream/peer.h"
#include "tests/unit/test.h"

/* How long a test waits for bytes that should arrive at once: generous, the machine is shared. */
#define WAIT_MS 20000

/* The references handed to peer_send_ref and how often each was released. */
typedef struct Ref {
    const char *text;
    int done;
} Ref;

static int n_gone;
static size_t n_dispatched;

static void on_dispatch(Peer *p, JsonrpcMsg *m, void *userdata)
{
    (void)p, (void)m, (void)userdata;
    n_dispatched++;
}

/* A peer that the next gone callback closes, as a hook that tears down shared state might. */
static Peer *close_on_gone;

static void on_gone(Peer *p, void *userdata)
{
    (void)userdata;
    n_gone++;
    if (close_on_gone && close_on_gone != p) {
        Peer *v = close_on_gone;
        close_on_gone = NULL;
        peer_close(v, "closed by another peer's gone");
    }
}

static void ref_done(const void *data, size_t n, void *arg)
{
    Ref *r = arg;

    CHECK(data == r->text);
    CHECK_INTEQ(n, strlen(r->text));
    r->done++;
}

static void send_ref(Peer *p, Ref *r)
{
    peer_send_ref(p, r->text, strlen(r->text), ref_done, r);
}

static void send_plain(Peer *p, const char *s)
{
    peer_send(p, s, strlen(s));
}

static void set_nonblock(int fd)
{
    CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
}

/* A registry on a fresh loop and one peer on a socket pair; *agentp is the agent's end. */
static Peer *setup(PeerRegistry *reg, struct event_base **basep, size_t max_line, int *agentp)
{
    int sv[2];

    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    set_nonblock(sv[0]);
    set_nonblock(sv[1]);
    *basep = event_base_new();
    peer_registry_init(reg, *basep, max_line, on_dispatch, on_gone, NULL);
    *agentp = sv[1];
    n_gone = 0;
    n_dispatched = 0;
    return peer_new(reg, sv[0], getuid(), getpid());
}

static void teardown(PeerRegistry *reg, struct event_base *base, int agent)
{
    peer_registry_deinit(reg);
    event_base_free(base);
    close(agent);
}

/* Run the loop and read the agent's end until want bytes arrived (or WAIT_MS passed). */
static void pump(struct event_base *base, int agent, StrBuf *got, size_t want)
{
    struct timespec t0, t;
    char chunk[65536];

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (got->len < want) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        ssize_t n = read(agent, chunk, sizeof(chunk));
        if (n > 0) {
            strbuf_append(got, chunk, (size_t)n);
            continue;
        }
        CHECK(n < 0 && errno == EAGAIN);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
            break;
        usleep(1000);
    }
}

/* Plain and by-reference sends in one batch arrive in exactly the order they were made. */
static void test_interleaved_order(void)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent;
    Peer *p = setup(&reg, &base, 1 << 20, &agent);
    Ref r1 = {"{\"ref\":1}\n", 0}, r2 = {"{\"ref\":2}\n", 0}, r3 = {"{\"ref\":3}\n", 0};
    const char *want = "{\"a\":1}\n{\"ref\":1}\n{\"a\":2}\n{\"a\":3}\n{\"ref\":2}\n{\"ref\":3}\n"
                       "{\"a\":4}\n";
    StrBuf got = STRBUF_INIT;

    send_plain(p, "{\"a\":1}\n");
    send_ref(p, &r1);
    send_plain(p, "{\"a\":2}\n");
    send_plain(p, "{\"a\":3}\n");
    send_ref(p, &r2);
    send_ref(p, &r3);
    send_plain(p, "{\"a\":4}\n");
    CHECK_INTEQ(peer_queued(p), strlen(want));
    /* Nothing is written before the loop runs: the batch leaves together. */
    CHECK_INTEQ(r1.done + r2.done + r3.done, 0);
    pump(base, agent, &got, strlen(want));
    CHECK_STREQ(strbuf_str(&got), want);
    CHECK_INTEQ(r1.done, 1);
    CHECK_INTEQ(r2.done, 1);
    CHECK_INTEQ(r3.done, 1);
    CHECK_INTEQ(peer_queued(p), 0);

    /* A second batch after the first drained: a reference first, then plain bytes. */
    strbuf_reset(&got);
    Ref r4 = {"{\"ref\":4}\n", 0};
    send_ref(p, &r4);
    send_plain(p, "{\"a\":5}\n");
    pump(base, agent, &got, 18);
    CHECK_STREQ(strbuf_str(&got), "{\"ref\":4}\n{\"a\":5}\n");
    CHECK_INTEQ(r4.done, 1);
    CHECK_INTEQ(n_gone, 0);
    strbuf_deinit(&got);
    teardown(&reg, base, agent);
}

/* Fill a line of n bytes with a pattern that shows any reordering or loss. */
static char *pattern_line(size_t n, char tag)
{
    char *s = malloc(n + 1);

    for (size_t i = 0; i < n - 1; i++)
        s[i] = (char)(i % 61 == 0 ? tag : 'a' + (char)(i % 26));
    s[n - 1] = '\n';
    s[n] = '\0';
    return s;
}

/*
 * A big message written at once only in part (the agent is not reading yet): its rest, a
 * reference and later plain bytes still arrive in order, and the big buffer is not kept.
 */
static void test_big_partial_then_ref(void)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent;
    Peer *p = setup(&reg, &base, 1 << 20, &agent);
    size_t big_n = 3u << 20; /* far beyond what a socket pair takes in one write */
    char *big = pattern_line(big_n, 'B'), *big2 = pattern_line(100000, 'C');
    Ref r = {"{\"ref\":\"after big\"}\n", 0};
    StrBuf want = STRBUF_INIT, got = STRBUF_INIT;

    peer_send(p, big, big_n);
    CHECK(peer_queued(p) > 0);
    CHECK(peer_queued(p) < big_n);
    send_ref(p, &r);
    send_plain(p, "{\"a\":\"after ref\"}\n");
    /* Not written at once: the queue is not empty, so it waits its turn. */
    peer_send(p, big2, 100000);
    strbuf_append(&want, big, big_n);
    strbuf_puts(&want, r.text);
    strbuf_puts(&want, "{\"a\":\"after ref\"}\n");
    strbuf_append(&want, big2, 100000);
    CHECK_INTEQ(r.done, 0); /* held until the bytes before it are written */
    pump(base, agent, &got, want.len);
    CHECK_INTEQ(got.len, want.len);
    CHECK(got.len == want.len && memcmp(got.data, want.data, want.len) == 0);
    CHECK_INTEQ(r.done, 1);
    CHECK_INTEQ(peer_queued(p), 0);
    /* The 3 MiB buffer went away once drained: neither the peer nor the pool keeps it. */
    CHECK(p->out_plain.data == NULL);
    CHECK(reg.out_pool.bytes <= OUTBUF_POOL_BYTES);
    for (size_t i = 0; i < reg.out_pool.n; i++)
        CHECK(reg.out_pool.spare[i].cap <= OUTBUF_KEEP_BYTES);
    free(big);
    free(big2);
    strbuf_deinit(&want);
    strbuf_deinit(&got);
    teardown(&reg, base, agent);
}

/* A drained peer holds no buffer; the next reply reuses the pooled one (no allocation). */
static void test_buffer_reused(void)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent;
    Peer *p = setup(&reg, &base, 1 << 20, &agent);
    StrBuf got = STRBUF_INIT;

    send_plain(p, "{\"n\":1}\n");
    const char *first = p->out_plain.data;
    CHECK(first != NULL);
    pump(base, agent, &got, 8);
    CHECK(p->out_plain.data == NULL);
    CHECK_INTEQ(reg.out_pool.n, 1);
    CHECK(reg.out_pool.spare[0].data == first);
    for (int i = 2; i < 50; i++) {
        char line[32];
        snprintf(line, sizeof(line), "{\"n\":%d}\n", i);
        send_plain(p, line);
        CHECK(p->out_plain.data == first);
        strbuf_reset(&got);
        pump(base, agent, &got, strlen(line));
        CHECK_STREQ(strbuf_str(&got), line);
    }
    CHECK_INTEQ(reg.out_pool.n, 1);
    strbuf_deinit(&got);
    teardown(&reg, base, agent);
}

/*
 * The output bound counts both stores: plain bytes, then references, up to max_queue; the send
 * that goes over it (here a reference when ref_last, else plain bytes) drops the peer, every
 * reference is released exactly once, and nothing more is queued or written.
 */
static void queue_bound(bool ref_last)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent;
    Peer *p = setup(&reg, &base, 1024, &agent); /* max_queue: 4 x 1024 */
    char *plain = pattern_line(3000, 'P');
    char *ref_text = pattern_line(1000, 'R');
    char *over = pattern_line(200, 'O');
    Ref r1 = {ref_text, 0}, r2 = {over, 0};
    char chunk[8192];

    CHECK_INTEQ(reg.max_queue, 4096);
    /* The agent reads nothing yet: the loop does not run, so everything stays queued. */
    peer_send(p, plain, 3000);
    send_ref(p, &r1);
    CHECK_INTEQ(peer_queued(p), 4000);
    if (ref_last)
        send_ref(p, &r2); /* 4000 + 200 > 4096 */
    else
        peer_send(p, plain, 3000);
    CHECK(p->close_reason != NULL);
    CHECK(p->close_reason && strstr(p->close_reason, "not reading"));
    CHECK_INTEQ(peer_queued(p), 0);
    CHECK_INTEQ(r1.done, 1);
    CHECK_INTEQ(r2.done, ref_last ? 1 : 0);
    /* Refused from now on; a reference is handed back at once. */
    send_plain(p, "{\"late\":1}\n");
    Ref r3 = {"{\"late\":2}\n", 0};
    send_ref(p, &r3);
    CHECK_INTEQ(r3.done, 1);
    CHECK_INTEQ(peer_queued(p), 0);
    event_base_loop(base, EVLOOP_NONBLOCK);
    CHECK_INTEQ(n_gone, 1);
    CHECK(peer_get(&reg, 1) == NULL);
    /* The agent got nothing of the dropped queue, then end of file. */
    ssize_t n = read(agent, chunk, sizeof(chunk));
    CHECK_INTEQ(n, 0);
    CHECK_INTEQ(r1.done, 1);
    free(plain);
    free(ref_text);
    free(over);
    teardown(&reg, base, agent);
}

static void test_queue_bound_ref_over(void)
{
    queue_bound(true);
}

static void test_queue_bound_plain_over(void)
{
    queue_bound(false);
}

/*
 * Reads are edge-triggered: a socket holding more than one wake-up's share of reads gets no new
 * edge for the rest, which must still be read (from the registry's ev_more) with nothing more
 * arriving, and every message dispatched.
 */
static void test_more_than_one_wakeup(void)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent, sndbuf = 4 << 20;
    Peer *p = setup(&reg, &base, 1 << 20, &agent);
    static const char line[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n";
    size_t sent = 0, lines = 0;
    struct timespec t0, t;

    /*
     * Room for more than four reads (each at most 2 x FRAMER_READ_CHUNK with lines this short):
     * SO_SNDBUFFORCE (root) passes wmem_max, which caps SO_SNDBUF near 400 KiB.
     */
    if (setsockopt(agent, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
        (void)setsockopt(agent, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    for (;;) {
        char block[4096];
        size_t k = sizeof(block) / (sizeof(line) - 1);
        for (size_t i = 0; i < k; i++)
            memcpy(block + i * (sizeof(line) - 1), line, sizeof(line) - 1);
        ssize_t w = write(agent, block, k * (sizeof(line) - 1));
        if (w < (ssize_t)(k * (sizeof(line) - 1))) {
            CHECK(w < 0 && errno == EAGAIN); /* whole blocks only: unix sockets take them so */
            break;
        }
        sent += (size_t)w;
        lines += k;
    }
    /* One turn of the loop: the socket's edge, the share of reads. */
    event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    CHECK(n_dispatched > 0 && n_dispatched < lines);
    if (sent > 8 * FRAMER_READ_CHUNK)
        CHECK(p->read_more); /* the socket still held data after the share of reads */
    else
        fprintf(stderr, "test-peer: the socket took only %zu bytes; ev_more not exercised\n", sent);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (n_dispatched < lines) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
            break;
    }
    CHECK_INTEQ(n_dispatched, lines);
    CHECK(!p->read_more);
    CHECK_INTEQ(reg.n_read_more, 0);
    CHECK_INTEQ(n_gone, 0);
    teardown(&reg, base, agent);
}

/*
 * A last message and the agent's shutdown that arrive before the loop looks: one edge for both,
 * and the read of the message is short. The message is still dispatched and the EOF still
 * closes the peer.
 */
static void test_last_line_then_eof(void)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent;
    static const char line[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n";
    struct timespec t0, t;

    setup(&reg, &base, 1 << 20, &agent);
    CHECK(write(agent, line, sizeof(line) - 1) == (ssize_t)(sizeof(line) - 1));
    CHECK(shutdown(agent, SHUT_WR) == 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (n_gone == 0) {
        event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
            break;
        usleep(1000);
    }
    CHECK_INTEQ(n_dispatched, 1);
    CHECK_INTEQ(n_gone, 1);
    CHECK_INTEQ(reg.n, 0);
    teardown(&reg, base, agent);
}

/* What a transport's peer is sent, collected by its sink. */
static void sink_collect(Peer *p, const char *data, size_t n, void *ctx)
{
    (void)p;
    strbuf_append(ctx, data, n);
}

/* A transport's peer (no fd): every way of sending reaches its sink, whole and in order. */
static void test_sink_peer(void)
{
    PeerRegistry reg;
    struct event_base *base = event_base_new();
    StrBuf got = STRBUF_INIT;
    Ref r = {"{\"ref\":1}\n", 0};

    peer_registry_init(&reg, base, 1 << 20, on_dispatch, on_gone, NULL);
    n_gone = 0;
    Peer *p = peer_new_sink(&reg, getuid(), getpid(), sink_collect, &got);
    CHECK(p && p->fd < 0 && peer_get(&reg, p->id) == p);
    CHECK(peer_send_reserve(p, 8) == NULL); /* nothing is built in a queue it does not have */
    send_plain(p, "{\"a\":1}\n");
    send_ref(p, &r);
    send_plain(p, "{\"a\":2}\n");
    CHECK_STREQ(got.data, "{\"a\":1}\n{\"ref\":1}\n{\"a\":2}\n");
    CHECK_INTEQ(r.done, 1);
    char line[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}";
    CHECK(peer_deliver(p, line, strlen(line)));
    CHECK_INTEQ(n_dispatched, 1);
    peer_close(p, NULL);
    CHECK_INTEQ(n_gone, 1);
    peer_registry_deinit(&reg);
    event_base_free(base);
    strbuf_deinit(&got);
}

static StrBuf handed;
static int handed_fd = -1;

static void on_handoff(int fd, uid_t uid, pid_t pid, const char *data, size_t n, void *ud)
{
    (void)uid, (void)pid, (void)ud;
    handed_fd = fd;
    strbuf_append(&handed, data, n);
}

/* A connection whose first byte is HTTP's goes to the handoff, with what was read, and leaves. */
static void test_handoff_http(void)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent;
    static const char req[] = "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n";
    struct timespec t0, t;

    setup(&reg, &base, 1 << 20, &agent);
    reg.handoff = on_handoff;
    CHECK(write(agent, req, sizeof(req) - 1) == (ssize_t)(sizeof(req) - 1));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (handed_fd < 0) {
        event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
            break;
        usleep(1000);
    }
    CHECK(handed_fd >= 0);
    CHECK(handed.len == sizeof(req) - 1 && memcmp(handed.data, req, handed.len) == 0);
    CHECK_INTEQ(n_dispatched, 0);
    CHECK_INTEQ(reg.n, 0);
    /* The handed fd is the same connection: what is written on it reaches the agent. */
    CHECK(write(handed_fd, "ok", 2) == 2);
    char buf[4] = {0};
    usleep(10000);
    CHECK(read(agent, buf, sizeof(buf)) == 2 && memcmp(buf, "ok", 2) == 0);
    close(handed_fd);
    strbuf_deinit(&handed);
    teardown(&reg, base, agent);
}

/*
 * Three peers with output in one turn; writing to the first finds its agent gone, and closing
 * it closes the second from the gone callback: the third is still written, then and later.
 */
static void test_flush_survives_close_of_queued(void)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent, b[2], c[2];
    Peer *pa = setup(&reg, &base, 1 << 20, &agent);

    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b) == 0);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c) == 0);
    for (int i = 0; i < 2; i++) {
        set_nonblock(b[i]);
        set_nonblock(c[i]);
    }
    Peer *pc = peer_new(&reg, c[0], getuid(), getpid());
    Peer *pb = peer_new(&reg, b[0], getuid(), getpid());
    /* The flush list is walked from its last entry: a first, then b, then c. */
    send_plain(pc, "c1\n");
    send_plain(pb, "b1\n");
    send_plain(pa, "a1\n");
    close(agent); /* a's send fails with EPIPE (no SIGPIPE: MSG_NOSIGNAL) and a is closed */
    close_on_gone = pb;
    StrBuf got = STRBUF_INIT;
    pump(base, c[1], &got, 3);
    CHECK_STREQ(strbuf_str(&got), "c1\n");
    send_plain(pc, "c2\n");
    pump(base, c[1], &got, 6);
    CHECK_STREQ(strbuf_str(&got), "c1\nc2\n");
    CHECK_INTEQ(n_gone, 2);
    strbuf_deinit(&got);
    close_on_gone = NULL;
    peer_registry_deinit(&reg);
    event_base_free(base);
    close(b[1]);
    close(c[1]);
}

/*
 * One turn answering many peers (written in one io_uring_enter where the kernel offers it, else
 * one send each): every peer gets its bytes, in order, whatever its neighbours do: one holds a
 * reference too (written the plain way), one's socket is full (the rest follows when it reads),
 * one's agent has gone (closed, the others unaffected).
 */
#define BATCH_PEERS 24

static void test_batch_many_peers(void)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent, sv[BATCH_PEERS][2];
    Peer *p[BATCH_PEERS];
    Peer *first = setup(&reg, &base, 1 << 20, &agent);
    char want[BATCH_PEERS][64];
    Ref ref = {"{\"ref\":1}\n", 0};
    static char junk[65536];
    size_t junk_sent = 0;
    ssize_t w;

    printf("     replies batched: %s\n", reg.batch ? "yes (io_uring)" : "no (send per peer)");
    for (int i = 0; i < BATCH_PEERS; i++) {
        CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]) == 0);
        set_nonblock(sv[i][0]);
        set_nonblock(sv[i][1]);
        p[i] = peer_new(&reg, sv[i][0], getuid(), getpid());
    }
    /* Peer 1's socket is full before the turn; peer 2's agent is gone. */
    while ((w = send(sv[1][0], junk, sizeof(junk), MSG_DONTWAIT)) > 0)
        junk_sent += (size_t)w;
    close(sv[2][1]);
    for (int i = 0; i < BATCH_PEERS; i++) {
        snprintf(want[i], sizeof(want[i]), "{\"id\":%d}\n{\"id\":%d}\n", i, i + 100);
        char one[32];
        snprintf(one, sizeof(one), "{\"id\":%d}\n", i);
        send_plain(p[i], one);
        if (i == 3)
            send_ref(p[i], &ref);
        snprintf(one, sizeof(one), "{\"id\":%d}\n", i + 100);
        send_plain(p[i], one);
    }
    for (int i = 0; i < BATCH_PEERS; i++) {
        if (i == 1 || i == 2)
            continue;
        StrBuf got = STRBUF_INIT;
        const char *expect = want[i];
        char with_ref[96];
        if (i == 3) {
            snprintf(with_ref, sizeof(with_ref), "{\"id\":3}\n%s{\"id\":103}\n", ref.text);
            expect = with_ref;
        }
        pump(base, sv[i][1], &got, strlen(expect));
        CHECK_STREQ(strbuf_str(&got), expect);
        strbuf_deinit(&got);
    }
    CHECK_INTEQ(ref.done, 1);
    CHECK_INTEQ(n_gone, 1); /* peer 2 */
    /* Peer 1 gets its replies once its agent reads what filled the socket. */
    StrBuf got = STRBUF_INIT;
    pump(base, sv[1][1], &got, junk_sent + strlen(want[1]));
    CHECK_INTEQ(got.len, junk_sent + strlen(want[1]));
    if (got.len >= junk_sent)
        CHECK_STREQ(strbuf_str(&got) + junk_sent, want[1]);
    strbuf_deinit(&got);
    CHECK_INTEQ(n_gone, 1);
    peer_close(first, NULL);
    for (int i = 0; i < BATCH_PEERS; i++)
        if (i != 2)
            peer_close(p[i], NULL);
    teardown(&reg, base, agent);
    for (int i = 0; i < BATCH_PEERS; i++)
        close(sv[i][1]);
}

/* Agents a broadcast reaches in test_broadcast_within_total. */
#define BROADCAST_PEERS 100

/*
 * One notification queued to a hundred agents in one turn (a broadcast), with maxMessageBytes at
 * its 4 KiB minimum: none of the agents, which all read, is dropped by the total for all queues.
 */
static void test_broadcast_within_total(void)
{
    PeerRegistry reg;
    struct event_base *base;
    int agent, sv[BROADCAST_PEERS][2];
    Peer *p[BROADCAST_PEERS];
    Peer *first = setup(&reg, &base, 4096, &agent);
    char note[701];

    memset(note, 'x', sizeof(note) - 2);
    note[0] = '{';
    note[sizeof(note) - 3] = '}';
    note[sizeof(note) - 2] = '\n';
    note[sizeof(note) - 1] = '\0';
    for (int i = 0; i < BROADCAST_PEERS; i++) {
        CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]) == 0);
        set_nonblock(sv[i][0]);
        set_nonblock(sv[i][1]);
        p[i] = peer_new(&reg, sv[i][0], getuid(), getpid());
    }
    for (int i = 0; i < BROADCAST_PEERS; i++)
        send_plain(p[i], note);
    CHECK_INTEQ(n_gone, 0);
    for (int i = 0; i < BROADCAST_PEERS; i++) {
        StrBuf got = STRBUF_INIT;
        pump(base, sv[i][1], &got, strlen(note));
        CHECK_STREQ(strbuf_str(&got), note);
        strbuf_deinit(&got);
    }
    CHECK_INTEQ(n_gone, 0);
    peer_close(first, NULL);
    for (int i = 0; i < BROADCAST_PEERS; i++)
        peer_close(p[i], NULL);
    teardown(&reg, base, agent);
    for (int i = 0; i < BROADCAST_PEERS; i++)
        close(sv[i][1]);
}

int main(void)
{
    RUN(test_interleaved_order);
    RUN(test_big_partial_then_ref);
    RUN(test_buffer_reused);
    RUN(test_queue_bound_ref_over);
    RUN(test_queue_bound_plain_over);
    RUN(test_more_than_one_wakeup);
    RUN(test_last_line_then_eof);
    RUN(test_flush_survives_close_of_queued);
    RUN(test_batch_many_peers);
    RUN(test_broadcast_within_total);
    RUN(test_sink_peer);
    RUN(test_handoff_http);
    return test_main_result();
}
