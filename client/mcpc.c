// SPDX-License-Identifier: MIT
// mcpc: libmcpc, the blocking client of mcpd's socket.

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "client/include/mcpc.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"

#define MCPC_DEFAULT_TIMEOUT_MS 120000

struct mcpc_client {
    char *socket_path, *client_name, *client_version, *cwd, *session_in;
    int timeout_ms;
    int fd;
    Framer in;
    uint64_t next_id;
    char *session;
    char *session_env;
    char errmsg[512];
    mcpc_notify_fn notify;
    void *notify_ud;
    int list_changed;
};

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

mcpc_client *mcpc_new(const mcpc_options *opts)
{
    mcpc_options none = {0};
    mcpc_client *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    if (!opts)
        opts = &none;
    c->socket_path = opts->socket_path ? xstrdup(opts->socket_path) : paths_socket();
    c->client_name = xstrdup(opts->client_name ? opts->client_name : "libmcpc");
    c->client_version = xstrdup(opts->client_version ? opts->client_version : MCPD_VERSION);
    c->cwd = dup_or_null(opts->cwd);
    c->session_in = dup_or_null(opts->session ? opts->session : getenv("MCPD_SESSION"));
    if (c->session_in && !*c->session_in) {
        free(c->session_in);
        c->session_in = NULL;
    }
    c->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : MCPC_DEFAULT_TIMEOUT_MS;
    c->fd = -1;
    framer_init(&c->in, JSONRPC_MAX_LINE_DEFAULT);
    return c;
}

static int fail(mcpc_client *c, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(mcpc_client *c, int r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
    va_end(ap);
    return r;
}

static int send_all(mcpc_client *c, const StrBuf *sb)
{
    const char *p = sb->data;
    size_t n = sb->len;

    while (n > 0) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return fail(c, -errno, "cannot send to mcpd: %s", strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void deliver_notification(mcpc_client *c, JsonrpcMsg *m)
{
    _cleanup_free_ char *params = NULL;

    if (streq(m->method, "notifications/tools/list_changed"))
        c->list_changed++;
    if (!c->notify)
        return;
    params = m->params ? json_to_string(m->params) : xstrdup("{}");
    c->notify(c->notify_ud, m->method, params);
}

/* Answer a request from mcpd: ping, or -32601 for what the blocking API cannot serve. */
static void answer_request(mcpc_client *c, JsonrpcMsg *m)
{
    StrBuf sb = STRBUF_INIT;

    if (streq(m->method, "ping"))
        jsonrpc_write_result(&sb, m->id, NULL);
    else
        jsonrpc_write_error(&sb, m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL);
    (void)send_all(c, &sb);
    strbuf_deinit(&sb);
}

/* Read until the response to id arrives; notifications seen on the way are delivered. */
static int wait_response_until(mcpc_client *c, uint64_t id, char **resultp, int timeout_ms)
{
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;

    for (;;) {
        char *line;
        size_t len;
        int r = framer_next(&c->in, &line, &len);

        if (r == FRAMER_E_TOOBIG)
            return fail(c, -EMSGSIZE, "a message from mcpd exceeds %zu bytes", c->in.max);
        if (r == 0) {
            JsonrpcMsg m;
            _cleanup_free_ char *err = NULL;
            if (jsonrpc_msg_parse(&m, line, len, &err) != 0) {
                jsonrpc_msg_deinit(&m);
                return fail(c, -EPROTO, "mcpd sent an invalid message: %s", err);
            }
            if (m.kind == JSONRPC_NOTIFICATION) {
                deliver_notification(c, &m);
            } else if (m.kind == JSONRPC_REQUEST) {
                answer_request(c, &m);
            } else if (!m.id && m.kind == JSONRPC_ERROR_RESPONSE) {
                /* An error without an id is about the connection itself (refused, dropped). */
                r = fail(c, MCPC_E_RPC, "%s", json_get_string(m.error, "message") ?: "error");
                jsonrpc_msg_deinit(&m);
                return r;
            } else if (YAJL_IS_INTEGER(m.id) && (uint64_t)m.id->u.number.i == id) {
                if (m.kind == JSONRPC_RESPONSE) {
                    *resultp = json_to_string(m.result);
                    r = 0;
                } else {
                    yajl_val code = json_get(m.error, "code");
                    r = fail(c, MCPC_E_RPC, "%s (code %lld)",
                             json_get_string(m.error, "message") ?: "error",
                             YAJL_IS_INTEGER(code) ? (long long)code->u.number.i : 0LL);
                }
                jsonrpc_msg_deinit(&m);
                return r;
            }
            jsonrpc_msg_deinit(&m);
            continue;
        }
        uint64_t now = now_ms();
        if (now >= deadline)
            return fail(c, -ETIMEDOUT, "no answer from mcpd within %d ms", timeout_ms);
        struct pollfd pfd = {c->fd, POLLIN, 0};
        int pr = poll(&pfd, 1, (int)(deadline - now));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return fail(c, -errno, "poll: %s", strerror(errno));
        if (pr == 0)
            continue;
        ssize_t n = framer_read_fd(&c->in, c->fd);
        if (n == 0)
            return fail(c, -ECONNRESET, "mcpd closed the connection");
        if (n < 0 && n != -EAGAIN && n != -EINTR)
            return fail(c, (int)n, "cannot read from mcpd: %s", strerror((int)-n));
    }
}

static int wait_response(mcpc_client *c, uint64_t id, char **resultp)
{
    return wait_response_until(c, id, resultp, c->timeout_ms);
}

int mcpc_process(mcpc_client *c, int timeout_ms)
{
    int r;

    if (c->fd < 0)
        return fail(c, -ENOTCONN, "not connected to mcpd");
    /* Id 0 is never used for a request: this only drains notifications. */
    r = wait_response_until(c, 0, NULL, timeout_ms);
    return r == -ETIMEDOUT ? 0 : r;
}

static int request_val(mcpc_client *c, const char *method, yajl_val params, char **resultp)
{
    StrBuf sb = STRBUF_INIT;
    uint64_t id = ++c->next_id;
    int r;

    if (c->fd < 0)
        return fail(c, -ENOTCONN, "not connected to mcpd");
    jsonrpc_write_request(&sb, id, method, params);
    r = send_all(c, &sb);
    strbuf_deinit(&sb);
    if (r < 0)
        return r;
    return wait_response(c, id, resultp);
}

int mcpc_request(mcpc_client *c, const char *method, const char *params_json, char **resultp)
{
    _cleanup_json_ yajl_val params = NULL;
    _cleanup_free_ char *err = NULL;

    c->errmsg[0] = '\0';
    if (params_json && !(params = json_parse(params_json, &err)))
        return fail(c, -EINVAL, "params are not valid JSON: %s", err);
    if (params && !YAJL_IS_OBJECT(params))
        return fail(c, -EINVAL, "params must be a JSON object");
    return request_val(c, method, params, resultp);
}

static yajl_val init_params(mcpc_client *c)
{
    yajl_val p = json_object_new(), info = json_object_new(), meta = json_object_new();

    json_object_set(p, "protocolVersion", json_string_new("2025-11-25"));
    json_object_set(p, "capabilities", json_object_new());
    json_object_set(info, "name", json_string_new(c->client_name));
    json_object_set(info, "version", json_string_new(c->client_version));
    json_object_set(p, "clientInfo", info);
    if (c->cwd)
        json_object_set(meta, "mcpd/cwd", json_string_new(c->cwd));
    if (c->session_in)
        json_object_set(meta, "mcpd/session", json_string_new(c->session_in));
    json_object_set(p, "_meta", meta);
    return p;
}

static int open_socket(mcpc_client *c)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    if (strlen(c->socket_path) >= sizeof(sa.sun_path))
        return fail(c, -ENAMETOOLONG, "socket path %s is too long", c->socket_path);
    strcpy(sa.sun_path, c->socket_path);
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return fail(c, -errno, "socket: %s", strerror(errno));
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        close(c->fd);
        c->fd = -1;
        return fail(c, -e, "cannot connect to mcpd at %s: %s%s", c->socket_path, strerror(e),
                    e == ENOENT || e == ECONNREFUSED
                        ? " (is mcpd running? start it with `mcpd` or `systemctl --user start "
                          "mcpd.socket`)"
                        : "");
    }
    return 0;
}

int mcpc_connect(mcpc_client *c)
{
    _cleanup_json_ yajl_val params = NULL, result = NULL;
    _cleanup_free_ char *text = NULL;
    const char *token;
    int r;

    c->errmsg[0] = '\0';
    if (c->fd >= 0)
        return 0;
    if ((r = open_socket(c)) < 0)
        return r;
    params = init_params(c);
    r = request_val(c, "initialize", params, &text);
    if (r != 0)
        return r;
    result = json_parse(text, NULL);
    token = json_get_string(json_get_object(result, "_meta"), "mcpd/session");
    if (token)
        c->session = xstrdup(token);
    StrBuf sb = STRBUF_INIT;
    jsonrpc_write_notification(&sb, "notifications/initialized", NULL);
    r = send_all(c, &sb);
    strbuf_deinit(&sb);
    return r;
}

int mcpc_list_tools(mcpc_client *c, char **resultp)
{
    return mcpc_request(c, "tools/list", NULL, resultp);
}

int mcpc_call_tool(mcpc_client *c, const char *name, const char *arguments_json, char **resultp,
                   int *is_errorp)
{
    _cleanup_json_ yajl_val params = json_object_new(), res = NULL;
    _cleanup_free_ char *err = NULL;
    yajl_val args = NULL;
    int r;

    c->errmsg[0] = '\0';
    if (arguments_json && !(args = json_parse(arguments_json, &err)))
        return fail(c, -EINVAL, "arguments are not valid JSON: %s", err);
    if (args && !YAJL_IS_OBJECT(args)) {
        json_free(args);
        return fail(c, -EINVAL, "arguments must be a JSON object");
    }
    json_object_set(params, "name", json_string_new(name));
    json_object_set(params, "arguments", args ? args : json_object_new());
    r = request_val(c, "tools/call", params, resultp);
    if (r == 0 && is_errorp) {
        res = json_parse(*resultp, NULL);
        *is_errorp = YAJL_IS_TRUE(json_get(res, "isError"));
    }
    return r;
}

int mcpc_status(mcpc_client *c, char **resultp)
{
    return mcpc_request(c, "mcpd/status", NULL, resultp);
}

const char *mcpc_session(const mcpc_client *c)
{
    return c->session;
}

const char *mcpc_session_env(mcpc_client *c)
{
    if (!c->session)
        return NULL;
    if (!c->session_env)
        c->session_env = xasprintf("MCPD_SESSION=%s", c->session);
    return c->session_env;
}

void mcpc_set_notify(mcpc_client *c, mcpc_notify_fn fn, void *userdata)
{
    c->notify = fn;
    c->notify_ud = userdata;
}

int mcpc_take_list_changed(mcpc_client *c)
{
    int n = c->list_changed;

    c->list_changed = 0;
    return n;
}

int mcpc_fd(const mcpc_client *c)
{
    return c->fd;
}

const char *mcpc_errmsg(const mcpc_client *c)
{
    return c->errmsg;
}

void mcpc_free(mcpc_client *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    framer_deinit(&c->in);
    free(c->socket_path);
    free(c->client_name);
    free(c->client_version);
    free(c->cwd);
    free(c->session_in);
    free(c->session);
    free(c->session_env);
    free(c);
}

void mcpc_string_free(char *s)
{
    free(s);
}
