// SPDX-License-Identifier: MIT
// bridge: `mcpctl bridge`, a stdio MCP server through which any MCP host (Claude Code, Cursor,
// the SDKs) uses mcpd as one server: it hands the host's pipes to mcpd (client/handoff.c), or,
// where it cannot, relays between them and mcpd's socket.

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "client/bridge.h"
#include "client/handoff.h"
#include "client/setup-claude.h"
#include "common/hostline.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"

/* Bytes read per wake-up from either side. */
#define BRIDGE_CHUNK 65536
/* Output queued for one side before the other side is no longer read (back-pressure). */
#define BRIDGE_QUEUE_MAX (4u << 20)
/* A log level ("debug"): the bridge says on stderr why it relays rather than hands off. */
#define BRIDGE_LOG_ENV "MCPCTL_LOG"
/*
 * One direction: bytes waiting to be written to fd. Written bytes are dropped from the front
 * once they make up half the buffer, so a side that never fully drains (a host streaming
 * requests to a busy mcpd) does not grow the buffer without end. keep marks bytes still
 * needed after they are written (the start of a reply line not yet complete).
 */
typedef struct Pipe {
    int fd;
    StrBuf q;
    size_t off;
    size_t keep;
    bool whole_lines; /* write only complete lines (up to keep): they may still be rewritten */
} Pipe;

static size_t pipe_queued(const Pipe *p)
{
    return p->q.len - p->off;
}

/* Bytes that may be written now. */
static size_t pipe_ready(const Pipe *p)
{
    return (p->whole_lines ? p->keep : p->q.len) - p->off;
}

static void pipe_compact(Pipe *p)
{
    size_t drop = MIN(p->off, p->keep);

    if (drop == p->q.len) {
        strbuf_reset(&p->q);
    } else if (drop >= BRIDGE_CHUNK && drop >= p->q.len / 2) {
        memmove(p->q.data, p->q.data + drop, p->q.len - drop + 1);
        p->q.len -= drop;
    } else {
        return;
    }
    p->off -= drop;
    p->keep -= drop;
}

static int pipe_flush(Pipe *p)
{
    int r = 0;

    while (pipe_ready(p)) {
        ssize_t w = write(p->fd, p->q.data + p->off, pipe_ready(p));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN)
            r = -errno;
        if (w < 0)
            break;
        p->off += (size_t)w;
    }
    pipe_compact(p);
    return r;
}

/* Replace the bytes [from, to) of q by with. */
static void strbuf_splice(StrBuf *q, size_t from, size_t to, const StrBuf *with)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_append(&sb, q->data, from);
    strbuf_append(&sb, with->data, with->len);
    strbuf_append(&sb, q->data + to, q->len - to);
    strbuf_deinit(q);
    *q = sb;
}

/*
 * Bytes from mcpd after scan are new; to_out->keep is where the first incomplete line starts.
 * Each complete line that answers a host request settles its id; one that answers a tools/list
 * may get short names (to_out holds whole lines then, so the line is not written yet).
 */
static void sock_lines(Pipe *to_out, HostLine *h, size_t scan)
{
    char *nl;

    while ((nl = memchr(to_out->q.data + scan, '\n', to_out->q.len - scan))) {
        char *line = to_out->q.data + to_out->keep;
        StrBuf sb = STRBUF_INIT;

        scan = (size_t)(nl - to_out->q.data) + 1;
        if (hostline_to_host(h, &sb, line, (size_t)(nl - line))) {
            strbuf_splice(&to_out->q, to_out->keep, scan, &sb);
            scan = to_out->keep + sb.len;
        }
        strbuf_deinit(&sb);
        to_out->keep = scan;
    }
}

/* Connect to mcpd; on failure *whyp (to free) says why and what to do. */
static int connect_socket(const char *path, char **whyp)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        *whyp = xasprintf("mcpd's socket path %s is too long for a Unix socket; give a shorter "
                          "one with --socket or MCPD_SOCKET",
                          path);
        return -ENAMETOOLONG;
    }
    strcpy(sa.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        int e = errno;
        *whyp = xasprintf("cannot make a socket to reach mcpd: %s", strerror(e));
        return -e;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        *whyp = xasprintf(
            "mcpd is not running: nothing answers at %s (%s). Start it with `systemctl --user "
            "enable --now mcpd.socket` (or run `mcpd` in a shell), then restart the agent's mcpd "
            "server (or the agent); "
            "if mcpd listens elsewhere, give its socket to the bridge with --socket PATH or "
            "MCPD_SOCKET",
            path, strerror(e));
        close(fd);
        return -e;
    }
    return fd;
}

int bridge_reach(const char *socket_path, char **whyp)
{
    int fd = connect_socket(socket_path, whyp);

    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

/*
 * mcpd cannot be reached: a host shows only what comes back on the protocol (stderr goes to a
 * log few users find), so every request from the host, initialize first, is answered with a
 * JSON-RPC error carrying why, until the host closes stdin. Exit status 3, as mcpctl's "mcpd
 * not reachable".
 */
static int answer_unreachable(const char *why)
{
    StrBuf out = STRBUF_INIT;
    Framer in;
    char *line;
    size_t len;
    int r;

    fprintf(stderr, "mcpctl bridge: %s\n", why);
    framer_init(&in, JSONRPC_MAX_LINE_DEFAULT);
    for (;;) {
        struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
        if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
            break;
        ssize_t n = framer_read_fd(&in, STDIN_FILENO);
        if (n == -EINTR || n == -EAGAIN)
            continue;
        if (n == 0 && framer_pending(&in) && !in.discarding)
            framer_feed(&in, "\n", 1);
        while ((r = framer_next(&in, &line, &len)) != FRAMER_E_AGAIN) {
            _cleanup_free_ char *id = NULL;
            if (r == FRAMER_E_TOOBIG || !(id = hostline_request_id(line, len)))
                continue; /* notifications and stray replies need no answer */
            strbuf_reset(&out);
            strbuf_printf(&out,
                          "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":", id,
                          MCP_ERROR_CONNECTION_CLOSED);
            json_write_string(&out, why, strlen(why));
            strbuf_puts(&out, "}}\n");
            if (fd_write_all(STDOUT_FILENO, out.data, out.len) < 0)
                n = 0; /* the host is gone */
        }
        if (n <= 0)
            break;
    }
    framer_deinit(&in);
    strbuf_deinit(&out);
    return 3;
}

/* Poll timeout: none while stdin is open, the drain time left once the host closed it. */
static int drain_poll_ms(bool in_eof, uint64_t drain_deadline)
{
    uint64_t now = now_ms();

    if (!in_eof)
        return -1;
    return now >= drain_deadline ? 0 : (int)MIN(drain_deadline - now, (uint64_t)INT_MAX);
}

/* One line from the host, to mcpd as it is or as h rewrites it. */
static void host_line(Pipe *to_sock, HostLine *h, const char *line, size_t len)
{
    switch (hostline_from_host(h, &to_sock->q, line, len)) {
    case HOSTLINE_PASS:
        strbuf_append(&to_sock->q, line, len);
        strbuf_putc(&to_sock->q, '\n');
        break;
    case HOSTLINE_REWRITTEN:
    case HOSTLINE_SKIP:
        break;
    }
    to_sock->keep = to_sock->q.len; /* only whole lines go to mcpd */
}

/*
 * Copy the host's stdin to mcpd at sock and mcpd's answers to stdout, each line through h, until
 * the host has closed stdin and has every answer it is owed, or either side has gone. Returns
 * the exit status (sock is closed).
 */
static int relay(int sock, HostLine *h)
{
    Pipe to_sock = {.fd = sock}, to_out = {.fd = STDOUT_FILENO};
    Framer in;
    bool in_eof = false, sock_eof = false;
    uint64_t drain_deadline = 0;
    int ret = 0;

    to_out.whole_lines = hostline_rewrites_replies(h);
    fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
    fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);
    framer_init(&in, JSONRPC_MAX_LINE_DEFAULT);
    for (;;) {
        struct pollfd pfd[3] = {{-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}};
        /* Read a side only while the other side's queue has room. */
        if (!in_eof && pipe_queued(&to_sock) < BRIDGE_QUEUE_MAX)
            pfd[0] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
        pfd[1].fd = sock;
        pfd[1].events = (short)((!sock_eof && pipe_ready(&to_out) < BRIDGE_QUEUE_MAX ? POLLIN : 0) |
                                (pipe_queued(&to_sock) ? POLLOUT : 0));
        if (pipe_ready(&to_out))
            pfd[2] = (struct pollfd){STDOUT_FILENO, POLLOUT, 0};
        /* The host closed stdin (MCP's stdio shutdown): first every reply it is owed. */
        if (in_eof && !pipe_queued(&to_sock) && !hostline_unanswered(h) && !pipe_ready(&to_out))
            break;
        if (sock_eof && !pipe_ready(&to_out))
            break;
        /* Whole lines only: mcpd's lines are bounded like the host's (16 MiB by default). */
        if (to_out.whole_lines && to_out.q.len - to_out.keep > in.max) {
            fprintf(stderr, "mcpctl bridge: a message from mcpd exceeds %zu bytes\n", in.max);
            ret = 1;
            break;
        }
        int timeout = drain_poll_ms(in_eof, drain_deadline);
        if (in_eof && !timeout) {
            fprintf(stderr,
                    "mcpctl bridge: mcpd did not answer %zu request(s) within %d ms of the host "
                    "closing stdin; exiting without them\n",
                    hostline_unanswered(h), HOSTLINE_DRAIN_MS);
            ret = 1;
            break;
        }
        int n_ready = poll(pfd, 3, timeout);
        if (n_ready < 0 && errno == EINTR)
            continue;
        if (n_ready < 0) {
            ret = 1;
            break;
        }
        if (pfd[0].revents) {
            ssize_t n = framer_read_fd(&in, STDIN_FILENO);
            if (n == 0 || (n < 0 && n != -EAGAIN && n != -EINTR)) {
                in_eof = true;
                drain_deadline = now_ms() + HOSTLINE_DRAIN_MS;
                /* A last message without its newline is still a message: end its line. */
                if (n == 0 && framer_pending(&in) && !in.discarding)
                    framer_feed(&in, "\n", 1);
            }
            char *line;
            size_t len;
            int r;
            while ((r = framer_next(&in, &line, &len)) != FRAMER_E_AGAIN) {
                if (r == FRAMER_E_TOOBIG) {
                    fprintf(stderr,
                            "mcpctl bridge: a message from the host exceeds %zu bytes; "
                            "dropped\n",
                            in.max);
                    continue;
                }
                host_line(&to_sock, h, line, len);
            }
        }
        if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            size_t scan = to_out.q.len;
            strbuf_reserve(&to_out.q, BRIDGE_CHUNK);
            ssize_t n = read(sock, to_out.q.data + to_out.q.len, BRIDGE_CHUNK);
            if (n > 0) {
                to_out.q.len += (size_t)n;
                to_out.q.data[to_out.q.len] = '\0';
                sock_lines(&to_out, h, scan);
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                sock_eof = true;
            }
        }
        if (pipe_flush(&to_sock) < 0) {
            sock_eof = true;
            strbuf_reset(&to_sock.q);
            to_sock.off = to_sock.keep = 0;
        }
        if (pipe_flush(&to_out) < 0) {
            ret = 1; /* the host is gone */
            break;
        }
    }
    if (sock_eof && !in_eof) {
        fprintf(stderr, "mcpctl bridge: mcpd closed the connection\n");
        ret = 1;
    }
    framer_deinit(&in);
    strbuf_deinit(&to_sock.q);
    strbuf_deinit(&to_out.q);
    close(sock);
    return ret;
}

/*
 * The agent's identity as _meta members: its project (cwd), its parent's session
 * ($MCPD_SESSION), one server's passthrough (--server), the tool mode ($MCPD_TOOL_MODE: "search"
 * or "all") and the profile ($MCPD_PROFILE or --profile), both in docs/search.md.
 */
static yajl_val bridge_identity(const char *cwd, const char *server)
{
    const char *session = getenv("MCPD_SESSION");
    const char *tool_mode = getenv("MCPD_TOOL_MODE"), *profile = getenv("MCPD_PROFILE");
    yajl_val meta = json_object_new();

    if (cwd)
        json_object_set(meta, MCPD_META_CWD, json_string_new(cwd));
    if (session && *session)
        json_object_set(meta, MCPD_META_SESSION, json_string_new(session));
    if (server)
        json_object_set(meta, MCPD_META_SERVER, json_string_new(server));
    if (tool_mode && *tool_mode)
        json_object_set(meta, MCPD_META_TOOL_MODE, json_string_new(tool_mode));
    if (profile && *profile) /* --profile sets it too (mcpctl.c); docs/search.md */
        json_object_set(meta, MCPD_META_PROFILE, json_string_new(profile));
    return meta;
}

int bridge_run(const char *socket_path, const char *cwd_opt, const char *server,
               const char *host_prefix, bool host_claude)
{
    char cwd_buf[PATH_MAX];
    const char *cwd = cwd_opt ? cwd_opt : getcwd(cwd_buf, sizeof(cwd_buf));
    const char *level = getenv(BRIDGE_LOG_ENV);
    _cleanup_free_ char *why = NULL;
    HostLine h;
    int sock, ret;

    log_set_ident("mcpctl bridge");
    if (level && log_level_from_string(level) >= 0)
        log_set_level(log_level_from_string(level));
    hostline_init(&h, bridge_identity(cwd, server));
    if (host_prefix && hostline_set_prefix(&h, host_prefix, &why) < 0) {
        fprintf(stderr, "mcpctl bridge: %s\n", why);
        hostline_deinit(&h);
        return 1;
    }
    if (host_claude && cwd && !server)
        hostline_leave_out(&h, setup_claude_own_servers(cwd));
    signal(SIGPIPE, SIG_IGN);
    if (handoff_possible(&why)) {
        sock = connect_socket(socket_path, &why);
        ret = sock < 0 ? -1 : handoff_run(sock, &h, host_prefix, &why);
        if (ret >= 0) {
            hostline_deinit(&h);
            return ret;
        }
    }
    log_debug("relaying the host's messages itself: %s", why);
    free(why);
    why = NULL;
    sock = connect_socket(socket_path, &why);
    ret = sock < 0 ? answer_unreachable(why) : relay(sock, &h);
    hostline_deinit(&h);
    return ret;
}
