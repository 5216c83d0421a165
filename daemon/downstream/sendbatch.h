// SPDX-License-Identifier: MIT
// sendbatch: the writes of one loop turn to many sockets handed to the kernel in one system
// call (io_uring). Waking many agents with one send(2) each, the daemon is switched out after
// most of them (the woken agent preempts it on return to user space); one io_uring_enter(2)
// wakes them all before it returns, so the daemon is switched out at most once per turn.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct SendBatch SendBatch;

/* What became of one queued write: the bytes written, or -errno (-EAGAIN: the socket is full). */
typedef void (*SendBatchDoneFn)(void *tag, ssize_t result, void *ud);

/**
 * A batch ready for writes, or NULL when the kernel does not offer io_uring here (an old
 * kernel, a seccomp filter, the kernel.io_uring_disabled sysctl, or the build lacks liburing):
 * the caller then writes one socket at a time. *whyp (may be NULL) is set to a static text
 * saying why not.
 */
SendBatch *sendbatch_new(const char **whyp);
void sendbatch_free(SendBatch *b);
/** How many writes one batch takes; sendbatch_add() refuses more. */
size_t sendbatch_capacity(const SendBatch *b);
/**
 * Queue a write of data[0..n) to the stream socket fd, never blocking (MSG_DONTWAIT) and never
 * raising SIGPIPE (MSG_NOSIGNAL), reported with tag (not NULL). data must stay as it is until
 * sendbatch_submit() returns. False when the batch is full.
 */
bool sendbatch_add(SendBatch *b, int fd, const void *data, size_t n, void *tag);
/**
 * Hand every queued write to the kernel in one call and report each through done, in any
 * order, before returning; the batch is then empty. Returns the number of writes reported, or
 * -errno when the batch could not be used (the writes not reported then were not made: the
 * caller writes them itself), after which the caller should free it and go on without.
 */
int sendbatch_submit(SendBatch *b, SendBatchDoneFn done, void *ud);
