// SPDX-License-Identifier: MIT
// sendbatch: the writes of one loop turn to many sockets in one io_uring_enter (see sendbatch.h).

#include <errno.h>
#include <liburing.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/downstream/sendbatch.h"

/*
 * Writes one batch takes: the agents answered in one loop turn. A turn rarely answers more
 * than a few dozen; past this many, the rest of the turn's writes are plain send(2)s, which
 * costs only the batching. The ring is 256 x 64-byte entries plus twice as many completions of
 * 16 bytes: about 24 KiB, kept for the daemon's life.
 */
#define SENDBATCH_ENTRIES 256
/*
 * A write with MSG_DONTWAIT completes within the submitting call (done, or -EAGAIN when the
 * socket is full), so the completions are there when io_uring_enter returns. Should a kernel
 * ever run one asynchronously, the batch waits this long for it, then cancels what is left and
 * says it is unusable: the caller's buffers must not be touched while the kernel may read them.
 */
#define SENDBATCH_ASYNC_WAIT_MS 1000

struct SendBatch {
    struct io_uring ring;
    unsigned queued; /* entries filled since the last submit */
};

SendBatch *sendbatch_new(const char **whyp)
{
    SendBatch *b = xcalloc(1, sizeof(*b));
    /*
     * One thread submits and reaps (SINGLE_ISSUER, DEFER_TASKRUN: completions are posted in the
     * submitting call, with no interrupt of other work); SUBMIT_ALL: an entry that fails (a
     * socket closed meanwhile) does not stop the ones after it. Kernels before 6.1 lack some of
     * these flags: then the ring is made without them.
     */
    unsigned flags[] = {IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
                            IORING_SETUP_DEFER_TASKRUN,
                        IORING_SETUP_SUBMIT_ALL, 0};
    int r = -EINVAL;

    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]) && r == -EINVAL; i++)
        r = io_uring_queue_init(SENDBATCH_ENTRIES, &b->ring, flags[i]);
    if (r < 0) {
        if (whyp)
            *whyp = r == -ENOSYS   ? "the kernel has no io_uring"
                    : r == -EPERM  ? "io_uring is not permitted here (sysctl or seccomp)"
                    : r == -ENOMEM ? "no memory for an io_uring"
                                   : "io_uring could not be set up";
        free(b);
        return NULL;
    }
    return b;
}

void sendbatch_free(SendBatch *b)
{
    if (!b)
        return;
    io_uring_queue_exit(&b->ring);
    free(b);
}

size_t sendbatch_capacity(const SendBatch *b)
{
    (void)b;
    return SENDBATCH_ENTRIES;
}

bool sendbatch_add(SendBatch *b, int fd, const void *data, size_t n, void *tag)
{
    struct io_uring_sqe *sqe;

    if (b->queued >= SENDBATCH_ENTRIES || !(sqe = io_uring_get_sqe(&b->ring)))
        return false;
    io_uring_prep_send(sqe, fd, data, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    io_uring_sqe_set_data(sqe, tag);
    b->queued++;
    return true;
}

/* Report the completions there now; returns how many. */
static unsigned reap(SendBatch *b, SendBatchDoneFn done, void *ud)
{
    struct io_uring_cqe *cqe;
    unsigned head, n = 0;

    io_uring_for_each_cqe(&b->ring, head, cqe)
    {
        /* A cancel's own completion carries no tag: it is not one of the writes. */
        if (cqe->user_data)
            done(io_uring_cqe_get_data(cqe), cqe->res, ud);
        n += cqe->user_data != 0;
        io_uring_cqe_seen(&b->ring, cqe);
    }
    return n;
}

/* Writes still running after the submitting call: wait, then cancel; -ETIME when any was. */
static int finish_stragglers(SendBatch *b, unsigned left, SendBatchDoneFn done, void *ud)
{
    struct __kernel_timespec ts = {SENDBATCH_ASYNC_WAIT_MS / 1000,
                                   SENDBATCH_ASYNC_WAIT_MS % 1000 * 1000000LL};
    struct io_uring_cqe *cqe;
    struct io_uring_sqe *sqe;

    if (io_uring_wait_cqes(&b->ring, &cqe, left, &ts, NULL) == 0 &&
        (left -= MIN(left, reap(b, done, ud))) == 0)
        return 0;
    log_warning("io_uring: %u writes to agents still running after %d ms; "
                "cancelling them and writing one socket at a time from now on",
                left, SENDBATCH_ASYNC_WAIT_MS);
    if ((sqe = io_uring_get_sqe(&b->ring))) {
        io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
        io_uring_sqe_set_data64(sqe, 0);
        io_uring_submit(&b->ring);
    }
    /* A cancelled write completes at once (-ECANCELED): until then its buffer is the kernel's. */
    while (left > 0 && io_uring_wait_cqe(&b->ring, &cqe) == 0)
        left -= MIN(left, reap(b, done, ud));
    return -ETIME;
}

int sendbatch_submit(SendBatch *b, SendBatchDoneFn done, void *ud)
{
    unsigned queued = b->queued, reported;
    int submitted;

    if (queued == 0)
        return 0;
    b->queued = 0;
    submitted = io_uring_submit(&b->ring);
    if (submitted <= 0)
        /* Nothing went to the kernel: the entries are dropped with the ring by the caller. */
        return submitted < 0 ? submitted : -EIO;
    reported = reap(b, done, ud);
    if (reported < (unsigned)submitted) {
        int r = finish_stragglers(b, (unsigned)submitted - reported, done, ud);
        if (r < 0)
            return r;
    }
    /* Entries the kernel did not take (out of memory in it) stay in the ring: drop it. */
    return (unsigned)submitted < queued ? -EAGAIN : submitted;
}
