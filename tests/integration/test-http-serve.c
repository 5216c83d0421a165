// SPDX-License-Identifier: MIT
// test-http-serve: mcpd serves MCP over Streamable HTTP on its socket and on loopback (issue 35):
// sessions, SSE, the endpoints, the token, DNS-rebinding checks, and bad requests refused alone.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/integration/harness.h"
#include "tests/integration/httpc.h"

/* A session on the socket: initialize, initialized, list, a call with progress (SSE), DELETE. */
static void socket_session(Harness *h)
{
    int fd = h_raw_connect(h);
    HcResponse r = hc_post(fd, 0, "/mcp", NULL, HC_INITIALIZE);
    _cleanup_free_ char *sid = hc_field(&r, "Mcp-Session-Id");

    CHECK_MSG(r.status == 200 && strstr(r.body, "\"serverInfo\"") && sid && strlen(sid) == 32,
              "initialize over HTTP on the socket: %d %s", r.status, r.head);
    hc_free(&r);
    _cleanup_free_ char *hs =
        xasprintf("Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n", sid ? sid : "none");
    r = hc_post(fd, 0, "/mcp", hs,
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    CHECK_MSG(r.status == 202, "initialized: %d", r.status);
    hc_free(&r);
    r = hc_post(fd, 0, "/mcp", hs, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    CHECK_MSG(r.status == 200 && strstr(r.body, "\"mcp_fake_echo\""), "tools/list: %d %.200s",
              r.status, r.body);
    hc_free(&r);
    /* Progress before the answer: the response becomes an SSE stream, the answer last. */
    r = hc_post(fd, 0, "/mcp", hs,
                "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"mcp_fake_sleep\",\"arguments\":{\"ms\":300},\"_meta\":{\"progressToken\":5}}}");
    _cleanup_free_ char *type = hc_field(&r, "Content-Type");
    const char *prog = strstr(r.body, "notifications/progress"),
               *ans = strstr(r.body, "\"id\":\"c1\"");
    CHECK_MSG(r.status == 200 && type && streq(type, "text/event-stream") && prog && ans &&
                  prog < ans && strstr(r.body, "event: message\ndata: {"),
              "a call with progress as SSE: %d %s", r.status, r.body);
    hc_free(&r);
    /* The GET stream opens (and only one per session). */
    int g = h_raw_connect(h);
    _cleanup_free_ char *get = xasprintf("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: "
                                         "text/event-stream\r\n%s\r\n",
                                         hs);
    CHECK(h_raw_write(g, get, strlen(get)));
    _cleanup_free_ char *got = h_raw_read(g, 1000);
    CHECK_MSG(strstr(got, "HTTP/1.1 200") && strstr(got, "text/event-stream"), "GET stream: %s",
              got);
    int g2 = h_raw_connect(h);
    r = hc_raw(g2, get, strlen(get));
    CHECK_MSG(r.status == 409, "a second GET stream: %d", r.status);
    hc_free(&r);
    close(g2);
    close(g);
    /* DELETE ends it; the id is then unknown. */
    _cleanup_free_ char *del = xasprintf("DELETE /mcp HTTP/1.1\r\nHost: localhost\r\n%s\r\n", hs);
    r = hc_raw(fd, del, strlen(del));
    CHECK_MSG(r.status == 200, "DELETE: %d", r.status);
    hc_free(&r);
    r = hc_post(fd, 0, "/mcp", hs, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    CHECK_MSG(r.status == 404, "a request in an ended session: %d", r.status);
    hc_free(&r);
    close(fd);
}

/*
 * A chunked body (as a client streaming its request sends it): taken like one with a length,
 * split anywhere, with an extension and a trailer, and the next request on the connection after.
 */
static void chunked(Harness *h)
{
    static const char head[] = "POST /mcp HTTP/1.1\r\nHost: localhost\r\n"
                               "Content-Type: application/json\r\nAccept: application/json, "
                               "text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    const char *body = HC_INITIALIZE;
    size_t half = strlen(body) / 2;
    int fd = h_raw_connect(h);
    _cleanup_free_ char *req =
        xasprintf("%s%zx;x=1\r\n%.*s\r\n%zX\r\n%s\r\n0\r\nX-Done: 1\r\n\r\n", head, half, (int)half,
                  body, strlen(body) - half, body + half);
    HcResponse r = hc_raw(fd, req, strlen(req));
    _cleanup_free_ char *sid = hc_field(&r, "Mcp-Session-Id");

    CHECK_MSG(r.status == 200 && strstr(r.body, "\"serverInfo\"") && sid,
              "initialize in a chunked body: %d %s %s", r.status, r.head, r.body);
    hc_free(&r);
    _cleanup_free_ char *hs = xasprintf("Mcp-Session-Id: %s\r\n", sid ? sid : "none");
    r = hc_post(fd, 0, "/mcp", hs, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    CHECK_MSG(r.status == 200 && strstr(r.body, "\"result\""), "a request after it: %d %s",
              r.status, r.body);
    hc_free(&r);
    close(fd);
}

/* Read fd until what came holds needle (or H_WAIT_MS passed); returns what came. */
static char *read_until(int fd, const char *needle)
{
    StrBuf sb = STRBUF_INIT;
    char buf[4096];
    struct timeval tv = {0, 100 * 1000};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    for (int waited = 0; waited < H_WAIT_MS && !(sb.len && strstr(sb.data, needle));) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            break;
        if (n < 0)
            waited += 100;
        else
            strbuf_append(&sb, buf, (size_t)n);
        strbuf_putc(&sb, '\0');
        sb.len--;
    }
    strbuf_putc(&sb, '\0');
    sb.len--;
    return strbuf_detach(&sb, NULL);
}

/* The id of the last SSE event in text ("id: X" lines), or NULL. */
static char *last_event_id(const char *text)
{
    const char *p = text, *last = NULL;

    while ((p = strstr(p, "id: "))) {
        if (p == text || p[-1] == '\n')
            last = p + 4;
        p += 4;
    }
    return last ? xstrndup(last, strcspn(last, "\n")) : NULL;
}

/*
 * Last-Event-ID (2025-11-25): a call's SSE stream whose connection the client drops after the
 * first events is resumed with a GET: the events after the last one seen, then the answer that
 * came while no connection was open, and the stream ends. An id of no kept stream: 405.
 */
static void resumption(Harness *h)
{
    int fd = h_raw_connect(h);
    HcResponse r = hc_post(fd, 0, "/mcp", NULL, HC_INITIALIZE);
    _cleanup_free_ char *sid = hc_field(&r, "Mcp-Session-Id");
    hc_free(&r);
    close(fd);
    _cleanup_free_ char *hs = xasprintf("Mcp-Session-Id: %s\r\n", sid ? sid : "none");
    _cleanup_free_ char *body =
        xstrdup("{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"mcp_fake_sleep\",\"arguments\":{\"ms\":1500},\"_meta\":{\"progressToken\":7}}}");
    _cleanup_free_ char *post = xasprintf(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: "
        "application/json, text/event-stream\r\n%sContent-Length: %zu\r\n\r\n%s",
        hs, strlen(body), body);
    fd = h_raw_connect(h);
    CHECK(h_raw_write(fd, post, strlen(post)));
    /* The stream's first events (the priming id, a progress or two), then the client drops. */
    _cleanup_free_ char *first = read_until(fd, "notifications/progress");
    close(fd);
    _cleanup_free_ char *id = last_event_id(first ? first : "");
    CHECK_MSG(first && strstr(first, "text/event-stream") && id && !strstr(first, "\"id\":\"r1\""),
              "the call's stream before the drop: %s", first ? first : "(nothing)");
    h_sleep_ms(1800); /* the answer comes while no connection is open */
    _cleanup_free_ char *get = xasprintf("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: "
                                         "text/event-stream\r\n%sLast-Event-ID: %s\r\n\r\n",
                                         hs, id ? id : "0-0");
    int g = h_raw_connect(h);
    r = hc_raw(g, get, strlen(get));
    const char *ans = strstr(r.body, "\"id\":\"r1\"");
    CHECK_MSG(r.status == 200 && ans && strstr(r.body, "\"result\"") &&
                  strstr(r.body, "notifications/progress"),
              "the resumed stream: %d %s", r.status, r.body);
    /* Only events after the last one seen: the first progress is not sent again. */
    _cleanup_free_ char *seen = xasprintf("id: %s\n", id ? id : "");
    CHECK_MSG(!strstr(r.body, seen), "the event %s was sent again: %s", id ? id : "", r.body);
    hc_free(&r);
    /* Its stream was taken whole: a second resume finds nothing (405: no stream to offer). */
    r = hc_raw(g, get, strlen(get));
    CHECK_MSG(r.status == 405 && !strstr(r.body, "\"id\":\"r1\""), "a second resume: %d %s",
              r.status, r.body);
    hc_free(&r);
    close(g);
}

/* /servers/NAME/mcp: one server, its own tool names. */
static void one_server(Harness *h)
{
    int fd = h_raw_connect(h);
    HcResponse r = hc_post(fd, 0, "/servers/fake/mcp", NULL, HC_INITIALIZE);
    _cleanup_free_ char *sid = hc_field(&r, "Mcp-Session-Id");
    hc_free(&r);
    _cleanup_free_ char *hs = xasprintf("Mcp-Session-Id: %s\r\n", sid ? sid : "none");
    r = hc_post(fd, 0, "/servers/fake/mcp", hs,
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    CHECK_MSG(r.status == 200 && strstr(r.body, "\"name\":\"echo\"") &&
                  !strstr(r.body, "mcp_fake_echo"),
              "one server's tools, unprefixed: %d %.300s", r.status, r.body);
    hc_free(&r);
    /* A session belongs to its endpoint. */
    r = hc_post(fd, 0, "/mcp", hs, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    CHECK_MSG(r.status == 404, "a session on another endpoint: %d", r.status);
    hc_free(&r);
    close(fd);
}

/* The loopback port: the token, Host and Origin; refusals logged, not at every request. */
static void loopback(Harness *h, int port)
{
    _cleanup_free_ char *path = xasprintf("%s/run/mcpd/http-token", h->dir);
    _cleanup_free_ char *token = h_read_file(path);
    int status;
    _cleanup_free_ char *printed =
        h_shell(&status, "MCPD_SOCKET=%s %s http-token", h->socket, getenv("MCPCTL_BINARY"));

    CHECK_MSG(port > 0, "the loopback port is logged");
    CHECK_MSG(token && strlen(token) == 64, "token file %s", path);
    CHECK_MSG(status == 0 && token && strncmp(printed, token, 64) == 0,
              "mcpctl http-token prints it: %s", printed);
    for (int i = 0; i < 20; i++) {
        int fd = hc_tcp(port);
        HcResponse r = hc_post(fd, port, "/mcp", NULL, HC_INITIALIZE);
        CHECK_MSG(r.status == 401 && strstr(r.head, "WWW-Authenticate: Bearer"), "no token: %d",
                  r.status);
        hc_free(&r);
        close(fd);
    }
    _cleanup_free_ char *auth = xasprintf("Authorization: Bearer %s\r\n", token ? token : "");
    _cleanup_free_ char *evil_origin = xasprintf("%sOrigin: http://evil.example.com\r\n", auth);
    int fd = hc_tcp(port);
    HcResponse r = hc_post(fd, port, "/mcp", evil_origin, HC_INITIALIZE);
    CHECK_MSG(r.status == 403, "a foreign Origin: %d", r.status);
    hc_free(&r);
    close(fd);
    fd = hc_tcp(port);
    _cleanup_free_ char *evil_host = xasprintf(
        "POST /mcp HTTP/1.1\r\nHost: evil.example.com\r\n%sContent-Type: application/json\r\n"
        "Content-Length: %zu\r\n\r\n%s",
        auth, strlen(HC_INITIALIZE), HC_INITIALIZE);
    r = hc_raw(fd, evil_host, strlen(evil_host));
    CHECK_MSG(r.status == 403, "a foreign Host: %d", r.status);
    hc_free(&r);
    close(fd);
    _cleanup_free_ char *local_origin = xasprintf("%sOrigin: http://localhost:6274\r\n", auth);
    fd = hc_tcp(port);
    r = hc_post(fd, port, "/mcp", local_origin, HC_INITIALIZE);
    CHECK_MSG(r.status == 200 && strstr(r.body, "\"serverInfo\""), "with the token: %d %s",
              r.status, r.body);
    hc_free(&r);
    close(fd);
    _cleanup_free_ char *q = xasprintf("/mcp?token=%s", token ? token : "");
    fd = hc_tcp(port);
    r = hc_post(fd, port, q, NULL, HC_INITIALIZE);
    CHECK_MSG(r.status == 200, "the token in the query: %d", r.status);
    hc_free(&r);
    close(fd);
    int logged = h_count_in_file(h->log, "http: refused a request");
    CHECK_MSG(logged >= 1 && logged <= 4, "22 refusals logged %d times", logged);
}

/* The 2026-07-28 era: stateless POSTs checked against their headers; no session, no GET. */
static void modern(Harness *h)
{
#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"
    static const char hv[] = "MCP-Protocol-Version: 2026-07-28\r\n";
    int fd = h_raw_connect(h);
    _cleanup_free_ char *hs = xasprintf("%sMcp-Method: server/discover\r\n", hv);
    HcResponse r = hc_post(fd, 0, "/mcp", hs,
                           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\","
                           "\"params\":{" META "}}");
    _cleanup_free_ char *sid = hc_field(&r, "Mcp-Session-Id");
    CHECK_MSG(r.status == 200 && strstr(r.body, "\"supportedVersions\"") && !sid,
              "server/discover: %d %s", r.status, r.body);
    hc_free(&r);
    _cleanup_free_ char *hl = xasprintf("%sMcp-Method: tools/list\r\n", hv);
    r = hc_post(fd, 0, "/mcp", hl,
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" META "}}");
    CHECK_MSG(r.status == 200 && strstr(r.body, "\"mcp_fake_echo\"") &&
                  strstr(r.body, "\"resultType\""),
              "2026 tools/list: %d %.300s", r.status, r.body);
    hc_free(&r);
    /* Mcp-Method that does not say the body's method: 400, -32020. */
    r = hc_post(fd, 0, "/mcp", hs,
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{" META "}}");
    CHECK_MSG(r.status == 400 && strstr(r.body, "-32020"), "header mismatch: %d %s", r.status,
              r.body);
    hc_free(&r);
    /* A client's pool carries the next request, to another endpoint, on the same connection:
     * that endpoint's view (one server, unprefixed), not the first one's. */
    r = hc_post(fd, 0, "/servers/fake/mcp", hl,
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{" META "}}");
    CHECK_MSG(
        r.status == 200 && strstr(r.body, "\"name\":\"echo\"") && !strstr(r.body, "mcp_fake_echo"),
        "2026 tools/list of one server after /mcp on one connection: %d %.300s", r.status, r.body);
    hc_free(&r);
    r = hc_post(fd, 0, "/mcp", hl,
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{" META "}}");
    CHECK_MSG(r.status == 200 && strstr(r.body, "\"mcp_fake_echo\""),
              "2026 tools/list of /mcp again on that connection: %d %.300s", r.status, r.body);
    hc_free(&r);
    close(fd);
#undef META
}

/* Bad requests: each a 4xx on its own connection; nothing else is touched. */
static void bad_requests(Harness *h)
{
    static const struct {
        const char *req;
        int status;
    } cases[] = {
        {"GARBAGE\r\n\r\n", 400},
        {"POST /mcp HTTP/2.0\r\nHost: x\r\n\r\n", 505},
        {"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: 1073741824\r\n\r\n",
         413},
        {"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
        {"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n"
         "\r\n0\r\n\r\n",
         400},
        {"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
        {"POST /mcp HTTP/1.1\r\nHost: x\r\n folded: y\r\n\r\n", 400},
        {"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", 404},
        {"PUT /mcp HTTP/1.1\r\nHost: x\r\n\r\n", 405},
        {"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: 7\r\n\r\n{oops}\n",
         400},
        {"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: 2\r\n\r\n[]",
         400},
        {"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
         "Content-Length: 2\r\n\r\n{}",
         415},
    };
    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        int fd = h_raw_connect(h);
        HcResponse r = hc_raw(fd, cases[i].req, strlen(cases[i].req));
        CHECK_MSG(r.status == cases[i].status, "case %zu: %d, wanted %d (%.40s)", i, r.status,
                  cases[i].status, cases[i].req);
        hc_free(&r);
        close(fd);
    }
    /* 100,000 header fields: 431 once the head passes its bound, without reading them all. */
    StrBuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "POST /mcp HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 100000; i++)
        strbuf_printf(&sb, "X-%d: y\r\n", i);
    strbuf_puts(&sb, "\r\n");
    int fd = h_raw_connect(h);
    (void)h_raw_write(fd, sb.data, sb.len); /* mcpd may close before taking it all */
    HcResponse r = hc_read(fd, H_WAIT_MS);
    CHECK_MSG(r.status == 431, "100,000 header fields: %d", r.status);
    hc_free(&r);
    close(fd);
    strbuf_deinit(&sb);
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"fake\": {\"command\": \"%s\"}}}", h_fake());

    h_setup(&h, "http-serve");
    h_write_config(&h, cfg);
    h_start(&h, "--listen", "127.0.0.1:0", NULL);
    mcpc_client *c = h_client(&h, "line-protocol");
    h_settle(&h, c, "fake", NULL);
    int port = hc_port(&h);

    socket_session(&h);
    chunked(&h);
    resumption(&h);
    one_server(&h);
    modern(&h);
    loopback(&h, port);
    bad_requests(&h);
    /* The line protocol on the same socket, before and after: unchanged. */
    int is_error = -1;
    _cleanup_free_ char *t = h_call_text(c, "mcp_fake_echo", "{\"text\":\"line\"}", &is_error);
    CHECK_MSG(streq(t, "line") && is_error == 0, "line protocol after HTTP: %s", t);
    mcpc_free(c);
    h_check_healthy(&h, "http-serve", "mcp_fake_echo");
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("http-serve");
}
