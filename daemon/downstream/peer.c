// SPDX-License-Identifier: MIT
// peer: one downstream connection on the socket (framing, bounded output, identity).

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/downstream/peer.h"
#include "daemon/downstream/sendbatch.h"

/*
 * Output a peer may have queued before it is considered stalled and dropped: four maximal
 * messages, so a reader that is merely slow with big results survives.
 */
#define PEER_QUEUE_FACTOR 4
/*
 * Output all peers together may have queued, as a multiple of the largest message: a server
 * flooding notifications (progress, log messages) into a hundred agents that read slowly filled
 * each one's queue to its own bound, 64 MiB, 6.4 GiB in all before any was dropped. Sixteen
 * maximal messages in flight at once (256 MiB) is far beyond any real burst of replies; past it
 * the peer with the most queued, the one not reading, is dropped until the total fits. Only
 * copies count: a tools/list sent by reference to every agent is one buffer, however many
 * queues it sits in.
 */
#define PEER_QUEUE_TOTAL_FACTOR 16
/*
 * The total is never below this: it is checked as replies are queued, before the turn's flush
 * writes them, so one broadcast (a notification to every agent) counts a copy per agent at
 * once. With maxMessageBytes at its 4 KiB minimum, sixteen messages (64 KiB) were less than one
 * 700-byte notification to a hundred agents, and agents that read were dropped; 16 MiB holds a
 * turn of two hundred such notifications to a hundred agents, and is what the default's sixteen
 * messages come to with a 1 MiB maxMessageBytes.
 */
#define PEER_QUEUE_TOTAL_MIN (16u * 1024u * 1024u)
/* Reads per wake-up, so one flooding peer cannot starve the others. */
#define PEER_READS_PER_WAKE 4
/*
 * Lines handled per wake-up, for the same reason: four reads of tiny notifications are ten
 * thousand lines or more, and handling them in one go made every other agent's call take
 * 0.6-1 s under ASan while one agent flooded (30 times its usual). Past this many the rest
 * waits for the next turn, after everyone else's.
 */
#define PEER_LINES_PER_WAKE 1024
/* Messages at least this big are written at once rather than batched with others. */
#define PEER_WRITE_NOW_BYTES 65536
/*
 * Pieces one write hands the kernel: the plain buffer and the first chains of the zero-copy
 * store. A tools/list by reference is one chain, so a batch is one write; what does not fit
 * goes in the next write, when the socket has taken this one.
 */
#define PEER_WRITE_IOVECS 16
/*
 * Bytes of unfinished lines all peers together may make the daemon hold, as a multiple of the
 * largest message: eight agents sending maximal messages at the same instant is already far
 * beyond real use, while many peers each parking a large partial line is the cheap way to pin
 * the daemon's memory (20 peers x 16 MiB = 320 MiB otherwise). Over it, the peer whose
 * unfinished line is oldest is closed, until the total fits.
 */
#define PEER_PARTIAL_TOTAL_FACTOR 8
/*
 * An input buffer larger than this that holds nothing is released, so a peer that once sent a
 * big message does not keep its buffer (up to twice the message) while idle.
 */
#define PEER_IDLE_BUFFER_KEEP (4 * FRAMER_READ_CHUNK)
/*
 * Upstream servers are deliberately not held to a partial-line time limit: a server that
 * stalls mid-line is noticed by what waits on it (its calls end at callTimeout; with
 * pingIntervalMs a missed pong marks it dead and it is restarted), and what it can make mcpd
 * hold is bounded by the number of configured servers times the line limit, whereas any number
 * of agents may connect.
 */

/*
 * Set to "0" in mcpd's environment, replies are written one send(2) per agent even where
 * io_uring could batch them: for comparing the two, and a way out should a kernel's io_uring
 * misbehave.
 */
#define PEER_IO_URING_ENV "MCPD_IO_URING"

/* A timer that fires on the loop's next turn, after the sockets ready then. */
static const struct timeval no_delay = {0, 0};

static void on_read_more(evutil_socket_t fd, short what, void *arg);
static void on_flush(evutil_socket_t fd, short what, void *arg);

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
    PeerRegistry *reg = arg;

    (void)fd, (void)what;
    while (reg->reap) {
        Peer *p = reg->reap;
        reg->reap = p->next;
        free(p->label);
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
    reg->max_queue_total = MAX(max_line * PEER_QUEUE_TOTAL_FACTOR, (size_t)PEER_QUEUE_TOTAL_MIN);
    reg->partial_timeout_ms = PEER_PARTIAL_LINE_TIMEOUT_MS;
    reg->partial_max = (max_line ? max_line : JSONRPC_MAX_LINE_DEFAULT) * PEER_PARTIAL_TOTAL_FACTOR;
    reg->dispatch = dispatch;
    reg->gone = gone;
    reg->userdata = userdata;
    reg->ev_reap = evtimer_new(base, on_reap, reg);
    reg->ev_more = evtimer_new(base, on_read_more, reg);
    turn_task_init(&reg->flush_turn, base, on_flush, reg);
    const char *use = getenv(PEER_IO_URING_ENV), *why = "turned off by " PEER_IO_URING_ENV "=0";
    if (!use || strcmp(use, "0") != 0)
        reg->batch = sendbatch_new(&why);
    log_debug("replies to agents: %s%s",
              reg->batch ? "batched per loop turn (io_uring)" : "one send per agent: ",
              reg->batch ? "" : why);
}

void peer_registry_deinit(PeerRegistry *reg)
{
    while (reg->first)
        peer_close(reg->first, "daemon is shutting down");
    on_reap(-1, 0, reg);
    event_free(reg->ev_reap);
    event_free(reg->ev_more);
    turn_task_deinit(&reg->flush_turn);
    sendbatch_free(reg->batch);
    outbuf_pool_deinit(&reg->out_pool);
    idmap_deinit(&reg->by_id);
}

Peer *peer_get(PeerRegistry *reg, uint64_t id)
{
    Peer *p = idmap_get(&reg->by_id, id);
    return p && !p->dead ? p : NULL;
}

size_t peer_queued(const Peer *p)
{
    return outbuf_len(&p->out_plain) + (p->out ? evbuffer_get_length(p->out) : 0);
}

/* Bring the registry's total of copied output up to date with p's queue. */
static void account(Peer *p)
{
    size_t q = p->out ? peer_queued(p) : 0;
    size_t c = q > p->ref_bytes ? q - p->ref_bytes : 0;

    p->reg->queued_total = p->reg->queued_total - p->copied + c;
    p->copied = c;
}

static void close_later(Peer *p, const char *reason);

/*
 * Over the total for queued output: drop the peers holding the most until it fits. The one
 * holding the most is the one that reads least; those that read keep being served.
 */
static void enforce_queue_total(PeerRegistry *reg)
{
    while (reg->queued_total > reg->max_queue_total) {
        Peer *worst = NULL;
        for (Peer *q = reg->first; q; q = q->next)
            if (!q->close_reason && q->copied && (!worst || q->copied > worst->copied))
                worst = q;
        if (!worst)
            return;
        _cleanup_free_ char *why = xasprintf(
            "output queued to all clients is over %zu bytes and this client holds the most "
            "(%zu bytes): it is not reading what mcpd sends",
            reg->max_queue_total, worst->copied);
        close_later(worst, why);
    }
}

/* After bytes were queued to p: count them, and hold the total to its bound. */
static void account_added(Peer *p)
{
    account(p);
    if (p->reg->queued_total > p->reg->max_queue_total)
        enforce_queue_total(p->reg);
}

/*
 * One write of what is queued, plain bytes first, then the zero-copy store: the bytes written,
 * or -errno. A reference whose bytes are all written is released (evbuffer_drain runs its done).
 */
static ssize_t write_queued(Peer *p)
{
    struct iovec v[PEER_WRITE_IOVECS];
    size_t plain = outbuf_len(&p->out_plain);
    int n = 0;
    ssize_t w;

    if (plain)
        v[n++] = (struct iovec){(void *)outbuf_peek(&p->out_plain), plain};
    if (evbuffer_get_length(p->out)) {
        int got = evbuffer_peek(p->out, -1, NULL, v + n, PEER_WRITE_IOVECS - n);
        n += MIN(got, PEER_WRITE_IOVECS - n);
    }
    if (n == 0)
        return 0;
    /* One piece (the usual reply burst) is a send: no iovec to import. Every write to an agent
     * says MSG_NOSIGNAL: one that has gone is an EPIPE to handle, never a SIGPIPE. */
    if (!p->out_sock) /* a host's stdout pipe (non-blocking; SIGPIPE is ignored) */
        w = writev(p->out_fd, v, n);
    else if (n == 1)
        w = send(p->out_fd, v[0].iov_base, v[0].iov_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    else
        w = sendmsg(p->out_fd, &(struct msghdr){.msg_iov = v, .msg_iovlen = (size_t)n},
                    MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0)
        return -errno;
    size_t from_plain = MIN((size_t)w, plain);
    outbuf_consume(&p->out_plain, from_plain);
    if ((size_t)w > from_plain)
        evbuffer_drain(p->out, (size_t)w - from_plain);
    account(p);
    return w;
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

static bool handle_one(Peer *p, char *line, size_t len);
static bool handle_batch(Peer *p, yajl_val batch);

/*
 * One line from the peer. Return false when the peer is gone. A connection's first line may be
 * a bridge's hand-off (first_line); a host's line goes through its hooks first.
 */
bool peer_deliver(Peer *p, char *line, size_t len)
{
    bool first = !p->had_line;

    p->had_line = true;
    if (first && p->reg->first_line && p->reg->first_line(p, line, len, p->reg->first_line_arg))
        return false;
    if (p->hooks && p->hooks->line_in) {
        StrBuf sb = STRBUF_INIT;
        bool ok = true;
        if (!p->hooks->line_in(p, p->hooks_arg, line, len, &sb))
            return handle_one(p, line, len);
        for (char *l = sb.data, *nl;
             ok && l && (nl = memchr(l, '\n', sb.len - (size_t)(l - sb.data))); l = nl + 1) {
            *nl = '\0';
            ok = handle_one(p, l, (size_t)(nl - l));
        }
        strbuf_deinit(&sb);
        return ok;
    }
    return handle_one(p, line, len);
}

/*
 * A batch from an agent whose protocol accepts them (2025-03-26): each message handled as if it
 * came alone, in order, and answered alone (every reply is a line of its own, which a client
 * that sends batches reads as well). Its size is the line's, bounded by maxMessageBytes and the
 * parser's count of values. An empty batch is one Invalid Request, as JSON-RPC says.
 */
static bool handle_batch(Peer *p, yajl_val batch)
{
    StrBuf sb = STRBUF_INIT;
    bool alive = true;

    if (json_array_len(batch) == 0) {
        jsonrpc_write_error(&sb, NULL, JSONRPC_INVALID_REQUEST, "Invalid Request: an empty batch",
                            NULL);
        peer_send_sb(p, &sb);
        strbuf_deinit(&sb);
        return !p->dead;
    }
    p->in_batch = true; /* a batch inside a batch is refused as before */
    for (size_t i = 0; alive && i < json_array_len(batch); i++) {
        strbuf_reset(&sb);
        json_write(&sb, json_array_at(batch, i));
        alive = handle_one(p, sb.data, sb.len);
    }
    if (alive)
        p->in_batch = false;
    strbuf_deinit(&sb);
    return alive;
}

static bool handle_one(Peer *p, char *line, size_t len)
{
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;
    int r;

    if (p->reg->fast && p->reg->fast(p, line, len, p->reg->userdata))
        return !p->dead;
    r = jsonrpc_msg_parse_mode(&m, line, len, JSON_UTF8_REFUSE, &err);
    if (r == JSONRPC_E_BATCH && !p->in_batch && p->reg->takes_batches &&
        p->reg->takes_batches(p, p->reg->userdata)) {
        bool alive = handle_batch(p, m.root);
        jsonrpc_msg_deinit(&m);
        return alive;
    }
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

static void set_partial_bytes(Peer *p, size_t n)
{
    p->reg->partial_bytes -= p->partial_bytes;
    p->partial_bytes = n;
    p->reg->partial_bytes += n;
}

static void on_partial_timeout(evutil_socket_t fd, short what, void *arg)
{
    Peer *p = arg;
    _cleanup_free_ char *why =
        xasprintf("sent %zu bytes of a message and no end of line for %lld ms "
                  "(partialLineTimeoutMs); a client must send each message as one whole line",
                  p->partial_bytes, (long long)p->reg->partial_timeout_ms);

    (void)fd, (void)what;
    reply_error_and_close(p, JSONRPC_INVALID_REQUEST, why);
}

/*
 * Over the total for unfinished lines: close the peers holding the most until it fits (the
 * oldest first among equals). Closing the largest holder, not the oldest line, keeps a flooder
 * from getting an honest client with a small, slow line dropped in its place.
 */
static void enforce_partial_total(PeerRegistry *reg)
{
    while (reg->partial_bytes > reg->partial_max) {
        Peer *worst = NULL;
        for (Peer *q = reg->first; q; q = q->next)
            if (q->partial_bytes &&
                (!worst || q->partial_bytes > worst->partial_bytes ||
                 (q->partial_bytes == worst->partial_bytes &&
                  (q->partial_since_us < worst->partial_since_us ||
                   (q->partial_since_us == worst->partial_since_us && q->id < worst->id)))))
                worst = q;
        if (!worst)
            return;
        _cleanup_free_ char *why = xasprintf(
            "unfinished messages of all clients hold over %zu bytes; this client's (%zu bytes, "
            "the most held) is dropped first",
            reg->partial_max, worst->partial_bytes);
        reply_error_and_close(worst, JSONRPC_INVALID_REQUEST, why);
    }
}

/*
 * After a read: note the unfinished line the framer holds, if any. A line that completed in
 * this read means what remains is a new line, started now.
 */
static void track_partial(Peer *p, bool line_ended)
{
    size_t held = p->in.len - p->in.start;

    if (held == 0) {
        if (p->partial_since_us)
            event_del(p->ev_partial); /* pending only while a line is unfinished */
        p->partial_since_us = 0;
        set_partial_bytes(p, 0);
        if (p->in.cap > PEER_IDLE_BUFFER_KEEP) {
            size_t max = p->in.max;
            framer_deinit(&p->in);
            framer_init(&p->in, max);
        }
        return;
    }
    set_partial_bytes(p, held);
    if (!p->partial_since_us || line_ended) {
        struct timeval tv = {
            .tv_sec = (time_t)(p->reg->partial_timeout_ms / 1000),
            .tv_usec = (suseconds_t)(p->reg->partial_timeout_ms % 1000 * 1000),
        };
        p->partial_since_us = now_us();
        evtimer_add(p->ev_partial, &tv);
    }
    if (p->reg->partial_bytes > p->reg->partial_max)
        enforce_partial_total(p->reg);
}

/*
 * A host's input ended (its pipes were handed over): a last message without its newline is
 * still a message, as a stdio server reads it; then its owner decides whether the peer stays
 * open for the answers. True when the peer is closed or stays open without input.
 */
static bool host_input_closed(Peer *p)
{
    char *line;
    size_t len;

    if (framer_pending(&p->in) && !p->in.discarding) {
        framer_feed(&p->in, "\n", 1);
        while (!p->dead && framer_next(&p->in, &line, &len) == 0)
            if (!peer_deliver(p, line, len))
                return true;
    }
    if (p->dead || !p->hooks->input_closed(p, p->hooks_arg))
        return p->dead;
    if (!p->dead)
        turn_fd_want(&p->io, 0); /* the host's input is over: only output from now */
    return true;
}

/*
 * A connection's first byte decides its protocol: a line of the line protocol starts with '{'
 * (or '[', or white space), never with a capital letter, which is how every HTTP request line
 * starts (its method). Such a connection goes to the registry's handoff with what was read.
 */
static bool hand_off(Peer *p)
{
    const char *b = p->in.buf + p->in.start;
    int fd;

    /* Only a connection to the socket: a host's handed-over pipes speak the line protocol. */
    if (!p->reg->handoff || p->hooks || p->in.len <= p->in.start || *b < 'A' || *b > 'Z')
        return false;
    fd = dup(p->fd); /* p's own fd is closed with p; the dup goes on (consumed by handoff) */
    if (fd < 0) {
        peer_close(p, "cannot take over the connection for HTTP (dup failed)");
        return true;
    }
    p->reg->handoff(fd, p->uid, p->pid, b, p->in.len - p->in.start, p->reg->handoff_ud);
    peer_close(p, NULL);
    return true;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    Peer *p = arg;
    bool line_ended = false;
    unsigned n_lines = 0;
    char *line;
    size_t len;

    /* Once epoll says the agent shut down its side, read on to the EOF past a short read. */
    if (what & EV_CLOSED)
        p->rdhup = true;
    for (int i = 0; i < PEER_READS_PER_WAKE && !p->dead; i++) {
        /* Lines left from the last wake-up are handled before anything more is read. */
        ssize_t n = p->lines_left ? 1 : framer_read_fd(&p->in, fd);
        /*
         * A read that did not fill the buffer emptied the socket: no read just for EAGAIN. (A
         * unix stream read also stops short at an MSG_OOB mark or after passed fds, with more
         * queued; agents send neither, and one that does delays only its own next line, until
         * it writes again.)
         */
        bool drained = n > 0 && !p->lines_left && p->in.len + 1 < p->in.cap && !p->rdhup;
        if (n > 0 && !p->spoke && hand_off(p))
            return;
        if (n > 0)
            p->spoke = true;
        if (n == -EAGAIN)
            break;
        if (n == 0 && p->hooks && p->hooks->input_closed && host_input_closed(p))
            return;
        if (n == 0 || (n < 0 && n != -EINTR)) {
            peer_close(p, n == 0 ? NULL : strerror((int)-n));
            return;
        }
        int r;
        p->lines_left = false;
        while (!p->dead && (r = framer_next(&p->in, &line, &len)) != FRAMER_E_AGAIN) {
            if (r == FRAMER_E_TOOBIG) {
                _cleanup_free_ char *msg = xasprintf(
                    "message longer than %zu bytes (maxMessageBytes); closing the connection",
                    p->in.max);
                reply_error_and_close(p, JSONRPC_INVALID_REQUEST, msg);
                return;
            }
            line_ended = true;
            if (!peer_deliver(p, line, len))
                return;
            if (++n_lines == PEER_LINES_PER_WAKE) {
                p->lines_left = true;
                break;
            }
        }
        if (drained && !p->lines_left)
            break;
        if ((p->lines_left || i + 1 == PEER_READS_PER_WAKE) && !p->dead && !p->read_more) {
            /* Lines already read wake no epoll: ev_more takes them (and the socket's rest). */
            p->read_more = true;
            if (p->reg->n_read_more++ == 0)
                evtimer_add(p->reg->ev_more, &no_delay);
        }
        if (p->lines_left)
            break;
    }
    if (!p->dead) {
        track_partial(p, line_ended);
        framer_release_big(&p->in);
    }
}

static void clear_read_more(Peer *p)
{
    if (p->read_more) {
        p->read_more = false;
        p->reg->n_read_more--;
    }
}

/*
 * The peers that had more to read than one wake-up's share, read again now that everyone else
 * has had a turn. They are taken by id, as any read may close any peer; one read again past
 * its share is flagged anew and waits for the next turn.
 */
static void on_read_more(evutil_socket_t fd, short what, void *arg)
{
    PeerRegistry *reg = arg;
    size_t n = 0;
    uint64_t *ids = xcalloc(reg->n_read_more, sizeof(uint64_t));

    (void)fd, (void)what;
    for (Peer *p = reg->first; p && n < reg->n_read_more; p = p->next)
        if (p->read_more)
            ids[n++] = p->id;
    for (size_t i = 0; i < n; i++) {
        Peer *p = peer_get(reg, ids[i]);
        if (p && p->read_more) {
            clear_read_more(p);
            on_readable(p->fd, EV_READ, p);
        }
    }
    free(ids);
    if (reg->n_read_more > 0)
        evtimer_add(reg->ev_more, &no_delay);
}

/* Wait until the peer's socket (or a host's stdout) has room. */
static void want_write(Peer *p)
{
    if (p->out_fd != p->fd)
        turn_fd_want(&p->out_io, EV_WRITE);
    else
        turn_fd_want(&p->io, EV_READ | EV_WRITE);
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
    Peer *p = arg;

    (void)fd, (void)what; /* p->fd */
    if (p->close_reason) {
        _cleanup_free_ char *why = p->close_reason;
        p->close_reason = NULL;
        peer_close(p, why);
        return;
    }
    ssize_t w = write_queued(p);
    if (w < 0 && w != -EAGAIN && w != -EINTR) {
        peer_close(p, strerror((int)-w));
        return;
    }
    if (peer_queued(p) > 0)
        want_write(p);
    else if (p->close_flushed)
        peer_close(p, NULL);
}

/* Write p's output once the loop has handled everything that is ready now. */
static void flush_later(Peer *p)
{
    PeerRegistry *reg = p->reg;

    if (p->flush_queued)
        return;
    if (!reg->flush)
        turn_defer(&reg->flush_turn);
    p->flush_queued = true;
    p->flush_next = reg->flush;
    reg->flush = p;
}

static void flush_forget(Peer *p)
{
    if (!p->flush_queued)
        return;
    for (Peer **q = &p->reg->flush; *q; q = &(*q)->flush_next)
        if (*q == p) {
            *q = p->flush_next;
            break;
        }
    p->flush_queued = false;
    p->flush_next = NULL;
}

/*
 * The peers with output from this turn. Writing may close any peer (it is then dead, and freed
 * only from the loop, after this) or queue output for one. Each peer is taken off the
 * registry's list itself, never off a detached copy, so that a peer closed meanwhile
 * (flush_forget) leaves a list whose every other peer is still written; output queued meanwhile
 * is written in the same walk.
 */
static void on_batch_done(void *tag, ssize_t result, void *ud)
{
    Peer *p = tag;
    bool *unsupportedp = ud;

    /* A full socket or an error is met again by the write after the batch (on_writable), which
     * then waits for room or closes the peer as for any write. EINVAL, which a send to a
     * stream socket never says, is a kernel without io_uring's send (before 5.6). */
    if (result > 0) {
        outbuf_consume(&p->out_plain, (size_t)result);
        account(p);
    } else if (result == -EINVAL)
        *unsupportedp = true;
}

/*
 * The peers whose output is plain bytes only (replies, not a tools/list by reference), written
 * in one system call, each to its out_fd (a handed-off host's stdout may be a socket of its own,
 * as Node's pipes are: written to its stdin's, the bytes went back to the host unread); what is
 * left (a full socket, an error, other peers) goes through on_writable as usual.
 */
static void flush_batched(PeerRegistry *reg)
{
    for (Peer *p = reg->flush; p; p = p->flush_next)
        if (!p->dead && !p->close_reason && p->out_sock && evbuffer_get_length(p->out) == 0 &&
            outbuf_len(&p->out_plain) > 0 &&
            !sendbatch_add(reg->batch, p->out_fd, outbuf_peek(&p->out_plain),
                           outbuf_len(&p->out_plain), p))
            break;
    bool unsupported = false;
    int r = sendbatch_submit(reg->batch, on_batch_done, &unsupported);
    if (r >= 0 && unsupported)
        r = -EINVAL;
    if (r < 0) {
        log_warning("io_uring: batched writes to agents failed (%s); writing one socket at a "
                    "time from now on",
                    strerror(-r));
        sendbatch_free(reg->batch);
        reg->batch = NULL;
    }
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
    PeerRegistry *reg = arg;
    Peer *p;

    (void)fd, (void)what;
    /* One peer is one send(2) either way, and a plain send costs less than a ring entry. */
    if (reg->batch && reg->flush && reg->flush->flush_next)
        flush_batched(reg);
    while ((p = reg->flush)) {
        reg->flush = p->flush_next;
        p->flush_queued = false;
        p->flush_next = NULL;
        if (!p->dead)
            on_writable(p->fd, EV_WRITE, p);
    }
}

static void close_later(Peer *p, const char *reason);

/*
 * At PEER_MAX: close the oldest connection that has been silent for PEER_SILENT_EVICT_MS, if
 * any. New peers go first in the list, so the last silent one found is the oldest.
 */
static bool evict_silent(PeerRegistry *reg)
{
    int64_t now = wall_ms();
    Peer *oldest = NULL;

    for (Peer *q = reg->first; q; q = q->next)
        if (!q->spoke && now - q->connected_wall_ms >= PEER_SILENT_EVICT_MS)
            oldest = q;
    if (!oldest)
        return false;
    _cleanup_free_ char *why = xasprintf(
        "mcpd holds %d connections, its most; this one sent nothing for %lld s and makes room "
        "for a new one (a client must send its initialize when it connects)",
        PEER_MAX, (long long)(now - oldest->connected_wall_ms) / 1000);
    reply_error_and_close(oldest, JSONRPC_INVALID_REQUEST, why);
    return true;
}

/*
 * At PEER_MAX with no silent connection to close: the new one gets the error and is closed. Logged
 * once per full spell, its end (peer_close) with the count refused.
 */
static void refuse_full(PeerRegistry *reg, int fd, pid_t pid)
{
    _cleanup_free_ char *msg = xasprintf(
        "mcpd already serves its most connections at once (%d); close clients no longer used, "
        "or find the process holding them (ss -xp lists the connections and their processes)",
        PEER_MAX);
    StrBuf sb = STRBUF_INIT;

    if (!reg->full)
        log_warning("%d clients connected, the most mcpd serves at once: refusing new "
                    "connections (the first from pid %d) until some close; ss -xp lists the "
                    "processes holding them",
                    PEER_MAX, (int)pid);
    reg->full = true;
    reg->n_refused_full++;
    jsonrpc_write_error(&sb, NULL, JSONRPC_INVALID_REQUEST, msg, NULL);
    (void)!send(fd, sb.data, sb.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    strbuf_deinit(&sb);
    close(fd);
}

/*
 * A new peer in the registry, with its buffers and timers: fd read, out_fd written (the same
 * socket for a connection; a host's handed-over pipes; -1 and -1 for a transport's peer, which
 * has neither), served through hooks (arg theirs) or not.
 */
static Peer *peer_add(PeerRegistry *reg, int fd, int out_fd, uid_t uid, pid_t pid,
                      const PeerHooks *hooks, void *arg)
{
    Peer *p = xcalloc(1, sizeof(*p));
    struct stat st;

    p->id = ++reg->next_id;
    p->reg = reg;
    p->fd = fd;
    p->out_fd = out_fd;
    p->out_sock = out_fd == fd || (fstat(out_fd, &st) == 0 && S_ISSOCK(st.st_mode));
    p->hooks = hooks;
    p->hooks_arg = arg;
    p->uid = uid;
    p->pid = pid;
    p->connected_wall_ms = wall_ms();
    framer_init(&p->in, reg->max_line);
    outbuf_init(&p->out_plain, &reg->out_pool);
    p->out = evbuffer_new();
    p->ev_partial = evtimer_new(reg->base, on_partial_timeout, p);
    idmap_put(&reg->by_id, p->id, p);
    p->next = reg->first;
    if (reg->first)
        reg->first->prev = p;
    reg->first = p;
    reg->n++;
    return p;
}

static void on_out_ready(evutil_socket_t fd, short what, void *arg)
{
    Peer *p = arg;

    (void)fd, (void)what;
    on_writable(p->out_fd, EV_WRITE, p);
}

/* A peer of fds to read and write, watched on the loop. */
static Peer *peer_make(PeerRegistry *reg, int fd, int out_fd, uid_t uid, pid_t pid,
                       const PeerHooks *hooks, void *arg)
{
    Peer *p = peer_add(reg, fd, out_fd, uid, pid, hooks, arg);
    /*
     * Level-triggered. Reads go on until a short read (the socket is then empty), EOF or an
     * error, or the wake-up's share is used up (then ev_more resumes it). Edge-triggered saved
     * epoll one more poll of the socket per wake-up, but an agent that dies with data still
     * queued gives a single edge, EPOLLHUP and EPOLLERR rather than EPOLLRDHUP (libevent then
     * reports no EV_CLOSED): a short read of that data left its EOF unread, and the connection
     * open, for good. Level-triggered, what is left is reported again. EV_CLOSED still says to
     * read on to the EOF. Writes are waited for only after a short write, when the socket is
     * full, and once when it has room. The socket is in the loop's own epoll set (turn.h):
     * an agent's message costs no turn of libevent.
     */
    bool watched = turn_fd_init(&p->io, reg->base, fd, on_readable, on_writable, p) == 0 &&
                   turn_fd_want(&p->io, EV_READ) == 0;
    if (out_fd != fd)
        watched = watched &&
                  turn_fd_init(&p->out_io, reg->base, out_fd, on_out_ready, on_out_ready, p) == 0;
    log_debug("peer %llu connected (pid %d)", (unsigned long long)p->id, (int)pid);
    if (!watched)
        close_later(p, "cannot watch the connection (epoll_ctl failed)");
    return p;
}

Peer *peer_new(PeerRegistry *reg, int fd, uid_t uid, pid_t pid)
{
    if (reg->n >= PEER_MAX && !evict_silent(reg)) {
        refuse_full(reg, fd, pid);
        return NULL;
    }
    return peer_make(reg, fd, fd, uid, pid, NULL, NULL);
}

Peer *peer_new_piped(PeerRegistry *reg, int in_fd, int out_fd, uid_t uid, pid_t pid,
                     const PeerHooks *hooks, void *arg)
{
    if (reg->n >= PEER_MAX && !evict_silent(reg)) {
        close(in_fd);
        close(out_fd);
        return NULL;
    }
    return peer_make(reg, in_fd, out_fd, uid, pid, hooks, arg);
}

Peer *peer_new_sink(PeerRegistry *reg, uid_t uid, pid_t pid, PeerSinkFn sink, void *ctx)
{
    if (reg->n >= PEER_MAX && !evict_silent(reg))
        return NULL;
    Peer *p = peer_add(reg, -1, -1, uid, pid, NULL, NULL);
    p->sink = sink;
    p->sink_ctx = ctx;
    p->spoke = true; /* never evicted as silent: its transport bounds its own connections */
    log_debug("peer %llu opened by a transport (pid %d)", (unsigned long long)p->id, (int)pid);
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
    outbuf_clear(&p->out_plain);
    evbuffer_drain(p->out, evbuffer_get_length(p->out));
    account(p);
    flush_later(p); /* on_writable closes it at the end of the turn */
}

void peer_send(Peer *p, const char *data, size_t n)
{
    if (p->hooks && p->hooks->out && !p->dead && !p->close_reason &&
        p->hooks->out(p, p->hooks_arg, data, n, false))
        return;
    peer_send_unhooked(p, data, n);
}

void peer_send_unhooked(Peer *p, const char *data, size_t n)
{
    size_t queued, in_ref;

    if (p->dead || p->close_reason)
        return;
    if (p->sink) {
        p->sink(p, data, n, p->sink_ctx);
        return;
    }
    in_ref = evbuffer_get_length(p->out);
    queued = outbuf_len(&p->out_plain) + in_ref;
    bool big = queued == 0 && n >= PEER_WRITE_NOW_BYTES;
    if (big) {
        /* A big message gains nothing from waiting for others: as much as fits goes now. */
        ssize_t w = p->out_sock ? send(p->out_fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT)
                                : write(p->out_fd, data, n);
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
    if (in_ref == 0)
        outbuf_append(&p->out_plain, data, n);
    else if (evbuffer_add(p->out, data, n) < 0) {
        close_later(p, "out of memory");
        return;
    }
    account_added(p);
    if (p->close_reason)
        return;
    if (big)
        want_write(p); /* the socket is full: wait until it drains */
    else if (queued == 0)
        /*
         * Written once the loop has handled everything that is ready now: the replies made in
         * one batch leave in one write, and the agent reads them in one wake-up.
         */
        flush_later(p);
}

char *peer_send_reserve(Peer *p, size_t n)
{
    /* Only where peer_send would append the message to out_plain as it is. */
    if (p->dead || p->close_reason || p->sink || n >= PEER_WRITE_NOW_BYTES ||
        (p->hooks && p->hooks->take_all) || outbuf_len(&p->out_plain) + n > p->reg->max_queue ||
        evbuffer_get_length(p->out))
        return NULL;
    return outbuf_reserve(&p->out_plain, n);
}

void peer_send_commit(Peer *p, size_t n)
{
    bool first = outbuf_len(&p->out_plain) == 0;

    if (p->hooks && p->hooks->out) /* it only looks: it takes all only where nothing is reserved */
        p->hooks->out(p, p->hooks_arg, outbuf_peek(&p->out_plain) + outbuf_len(&p->out_plain), n,
                      false);
    outbuf_commit(&p->out_plain, n);
    account_added(p);
    if (first && n && !p->close_reason)
        flush_later(p);
}

/* A reference in a peer's queue: its bytes are not copies, until the queue lets go of them. */
typedef struct RefHold {
    PeerRegistry *reg;
    uint64_t peer_id;
    evbuffer_ref_cleanup_cb done;
    void *arg;
} RefHold;

static void on_ref_released(const void *data, size_t n, void *arg)
{
    RefHold *hold = arg;
    Peer *p = idmap_get(&hold->reg->by_id, hold->peer_id);

    /* A closing peer's queue is being freed: peer_close zeroes its count after. */
    if (p && !p->dead) {
        p->ref_bytes -= MIN(n, p->ref_bytes);
        account(p);
    }
    hold->done(data, n, hold->arg);
    free(hold);
}

void peer_send_ref(Peer *p, const void *data, size_t n, evbuffer_ref_cleanup_cb done, void *arg)
{
    if (p->dead || p->close_reason || p->sink) {
        if (p->sink && !p->dead)
            p->sink(p, data, n, p->sink_ctx);
        done(data, n, arg);
        return;
    }
    if (p->hooks && p->hooks->out && p->hooks->out(p, p->hooks_arg, data, n, true)) {
        done(data, n, arg); /* it took a copy */
        return;
    }
    size_t queued = peer_queued(p);
    if (queued + n > p->reg->max_queue) {
        _cleanup_free_ char *why =
            xasprintf("output queue over %zu bytes: the client is not reading", p->reg->max_queue);
        done(data, n, arg);
        close_later(p, why);
        return;
    }
    RefHold *hold = xmalloc(sizeof(*hold));
    *hold = (RefHold){p->reg, p->id, done, arg};
    if (evbuffer_add_reference(p->out, data, n, on_ref_released, hold) < 0) {
        free(hold);
        done(data, n, arg);
        close_later(p, "out of memory");
        return;
    }
    p->ref_bytes += n;
    if (queued == 0)
        flush_later(p);
}

void peer_close_flushed(Peer *p)
{
    if (p->dead || p->close_flushed)
        return;
    p->close_flushed = true;
    flush_later(p); /* on_writable closes it once the queue is empty */
}

void peer_close(Peer *p, const char *reason)
{
    PeerRegistry *reg = p->reg;

    if (p->dead)
        return;
    p->dead = true;
    clear_read_more(p);
    flush_forget(p);
    if (reason)
        log_full(LOG_NOTICE, NULL, "peer", "dropping client %llu (pid %d%s%s): %s",
                 (unsigned long long)p->id, (int)p->pid, p->label ? ", " : "",
                 p->label ? p->label : "", reason);
    else
        log_debug("peer %llu disconnected", (unsigned long long)p->id);
    if (reg->gone)
        reg->gone(p, reg->userdata);
    /* Replies still queued (a client that half-closed still reads): one last try, no wait. */
    (void)write_queued(p);
    if (p->hooks && p->hooks->closed)
        p->hooks->closed(p, p->hooks_arg, reason);
    turn_fd_deinit(&p->io);
    if (p->out_fd != p->fd) {
        turn_fd_deinit(&p->out_io);
        close(p->out_fd);
    }
    p->out_fd = -1;
    event_free(p->ev_partial);
    set_partial_bytes(p, 0);
    evbuffer_free(p->out);
    p->out = NULL;
    outbuf_deinit(&p->out_plain);
    account(p);
    framer_deinit(&p->in);
    if (p->fd >= 0)
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
    if (reg->full && reg->n < PEER_MAX) {
        log_notice("a client place is free again; %llu connections were refused while %d were "
                   "open",
                   (unsigned long long)reg->n_refused_full, PEER_MAX);
        reg->full = false;
        reg->n_refused_full = 0;
    }
    p->next = reg->reap;
    p->prev = NULL;
    reg->reap = p;
    event_active(reg->ev_reap, EV_TIMEOUT, 0);
}
