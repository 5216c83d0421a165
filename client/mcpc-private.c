// SPDX-License-Identifier: MIT
// mcpc-private: the client state libmcpc's files share, below both eras: its error message, its
// queue of output to mcpd, and the end of a pending request.

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "client/mcpc-private.h"
#include "common/json.h"
#include "common/util.h"

int libmcpc_fail(mcpc_client *c, int r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
    va_end(ap);
    return r;
}

/* ---- output ---- */

/* Write what the socket takes now; with block, until all is written or the timeout passes. */
int libmcpc_flush(mcpc_client *c, bool block)
{
    uint64_t deadline = now_ms() + (uint64_t)c->timeout_ms;

    while (c->out_off < c->out.len) {
        ssize_t w = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            c->out_off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN)
            return libmcpc_fail(c, -errno, "cannot send to mcpd: %s", strerror(errno));
        if (!block)
            return 0;
        uint64_t now = now_ms();
        if (now >= deadline)
            return libmcpc_fail(c, -ETIMEDOUT, "mcpd has not read from its socket for %d ms",
                                c->timeout_ms);
        struct pollfd pfd = {c->fd, POLLOUT, 0};
        if (poll(&pfd, 1, (int)(deadline - now)) < 0 && errno != EINTR)
            return libmcpc_fail(c, -errno, "poll: %s", strerror(errno));
    }
    strbuf_reset(&c->out);
    c->out_off = 0;
    return 0;
}

int libmcpc_send_sb(mcpc_client *c, const StrBuf *sb, bool block)
{
    if (c->fd < 0)
        return libmcpc_fail(c, -ENOTCONN, "not connected to mcpd");
    strbuf_append(&c->out, sb->data, sb->len);
    return libmcpc_flush(c, block);
}

/* ---- pending asynchronous requests ---- */

void libmcpc_pending_unlink(mcpc_client *c, Pending *p)
{
    for (Pending **pp = &c->pending; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            c->n_pending--;
            return;
        }
}

void libmcpc_pending_finish(mcpc_client *c, Pending *p, int status, const char *json)
{
    (void)c;
    p->fn(p->userdata, p->id, status, json);
    free(p->method);
    json_free(p->params);
    json_free(p->asks);
    json_free(p->answers);
    json_free(p->state);
    free(p);
}
