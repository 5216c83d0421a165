// SPDX-License-Identifier: MIT
// bridge: `mcpctl bridge`, a stdio MCP server that relays to mcpd's socket, so any MCP host
// (Claude Code, Cursor, the SDKs) can use mcpd as one server.

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
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/jsonscan.h"
#include "common/strbuf.h"
#include "common/util.h"

/* Bytes read per wake-up from either side. */
#define BRIDGE_CHUNK 65536
/* Output queued for one side before the other side is no longer read (back-pressure). */
#define BRIDGE_QUEUE_MAX (4u << 20)
/*
 * After the host closes stdin, how long replies to requests it sent are still awaited. mcpd
 * answers every request within its call timeout (callTimeout, 60 s by default) or reports it
 * failed; a few seconds more cover a loaded machine. Past that mcpd is not going to answer.
 */
#define BRIDGE_DRAIN_MS 65000

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
} Pipe;

static size_t pipe_queued(const Pipe *p)
{
    return p->q.len - p->off;
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

    while (pipe_queued(p)) {
        ssize_t w = write(p->fd, p->q.data + p->off, pipe_queued(p));
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

/*
 * Ids of the host's requests that mcpd has not answered yet, each in one canonical JSON text
 * (so the host's 1 matches mcpd's 1 and "a" matches "a"). Replies mostly come in order, so the
 * search from the front is short.
 */
typedef struct Pending {
    char **ids;
    size_t n_ids, cap;
} Pending;

static void pending_add(Pending *pd, char *id)
{
    if (pd->n_ids == pd->cap) {
        pd->cap = pd->cap ? 2 * pd->cap : 16;
        pd->ids = xrealloc(pd->ids, pd->cap * sizeof(*pd->ids));
    }
    pd->ids[pd->n_ids++] = id;
}

static void pending_remove(Pending *pd, const char *id)
{
    for (size_t i = 0; i < pd->n_ids; i++)
        if (streq(pd->ids[i], id)) {
            free(pd->ids[i]);
            memmove(pd->ids + i, pd->ids + i + 1, (pd->n_ids - i - 1) * sizeof(*pd->ids));
            pd->n_ids--;
            return;
        }
}

static void pending_deinit(Pending *pd)
{
    for (size_t i = 0; i < pd->n_ids; i++)
        free(pd->ids[i]);
    free(pd->ids);
    *pd = (Pending){0};
}

/* An id (string or integer) as one canonical text, to free; NULL if it is neither. */
static char *id_text(const char *p, size_t n)
{
    _cleanup_free_ char *copy = NULL;
    _cleanup_json_ yajl_val v = NULL;
    StrBuf sb = STRBUF_INIT;
    int64_t i;

    if (jsonscan_is_int((JsonSpan){p, n}, &i))
        return xasprintf("%" PRId64, i);
    if (jsonscan_is_plain_string((JsonSpan){p, n}))
        return xstrndup(p, n);
    copy = xstrndup(p, n);
    v = json_parse(copy, NULL);
    if (!v || !YAJL_IS_STRING(v))
        return NULL;
    json_write(&sb, v);
    return strbuf_detach(&sb, NULL);
}

/*
 * What a line is, as far as the bridge cares: its id (canonical, to free, NULL if none) and
 * whether it carries a method. The scanner handles nearly every line without allocating; a
 * line it declines (escaped member names, deep nesting) is parsed in full.
 */
static void line_classify(const char *line, size_t len, char **idp, bool *has_methodp,
                          bool *initializep)
{
    static const char *const names[] = {"id", "method"};
    JsonSpan v[N_ELEMENTS(names)];
    _cleanup_free_ char *err = NULL;
    StrBuf sb = STRBUF_INIT;
    JsonrpcMsg m;

    *idp = NULL;
    *has_methodp = *initializep = false;
    if (jsonscan_members(line, len, names, N_ELEMENTS(names), v) >= 0) {
        *idp = v[0].p ? id_text(v[0].p, v[0].n) : NULL;
        *has_methodp = v[1].p != NULL;
        *initializep = jsonscan_span_eq(v[1], "\"initialize\"");
        return;
    }
    if (jsonrpc_msg_parse(&m, line, len, &err) == 0) {
        if (m.id) {
            json_write(&sb, m.id);
            *idp = strbuf_detach(&sb, NULL);
        }
        *has_methodp = m.method != NULL;
        *initializep = m.kind == JSONRPC_REQUEST && streq(m.method, "initialize");
    }
    jsonrpc_msg_deinit(&m);
}

/*
 * The host's initialize gains the agent's project and session: _meta["mcpd/cwd"] from the
 * bridge's directory (or --cwd), _meta["mcpd/session"] from $MCPD_SESSION, unless it set them.
 * With a server name (--server), _meta["mcpd/server"] asks for that one server's passthrough.
 * This holds for an initialize that is not the host's first message (a host that probes with
 * ping or server/discover first): mcpd binds a connection to its workspace at initialize.
 * Returns false, appending nothing, when the line is not an initialize request to rewrite.
 */
static bool add_identity(StrBuf *out, const char *line, size_t len, const char *cwd,
                         const char *server)
{
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;
    const char *session = getenv("MCPD_SESSION");

    if (jsonrpc_msg_parse(&m, line, len, &err) != 0 || m.kind != JSONRPC_REQUEST ||
        !streq(m.method, "initialize") || (m.params && !YAJL_IS_OBJECT(m.params))) {
        jsonrpc_msg_deinit(&m);
        return false;
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
    if (server && !json_get(meta, "mcpd/server"))
        json_object_set(meta, "mcpd/server", json_string_new(server));
    /* Re-written with the host's id, whatever its type. */
    strbuf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
    json_write(out, m.id);
    strbuf_puts(out, ",\"method\":\"initialize\",\"params\":");
    json_write(out, params);
    strbuf_puts(out, "}\n");
    json_free(params);
    jsonrpc_msg_deinit(&m);
    return true;
}

/*
 * The request a notifications/cancelled line from the host gives up (its id, canonical as in
 * line_classify, to free), or NULL. mcpd sends no reply to a cancelled request (MCP says the
 * receiver should not), so the bridge must stop awaiting it too.
 */
static char *cancelled_id(const char *line, size_t len)
{
    static const char *const names[] = {"method", "params"}, *const inner[] = {"requestId"};
    JsonSpan v[N_ELEMENTS(names)], req;
    _cleanup_free_ char *err = NULL;
    StrBuf sb = STRBUF_INIT;
    JsonrpcMsg m;

    if (jsonscan_members(line, len, names, N_ELEMENTS(names), v) >= 0) {
        if (!jsonscan_span_eq(v[0], "\"notifications/cancelled\"") || !v[1].p)
            return NULL;
        if (jsonscan_members(v[1].p, v[1].n, inner, N_ELEMENTS(inner), &req) >= 0)
            return req.p ? id_text(req.p, req.n) : NULL;
    }
    /* Escaped member names and the like: the full parser decides. */
    if (jsonrpc_msg_parse(&m, line, len, &err) == 0 && m.kind == JSONRPC_NOTIFICATION &&
        streq(m.method, "notifications/cancelled")) {
        yajl_val req_id = json_get(m.params, "requestId");
        if (YAJL_IS_STRING(req_id) || YAJL_IS_INTEGER(req_id)) {
            json_write(&sb, req_id);
            jsonrpc_msg_deinit(&m);
            return strbuf_detach(&sb, NULL);
        }
    }
    jsonrpc_msg_deinit(&m);
    return NULL;
}

/* One line from the host: to mcpd (initialize with identity), its id awaited if a request. */
static void host_line(Pipe *to_sock, Pending *pd, const char *line, size_t len, const char *cwd,
                      const char *server)
{
    char *id;
    bool has_method, initialize;

    line_classify(line, len, &id, &has_method, &initialize);
    if (!initialize || !add_identity(&to_sock->q, line, len, cwd, server)) {
        strbuf_append(&to_sock->q, line, len);
        strbuf_putc(&to_sock->q, '\n');
    }
    to_sock->keep = to_sock->q.len; /* only whole lines go to mcpd */
    if (id && has_method) {
        pending_add(pd, id);
    } else if (!id && has_method) {
        _cleanup_free_ char *gone = cancelled_id(line, len);
        if (gone)
            pending_remove(pd, gone);
    } else {
        free(id);
    }
}

/*
 * Bytes from mcpd after scan are new; to_out->keep is where the first incomplete line starts.
 * Each complete line that answers a host request settles its id.
 */
static void sock_lines(Pipe *to_out, Pending *pd, size_t scan)
{
    char *nl;

    while ((nl = memchr(to_out->q.data + scan, '\n', to_out->q.len - scan))) {
        const char *line = to_out->q.data + to_out->keep;
        size_t len = (size_t)(nl - line);
        char *id;
        bool has_method, initialize;

        if (pd->n_ids) {
            *nl = '\0'; /* the full parser wants a terminated line */
            line_classify(line, len, &id, &has_method, &initialize);
            *nl = '\n';
            if (id && !has_method)
                pending_remove(pd, id);
            free(id);
        }
        scan = (size_t)(nl - to_out->q.data) + 1;
        to_out->keep = scan;
    }
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

/* Poll timeout: none while stdin is open, the drain time left once the host closed it. */
static int drain_poll_ms(bool in_eof, uint64_t drain_deadline)
{
    uint64_t now = now_ms();

    if (!in_eof)
        return -1;
    return now >= drain_deadline ? 0 : (int)MIN(drain_deadline - now, (uint64_t)INT_MAX);
}

int bridge_run(const char *socket_path, const char *cwd_opt, const char *server)
{
    char cwd_buf[PATH_MAX];
    const char *cwd = cwd_opt ? cwd_opt : getcwd(cwd_buf, sizeof(cwd_buf));
    Pipe to_sock = {.fd = -1}, to_out = {.fd = STDOUT_FILENO};
    Pending pd = {0};
    Framer in;
    bool in_eof = false, sock_eof = false;
    uint64_t drain_deadline = 0;
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
        /* The host closed stdin (MCP's stdio shutdown): first every reply it is owed. */
        if (in_eof && !pipe_queued(&to_sock) && !pd.n_ids && !pipe_queued(&to_out))
            break;
        if (sock_eof && !pipe_queued(&to_out))
            break;
        int timeout = drain_poll_ms(in_eof, drain_deadline);
        if (in_eof && !timeout) {
            fprintf(stderr,
                    "mcpctl bridge: mcpd did not answer %zu request(s) within %d ms of the host "
                    "closing stdin; exiting without them\n",
                    pd.n_ids, BRIDGE_DRAIN_MS);
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
                drain_deadline = now_ms() + BRIDGE_DRAIN_MS;
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
                host_line(&to_sock, &pd, line, len, cwd, server);
            }
        }
        if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            size_t scan = to_out.q.len;
            strbuf_reserve(&to_out.q, BRIDGE_CHUNK);
            ssize_t n = read(sock, to_out.q.data + to_out.q.len, BRIDGE_CHUNK);
            if (n > 0) {
                to_out.q.len += (size_t)n;
                to_out.q.data[to_out.q.len] = '\0';
                sock_lines(&to_out, &pd, scan);
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
    pending_deinit(&pd);
    strbuf_deinit(&to_sock.q);
    strbuf_deinit(&to_out.q);
    close(sock);
    return ret;
}
