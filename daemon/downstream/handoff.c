// SPDX-License-Identifier: MIT
// handoff: a bridge's host served on the pipes the bridge handed over (SCM_RIGHTS), as if it
// had connected itself, and the bridge told how it ended (common/handoff.h).

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "common/handoff.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/jsonscan.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/downstream/handoff.h"

/* The fds a bridge hands over: its stdin and its stdout. */
#define HANDOFF_FDS 2
/* Servers a bridge may name as run by its host (leaveOut): a project's .mcp.json has tens. */
#define HANDOFF_LEAVE_OUT_MAX 1000
/*
 * The host's stdout pipe is grown to this (best effort; pipe-max-size allows 1 MiB): a 10 000-tool
 * tools/list (some 6 MiB) crossed the default 64 KiB a hundred times, a wake-up of mcpd and of
 * the host each, and took four times the socket's time. 256 KiB keeps two hundred hosts within
 * the kernel's soft limit of pipe memory per user (64 MiB), past which new pipes get one page.
 */
#define HANDOFF_PIPE_BYTES (256 * 1024)
/* Members of a bridge's identity: four today (cwd, session, server, tool mode) and a few more
 * as options are added; each is a string. */
#define HANDOFF_IDENTITY_MAX 32

typedef enum HandoffState {
    HANDOFF_WAIT_FDS, /* answered the request: the fds come next */
    HANDOFF_SERVING,  /* the host is a peer */
    HANDOFF_DONE,     /* told the bridge; waits to be freed */
} HandoffState;

struct Handoff {
    HandoffRegistry *reg;
    HandoffState state;
    int ctl;   /* the bridge's connection: EOF there is the bridge gone */
    pid_t pid; /* the bridge's, as SO_PEERCRED gave it */
    uid_t uid;
    uint64_t peer_id;                /* the host's peer while serving */
    struct event *ev_ctl, *ev_timer; /* the fds' deadline, then the drain's */
    HostLine hl;
    PeerHooks hooks;
    bool in_eof;     /* the host closed its input */
    bool line_start; /* the next byte queued for the host starts a line */
    StrBuf acc;      /* with short names: output gathered into whole lines */
    Handoff *next, *prev;
};

static void ended(Handoff *h, int status, const char *message);

/* Send one line on the bridge's connection, best effort: it is tiny and the socket idle. */
static void ctl_send(Handoff *h, const StrBuf *sb)
{
    if (h->ctl >= 0)
        (void)!send(h->ctl, sb->data, sb->len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void ctl_notify(Handoff *h, const char *method, yajl_val params)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_notification(&sb, method, params);
    ctl_send(h, &sb);
    strbuf_deinit(&sb);
}

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
    HandoffRegistry *hr = arg;

    (void)fd, (void)what;
    while (hr->reap) {
        Handoff *h = hr->reap;
        hr->reap = h->next;
        hostline_deinit(&h->hl);
        strbuf_deinit(&h->acc);
        free(h);
    }
}

/* Done with h: its events and the bridge's connection go now, its memory from the loop. */
static void handoff_end(Handoff *h)
{
    HandoffRegistry *hr = h->reg;

    if (h->state == HANDOFF_DONE)
        return;
    h->state = HANDOFF_DONE;
    if (h->ev_ctl)
        event_free(h->ev_ctl);
    if (h->ev_timer)
        event_free(h->ev_timer);
    h->ev_ctl = h->ev_timer = NULL;
    if (h->ctl >= 0)
        close(h->ctl);
    h->ctl = -1;
    if (h->prev)
        h->prev->next = h->next;
    else
        hr->first = h->next;
    if (h->next)
        h->next->prev = h->prev;
    hr->n--;
    h->next = hr->reap;
    h->prev = NULL;
    hr->reap = h;
    event_active(hr->ev_reap, EV_TIMEOUT, 0);
}

/* How the host's time with mcpd ended, to the bridge (its exit status), and h is done. */
static void ended(Handoff *h, int status, const char *message)
{
    yajl_val params = json_object_new();

    json_object_set(params, "status", json_int_new(status));
    if (message)
        json_object_set(params, "message", json_string_new(message));
    ctl_notify(h, HANDOFF_ENDED, params);
    json_free(params);
    handoff_end(h);
}

/* ---- the host's peer: its hooks ---- */

static bool hook_line_in(Peer *p, void *arg, const char *line, size_t len, StrBuf *out)
{
    Handoff *h = arg;

    (void)p;
    return hostline_from_host(&h->hl, out, line, len) != HOSTLINE_PASS;
}

/* The host has every answer it is owed after it closed its input: the end, once written. */
static void maybe_drained(Handoff *h, Peer *p)
{
    if (h->in_eof && !hostline_unanswered(&h->hl))
        peer_close_flushed(p);
}

/* A whole line of mcpd's to a host with short names: as it is, or rewritten. */
static void out_line(Handoff *h, Peer *p, char *line, size_t len)
{
    StrBuf sb = STRBUF_INIT;

    if (hostline_to_host(&h->hl, &sb, line, len))
        peer_send_unhooked(p, sb.data, sb.len);
    else
        peer_send_unhooked(p, line, len + 1);
    strbuf_deinit(&sb);
}

/* Output gathered into whole lines (short names, servers left out): each may be rewritten. */
static bool out_whole(Handoff *h, Peer *p, const char *data, size_t n)
{
    size_t used = 0;
    char *nl;

    strbuf_append(&h->acc, data, n);
    while (!p->dead && (nl = memchr(h->acc.data + used, '\n', h->acc.len - used))) {
        out_line(h, p, h->acc.data + used, (size_t)(nl - h->acc.data) - used);
        used = (size_t)(nl - h->acc.data) + 1;
    }
    memmove(h->acc.data, h->acc.data + used, h->acc.len - used + 1);
    h->acc.len -= used;
    if (h->acc.len > p->reg->max_line) {
        _cleanup_free_ char *why =
            xasprintf("a message from mcpd exceeds %zu bytes (maxMessageBytes)", p->reg->max_line);
        strbuf_reset(&h->acc);
        peer_close(p, why);
        return true;
    }
    if (!p->dead)
        maybe_drained(h, p);
    return true;
}

/* The answer that starts at line (within n bytes) settles its request. */
static void settle(Handoff *h, const char *line, size_t n)
{
    const char *nl;

    if (hostline_to_host_start(&h->hl, line, n) || !(nl = memchr(line, '\n', n)))
        return;
    /* Not mcpd's usual head (an id with escapes): the whole line, read in full. */
    StrBuf copy = STRBUF_INIT, none = STRBUF_INIT;
    strbuf_append(&copy, line, (size_t)(nl - line) + 1);
    (void)hostline_to_host(&h->hl, &none, copy.data, copy.len - 1);
    strbuf_deinit(&copy);
    strbuf_deinit(&none);
}

/*
 * What mcpd queues for the host, looked at: the start of each line says which request it
 * answers. A piece by reference is the middle of a line (the tools/list view), never read.
 */
static bool hook_out(Peer *p, void *arg, const char *data, size_t n, bool ref)
{
    Handoff *h = arg;

    if (h->hooks.take_all)
        return out_whole(h, p, data, n);
    if (ref || !n) {
        h->line_start = h->line_start && !n;
        return false;
    }
    for (size_t at = 0; hostline_unanswered(&h->hl) && at < n;) {
        const char *nl;
        if (h->line_start)
            settle(h, data + at, n - at);
        if (!(nl = memchr(data + at, '\n', n - at))) {
            h->line_start = false;
            break;
        }
        at = (size_t)(nl - data) + 1;
        h->line_start = true;
    }
    h->line_start = data[n - 1] == '\n';
    maybe_drained(h, p);
    return false;
}

static void on_drain_timeout(evutil_socket_t fd, short what, void *arg)
{
    Handoff *h = arg;
    Peer *p = peer_get(h->reg->peers, h->peer_id);
    _cleanup_free_ char *why = xasprintf(
        "mcpd did not answer %zu request(s) within %d ms of the host closing stdin; exiting "
        "without them",
        hostline_unanswered(&h->hl), HOSTLINE_DRAIN_MS);

    (void)fd, (void)what;
    if (p)
        peer_close(p, why);
}

/* Whether the host can no longer read what mcpd writes (it died, or closed its end). */
static bool host_gone(const Peer *p)
{
    struct pollfd pfd = {p->out_fd, POLLOUT, 0};

    return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLERR | POLLHUP));
}

/*
 * The host closed its input (MCP's stdio shutdown): the answers it is owed still go out, as
 * the bridge's relay gives them, bounded by HOSTLINE_DRAIN_MS; a host that can no longer read
 * them (it died) ends at once, its calls cancelled.
 */
static bool hook_input_closed(Peer *p, void *arg)
{
    Handoff *h = arg;
    struct timeval tv = {HOSTLINE_DRAIN_MS / 1000, HOSTLINE_DRAIN_MS % 1000 * 1000};

    h->in_eof = true;
    if (!hostline_unanswered(&h->hl))
        return false;
    if (host_gone(p)) {
        peer_close(p, "the host has gone (its end of stdin and stdout closed) with requests in "
                      "flight");
        return true;
    }
    evtimer_add(h->ev_timer, &tv);
    return true;
}

static void hook_closed(Peer *p, void *arg, const char *reason)
{
    Handoff *h = arg;
    _cleanup_free_ char *why = NULL;

    (void)p;
    h->peer_id = 0;
    if (!reason && h->in_eof) {
        ended(h, 0, NULL);
        return;
    }
    if (reason)
        why = xasprintf("mcpd closed the connection: %s", reason);
    ended(h, 1, why ? why : "mcpd closed the connection");
}

/* ---- the bridge's connection ---- */

static void on_ctl_serving(Handoff *h)
{
    char buf[256];
    ssize_t n = recv(h->ctl, buf, sizeof(buf), MSG_DONTWAIT);

    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
        return; /* the bridge says nothing more: whatever it sends is dropped */
    Peer *p = peer_get(h->reg->peers, h->peer_id);
    _cleanup_free_ char *why = xasprintf("its bridge (mcpctl, pid %d) has gone", (int)h->pid);
    if (p)
        peer_close(p, why); /* hook_closed ends h */
    else
        handoff_end(h);
}

static void refused(Handoff *h, const char *message)
{
    yajl_val params = json_object_new();

    log_notice("a bridge (pid %d) handed over its host's pipes, refused: %s", (int)h->pid, message);
    json_object_set(params, "message", json_string_new(message));
    ctl_notify(h, HANDOFF_REFUSED, params);
    json_free(params);
    handoff_end(h);
}

/* Why fd cannot be the host's side `want` (O_RDONLY: what mcpd reads, O_WRONLY: writes). */
static const char *unfit(int fd, int want)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFL);

    if (fstat(fd, &st) < 0 || fl < 0)
        return "not an open file";
    if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
        return "neither a pipe nor a socket";
    if ((fl & O_ACCMODE) != O_RDWR && (fl & O_ACCMODE) != want)
        return want == O_RDONLY ? "not open for reading" : "not open for writing";
    return NULL;
}

static void take_fds(Handoff *h)
{
    int fds[HANDOFF_FDS];
    char byte = 0;
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(fds))];
    } u;
    struct iovec iov = {&byte, 1};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
    size_t n_fds = 0;
    const char *why = NULL;

    ssize_t n = recvmsg(h->ctl, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (n_fds < HANDOFF_FDS)
                    fds[n_fds++] = fd;
                else
                    close(fd);
            }
        }
    if (n <= 0)
        why = "the bridge closed its connection before handing over its pipes";
    else if (byte != '\n' || n_fds != HANDOFF_FDS || (mh.msg_flags & MSG_CTRUNC))
        why = "expected one newline carrying two fds (stdin, stdout)";
    else if ((why = unfit(fds[0], O_RDONLY)) || (why = unfit(fds[1], O_WRONLY)))
        ;
    else if (fd_set_nonblock(fds[0]) < 0 || fd_set_nonblock(fds[1]) < 0)
        why = "cannot make the pipes non-blocking";
    if (why) {
        for (size_t i = 0; i < n_fds; i++)
            close(fds[i]);
        refused(h, why);
        return;
    }
    struct stat st;
    if (fstat(fds[1], &st) == 0 && S_ISFIFO(st.st_mode))
        (void)fcntl(fds[1], F_SETPIPE_SZ, HANDOFF_PIPE_BYTES);
    /* fds consumed: the peer closes them. */
    Peer *p = peer_new_piped(h->reg->peers, fds[0], fds[1], h->uid, h->pid, &h->hooks, h);
    if (!p) {
        refused(h, "mcpd already serves its most connections at once");
        return;
    }
    h->peer_id = p->id;
    h->state = HANDOFF_SERVING;
    evtimer_del(h->ev_timer);
    ctl_notify(h, HANDOFF_TAKEN, NULL);
    log_debug("peer %llu: the host of bridge pid %d, on the pipes it handed over",
              (unsigned long long)p->id, (int)h->pid);
}

static void on_ctl(evutil_socket_t fd, short what, void *arg)
{
    Handoff *h = arg;

    (void)fd, (void)what;
    if (h->state == HANDOFF_WAIT_FDS)
        take_fds(h);
    else if (h->state == HANDOFF_SERVING)
        on_ctl_serving(h);
}

static void on_fds_timeout(evutil_socket_t fd, short what, void *arg)
{
    Handoff *h = arg;

    (void)fd, (void)what;
    if (h->state == HANDOFF_WAIT_FDS)
        refused(h, "the bridge did not hand over its pipes in time");
    else
        on_drain_timeout(fd, what, arg);
}

/* ---- the request ---- */

/* The request's params checked into h; NULL, or why they are refused (to free). */
static char *read_params(Handoff *h, yajl_val params)
{
    yajl_val version = json_get(params, "version"), identity = json_get(params, "identity");
    yajl_val prefix = json_get(params, "hostPrefix"), left = json_get(params, "leaveOut");
    char *why = NULL;

    if (!YAJL_IS_INTEGER(version) || version->u.number.i != HANDOFF_VERSION)
        return xasprintf("params.version is not %d, the one this mcpd speaks", HANDOFF_VERSION);
    if (!YAJL_IS_OBJECT(identity) || identity->u.object.len > HANDOFF_IDENTITY_MAX)
        return xasprintf("params.identity must be an object of at most %d _meta members",
                         HANDOFF_IDENTITY_MAX);
    if (prefix && !YAJL_IS_STRING(prefix))
        return xstrdup("params.hostPrefix must be a string");
    if (left && (!YAJL_IS_ARRAY(left) || json_array_len(left) > HANDOFF_LEAVE_OUT_MAX))
        return xasprintf("params.leaveOut must be an array of at most %d server names",
                         HANDOFF_LEAVE_OUT_MAX);
    for (size_t i = 0; left && i < json_array_len(left); i++)
        if (!YAJL_IS_STRING(json_array_at(left, i)))
            return xstrdup("params.leaveOut must hold server names (strings)");
    hostline_init(&h->hl, json_copy(identity));
    if (prefix && hostline_set_prefix(&h->hl, prefix->u.string, &why) < 0)
        return why;
    if (left)
        hostline_leave_out(&h->hl, json_copy(left));
    return NULL;
}

/*
 * A connection's first line that asks for a hand-off: the connection becomes the bridge's
 * (the Peer it was goes), answered; the fds come next. A request mcpd cannot take is answered
 * with an error, and the bridge relays.
 */
static bool on_first_line(Peer *p, const char *line, size_t len, void *arg)
{
    static const char *const names[] = {"method"};
    HandoffRegistry *hr = arg;
    _cleanup_free_ char *err = NULL, *why = NULL;
    StrBuf sb = STRBUF_INIT;
    JsonSpan v;
    JsonrpcMsg m;

    if (jsonscan_members(line, len, names, 1, &v) < 0 ||
        !jsonscan_span_eq(v, "\"" HANDOFF_METHOD "\""))
        return false;
    if (jsonrpc_msg_parse(&m, line, len, &err) != 0 || m.kind != JSONRPC_REQUEST) {
        jsonrpc_msg_deinit(&m);
        return false; /* the usual errors */
    }
    Handoff *h = xcalloc(1, sizeof(*h));
    *h = (Handoff){.reg = hr, .ctl = -1, .pid = p->pid, .uid = p->uid, .line_start = true};
    if (framer_pending(&p->in))
        why = xstrdup("the bridge must wait for the answer before it sends more");
    else if (hr->n >= PEER_MAX)
        why = xstrdup("mcpd already serves its most connections at once");
    else if (!YAJL_IS_OBJECT(m.params))
        why = xstrdup("params must be an object");
    else
        why = read_params(h, m.params);
    if (!why && (h->ctl = fcntl(p->fd, F_DUPFD_CLOEXEC, 3)) < 0)
        why = xstrdup("out of file descriptors");
    if (why) {
        jsonrpc_write_error(&sb, m.id, JSONRPC_INVALID_PARAMS, why, NULL);
        peer_send_sb(p, &sb);
        peer_close(p, NULL);
        hostline_deinit(&h->hl);
        free(h);
    } else {
        h->hooks = (PeerHooks){hook_line_in, hook_out, hook_input_closed, hook_closed,
                               hostline_rewrites_replies(&h->hl)};
        struct timeval tv = {HANDOFF_STEP_MS / 1000, HANDOFF_STEP_MS % 1000 * 1000};
        h->ev_ctl = event_new(hr->peers->base, h->ctl, EV_READ | EV_PERSIST, on_ctl, h);
        h->ev_timer = evtimer_new(hr->peers->base, on_fds_timeout, h);
        event_add(h->ev_ctl, NULL);
        evtimer_add(h->ev_timer, &tv);
        h->next = hr->first;
        if (hr->first)
            hr->first->prev = h;
        hr->first = h;
        hr->n++;
        strbuf_puts(&sb, "{\"jsonrpc\":\"2.0\",\"id\":");
        json_write(&sb, m.id);
        strbuf_printf(&sb, ",\"result\":{\"version\":%d}}\n", HANDOFF_VERSION);
        /* The answer goes straight out: the Peer that read the request closes now. */
        ctl_send(h, &sb);
        peer_close(p, NULL);
    }
    strbuf_deinit(&sb);
    jsonrpc_msg_deinit(&m);
    return true;
}

void handoff_registry_init(HandoffRegistry *hr, PeerRegistry *peers)
{
    *hr = (HandoffRegistry){.peers = peers};
    hr->ev_reap = evtimer_new(peers->base, on_reap, hr);
    peers->first_line = on_first_line;
    peers->first_line_arg = hr;
}

void handoff_registry_deinit(HandoffRegistry *hr)
{
    while (hr->first)
        ended(hr->first, 1, "mcpd closed the connection: daemon is shutting down");
    on_reap(-1, 0, hr);
    if (hr->ev_reap)
        event_free(hr->ev_reap);
    *hr = (HandoffRegistry){0};
}
