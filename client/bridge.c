// SPDX-License-Identifier: MIT
// bridge: `mcpctl bridge`, a stdio MCP server that relays to mcpd's socket, so any MCP host
// (Claude Code, Cursor, the SDKs) can use mcpd as one server.

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "client/bridge.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"
#include "common/util.h"

/* Bytes read per wake-up from either side. */
#define BRIDGE_CHUNK 65536
/* Output queued for one side before the other side is no longer read (back-pressure). */
#define BRIDGE_QUEUE_MAX (4u << 20)

/* One direction: bytes waiting to be written to fd. */
typedef struct Pipe {
    int fd;
    StrBuf q;
    size_t off;
} Pipe;

static size_t pipe_queued(const Pipe *p)
{
    return p->q.len - p->off;
}

static int pipe_flush(Pipe *p)
{
    while (pipe_queued(p)) {
        ssize_t w = write(p->fd, p->q.data + p->off, pipe_queued(p));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return 0;
        if (w < 0)
            return -errno;
        p->off += (size_t)w;
    }
    strbuf_reset(&p->q);
    p->off = 0;
    return 0;
}

/*
 * The host's initialize gains the agent's project and session: _meta["mcpd/cwd"] from the
 * bridge's directory (or --cwd), _meta["mcpd/session"] from $MCPD_SESSION, unless it set them.
 */
static void add_identity(StrBuf *out, const char *line, size_t len, const char *cwd)
{
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;
    const char *session = getenv("MCPD_SESSION");

    if (jsonrpc_msg_parse(&m, line, len, &err) != 0 || m.kind != JSONRPC_REQUEST ||
        !streq(m.method, "initialize") || (m.params && !YAJL_IS_OBJECT(m.params))) {
        jsonrpc_msg_deinit(&m);
        strbuf_append(out, line, len);
        strbuf_putc(out, '\n');
        return;
    }
    yajl_val params = m.params ? json_copy(m.params) : json_object_new();
    yajl_val meta = json_get_object(params, "_meta");
    if (!meta) {
        meta = json_object_new();
        json_object_set(params, "_meta", meta);
    }
    if (cwd && !json_get(meta, "mcpd/cwd"))
        json_object_set(meta, "mcpd/cwd", json_string_new(cwd));
    if (session && *session && !json_get(meta, "mcpd/session"))
        json_object_set(meta, "mcpd/session", json_string_new(session));
    /* Re-written with the host's id, whatever its type. */
    strbuf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
    json_write(out, m.id);
    strbuf_puts(out, ",\"method\":\"initialize\",\"params\":");
    json_write(out, params);
    strbuf_puts(out, "}\n");
    json_free(params);
    jsonrpc_msg_deinit(&m);
}

static int connect_socket(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "mcpctl bridge: socket path %s is too long\n", path);
        return -ENAMETOOLONG;
    }
    strcpy(sa.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        fprintf(stderr,
                "mcpctl bridge: cannot connect to mcpd at %s: %s (is mcpd running? start it "
                "with `mcpd` or `systemctl --user start mcpd.socket`)\n",
                path, strerror(e));
        close(fd);
        return -e;
    }
    return fd;
}

int bridge_run(const char *socket_path, const char *cwd_opt)
{
    char cwd_buf[PATH_MAX];
    const char *cwd = cwd_opt ? cwd_opt : getcwd(cwd_buf, sizeof(cwd_buf));
    Pipe to_sock = {.fd = -1}, to_out = {.fd = STDOUT_FILENO};
    Framer in;
    bool initialized = false, in_eof = false, sock_eof = false;
    int sock, ret = 0;

    signal(SIGPIPE, SIG_IGN);
    sock = connect_socket(socket_path);
    if (sock < 0)
        return 3;
    to_sock.fd = sock;
    fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
    fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);
    framer_init(&in, JSONRPC_MAX_LINE_DEFAULT);
    for (;;) {
        struct pollfd pfd[3] = {{-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}};
        /* Read a side only while the other side's queue has room. */
        if (!in_eof && pipe_queued(&to_sock) < BRIDGE_QUEUE_MAX)
            pfd[0] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
        pfd[1].fd = sock;
        pfd[1].events =
            (short)((!sock_eof && pipe_queued(&to_out) < BRIDGE_QUEUE_MAX ? POLLIN : 0) |
                    (pipe_queued(&to_sock) ? POLLOUT : 0));
        if (pipe_queued(&to_out))
            pfd[2] = (struct pollfd){STDOUT_FILENO, POLLOUT, 0};
        if (in_eof && !pipe_queued(&to_sock))
            break; /* the host closed stdin: MCP's stdio shutdown */
        if (sock_eof && !pipe_queued(&to_out))
            break;
        if (poll(pfd, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            ret = 1;
            break;
        }
        if (pfd[0].revents) {
            ssize_t n = framer_read_fd(&in, STDIN_FILENO);
            if (n == 0 || (n < 0 && n != -EAGAIN && n != -EINTR))
                in_eof = true;
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
                if (!initialized) {
                    add_identity(&to_sock.q, line, len, cwd);
                    initialized = true;
                } else {
                    strbuf_append(&to_sock.q, line, len);
                    strbuf_putc(&to_sock.q, '\n');
                }
            }
        }
        if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            strbuf_reserve(&to_out.q, BRIDGE_CHUNK);
            ssize_t n = read(sock, to_out.q.data + to_out.q.len, BRIDGE_CHUNK);
            if (n > 0) {
                to_out.q.len += (size_t)n;
                to_out.q.data[to_out.q.len] = '\0';
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                sock_eof = true;
            }
        }
        if (pipe_flush(&to_sock) < 0) {
            sock_eof = true;
            strbuf_reset(&to_sock.q);
            to_sock.off = 0;
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
