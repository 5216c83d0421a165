// SPDX-License-Identifier: MIT
// http-server: a Streamable HTTP MCP test server on evhttp, with faults chosen by flags.

/*
 * What the real servers do not show on demand: a session that expires (404), a body that
 * stalls past the client's timeout, a response stream dropped mid-event (then resumed by
 * GET with Last-Event-ID), a 401 with WWW-Authenticate, a redirect to another origin. Every
 * request is logged to --log as one line, so a test can check what reached this origin.
 * Standalone (libevent, yajl, libc): mcpd's own code cannot hide a matching bug here.
 *
 * Tools: echo {text} (JSON answer), sse_echo {text} (SSE answer with a priming event), slow
 * (headers and half a body, then nothing), drop (priming event, half an event, connection
 * closed; the answer waits for the resuming GET), progress (3 progress events, then answer),
 * announce (with --get-stream: list_changed and a ping request on the standalone GET stream).
 * With --legacy it speaks HTTP+SSE instead: GET /sse names the POST endpoint, answers go on
 * that stream; --endpoint makes it name another one (such as another origin).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <yajl/yajl_tree.h>

static struct {
    int port;
    long expire_after; /* the first session ends after this many POSTs (0: never) */
    const char *token; /* required bearer token, or NULL */
    const char *redirect_to;
    const char *log_path;
    const char *port_file;
    bool get_stream;      /* keep a standalone GET stream open (else 405) */
    bool legacy;          /* the 2024-11-05 HTTP+SSE transport instead: GET /sse, POST /message */
    const char *endpoint; /* legacy: what the endpoint event names (default: this origin) */
    bool huge_answers;    /* echo and sse_echo answer with more than mcpd's 16 MiB bound */
    long auth_flood;      /* with --token: this many junk WWW-Authenticate headers follow */
    bool html_answers;    /* echo answers 200 with a web page, as a site's front page would */
} opt;

/* Legacy: the open GET streams by their sessionId, and the one a POST answers on. */
#define LEGACY_MAX 8
static struct evhttp_request *legacy_streams[LEGACY_MAX];
static struct evhttp_request *legacy_out;

static struct {
    struct event_base *base;
    FILE *log;
    unsigned long next_session;
    char session[64]; /* the live session, "" if none */
    long posts_in_session;
    bool expired_once;
    char dropped_event_id[64]; /* the drop tool's stream, waiting to be resumed */
    char dropped_reply[2048];
    unsigned long next_event;
    struct evhttp_request *get_req; /* the open standalone GET stream, or NULL */
    bool late_tool;                 /* announce was called: tools/list has "late" */
} st;

static const char *hdr(struct evhttp_request *req, const char *name)
{
    return evhttp_find_header(evhttp_request_get_input_headers(req), name);
}

static void log_request(struct evhttp_request *req, const char *method)
{
    const char *a = hdr(req, "Authorization"), *x = hdr(req, "X-Test-Header");
    const char *l = hdr(req, "Last-Event-ID"), *s = hdr(req, "Mcp-Session-Id");
    const char *v = hdr(req, "Mcp-Protocol-Version");

    if (!st.log)
        return;
    fprintf(st.log, "%s %s auth=%s x-test=%s last-event-id=%s session=%s version=%s\n",
            evhttp_request_get_command(req) == EVHTTP_REQ_POST  ? "POST"
            : evhttp_request_get_command(req) == EVHTTP_REQ_GET ? "GET"
                                                                : "DELETE",
            method ? method : "-", a ? a : "-", x ? x : "-", l ? l : "-", s ? s : "-", v ? v : "-");
    fflush(st.log);
}

static void sse_send(struct evhttp_request *req, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void reply(struct evhttp_request *req, int code, const char *ctype, const char *body)
{
    struct evbuffer *b = evbuffer_new();
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);

    if (legacy_out && code == 200 && body) {
        /* The legacy transport answers on the GET stream; the POST only gets 202. */
        sse_send(legacy_out, "event: message\ndata: %s\n\n", body);
        code = 202;
        ctype = "text/plain";
        body = "Accepted";
    }

    if (ctype)
        evhttp_add_header(out, "Content-Type", ctype);
    if (st.session[0])
        evhttp_add_header(out, "Mcp-Session-Id", st.session);
    if (body)
        evbuffer_add(b, body, strlen(body));
    evhttp_send_reply(req, code, code == 202 ? "Accepted" : "OK", b);
    evbuffer_free(b);
}

/* JSON string escaping for the few strings echoed back. */
static void json_str(char *out, size_t n, const char *s)
{
    size_t o = 0;

    out[o++] = '"';
    for (; *s && o + 8 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, n - o, "\\%c", c);
        else if (c < 0x20)
            o += (size_t)snprintf(out + o, n - o, "\\u%04x", c);
        else
            out[o++] = (char)c;
    }
    out[o++] = '"';
    out[o] = '\0';
}

static void id_text(char *out, size_t n, yajl_val id)
{
    if (YAJL_IS_STRING(id))
        json_str(out, n, id->u.string);
    else if (YAJL_IS_INTEGER(id))
        snprintf(out, n, "%lld", (long long)YAJL_GET_INTEGER(id));
    else
        snprintf(out, n, "null");
}

static yajl_val get(yajl_val obj, const char *key)
{
    const char *path[] = {key, NULL};
    return yajl_tree_get(obj, path, yajl_t_any);
}

static const char *tools_json =
    "{\"tools\":["
    "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":"
    "\"string\"}}}},"
    "{\"name\":\"sse_echo\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"slow\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"drop\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"progress\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"announce\",\"inputSchema\":{\"type\":\"object\"}}";

static void text_result(char *out, size_t n, const char *idt, const char *text)
{
    char t[1024];

    json_str(t, sizeof(t), text);
    snprintf(out, n,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\","
             "\"text\":%s}]}}",
             idt, t);
}

static void sse_start(struct evhttp_request *req)
{
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);

    evhttp_add_header(out, "Content-Type", "text/event-stream");
    evhttp_add_header(out, "Cache-Control", "no-cache");
    if (st.session[0])
        evhttp_add_header(out, "Mcp-Session-Id", st.session);
    evhttp_send_reply_start(req, 200, "OK");
}

static void sse_send(struct evhttp_request *req, const char *fmt, ...)
{
    struct evbuffer *b = evbuffer_new();
    va_list ap;

    va_start(ap, fmt);
    evbuffer_add_vprintf(b, fmt, ap);
    va_end(ap);
    evhttp_send_reply_chunk(req, b);
    evbuffer_free(b);
}

static void drop_connection(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    evhttp_connection_free(evhttp_request_get_connection(arg));
}

static void error_reply(struct evhttp_request *req, const char *idt, int code, const char *msg)
{
    char body[512];

    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":\"%s\"}}", idt,
             code, msg);
    reply(req, 200, "application/json", body);
}

static void on_slow_closed(struct evhttp_connection *conn, void *arg)
{
    (void)conn, (void)arg;
    if (st.log) {
        fprintf(st.log, "CLOSED slow\n");
        fflush(st.log);
    }
}

/* Past mcpd's 16 MiB message bound (common/jsonrpc.h) by 1 MiB. */
#define HUGE_ANSWER_BYTES (17u * 1024u * 1024u)

/*
 * --huge-answers: echo answers with a JSON body past the bound; sse_echo with a priming event,
 * then one event past the bound, and then keeps the stream open (a client that only drops the
 * event waits for its timeout).
 */
static void huge_answer(struct evhttp_request *req, const char *idt, bool sse)
{
    struct evbuffer *b = evbuffer_new();
    char *fill = malloc(HUGE_ANSWER_BYTES);

    memset(fill, 'a', HUGE_ANSWER_BYTES);
    evbuffer_add_printf(b,
                        "%s{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":"
                        "\"text\",\"text\":\"",
                        sse ? "event: message\ndata: " : "", idt);
    evbuffer_add(b, fill, HUGE_ANSWER_BYTES);
    evbuffer_add_printf(b, "\"}]}}%s", sse ? "\n\n" : "");
    free(fill);
    if (sse) {
        sse_start(req);
        sse_send(req, "id: e%lu\ndata: \n\n", ++st.next_event);
        evhttp_send_reply_chunk(req, b);
    } else {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "application/json");
        evhttp_send_reply(req, 200, "OK", b);
    }
    evbuffer_free(b);
}

static void call_tool(struct evhttp_request *req, const char *idt, yajl_val params)
{
    const char *name = YAJL_GET_STRING(get(params, "name"));
    yajl_val args = get(params, "arguments"), text = get(args, "text");
    char body[2048];
    struct timeval tv = {0, 100 * 1000};

    if (!name)
        name = "";
    if (opt.huge_answers && (!strcmp(name, "echo") || !strcmp(name, "sse_echo")))
        return huge_answer(req, idt, !strcmp(name, "sse_echo"));
    if (opt.html_answers && !strcmp(name, "echo"))
        return reply(req, 200, "text/html; charset=utf-8", "<html><body>Welcome</body></html>");
    if (!strcmp(name, "echo") || !strcmp(name, "sse_echo")) {
        text_result(body, sizeof(body), idt, YAJL_IS_STRING(text) ? text->u.string : "");
        if (!strcmp(name, "echo"))
            return reply(req, 200, "application/json", body);
        sse_start(req);
        sse_send(req, ": a comment\nid: e%lu\nretry: 300\ndata: \n\n", ++st.next_event);
        sse_send(req, "event: message\nid: e%lu\ndata: %s\n\n", ++st.next_event, body);
        evhttp_send_reply_end(req);
    } else if (!strcmp(name, "announce")) {
        /* Server-initiated traffic on the GET stream: a notification and a request. */
        st.late_tool = true;
        if (st.get_req) {
            sse_send(st.get_req,
                     "event: message\nid: e%lu\ndata: {\"jsonrpc\":\"2.0\","
                     "\"method\":\"notifications/tools/list_changed\"}\n\n",
                     ++st.next_event);
            sse_send(st.get_req,
                     "id: e%lu\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-ping-1\","
                     "\"method\":\"ping\"}\n\n",
                     ++st.next_event);
        }
        text_result(body, sizeof(body), idt, st.get_req ? "announced" : "no GET stream");
        reply(req, 200, "application/json", body);
    } else if (!strcmp(name, "slow")) {
        /* Headers and a first chunk at once, the rest never: only a body timeout ends it. */
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "application/json");
        evhttp_send_reply_start(req, 200, "OK");
        sse_send(req, "{\"jsonrpc\":\"2.0\",\"id\":%s,", idt);
        /* The client gave up on the body when this connection closes. */
        evhttp_connection_set_closecb(evhttp_request_get_connection(req), on_slow_closed, NULL);
    } else if (!strcmp(name, "drop")) {
        snprintf(st.dropped_event_id, sizeof(st.dropped_event_id), "e%lu", ++st.next_event);
        text_result(st.dropped_reply, sizeof(st.dropped_reply), idt, "resumed after a drop");
        sse_start(req);
        sse_send(req, "id: %s\nretry: 200\ndata: \n\nevent: message\ndata: {\"jsonrpc\":",
                 st.dropped_event_id);
        event_base_once(st.base, -1, EV_TIMEOUT, drop_connection, req, &tv);
    } else if (!strcmp(name, "progress")) {
        yajl_val meta = get(params, "_meta"), tok = get(meta, "progressToken");
        char tt[128];
        id_text(tt, sizeof(tt), tok);
        sse_start(req);
        for (int i = 1; i <= 3; i++)
            sse_send(req,
                     "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                     "progress\",\"params\":{\"progressToken\":%s,\"progress\":%d,\"total\":3}}"
                     "\n\n",
                     tt, i);
        text_result(body, sizeof(body), idt, "progress done");
        sse_send(req, "data: %s\n\n", body);
        evhttp_send_reply_end(req);
    } else {
        error_reply(req, idt, -32602, "Unknown tool");
    }
}

/* The session rules of the spec: 400 without one, 404 for one that is gone. */
static bool check_session(struct evhttp_request *req, bool initialize)
{
    const char *s = hdr(req, "Mcp-Session-Id");

    if (opt.legacy)
        return true; /* the sessionId in the POST URL is the legacy transport's session */
    if (initialize) {
        snprintf(st.session, sizeof(st.session), "sess-%lu", ++st.next_session);
        st.posts_in_session = 0;
        return true;
    }
    if (!s) {
        reply(req, 400, "text/plain", "missing session");
        return false;
    }
    if (strcmp(s, st.session) != 0) {
        reply(req, 404, "text/plain", "no such session");
        return false;
    }
    if (opt.expire_after && !st.expired_once && ++st.posts_in_session > opt.expire_after) {
        st.expired_once = true;
        st.session[0] = '\0';
        reply(req, 404, "text/plain", "session expired");
        return false;
    }
    return true;
}

static bool check_auth(struct evhttp_request *req)
{
    char want[512], challenge[512];
    const char *a = hdr(req, "Authorization");

    if (!opt.token)
        return true;
    snprintf(want, sizeof(want), "Bearer %s", opt.token);
    if (a && !strcmp(a, want))
        return true;
    snprintf(challenge, sizeof(challenge),
             "Bearer resource_metadata=\"http://127.0.0.1:%d/.well-known/"
             "oauth-protected-resource\", scope=\"mcp:tools\"",
             opt.port);
    evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate", challenge);
    for (long i = 0; i < opt.auth_flood; i++) {
        char junk[256];
        snprintf(junk, sizeof(junk), "Junk%ld realm=\"%0200ld\"", i, i);
        evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate", junk);
    }
    reply(req, 401, "text/plain", "unauthorized");
    return false;
}

static void handle_post(struct evhttp_request *req)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    char *text = malloc(n + 1), idt[256], body[8192];
    yajl_val msg, id;
    const char *method;

    evbuffer_copyout(in, text, n);
    text[n] = '\0';
    msg = yajl_tree_parse(text, NULL, 0);
    free(text);
    method = YAJL_GET_STRING(get(msg, "method"));
    log_request(req, method ? method : get(msg, "result") ? "(response)" : NULL);
    if (opt.redirect_to) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Location", opt.redirect_to);
        reply(req, 307, "text/plain", "moved");
        goto out;
    }
    if (!check_auth(req) || !check_session(req, method && !strcmp(method, "initialize")))
        goto out;
    id = get(msg, "id");
    id_text(idt, sizeof(idt), id);
    if (!method || !id) {
        reply(req, 202, NULL, NULL); /* notifications and responses */
    } else if (!strcmp(method, "initialize")) {
        snprintf(body, sizeof(body),
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":\"2025-11-25\","
                 "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"http-test-server\","
                 "\"version\":\"1.0\"}}}",
                 idt);
        reply(req, 200, "application/json", body);
    } else if (!strcmp(method, "tools/list")) {
        snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s%s]}}", idt,
                 tools_json,
                 st.late_tool ? ",{\"name\":\"late\",\"inputSchema\":{\"type\":\"object\"}}" : "");
        reply(req, 200, "application/json", body);
    } else if (!strcmp(method, "tools/call")) {
        call_tool(req, idt, get(msg, "params"));
    } else if (!strcmp(method, "ping")) {
        snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", idt);
        reply(req, 200, "application/json", body);
    } else {
        error_reply(req, idt, -32601, "Method not found");
    }
out:
    yajl_tree_free(msg);
}

static void on_get_closed(struct evhttp_connection *conn, void *arg)
{
    (void)conn, (void)arg;
    st.get_req = NULL;
}

static void handle_get(struct evhttp_request *req)
{
    const char *last = hdr(req, "Last-Event-ID");

    log_request(req, NULL);
    if (!check_auth(req))
        return;
    if (last && st.dropped_event_id[0] && !strcmp(last, st.dropped_event_id)) {
        sse_start(req);
        sse_send(req, "id: e%lu\ndata: \n\n", ++st.next_event);
        sse_send(req, "event: message\nid: e%lu\ndata: %s\n\n", ++st.next_event, st.dropped_reply);
        evhttp_send_reply_end(req);
        st.dropped_event_id[0] = '\0';
        return;
    }
    if (opt.get_stream && !last && !st.get_req) {
        sse_start(req);
        sse_send(req, "id: e%lu\nretry: 1000\ndata: \n\n", ++st.next_event);
        st.get_req = req;
        evhttp_connection_set_closecb(evhttp_request_get_connection(req), on_get_closed, NULL);
        return;
    }
    /* No standalone stream here: the spec's 405, which a client must survive. */
    reply(req, 405, "text/plain", "no GET stream");
}

static void on_legacy_closed(struct evhttp_connection *conn, void *arg)
{
    (void)conn;
    legacy_streams[(intptr_t)arg] = NULL;
}

static void legacy_get(struct evhttp_request *req)
{
    intptr_t k = 0;
    char ep[256];

    log_request(req, NULL);
    while (k < LEGACY_MAX && legacy_streams[k])
        k++;
    if (strncmp(evhttp_request_get_uri(req), "/sse", 4) != 0 || k == LEGACY_MAX) {
        reply(req, 404, "text/plain", "not found");
        return;
    }
    snprintf(ep, sizeof(ep), "%s?sessionId=%ld", opt.endpoint ? opt.endpoint : "/message", (long)k);
    sse_start(req);
    sse_send(req, ": legacy stream\nevent: endpoint\ndata: %s\n\n", ep);
    legacy_streams[k] = req;
    evhttp_connection_set_closecb(evhttp_request_get_connection(req), on_legacy_closed, (void *)k);
}

static void legacy_post(struct evhttp_request *req)
{
    const char *q = strstr(evhttp_request_get_uri(req), "sessionId=");
    long k = q ? atol(q + 10) : -1;

    if (strncmp(evhttp_request_get_uri(req), "/message", 8) != 0 || k < 0 || k >= LEGACY_MAX ||
        !legacy_streams[k]) {
        log_request(req, "(not an endpoint)");
        reply(req, 404, "text/plain", "not found");
        return;
    }
    legacy_out = legacy_streams[k];
    handle_post(req);
    legacy_out = NULL;
}

static void on_request(struct evhttp_request *req, void *arg)
{
    (void)arg;
    if (opt.legacy && evhttp_request_get_command(req) == EVHTTP_REQ_GET)
        return legacy_get(req);
    if (opt.legacy && evhttp_request_get_command(req) == EVHTTP_REQ_POST)
        return legacy_post(req);
    switch (evhttp_request_get_command(req)) {
    case EVHTTP_REQ_POST:
        handle_post(req);
        break;
    case EVHTTP_REQ_GET:
        handle_get(req);
        break;
    case EVHTTP_REQ_DELETE:
        log_request(req, NULL);
        st.session[0] = '\0';
        reply(req, 200, NULL, NULL);
        break;
    default:
        reply(req, 405, "text/plain", "method not allowed");
    }
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    event_base_loopexit(st.base, NULL);
}

static void usage(void)
{
    fprintf(stderr, "usage: http-server [--port N] [--port-file F] [--log F] [--token T]\n"
                    "                   [--expire-after N] [--redirect-to URL]\n"
                    "                   [--get-stream] [--legacy [--endpoint URL]]\n"
                    "                   [--huge-answers] [--auth-flood N]\n"
                    "                   [--html-answers]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"port", required_argument, NULL, 'p'},
        {"port-file", required_argument, NULL, 'f'},
        {"log", required_argument, NULL, 'l'},
        {"token", required_argument, NULL, 't'},
        {"expire-after", required_argument, NULL, 'e'},
        {"redirect-to", required_argument, NULL, 'r'},
        {"legacy", no_argument, NULL, 'L'},
        {"get-stream", no_argument, NULL, 'G'},
        {"endpoint", required_argument, NULL, 'E'},
        {"huge-answers", no_argument, NULL, 'H'},
        {"auth-flood", required_argument, NULL, 'A'},
        {"html-answers", no_argument, NULL, 'W'},
        {NULL, 0, NULL, 0},
    };
    struct evhttp *http;
    struct evhttp_bound_socket *bound;
    struct event *sig;
    int c;

    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            opt.port = atoi(optarg);
            break;
        case 'f':
            opt.port_file = optarg;
            break;
        case 'l':
            opt.log_path = optarg;
            break;
        case 't':
            opt.token = optarg;
            break;
        case 'e':
            opt.expire_after = atol(optarg);
            break;
        case 'r':
            opt.redirect_to = optarg;
            break;
        case 'L':
            opt.legacy = true;
            break;
        case 'G':
            opt.get_stream = true;
            break;
        case 'E':
            opt.endpoint = optarg;
            break;
        case 'H':
            opt.huge_answers = true;
            break;
        case 'A':
            opt.auth_flood = atol(optarg);
            break;
        case 'W':
            opt.html_answers = true;
            break;
        default:
            usage();
        }
    }
    signal(SIGPIPE, SIG_IGN);
    st.base = event_base_new();
    http = evhttp_new(st.base);
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE);
    evhttp_set_gencb(http, on_request, NULL);
    /* Loopback only: this server is for tests on this machine. */
    bound = evhttp_bind_socket_with_handle(http, "127.0.0.1", (ev_uint16_t)opt.port);
    if (!bound) {
        fprintf(stderr, "http-server: cannot bind 127.0.0.1:%d\n", opt.port);
        return 1;
    }
    if (!opt.port) {
        struct sockaddr_in sin;
        socklen_t len = sizeof(sin);
        getsockname(evhttp_bound_socket_get_fd(bound), (struct sockaddr *)&sin, &len);
        opt.port = ntohs(sin.sin_port);
    }
    if (opt.log_path && !(st.log = fopen(opt.log_path, "a"))) {
        perror(opt.log_path);
        return 1;
    }
    if (opt.port_file) {
        char tmp[512];
        FILE *f;
        snprintf(tmp, sizeof(tmp), "%s.tmp", opt.port_file);
        if (!(f = fopen(tmp, "w")))
            return 1;
        fprintf(f, "%d\n", opt.port);
        fclose(f);
        rename(tmp, opt.port_file); /* the test sees the whole number or nothing */
    }
    sig = evsignal_new(st.base, SIGTERM, on_signal, NULL);
    event_add(sig, NULL);
    event_base_dispatch(st.base);
    event_free(sig);
    evhttp_free(http);
    event_base_free(st.base);
    if (st.log)
        fclose(st.log);
    return 0;
}
