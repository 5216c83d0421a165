// SPDX-License-Identifier: MIT
// mcpc: libmcpc, the client of mcpd's socket: blocking calls and an asynchronous API.

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "client/include/mcpc.h"
#include "client/mcpc-modern.h"
#include "client/mcpc-private.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/mcp.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"

#define MCPC_DEFAULT_TIMEOUT_MS 120000

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
    c->profile = dup_or_null(opts->profile ? opts->profile : getenv("MCPD_PROFILE"));
    if (c->profile && !*c->profile) {
        free(c->profile);
        c->profile = NULL;
    }
    if (c->session_in && !*c->session_in) {
        free(c->session_in);
        c->session_in = NULL;
    }
    c->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : MCPC_DEFAULT_TIMEOUT_MS;
    c->fd = -1;
    framer_init(&c->in, JSONRPC_MAX_LINE_DEFAULT);
    return c;
}

/* ---- output ---- */

static int send_notification(mcpc_client *c, const char *method, yajl_val params)
{
    StrBuf sb = STRBUF_INIT;
    int r;

    jsonrpc_write_notification(&sb, method, params);
    r = libmcpc_send_sb(c, &sb, false);
    strbuf_deinit(&sb);
    return r;
}

/* ---- pending asynchronous requests ---- */

/* By the id an answer from mcpd carries (its latest send). */
static Pending *pending_take(mcpc_client *c, unsigned long long wire_id)
{
    for (Pending *p = c->pending; p; p = p->next)
        if (p->wire_id == wire_id) {
            libmcpc_pending_unlink(c, p);
            return p;
        }
    return NULL;
}

/* By the id the caller knows. */
static Pending *pending_find(mcpc_client *c, unsigned long long id)
{
    for (Pending *p = c->pending; p; p = p->next)
        if (p->id == id)
            return p;
    return NULL;
}

/* The connection is gone: every pending request is answered. */
static void pending_fail_all(mcpc_client *c, int status)
{
    Pending *p;

    while ((p = c->pending)) {
        c->pending = p->next;
        c->n_pending--;
        libmcpc_pending_finish(c, p, status, NULL);
    }
}

/* ---- input ---- */

static void deliver_notification(mcpc_client *c, JsonrpcMsg *m)
{
    _cleanup_free_ char *params = NULL;

    if (streq(m->method, "notifications/tools/list_changed"))
        c->list_changed++;
    if (streq(m->method, "notifications/progress")) {
        yajl_val tok = json_get(m->params, "progressToken"), total = json_get(m->params, "total");
        Pending *p = YAJL_IS_INTEGER(tok) && tok->u.number.i > 0
                         ? pending_find(c, (unsigned long long)tok->u.number.i)
                         : NULL;
        yajl_val prog = json_get(m->params, "progress");
        if (p && p->progress && prog && YAJL_IS_NUMBER(prog))
            p->progress(p->userdata, p->id, YAJL_GET_DOUBLE(prog),
                        total && YAJL_IS_NUMBER(total) ? YAJL_GET_DOUBLE(total) : -1,
                        json_get_string(m->params, "message"));
    }
    if (!c->notify)
        return;
    params = m->params ? json_to_string(m->params) : xstrdup("{}");
    c->notify(c->notify_ud, m->method, params);
}

/* A request from mcpd: ping here, server requests to the handler, -32601 without one. */
static void answer_request(mcpc_client *c, JsonrpcMsg *m)
{
    StrBuf sb = STRBUF_INIT;

    if (!streq(m->method, "ping") && c->server_request) {
        _cleanup_free_ char *id = json_to_string(m->id);
        _cleanup_free_ char *params = m->params ? json_to_string(m->params) : xstrdup("{}");
        c->server_request(c->server_request_ud, id, m->method, params);
        return;
    }
    if (streq(m->method, "ping"))
        jsonrpc_write_result(&sb, m->id, NULL);
    else
        jsonrpc_write_error(&sb, m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL);
    (void)libmcpc_send_sb(c, &sb, false);
    strbuf_deinit(&sb);
}

/*
 * Handle one line. Returns 1 when it was the response to wait_id (its outcome in *rp and
 * *resultp), 0 otherwise, or a failure about the connection itself.
 */
static int handle_line(mcpc_client *c, char *line, size_t len, uint64_t wait_id, char **resultp,
                       int *rp)
{
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;
    int r = 0;

    if (jsonrpc_msg_parse(&m, line, len, &err) != 0) {
        jsonrpc_msg_deinit(&m);
        return libmcpc_fail(c, -EPROTO, "mcpd sent an invalid message: %s", err);
    }
    if (m.kind == JSONRPC_NOTIFICATION) {
        deliver_notification(c, &m);
    } else if (m.kind == JSONRPC_REQUEST) {
        answer_request(c, &m);
    } else if (!m.id && m.kind == JSONRPC_ERROR_RESPONSE) {
        /* An error without an id is about the connection itself (refused, dropped). */
        r = libmcpc_fail(c, MCPC_E_RPC, "%s", json_get_string(m.error, "message") ?: "error");
    } else if (YAJL_IS_INTEGER(m.id) && m.id->u.number.i > 0) {
        uint64_t id = (uint64_t)m.id->u.number.i;
        Pending *p;
        if (wait_id && id == wait_id) {
            if (m.kind == JSONRPC_RESPONSE) {
                *resultp = json_to_string(m.result);
                *rp = 0;
            } else {
                yajl_val code = json_get(m.error, "code");
                *rp = libmcpc_fail(c, MCPC_E_RPC, "%s (code %lld)",
                                   json_get_string(m.error, "message") ?: "error",
                                   YAJL_IS_INTEGER(code) ? (long long)code->u.number.i : 0LL);
            }
            r = 1;
        } else if ((p = pending_take(c, id))) {
            const char *token =
                json_get_string(json_get_object(m.result, "_meta"), MCPD_META_SESSION);
            if (token && !c->session && c->era == MCPC_ERA_2026)
                c->session = xstrdup(token); /* told once, with the first result */
            /* input_required with a handler: it answers, then p goes again (MRTR). */
            if (m.kind != JSONRPC_RESPONSE || !libmcpc_input_required(c, p, m.result)) {
                _cleanup_free_ char *json =
                    json_to_string(m.kind == JSONRPC_RESPONSE ? m.result : m.error);
                libmcpc_pending_finish(c, p, m.kind == JSONRPC_RESPONSE ? 0 : MCPC_E_RPC, json);
            }
        }
        /* else: an answer to a request given up on (cancelled, timed out): dropped */
    }
    jsonrpc_msg_deinit(&m);
    return r;
}

/* Handle every complete line buffered; same returns as handle_line. */
static int drain_lines(mcpc_client *c, uint64_t wait_id, char **resultp, int *rp)
{
    for (;;) {
        char *line;
        size_t len;
        int r = framer_next(&c->in, &line, &len);

        if (r == FRAMER_E_AGAIN)
            return 0;
        if (r == FRAMER_E_TOOBIG)
            return libmcpc_fail(c, -EMSGSIZE, "a message from mcpd exceeds %zu bytes", c->in.max);
        r = handle_line(c, line, len, wait_id, resultp, rp);
        if (r != 0)
            return r;
    }
}

/* Read once: 1 when bytes came, 0 when none are there yet, a failure when the link is gone. */
static int read_some(mcpc_client *c)
{
    ssize_t n = framer_read_fd(&c->in, c->fd);

    if (n == 0)
        return libmcpc_fail(c, -ECONNRESET, "mcpd closed the connection");
    if (n == -EAGAIN || n == -EINTR)
        return 0;
    if (n < 0)
        return libmcpc_fail(c, (int)n, "cannot read from mcpd: %s", strerror((int)-n));
    return 1;
}

static int lost(mcpc_client *c, int r)
{
    if (r < 0 && r != -ETIMEDOUT)
        pending_fail_all(c, -ECONNRESET);
    return r;
}

/* Read until the response to id arrives; everything else seen on the way is delivered. */
static int wait_response_until(mcpc_client *c, uint64_t id, char **resultp, int timeout_ms)
{
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
    int result = 0;

    for (;;) {
        int r = drain_lines(c, id, resultp, &result);
        if (r == 1)
            return result;
        if (r != 0)
            return lost(c, r);
        if ((r = libmcpc_flush(c, false)) < 0)
            return lost(c, r);
        uint64_t now = now_ms();
        if (now >= deadline)
            return libmcpc_fail(c, -ETIMEDOUT, "no answer from mcpd within %d ms", timeout_ms);
        struct pollfd pfd = {c->fd, (short)(POLLIN | (mcpc_want_write(c) ? POLLOUT : 0)), 0};
        int pr = poll(&pfd, 1, (int)(deadline - now));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return libmcpc_fail(c, -errno, "poll: %s", strerror(errno));
        if (pr > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)) && (r = read_some(c)) < 0)
            return lost(c, r);
    }
}

int mcpc_process(mcpc_client *c, int timeout_ms)
{
    int r;

    if (c->fd < 0)
        return libmcpc_fail(c, -ENOTCONN, "not connected to mcpd");
    /* Id 0 is never used for a request: this only drains notifications. */
    r = wait_response_until(c, 0, NULL, timeout_ms);
    return r == -ETIMEDOUT ? 0 : r;
}

/* A blocking request the 2025 way: sent, and its answer waited for by id. */
static int request_wait(mcpc_client *c, const char *method, yajl_val params, char **resultp)
{
    StrBuf sb = STRBUF_INIT;
    uint64_t id = ++c->next_id;
    int r;

    if (c->fd < 0)
        return libmcpc_fail(c, -ENOTCONN, "not connected to mcpd");
    jsonrpc_write_request(&sb, id, method, params);
    r = libmcpc_send_sb(c, &sb, true);
    strbuf_deinit(&sb);
    if (r < 0)
        return r;
    return wait_response_until(c, id, resultp, c->timeout_ms);
}

static int request_modern(mcpc_client *c, const char *method, yajl_val params, char **resultp);

static int request_val(mcpc_client *c, const char *method, yajl_val params, char **resultp)
{
    if (c->era == MCPC_ERA_2026)
        return request_modern(c, method, params, resultp);
    return request_wait(c, method, params, resultp);
}

static int parse_object(mcpc_client *c, const char *what, const char *text, yajl_val *outp)
{
    _cleanup_free_ char *err = NULL;

    *outp = NULL;
    if (!text)
        return 0;
    if (!(*outp = json_parse(text, &err)))
        return libmcpc_fail(c, -EINVAL, "%s are not valid JSON: %s", what, err);
    if (!YAJL_IS_OBJECT(*outp)) {
        *outp = json_free(*outp);
        return libmcpc_fail(c, -EINVAL, "%s must be a JSON object", what);
    }
    return 0;
}

int mcpc_request(mcpc_client *c, const char *method, const char *params_json, char **resultp)
{
    _cleanup_json_ yajl_val params = NULL;
    int r;

    c->errmsg[0] = '\0';
    if ((r = parse_object(c, "params", params_json, &params)) < 0)
        return r;
    return request_val(c, method, params, resultp);
}

static yajl_val init_params(mcpc_client *c)
{
    yajl_val p = json_object_new(), info = json_object_new(), meta = json_object_new();
    yajl_val caps = json_object_new();

    json_object_set(p, "protocolVersion", json_string_new(MCP_PROTOCOL_LATEST));
    if (c->server_request) {
        /* With a handler, the agent can answer what servers ask. */
        json_object_set(caps, "sampling", json_object_new());
        json_object_set(caps, "elicitation", json_object_new());
        json_object_set(caps, "roots", json_object_new());
    }
    json_object_set(p, "capabilities", caps);
    json_object_set(info, "name", json_string_new(c->client_name));
    json_object_set(info, "version", json_string_new(c->client_version));
    json_object_set(p, "clientInfo", info);
    if (c->cwd)
        json_object_set(meta, MCPD_META_CWD, json_string_new(c->cwd));
    if (c->session_in)
        json_object_set(meta, MCPD_META_SESSION, json_string_new(c->session_in));
    if (c->profile)
        json_object_set(meta, MCPD_META_PROFILE, json_string_new(c->profile));
    json_object_set(p, "_meta", meta);
    return p;
}

static int open_socket(mcpc_client *c)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    if (strlen(c->socket_path) >= sizeof(sa.sun_path))
        return libmcpc_fail(c, -ENAMETOOLONG, "socket path %s is too long", c->socket_path);
    strcpy(sa.sun_path, c->socket_path);
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return libmcpc_fail(c, -errno, "socket: %s", strerror(errno));
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        close(c->fd);
        c->fd = -1;
        return libmcpc_fail(
            c, -e, "cannot connect to mcpd at %s: %s%s", c->socket_path, strerror(e),
            e == ENOENT || e == ECONNREFUSED
                ? " (is mcpd running? start it with `mcpd` or `systemctl --user start "
                  "mcpd.socket`)"
                : "");
    }
    /* Non-blocking: the asynchronous API never waits; blocking calls poll. */
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    return 0;
}

/* The 2026 era has no handshake: server/discover says whether mcpd serves it. */
static int connect_modern(mcpc_client *c)
{
    _cleanup_json_ yajl_val params = json_object_new();
    _cleanup_free_ char *text = NULL;
    int r;

    libmcpc_stamp_meta(c, params);
    r = request_wait(c, "server/discover", params, &text);
    if ((r = libmcpc_discover_check(c, r, text)) != 0) {
        close(c->fd);
        c->fd = -1;
    }
    return r;
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
    if (c->era == MCPC_ERA_2026)
        return connect_modern(c);
    params = init_params(c);
    r = request_val(c, "initialize", params, &text);
    if (r != 0) {
        close(c->fd);
        c->fd = -1;
        return r;
    }
    result = json_parse(text, NULL);
    token = json_get_string(json_get_object(result, "_meta"), MCPD_META_SESSION);
    if (token)
        c->session = xstrdup(token);
    return send_notification(c, "notifications/initialized", NULL);
}

int mcpc_list_tools(mcpc_client *c, char **resultp)
{
    return mcpc_request(c, "tools/list", NULL, resultp);
}

static yajl_val call_params(mcpc_client *c, const char *name, const char *arguments_json, int *rp)
{
    yajl_val params, args;

    if ((*rp = parse_object(c, "arguments", arguments_json, &args)) < 0)
        return NULL;
    params = json_object_new();
    json_object_set(params, "name", json_string_new(name));
    json_object_set(params, "arguments", args ? args : json_object_new());
    return params;
}

int mcpc_call_tool(mcpc_client *c, const char *name, const char *arguments_json, char **resultp,
                   int *is_errorp)
{
    _cleanup_json_ yajl_val params = NULL, res = NULL;
    int r;

    c->errmsg[0] = '\0';
    if (!(params = call_params(c, name, arguments_json, &r)))
        return r;
    r = request_val(c, "tools/call", params, resultp);
    if (r == 0 && is_errorp) {
        res = json_parse(*resultp, NULL);
        *is_errorp = YAJL_IS_TRUE(json_get(res, "isError"));
    }
    return r;
}

int mcpc_status(mcpc_client *c, char **resultp)
{
    return mcpc_request(c, MCPD_METHOD_STATUS, NULL, resultp);
}

/* ---- prompts, resources, completion ---- */

/*
 * Params with one string member key (omitted when value is NULL) and, when obj_key is set, an
 * object member parsed from obj_json (NULL: {} when obj_required, else omitted).
 */
static yajl_val str_params(mcpc_client *c, const char *key, const char *value, const char *obj_key,
                           const char *obj_json, bool obj_required, int *rp)
{
    yajl_val params, obj = NULL;

    *rp = 0;
    if (obj_key && (*rp = parse_object(c, obj_key, obj_json, &obj)) < 0)
        return NULL;
    params = json_object_new();
    if (value)
        json_object_set(params, key, json_string_new(value));
    if (obj_key && (obj || obj_required))
        json_object_set(params, obj_key, obj ? obj : json_object_new());
    return params;
}

static int str_request(mcpc_client *c, const char *method, const char *key, const char *value,
                       char **resultp)
{
    _cleanup_json_ yajl_val params = NULL;
    int r;

    c->errmsg[0] = '\0';
    params = str_params(c, key, value, NULL, NULL, false, &r);
    return request_val(c, method, params, resultp);
}

int mcpc_list_prompts(mcpc_client *c, const char *cursor, char **resultp)
{
    return str_request(c, "prompts/list", "cursor", cursor, resultp);
}

int mcpc_list_resources(mcpc_client *c, const char *cursor, char **resultp)
{
    return str_request(c, "resources/list", "cursor", cursor, resultp);
}

int mcpc_list_resource_templates(mcpc_client *c, const char *cursor, char **resultp)
{
    return str_request(c, "resources/templates/list", "cursor", cursor, resultp);
}

int mcpc_read_resource(mcpc_client *c, const char *uri, char **resultp)
{
    if (!uri)
        return libmcpc_fail(c, -EINVAL, "a resource needs a URI");
    return str_request(c, "resources/read", "uri", uri, resultp);
}

int mcpc_subscribe_resource(mcpc_client *c, const char *uri, int on)
{
    _cleanup_free_ char *out = NULL;

    if (!uri)
        return libmcpc_fail(c, -EINVAL, "a subscription needs a URI");
    return str_request(c, on ? "resources/subscribe" : "resources/unsubscribe", "uri", uri, &out);
}

int mcpc_get_prompt(mcpc_client *c, const char *name, const char *arguments_json, char **resultp)
{
    _cleanup_json_ yajl_val params = NULL;
    int r;

    c->errmsg[0] = '\0';
    if (!name)
        return libmcpc_fail(c, -EINVAL, "a prompt needs a name");
    if (!(params = str_params(c, "name", name, "arguments", arguments_json, false, &r)))
        return r;
    return request_val(c, "prompts/get", params, resultp);
}

static yajl_val complete_params(mcpc_client *c, const char *ref_json, const char *argument,
                                const char *value, int *rp)
{
    yajl_val params, arg;

    if (!ref_json || !argument) {
        *rp = libmcpc_fail(c, -EINVAL, "a completion needs a ref and an argument name");
        return NULL;
    }
    if (!(params = str_params(c, NULL, NULL, "ref", ref_json, true, rp)))
        return NULL;
    arg = json_object_new();
    json_object_set(arg, "name", json_string_new(argument));
    json_object_set(arg, "value", json_string_new(value ? value : ""));
    json_object_set(params, "argument", arg);
    return params;
}

int mcpc_complete(mcpc_client *c, const char *ref_json, const char *argument, const char *value,
                  char **resultp)
{
    _cleanup_json_ yajl_val params = NULL;
    int r;

    c->errmsg[0] = '\0';
    if (!(params = complete_params(c, ref_json, argument, value, &r)))
        return r;
    return request_val(c, "completion/complete", params, resultp);
}

/* ---- asynchronous API ---- */

static int request_async(mcpc_client *c, const char *method, yajl_val params, mcpc_result_fn fn,
                         mcpc_progress_fn progress, void *userdata, unsigned long long *idp)
{
    StrBuf sb = STRBUF_INIT;
    Pending *p;
    uint64_t id = ++c->next_id;
    int r;

    if (c->fd < 0)
        return libmcpc_fail(c, -ENOTCONN, "not connected to mcpd");
    if (!fn)
        return libmcpc_fail(c, -EINVAL, "an asynchronous request needs a result callback");
    if (c->era == MCPC_ERA_2026)
        libmcpc_stamp_meta(c, params);
    if (progress) {
        /* The request id doubles as the progress token: unique on this connection. */
        yajl_val meta = json_get_object(params, "_meta");
        if (!meta) {
            meta = json_object_new();
            json_object_set(params, "_meta", meta);
        }
        json_object_set(meta, MCP_META_PROGRESS_TOKEN, json_int_new((int64_t)id));
    }
    jsonrpc_write_request(&sb, id, method, params);
    r = libmcpc_send_sb(c, &sb, false);
    strbuf_deinit(&sb);
    if (r < 0)
        return r;
    p = xcalloc(1, sizeof(*p));
    p->id = p->wire_id = id;
    if (c->era == MCPC_ERA_2026) {
        p->method = xstrdup(method);
        p->params = json_copy(params);
    }
    p->fn = fn;
    p->progress = progress;
    p->userdata = userdata;
    p->deadline_ms = now_ms() + (uint64_t)c->timeout_ms;
    p->next = c->pending;
    c->pending = p;
    c->n_pending++;
    if (idp)
        *idp = id;
    return 0;
}

/* A blocking request of the 2026 era waits on the asynchronous path, which fulfils MRTR. */
typedef struct SyncWait {
    bool done;
    int status;
    char *json;
} SyncWait;

static void sync_done(void *userdata, unsigned long long id, int status, const char *json)
{
    SyncWait *w = userdata;

    (void)id;
    w->done = true;
    w->status = status;
    w->json = json ? xstrdup(json) : NULL;
}

static int request_modern(mcpc_client *c, const char *method, yajl_val params, char **resultp)
{
    _cleanup_json_ yajl_val own = params ? json_copy(params) : json_object_new();
    _cleanup_json_ yajl_val err = NULL;
    unsigned long long id = 0;
    SyncWait w = {0};
    int r;

    if ((r = request_async(c, method, own, sync_done, NULL, &w, &id)) < 0)
        return r;
    while (!w.done) {
        struct pollfd pfd = {c->fd, (short)(POLLIN | (mcpc_want_write(c) ? POLLOUT : 0)), 0};
        if (poll(&pfd, 1, mcpc_next_timeout(c)) < 0 && errno != EINTR) {
            r = -errno;
            (void)mcpc_cancel(c, id); /* answers w: nothing points at this frame afterwards */
            free(w.json);
            return libmcpc_fail(c, r, "poll: %s", strerror(-r));
        }
        (void)mcpc_dispatch(c); /* a lost connection answers w with -ECONNRESET */
    }
    if (w.status == 0) {
        *resultp = w.json;
        return 0;
    }
    if (w.status == MCPC_E_RPC) {
        yajl_val code;
        err = json_parse(w.json, NULL);
        code = json_get(err, "code");
        r = libmcpc_fail(c, MCPC_E_RPC, "%s (code %lld)",
                         json_get_string(err, "message") ?: "error",
                         YAJL_IS_INTEGER(code) ? (long long)code->u.number.i : 0LL);
    } else if (w.status == -ETIMEDOUT) {
        r = libmcpc_fail(c, -ETIMEDOUT, "no answer from mcpd within %d ms", c->timeout_ms);
    } else {
        r = c->errmsg[0] ? w.status : libmcpc_fail(c, w.status, "%s", strerror(-w.status));
    }
    free(w.json);
    return r;
}

int mcpc_request_async(mcpc_client *c, const char *method, const char *params_json,
                       mcpc_result_fn fn, void *userdata, unsigned long long *idp)
{
    _cleanup_json_ yajl_val params = NULL;
    int r;

    c->errmsg[0] = '\0';
    if ((r = parse_object(c, "params", params_json, &params)) < 0)
        return r;
    if (!params)
        params = json_object_new();
    return request_async(c, method, params, fn, NULL, userdata, idp);
}

int mcpc_call_tool_async(mcpc_client *c, const char *name, const char *arguments_json,
                         mcpc_result_fn fn, mcpc_progress_fn progress, void *userdata,
                         unsigned long long *idp)
{
    _cleanup_json_ yajl_val params = NULL;
    int r;

    c->errmsg[0] = '\0';
    if (!(params = call_params(c, name, arguments_json, &r)))
        return r;
    return request_async(c, "tools/call", params, fn, progress, userdata, idp);
}

int mcpc_get_prompt_async(mcpc_client *c, const char *name, const char *arguments_json,
                          mcpc_result_fn fn, void *userdata, unsigned long long *idp)
{
    _cleanup_json_ yajl_val params = NULL;
    int r;

    c->errmsg[0] = '\0';
    if (!name)
        return libmcpc_fail(c, -EINVAL, "a prompt needs a name");
    if (!(params = str_params(c, "name", name, "arguments", arguments_json, false, &r)))
        return r;
    return request_async(c, "prompts/get", params, fn, NULL, userdata, idp);
}

int mcpc_read_resource_async(mcpc_client *c, const char *uri, mcpc_result_fn fn, void *userdata,
                             unsigned long long *idp)
{
    _cleanup_json_ yajl_val params = NULL;
    int r;

    c->errmsg[0] = '\0';
    if (!uri)
        return libmcpc_fail(c, -EINVAL, "a resource needs a URI");
    params = str_params(c, "uri", uri, NULL, NULL, false, &r);
    return request_async(c, "resources/read", params, fn, NULL, userdata, idp);
}

int mcpc_complete_async(mcpc_client *c, const char *ref_json, const char *argument,
                        const char *value, mcpc_result_fn fn, void *userdata,
                        unsigned long long *idp)
{
    _cleanup_json_ yajl_val params = NULL;
    int r;

    c->errmsg[0] = '\0';
    if (!(params = complete_params(c, ref_json, argument, value, &r)))
        return r;
    return request_async(c, "completion/complete", params, fn, NULL, userdata, idp);
}

int mcpc_cancel(mcpc_client *c, unsigned long long id)
{
    Pending *p = pending_find(c, id);
    _cleanup_json_ yajl_val params = NULL;
    int r;

    if (!p)
        return libmcpc_fail(c, -ENOENT, "no request %llu is pending", id);
    libmcpc_pending_unlink(c, p);
    params = json_object_new();
    json_object_set(params, "requestId", json_int_new((int64_t)p->wire_id));
    json_object_set(params, "reason", json_string_new("cancelled by the client"));
    r = send_notification(c, "notifications/cancelled", params);
    libmcpc_pending_finish(c, p, -ECANCELED, NULL);
    return r;
}

void mcpc_set_server_request_handler(mcpc_client *c, mcpc_server_request_fn fn, void *userdata)
{
    c->server_request = fn;
    c->server_request_ud = userdata;
}

static int respond(mcpc_client *c, const char *id_json, yajl_val result, int code,
                   const char *message)
{
    _cleanup_json_ yajl_val id = NULL;
    StrBuf sb = STRBUF_INIT;
    int r;

    if (!id_json || !(id = json_parse(id_json, NULL)))
        return libmcpc_fail(c, -EINVAL, "the request id is not valid JSON");
    if (YAJL_IS_STRING(id) && (r = libmcpc_input_answer(c, id->u.string, result, message)) != 0)
        return r < 0 ? r : 0;
    if (message)
        jsonrpc_write_error(&sb, id, code, message, NULL);
    else
        jsonrpc_write_result(&sb, id, result);
    r = libmcpc_send_sb(c, &sb, false);
    strbuf_deinit(&sb);
    return r;
}

int mcpc_respond(mcpc_client *c, const char *id_json, const char *result_json)
{
    _cleanup_json_ yajl_val result = NULL;
    int r;

    if ((r = parse_object(c, "result", result_json, &result)) < 0)
        return r;
    if (!result)
        result = json_object_new();
    return respond(c, id_json, result, 0, NULL);
}

int mcpc_respond_error(mcpc_client *c, const char *id_json, int code, const char *message)
{
    return respond(c, id_json, NULL, code, message ? message : "error");
}

/* Requests past their deadline are answered -ETIMEDOUT and cancelled at mcpd. */
static void expire_pending(mcpc_client *c)
{
    uint64_t now = now_ms();
    Pending *p;

    for (;;) {
        for (p = c->pending; p && p->deadline_ms > now; p = p->next)
            ;
        if (!p)
            return;
        libmcpc_pending_unlink(c, p);
        yajl_val params = json_object_new();
        json_object_set(params, "requestId", json_int_new((int64_t)p->wire_id));
        json_object_set(params, "reason", json_string_new("timeout"));
        (void)send_notification(c, "notifications/cancelled", params);
        json_free(params);
        libmcpc_pending_finish(c, p, -ETIMEDOUT, NULL);
    }
}

int mcpc_dispatch(mcpc_client *c)
{
    int r, unused = 0;

    if (c->fd < 0)
        return libmcpc_fail(c, -ENOTCONN, "not connected to mcpd");
    if ((r = libmcpc_flush(c, false)) < 0)
        return lost(c, r);
    /* Bounded: a flood from mcpd cannot keep the caller's loop here forever. */
    for (int i = 0; i < 64; i++) {
        int got = read_some(c);
        if (got < 0)
            return lost(c, got);
        if ((r = drain_lines(c, 0, NULL, &unused)) < 0)
            return lost(c, r);
        if (!got)
            break;
    }
    expire_pending(c);
    return lost(c, libmcpc_flush(c, false));
}

int mcpc_want_write(const mcpc_client *c)
{
    return c->out_off < c->out.len;
}

int mcpc_pending(const mcpc_client *c)
{
    return c->n_pending;
}

int mcpc_next_timeout(const mcpc_client *c)
{
    uint64_t now = now_ms(), first = UINT64_MAX;

    for (const Pending *p = c->pending; p; p = p->next)
        first = MIN(first, p->deadline_ms);
    if (first == UINT64_MAX)
        return -1;
    return first <= now ? 0 : (int)MIN(first - now, (uint64_t)INT32_MAX);
}

/* ---- the rest ---- */

int mcpc_set_protocol_era(mcpc_client *c, int era)
{
    if (era != MCPC_ERA_2025 && era != MCPC_ERA_2026)
        return libmcpc_fail(c, -EINVAL, "unknown protocol era %d (MCPC_ERA_2025 or MCPC_ERA_2026)",
                            era);
    if (c->fd >= 0)
        return libmcpc_fail(c, -EISCONN, "the era is chosen before mcpc_connect");
    c->era = era;
    return 0;
}

int mcpc_protocol_era(const mcpc_client *c)
{
    return c->era;
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
    /* Callbacks still pending hear of it, so their userdata can be released. */
    pending_fail_all(c, -ECONNRESET);
    if (c->fd >= 0)
        close(c->fd);
    framer_deinit(&c->in);
    strbuf_deinit(&c->out);
    free(c->socket_path);
    free(c->client_name);
    free(c->client_version);
    free(c->cwd);
    free(c->session_in);
    free(c->profile);
    free(c->session);
    free(c->session_env);
    free(c);
}

void mcpc_string_free(char *s)
{
    free(s);
}
