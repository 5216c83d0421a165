// SPDX-License-Identifier: MIT
// peer: one downstream connection on the socket (framing, bounded output, identity).

#include <errno.h>
#include <stdio.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/peer.h"

/*
 * Output a peer may have queued before it is considered stalled and dropped: four maximal
 * messages, so a reader that is merely slow with big results survives.
 */
#define PEER_QUEUE_FACTOR 4
/* Reads per wake-up, so one flooding peer cannot starve the others. */
#define PEER_READS_PER_WAKE 4
/* Messages at least this big are written at once rather than batched with others. */
#define PEER_WRITE_NOW_BYTES 65536

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
    PeerRegistry *reg = arg;

    (void)fd, (void)what;
    while (reg->reap) {
        Peer *p = reg->reap;
        reg->reap = p->next;
        free(p->client_name);
        free(p->client_version);
        free(p->protocol_version);
        free(p->cwd);
        free(p->close_reason);
        free(p);
    }
}

void peer_registry_init(PeerRegistry *reg, struct event_base *base, size_t max_line,
                        PeerDispatchFn dispatch, PeerGoneFn gone, void *userdata)
{
    memset(reg, 0, sizeof(*reg));
    reg->base = base;
    reg->max_line = max_line;
    reg->max_queue = max_line * PEER_QUEUE_FACTOR;
    reg->dispatch = dispatch;
    reg->gone = gone;
    reg->userdata = userdata;
    reg->ev_reap = evtimer_new(base, on_reap, reg);
}

void peer_registry_deinit(PeerRegistry *reg)
{
    while (reg->first)
        peer_close(reg->first, "daemon is shutting down");
    on_reap(-1, 0, reg);
    event_free(reg->ev_reap);
    idmap_deinit(&reg->by_id);
}

Peer *peer_get(PeerRegistry *reg, uint64_t id)
{
    Peer *p = idmap_get(&reg->by_id, id);
    return p && !p->dead ? p : NULL;
}

size_t peer_queued(const Peer *p)
{
    return p->out ? evbuffer_get_length(p->out) : 0;
}

static void reply_error_and_close(Peer *p, int code, const char *message)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_error(&sb, NULL, code, message, NULL);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
    /* peer_close pushes the explanation out, best effort. */
    peer_close(p, message);
}

/* One line from the peer. Return false when the peer is gone. */
static bool handle_line(Peer *p, char *line, size_t len)
{
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;
    int r;

    if (p->reg->fast && p->reg->fast(p, line, len, p->reg->userdata))
        return !p->dead;
    r = jsonrpc_msg_parse_mode(&m, line, len, JSON_UTF8_REFUSE, &err);
    if (r == JSONRPC_E_PARSE) {
        _cleanup_free_ char *msg = xasprintf("Parse error: %s; closing the connection", err);
        jsonrpc_msg_deinit(&m);
        reply_error_and_close(p, JSONRPC_PARSE_ERROR, msg);
        return false;
    }
    if (r != 0) {
        StrBuf sb = STRBUF_INIT;
        _cleanup_free_ char *msg = xasprintf("Invalid Request: %s", err);
        jsonrpc_write_error(&sb, m.id, JSONRPC_INVALID_REQUEST, msg, NULL);
        peer_send_sb(p, &sb);
        strbuf_deinit(&sb);
        jsonrpc_msg_deinit(&m);
        return !p->dead;
    }
    p->reg->dispatch(p, &m, p->reg->userdata);
    jsonrpc_msg_deinit(&m);
    return !p->dead;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    Peer *p = arg;
    char *line;
    size_t len;

    (void)what;
    for (int i = 0; i < PEER_READS_PER_WAKE && !p->dead; i++) {
        ssize_t n = framer_read_fd(&p->in, fd);
        if (n == -EAGAIN)
            return;
        if (n == 0 || (n < 0 && n != -EINTR)) {
            peer_close(p, n == 0 ? NULL : strerror((int)-n));
            return;
        }
        int r;
        while (!p->dead && (r = framer_next(&p->in, &line, &len)) != FRAMER_E_AGAIN) {
            if (r == FRAMER_E_TOOBIG) {
                _cleanup_free_ char *msg = xasprintf(
                    "message longer than %zu bytes (maxMessageBytes); closing the connection",
                    p->in.max);
                reply_error_and_close(p, JSONRPC_INVALID_REQUEST, msg);
                return;
            }
            if (!handle_line(p, line, len))
                return;
        }
    }
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
    Peer *p = arg;

    (void)what;
    if (p->close_reason) {
        _cleanup_free_ char *why = p->close_reason;
        p->close_reason = NULL;
        peer_close(p, why);
        return;
    }
    if (evbuffer_write(p->out, fd) < 0 && errno != EAGAIN && errno != EINTR) {
        peer_close(p, strerror(errno));
        return;
    }
    if (evbuffer_get_length(p->out) > 0)
        event_add(p->ev_write, NULL);
}

Peer *peer_new(PeerRegistry *reg, int fd, uid_t uid, pid_t pid)
{
    Peer *p = xcalloc(1, sizeof(*p));

    p->id = ++reg->next_id;
    p->reg = reg;
    p->fd = fd;
    p->log_level = -1;
    p->uid = uid;
    p->pid = pid;
    p->connected_wall_ms = wall_ms();
    framer_init(&p->in, reg->max_line);
    p->out = evbuffer_new();
    p->ev_read = event_new(reg->base, fd, EV_READ | EV_PERSIST, on_readable, p);
    p->ev_write = event_new(reg->base, fd, EV_WRITE, on_writable, p);
    event_add(p->ev_read, NULL);
    idmap_put(&reg->by_id, p->id, p);
    p->next = reg->first;
    if (reg->first)
        reg->first->prev = p;
    reg->first = p;
    reg->n++;
    log_debug("peer %llu connected (pid %d)", (unsigned long long)p->id, (int)pid);
    return p;
}

/*
 * A send that finds the peer broken or stalled must not close it there: the caller is in the
 * middle of work (a call, a forwarded request) that closing would free. The peer stops taking
 * output and is closed from the loop, by its write event.
 */
static void close_later(Peer *p, const char *reason)
{
    if (p->close_reason)
        return;
    p->close_reason = xstrdup(reason);
    evbuffer_drain(p->out, evbuffer_get_length(p->out));
    event_active(p->ev_write, EV_WRITE, 1);
}

void peer_send(Peer *p, const char *data, size_t n)
{
    size_t queued;

    if (p->dead || p->close_reason)
        return;
    queued = evbuffer_get_length(p->out);
    bool big = queued == 0 && n >= PEER_WRITE_NOW_BYTES;
    if (big) {
        /* A big message gains nothing from waiting for others: as much as fits goes now. */
        ssize_t w = write(p->fd, data, n);
        if (w == (ssize_t)n)
            return;
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            close_later(p, strerror(errno));
            return;
        }
        if (w > 0) {
            data += w;
            n -= (size_t)w;
        }
    }
    if (queued + n > p->reg->max_queue) {
        _cleanup_free_ char *why =
            xasprintf("output queue over %zu bytes: the client is not reading", p->reg->max_queue);
        close_later(p, why);
        return;
    }
    evbuffer_add(p->out, data, n);
    if (big)
        event_add(p->ev_write, NULL); /* the socket is full: wait until it drains */
    else if (queued == 0)
        /*
         * Written once the loop has handled everything that is ready now: the replies made in
         * one batch leave in one write, and the agent reads them in one wake-up.
         */
        event_active(p->ev_write, EV_WRITE, 1);
}

void peer_close(Peer *p, const char *reason)
{
    PeerRegistry *reg = p->reg;

    if (p->dead)
        return;
    p->dead = true;
    if (reason)
        log_full(LOG_NOTICE, NULL, "peer", "dropping client %llu (pid %d%s%s): %s",
                 (unsigned long long)p->id, (int)p->pid, p->client_name ? ", " : "",
                 p->client_name ? p->client_name : "", reason);
    else
        log_debug("peer %llu disconnected", (unsigned long long)p->id);
    if (reg->gone)
        reg->gone(p, reg->userdata);
    /* Replies still queued (a client that half-closed still reads): one last try, no wait. */
    if (evbuffer_get_length(p->out))
        (void)evbuffer_write(p->out, p->fd);
    event_free(p->ev_read);
    event_free(p->ev_write);
    evbuffer_free(p->out);
    p->out = NULL;
    framer_deinit(&p->in);
    close(p->fd);
    p->fd = -1;
    idmap_remove(&reg->by_id, p->id);
    if (p->prev)
        p->prev->next = p->next;
    else
        reg->first = p->next;
    if (p->next)
        p->next->prev = p->prev;
    reg->n--;
    p->next = reg->reap;
    p->prev = NULL;
    reg->reap = p;
    event_active(reg->ev_reap, EV_TIMEOUT, 0);
}
