// SPDX-License-Identifier: MIT
// test-sendbatch: many sockets written in one io_uring_enter: every byte arrives, a full socket
// says -EAGAIN or takes part, a vanished reader says -EPIPE (never SIGPIPE), a bad fd -EBADF,
// and the batch refuses more entries than its capacity.

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/downstream/sendbatch.h"
#include "tests/unit/test.h"

/* Sockets in the many-writers case: more than a loop turn usually answers. */
#define N_SOCKETS 40

typedef struct Result {
    int calls;
    ssize_t result;
} Result;

static void on_done(void *tag, ssize_t result, void *ud)
{
    Result *r = tag;

    (void)ud;
    r->calls++;
    r->result = result;
}

static void pair(int sv[2])
{
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    for (int i = 0; i < 2; i++)
        CHECK(fcntl(sv[i], F_SETFL, fcntl(sv[i], F_GETFL) | O_NONBLOCK) == 0);
}

/* Fill fd's socket until it takes nothing more. */
static void fill(int fd)
{
    static char junk[65536];

    while (send(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
        ;
    while (send(fd, junk, 1, MSG_DONTWAIT) > 0)
        ;
    CHECK(errno == EAGAIN);
}

static SendBatch *batch;

/* Forty sockets, each its own message, all in one submit: every one arrives whole. */
static void test_many(void)
{
    int sv[N_SOCKETS][2];
    char msg[N_SOCKETS][64], got[128];
    Result r[N_SOCKETS] = {0};

    for (int i = 0; i < N_SOCKETS; i++) {
        pair(sv[i]);
        snprintf(msg[i], sizeof(msg[i]), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}\n", i);
        CHECK(sendbatch_add(batch, sv[i][0], msg[i], strlen(msg[i]), &r[i]));
    }
    CHECK_INTEQ(sendbatch_submit(batch, on_done, NULL), N_SOCKETS);
    for (int i = 0; i < N_SOCKETS; i++) {
        CHECK_INTEQ(r[i].calls, 1);
        CHECK_INTEQ(r[i].result, (ssize_t)strlen(msg[i]));
        ssize_t n = read(sv[i][1], got, sizeof(got) - 1);
        CHECK_INTEQ(n, (ssize_t)strlen(msg[i]));
        got[n > 0 ? n : 0] = '\0';
        CHECK_STREQ(got, msg[i]);
        close(sv[i][0]);
        close(sv[i][1]);
    }
    /* An empty batch is nothing to do. */
    CHECK_INTEQ(sendbatch_submit(batch, on_done, NULL), 0);
}

/* A full socket, a closed reader and a bad fd in one batch with a good one. */
static void test_failures(void)
{
    int full[2], gone[2], good[2];
    Result rf = {0}, rg = {0}, rb = {0}, ok = {0};
    const char *text = "{\"id\":1}\n";
    char got[32];

    pair(full);
    pair(gone);
    pair(good);
    fill(full[0]);
    close(gone[1]);
    CHECK(sendbatch_add(batch, full[0], text, strlen(text), &rf));
    CHECK(sendbatch_add(batch, gone[0], text, strlen(text), &rg));
    CHECK(sendbatch_add(batch, 1000000, text, strlen(text), &rb));
    CHECK(sendbatch_add(batch, good[0], text, strlen(text), &ok));
    CHECK_INTEQ(sendbatch_submit(batch, on_done, NULL), 4);
    CHECK_INTEQ(rf.calls, 1);
    CHECK_INTEQ(rf.result, -EAGAIN);
    CHECK_INTEQ(rg.calls, 1);
    CHECK_INTEQ(rg.result, -EPIPE);
    CHECK_INTEQ(rb.calls, 1);
    CHECK_INTEQ(rb.result, -EBADF);
    CHECK_INTEQ(ok.calls, 1);
    CHECK_INTEQ(ok.result, (ssize_t)strlen(text));
    CHECK_INTEQ(read(good[1], got, sizeof(got)), (ssize_t)strlen(text));
    close(full[0]);
    close(full[1]);
    close(gone[0]);
    close(good[0]);
    close(good[1]);
}

/* A write bigger than the room left takes what fits: the count says how much. */
static void test_partial(void)
{
    int sv[2];
    size_t big = 4 << 20;
    char *data = malloc(big);
    Result r = {0};

    pair(sv);
    memset(data, 'x', big);
    CHECK(sendbatch_add(batch, sv[0], data, big, &r));
    CHECK_INTEQ(sendbatch_submit(batch, on_done, NULL), 1);
    CHECK_INTEQ(r.calls, 1);
    CHECK(r.result > 0 && (size_t)r.result < big);
    free(data);
    close(sv[0]);
    close(sv[1]);
}

/* No more entries than the capacity; after a submit the batch takes a full load again. */
static void test_capacity(void)
{
    size_t cap = sendbatch_capacity(batch), taken = 0;
    Result *r = calloc(cap + 1, sizeof(*r));
    int sv[2];

    pair(sv);
    close(sv[1]); /* every write fails at once: nothing to read back */
    for (size_t i = 0; i <= cap; i++)
        taken += sendbatch_add(batch, sv[0], "x", 1, &r[i]);
    CHECK_INTEQ(taken, cap);
    CHECK_INTEQ(sendbatch_submit(batch, on_done, NULL), (int)cap);
    CHECK_INTEQ(r[cap].calls, 0);
    CHECK(sendbatch_add(batch, sv[0], "x", 1, &r[cap]));
    CHECK_INTEQ(sendbatch_submit(batch, on_done, NULL), 1);
    CHECK_INTEQ(r[cap].result, -EPIPE);
    free(r);
    close(sv[0]);
}

int main(void)
{
    const char *why = NULL;

    /* A SIGPIPE would end the test: it must never be raised (MSG_NOSIGNAL). */
    signal(SIGPIPE, SIG_DFL);
    batch = sendbatch_new(&why);
    if (!batch) {
        printf("SKIP: no io_uring here (%s): mcpd writes one socket at a time\n", why);
        return 77;
    }
    RUN(test_many);
    RUN(test_failures);
    RUN(test_partial);
    RUN(test_capacity);
    sendbatch_free(batch);
    return test_main_result();
}
