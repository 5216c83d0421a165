// SPDX-License-Identifier: MIT
// test-modern-agent: agents of MCP 2026-07-28 on the socket: server/discover, stateless
// requests, -32022, subscriptions/listen, MRTR for a legacy server's elicitation, no crosstalk
// between agents, and hostile _meta; 2025 agents on the same daemon see no change.

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "harness.h"

#define CONTROL "mcp_steady_echo"
#define V       "\"2026-07-28\""
/* The _meta of a modern request from a capable agent (elicitation declared). */
#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" V                                    \
    ",\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}},"                        \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"modern-test\",\"version\":\"1\"}}"

/* One raw connection, read line by line. */
typedef struct Conn {
    int fd;
    StrBuf in;
} Conn;

static void conn_open(Conn *c, Harness *h)
{
    c->fd = h_raw_connect(h);
    c->in = (StrBuf)STRBUF_INIT;
    CHECK(c->fd >= 0);
}

static void conn_close(Conn *c)
{
    close(c->fd);
    strbuf_deinit(&c->in);
}

static void conn_send(Conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void conn_send(Conn *c, const char *fmt, ...)
{
    va_list ap;
    char *text;

    va_start(ap, fmt);
    CHECK(vasprintf(&text, fmt, ap) >= 0);
    va_end(ap);
    CHECK(h_raw_write(c->fd, text, strlen(text)));
    CHECK(h_raw_write(c->fd, "\n", 1));
    free(text);
}

/* The next line (to free), or NULL after timeout_ms. */
static char *conn_line(Conn *c, int timeout_ms)
{
    uint64_t end = now_ms() + (uint64_t)timeout_ms;

    for (;;) {
        char *nl = c->in.data ? memchr(c->in.data, '\n', c->in.len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - c->in.data);
            char *line = xstrndup(c->in.data, n);
            memmove(c->in.data, nl + 1, c->in.len - n - 1);
            c->in.len -= n + 1;
            return line;
        }
        uint64_t now = now_ms();
        if (now >= end)
            return NULL;
        struct pollfd pfd = {c->fd, POLLIN, 0};
        if (poll(&pfd, 1, (int)(end - now)) <= 0)
            continue;
        char buf[65536];
        ssize_t r = read(c->fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return NULL;
        strbuf_append(&c->in, buf, (size_t)r);
    }
}

/* Lines until the one holding needle (returned, parsed); the others are appended to skipped. */
static yajl_val conn_until(Conn *c, const char *needle, StrBuf *skipped)
{
    for (;;) {
        _cleanup_free_ char *line = conn_line(c, H_WAIT_MS);
        if (!line) {
            fprintf(stderr, "no line with %s came\n", needle);
            h_failures++;
            return NULL;
        }
        if (strstr(line, needle))
            return json_parse(line, NULL);
        if (skipped) {
            strbuf_puts(skipped, line);
            strbuf_putc(skipped, '\n');
        }
    }
}

static const char *path_string(yajl_val v, const char *a, const char *b)
{
    return json_get_string(b ? json_get_object(v, a) : v, b ? b : a);
}

static int64_t error_code(yajl_val v)
{
    int64_t code = 0;

    json_get_int(json_get_object(v, "error"), "code", &code);
    return code;
}

/* server/discover before anything, then initialize: the probe does not fix the era. */
static void test_discover(Harness *h)
{
    Conn c;
    _cleanup_json_ yajl_val r = NULL, init = NULL, bad = NULL;
    yajl_val res, versions;
    bool v26 = false, v25 = false;

    conn_open(&c, h);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"server-discover-probe-1\",\"method\":"
                  "\"server/discover\",\"params\":{" META "}}");
    r = conn_until(&c, "server-discover-probe-1", NULL);
    res = json_get_object(r, "result");
    versions = json_get_array(res, "supportedVersions");
    for (size_t i = 0; i < json_array_len(versions); i++) {
        const char *v =
            YAJL_IS_STRING(json_array_at(versions, i)) ? json_array_at(versions, i)->u.string : "";
        v26 |= streq(v, "2026-07-28");
        v25 |= streq(v, "2025-11-25");
    }
    CHECK_MSG(v26 && v25, "supportedVersions lacks 2026-07-28 or 2025-11-25");
    CHECK(streq(json_get_string(res, "resultType"), "complete"));
    CHECK(streq(json_get_string(res, "cacheScope"), "private"));
    CHECK(json_get(res, "ttlMs") && YAJL_IS_INTEGER(json_get(res, "ttlMs")));
    CHECK(json_get_object(json_get_object(res, "capabilities"), "tools"));
    CHECK(streq(
        path_string(json_get_object(res, "_meta"), "io.modelcontextprotocol/serverInfo", "name"),
        "mcpd"));

    /* An unknown version in the probe: -32022 with the supported list and the one asked. */
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"server/discover\",\"params\":{"
                  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"1999-01-01\"}}}");
    bad = conn_until(&c, "\"id\":2", NULL);
    CHECK_MSG(error_code(bad) == -32022, "discover 1999-01-01 gave code %lld",
              (long long)error_code(bad));
    CHECK(streq(path_string(json_get_object(bad, "error"), "data", "requested"), "1999-01-01"));
    CHECK(json_get_array(json_get_object(json_get_object(bad, "error"), "data"), "supported"));

    /* A dual-era client that falls back: initialize still works after the probe. */
    CHECK(h_raw_write(c.fd, h_raw_initialize, strlen(h_raw_initialize)));
    init = conn_until(&c, "\"id\":0", NULL);
    CHECK_MSG(streq(path_string(init, "result", "protocolVersion"), "2025-06-18"),
              "initialize after the probe failed");
    CHECK_MSG(!json_get(json_get_object(init, "result"), "resultType"),
              "a 2025 agent got resultType");
    conn_close(&c);
    h_check_healthy(h, "server/discover", CONTROL);
}

/* Requests without initialize, each with its _meta; removed methods are -32601. */
static void test_stateless(Harness *h)
{
    Conn c;
    _cleanup_json_ yajl_val list = NULL, call = NULL, ping = NULL, init = NULL, bad = NULL,
                            read = NULL;
    yajl_val res;

    conn_open(&c, h);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" META "}}");
    list = conn_until(&c, "\"id\":1,", NULL);
    res = json_get_object(list, "result");
    CHECK_MSG(json_array_len(json_get_array(res, "tools")) > 0, "no tools for a modern agent");
    CHECK(streq(json_get_string(res, "resultType"), "complete"));
    CHECK(YAJL_IS_INTEGER(json_get(res, "ttlMs")));
    CHECK(streq(json_get_string(res, "cacheScope"), "private"));

    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"" CONTROL "\",\"arguments\":{\"text\":\"stateless\"}," META "}}");
    call = conn_until(&c, "\"id\":\"c\"", NULL);
    res = json_get_object(call, "result");
    CHECK(streq(json_get_string(res, "resultType"), "complete"));
    CHECK_MSG(strstr(json_get_string(json_array_at(json_get_array(res, "content"), 0), "text"),
                     "stateless"),
              "echo through a stateless call failed");

    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{" META "}}");
    ping = conn_until(&c, "\"id\":3", NULL);
    CHECK_MSG(error_code(ping) == -32601, "ping on a modern connection gave %lld",
              (long long)error_code(ping));
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":{"
                  "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
                  "\"name\":\"x\",\"version\":\"1\"}}}");
    init = conn_until(&c, "\"id\":4", NULL);
    CHECK_MSG(error_code(init) == -32601, "initialize on a modern connection gave %lld",
              (long long)error_code(init));
    /* A request of the era without its version: -32022. */
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{}}");
    bad = conn_until(&c, "\"id\":5", NULL);
    CHECK_MSG(error_code(bad) == -32022, "a request without _meta gave %lld",
              (long long)error_code(bad));
    /* Resource not found is -32602 in this era. */
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{"
                  "\"uri\":\"nosuch://x\"," META "}}");
    read = conn_until(&c, "\"id\":6", NULL);
    CHECK_MSG(error_code(read) == -32602, "resources/read of nothing gave %lld",
              (long long)error_code(read));
    conn_close(&c);

    /* The first request with an unknown version: -32022, data {supported, requested}. */
    conn_open(&c, h);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
                  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2099-01-01\"}}}");
    _cleanup_json_ yajl_val r = conn_until(&c, "\"id\":1", NULL);
    CHECK(error_code(r) == -32022);
    CHECK(streq(path_string(json_get_object(r, "error"), "data", "requested"), "2099-01-01"));
    conn_close(&c);
    h_check_healthy(h, "stateless requests", CONTROL);
}

/* Wrong types, huge values and forged states in _meta and params: clear errors, no harm. */
static void test_hostile_meta(Harness *h)
{
    static const struct {
        const char *meta, *want;
    } cases[] = {
        {"\"io.modelcontextprotocol/protocolVersion\":20260728", "-32022"},
        {"\"io.modelcontextprotocol/protocolVersion\":" V
         ",\"io.modelcontextprotocol/clientCapabilities\":\"all\"",
         "clientCapabilities"},
        {"\"io.modelcontextprotocol/protocolVersion\":" V
         ",\"io.modelcontextprotocol/clientInfo\":[1]",
         "clientInfo"},
        {"\"io.modelcontextprotocol/protocolVersion\":" V ",\"io.modelcontextprotocol/logLevel\":7",
         "logLevel"},
        {"\"io.modelcontextprotocol/protocolVersion\":" V
         ",\"io.modelcontextprotocol/logLevel\":\"loud\"",
         "logLevel"},
        {"\"io.modelcontextprotocol/protocolVersion\":" V ",\"mcpd/cwd\":5", "mcpd/cwd"},
        {"\"io.modelcontextprotocol/protocolVersion\":" V ",\"mcpd/session\":{}", "mcpd/session"},
        {"\"io.modelcontextprotocol/protocolVersion\":" V ",\"mcpd/session\":\"0000\"",
         "no live session"},
    };
    _cleanup_free_ char *huge = xmalloc(1 << 20);
    Conn c;

    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        conn_open(&c, h);
        conn_send(&c,
                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
                  "\"_meta\":{%s}}}",
                  cases[i].meta);
        _cleanup_free_ char *line = conn_line(&c, H_WAIT_MS);
        CHECK_MSG(line && strstr(line, "\"error\"") && strstr(line, cases[i].want),
                  "_meta {%s} gave %s", cases[i].meta, line ? line : "(nothing)");
        conn_close(&c);
    }
    /* A 1 MiB client name: served (the line is within maxMessageBytes), nothing breaks. */
    memset(huge, 'n', (1 << 20) - 1);
    huge[(1 << 20) - 1] = 0;
    conn_open(&c, h);
    conn_send(&c,
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
              "\"io.modelcontextprotocol/protocolVersion\":" V
              ",\"io.modelcontextprotocol/clientInfo\":{\"name\":\"%s\",\"version\":\"1\"}}}}",
              huge);
    _cleanup_json_ yajl_val r = conn_until(&c, "\"id\":1", NULL);
    CHECK_MSG(json_get_object(r, "result"), "a huge clientInfo was not served");
    /* Forged requestStates and inputResponses of the wrong type. */
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"mcp_asker_ask\",\"arguments\":{},\"requestState\":"
                  "\"00112233445566778899aabbccddeeff\",\"inputResponses\":{}," META "}}");
    _cleanup_json_ yajl_val f = conn_until(&c, "\"id\":2", NULL);
    CHECK_MSG(error_code(f) == -32602, "a forged requestState gave %lld", (long long)error_code(f));
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"mcp_asker_ask\",\"arguments\":{},\"requestState\":{\"a\":[1]}," META
                  "}}");
    _cleanup_json_ yajl_val g = conn_until(&c, "\"id\":3", NULL);
    CHECK(error_code(g) == -32602);
    /* Responses from a modern agent (mcpd asked it nothing) and an id reused in flight. */
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}");
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"subscriptions/listen\","
                  "\"params\":{\"notifications\":{\"toolsListChanged\":true}," META "}}");
    conn_send(&c,
              "{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"tools/list\",\"params\":{" META "}}");
    _cleanup_json_ yajl_val dup = conn_until(&c, "\"id\":\"l\"", NULL);
    CHECK_MSG(error_code(dup) == -32600, "an id in use gave %lld", (long long)error_code(dup));
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"subscriptions/listen\","
                  "\"params\":{\"notifications\":{\"resourceSubscriptions\":[1,2]}," META "}}");
    _cleanup_json_ yajl_val bl = conn_until(&c, "\"id\":4", NULL);
    CHECK(error_code(bl) == -32602);
    conn_close(&c);
    h_check_healthy(h, "hostile _meta", CONTROL);
}

/* The session token in a result's _meta, or NULL. */
static const char *told_session(yajl_val r)
{
    return json_get_string(json_get_object(json_get_object(r, "result"), "_meta"), "mcpd/session");
}

/*
 * A connection that moves to another workspace while idle is placed again (its new session
 * token told in the next result, once); one with a listen open is refused, and keeps its place.
 */
static void test_replace(Harness *h)
{
    _cleanup_json_ yajl_val r1 = NULL, r2 = NULL, r3 = NULL, busy = NULL, after = NULL;
    Conn c;

    conn_open(&c, h);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" META "}}");
    r1 = conn_until(&c, "\"id\":1,", NULL);
    CHECK_MSG(told_session(r1), "the first result has no session token");
    conn_send(&c,
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
              "\"io.modelcontextprotocol/protocolVersion\":" V ",\"mcpd/cwd\":\"%s\"}}}",
              h->dir);
    r2 = conn_until(&c, "\"id\":2,", NULL);
    CHECK_MSG(json_get_object(r2, "result"), "the move to another workspace was not served");
    CHECK_MSG(told_session(r2) && told_session(r1) && !streq(told_session(r1), told_session(r2)),
              "after the move: session %s, before %s",
              told_session(r2) ? told_session(r2) : "(none)",
              told_session(r1) ? told_session(r1) : "(none)");
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{" META "}}");
    r3 = conn_until(&c, "\"id\":3,", NULL);
    CHECK_MSG(json_get_object(r3, "result") && !told_session(r3),
              "a request that names no workspace after the move");
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"subscriptions/listen\","
                  "\"params\":{\"notifications\":{\"toolsListChanged\":true}," META "}}");
    _cleanup_json_ yajl_val ack = conn_until(&c, "acknowledged", NULL);
    CHECK(ack != NULL);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
                  "\"io.modelcontextprotocol/protocolVersion\":" V ",\"mcpd/cwd\":\"/\"}}}");
    busy = conn_until(&c, "\"id\":4,", NULL);
    CHECK_MSG(error_code(busy) == -32602, "a move with a listen open gave %lld",
              (long long)error_code(busy));
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{" META "}}");
    after = conn_until(&c, "\"id\":5,", NULL);
    CHECK_MSG(json_get_object(after, "result"), "the refused move lost the connection's place");
    conn_close(&c);
    h_check_healthy(h, "a modern connection placed again", CONTROL);
}

/* subscriptions/listen: acknowledged, then list changes carry the subscription id. */
static void test_listen(Harness *h, mcpc_client *ctl)
{
    Conn c, quiet;
    StrBuf skipped = STRBUF_INIT;
    _cleanup_json_ yajl_val ack = NULL, changed = NULL, list = NULL;
    char *res = NULL;
    yajl_val meta;

    conn_open(&c, h);
    conn_open(&quiet, h);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"sub-1\",\"method\":\"subscriptions/listen\","
                  "\"params\":{\"notifications\":{\"toolsListChanged\":true},"
                  "" META "}}");
    ack = conn_until(&c, "notifications/subscriptions/acknowledged", NULL);
    meta = json_get_object(json_get_object(ack, "params"), "_meta");
    CHECK(streq(json_get_string(meta, "io.modelcontextprotocol/subscriptionId"), "sub-1"));
    CHECK(json_get(json_get_object(json_get_object(ack, "params"), "notifications"),
                   "toolsListChanged"));
    /* A modern agent that does not listen hears nothing. */
    conn_send(&quiet,
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" META "}}");
    json_free(conn_until(&quiet, "\"id\":1,", NULL));

    /* The tool set changes: the server goes away. */
    CHECK(mcpc_request(ctl, "mcpd/disconnect", "{\"server\":\"spare\"}", &res) == 0);
    free(res);
    res = NULL;
    changed = conn_until(&c, "notifications/tools/list_changed", NULL);
    meta = json_get_object(json_get_object(changed, "params"), "_meta");
    CHECK_MSG(streq(json_get_string(meta, "io.modelcontextprotocol/subscriptionId"), "sub-1"),
              "list_changed without the subscription id");
    conn_send(&quiet,
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" META "}}");
    list = conn_until(&quiet, "\"id\":2,", &skipped);
    CHECK_MSG(!strstr(skipped.data ? skipped.data : "", "list_changed"),
              "an agent without a listen got %s", skipped.data);

    /* Cancelled: no more notifications on it, and no response to the listen either. */
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
                  "\"requestId\":\"sub-1\"}}");
    CHECK(mcpc_request(ctl, "mcpd/connect", "{\"server\":\"spare\"}", &res) == 0);
    free(res);
    CHECK(h_wait_state(ctl, "spare", "connected", H_WAIT_MS));
    h_sleep_ms(500);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":{" META "}}");
    strbuf_reset(&skipped);
    json_free(conn_until(&c, "\"id\":9,", &skipped));
    CHECK_MSG(!strstr(skipped.data ? skipped.data : "", "sub-1"),
              "a cancelled listen still heard %s", skipped.data);
    strbuf_deinit(&skipped);
    conn_close(&c);
    conn_close(&quiet);
    h_check_healthy(h, "subscriptions/listen", CONTROL);
}

static int64_t server_subs(mcpc_client *ctl, const char *server)
{
    _cleanup_json_ yajl_val st = h_status(ctl);
    int64_t n = -1;

    json_get_int(h_server(st, server), "subscriptions", &n);
    return n;
}

/* Resource updates through a listen: subscribed at the server, announced with the id. */
static void test_listen_resources(Harness *h, mcpc_client *ctl)
{
    Conn c;
    StrBuf skipped = STRBUF_INIT;
    _cleanup_json_ yajl_val ack = NULL;
    yajl_val list;
    int64_t n = -1;

    conn_open(&c, h);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"subscriptions/listen\","
                  "\"params\":{\"notifications\":{\"resourceSubscriptions\":[\"mem://shared\","
                  "\"mem://shared\"]}," META "}}");
    ack = conn_until(&c, "notifications/subscriptions/acknowledged", NULL);
    list = json_get_array(json_get_object(json_get_object(ack, "params"), "notifications"),
                          "resourceSubscriptions");
    CHECK_MSG(
        json_array_len(list) == 1 &&
            streq(YAJL_IS_STRING(json_array_at(list, 0)) ? json_array_at(list, 0)->u.string : "",
                  "mem://shared"),
        "the acknowledgement should hold mem://shared once");
    CHECK_MSG(server_subs(ctl, "surf") == 1, "surf holds %lld subscriptions",
              (long long)server_subs(ctl, "surf"));
    conn_send(&c,
              "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{"
              "\"name\":\"mcp_surf_touch\",\"arguments\":{\"uri\":\"mem://shared\"}," META "}}");
    json_free(conn_until(&c, "\"id\":8,", &skipped));
    CHECK_MSG(skipped.data && strstr(skipped.data, "notifications/resources/updated") &&
                  strstr(skipped.data, "\"io.modelcontextprotocol/subscriptionId\":7"),
              "no update with the subscription id: %s", skipped.data ? skipped.data : "");
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
                  "\"requestId\":7}}");
    for (int waited = 0; waited < H_WAIT_MS && (n = server_subs(ctl, "surf")) != 0; waited += 100)
        h_sleep_ms(100);
    CHECK_MSG(n == 0, "surf still holds %lld subscriptions after the listen ended", (long long)n);
    strbuf_deinit(&skipped);
    conn_close(&c);
    h_check_healthy(h, "subscriptions/listen for resources", CONTROL);
}

/* A legacy server's elicitation reaches a modern agent as input_required; the retry resumes. */
static void test_mrtr(Harness *h)
{
    Conn a, b;
    _cleanup_json_ yajl_val first = NULL, other = NULL, done = NULL, again = NULL;
    yajl_val res, reqs;
    const char *state, *key;

    conn_open(&a, h);
    conn_open(&b, h);
    conn_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":\"q1\",\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"mcp_asker_ask\",\"arguments\":{\"method\":\"elicitation/create\","
                  "\"params\":{\"message\":\"Your name?\",\"requestedSchema\":{\"type\":"
                  "\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}}}," META "}}");
    first = conn_until(&a, "\"id\":\"q1\"", NULL);
    res = json_get_object(first, "result");
    CHECK_MSG(streq(json_get_string(res, "resultType"), "input_required"),
              "no input_required for a modern agent");
    reqs = json_get_object(res, "inputRequests");
    state = json_get_string(res, "requestState");
    CHECK(reqs && reqs->u.object.len == 1 && state);
    if (!reqs || reqs->u.object.len != 1 || !state)
        return;
    key = reqs->u.object.keys[0];
    CHECK(streq(json_get_string(reqs->u.object.values[0], "method"), "elicitation/create"));
    CHECK(streq(path_string(json_get_object(reqs->u.object.values[0], "params"), "message", NULL),
                "Your name?"));

    /* Another agent replaying the state gets nothing of it. */
    conn_send(&b,
              "{\"jsonrpc\":\"2.0\",\"id\":\"q1\",\"method\":\"tools/call\",\"params\":{"
              "\"name\":\"mcp_asker_ask\",\"arguments\":{},\"inputResponses\":{\"%s\":{"
              "\"action\":\"accept\",\"content\":{\"name\":\"Mallory\"}}},\"requestState\":"
              "\"%s\"," META "}}",
              key, state);
    other = conn_until(&b, "\"id\":\"q1\"", NULL);
    CHECK_MSG(error_code(other) == -32602, "another agent's requestState was accepted");

    /* The retry without the answer is refused, and the state stays usable. */
    conn_send(&a,
              "{\"jsonrpc\":\"2.0\",\"id\":\"q2\",\"method\":\"tools/call\",\"params\":{"
              "\"name\":\"mcp_asker_ask\",\"arguments\":{},\"inputResponses\":{},"
              "\"requestState\":\"%s\"," META "}}",
              state);
    again = conn_until(&a, "\"id\":\"q2\"", NULL);
    CHECK(error_code(again) == -32602);
    conn_send(&a,
              "{\"jsonrpc\":\"2.0\",\"id\":\"q3\",\"method\":\"tools/call\",\"params\":{"
              "\"name\":\"mcp_asker_ask\",\"arguments\":{},\"inputResponses\":{\"%s\":{"
              "\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}},\"requestState\":"
              "\"%s\"," META "}}",
              key, state);
    done = conn_until(&a, "\"id\":\"q3\"", NULL);
    res = json_get_object(done, "result");
    CHECK(streq(json_get_string(res, "resultType"), "complete"));
    const char *text = json_get_string(json_array_at(json_get_array(res, "content"), 0), "text");
    CHECK_MSG(text && strstr(text, "Ada") && !strstr(text, "Mallory"), "the call ended with %s",
              text ? text : "(nothing)");
    conn_close(&a);
    conn_close(&b);
    h_check_healthy(h, "MRTR toward a modern agent", CONTROL);
}

/* An agent that cancels, or leaves, while its call waits for input: nothing stays behind. */
static void test_mrtr_abandoned(Harness *h, mcpc_client *ctl)
{
    static const char ask[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
        "\"name\":\"mcp_asker_ask\",\"arguments\":{\"method\":\"elicitation/create\","
        "\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":\"object\","
        "\"properties\":{}}}}," META "}}";
    StrBuf skipped = STRBUF_INIT;
    int64_t n = -1;
    Conn a;

    conn_open(&a, h);
    conn_send(&a, "%s", ask);
    json_free(conn_until(&a, "input_required", NULL));
    conn_send(&a, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
                  "\"requestId\":1}}");
    for (int waited = 0; waited < H_WAIT_MS; waited += 100) {
        _cleanup_json_ yajl_val st = h_status(ctl);
        json_get_int(h_server(st, "asker"), "callsInFlight", &n);
        if (n == 0)
            break;
        h_sleep_ms(100);
    }
    CHECK_MSG(n == 0, "a cancelled call waiting for input stays in flight (%lld)", (long long)n);
    conn_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"" CONTROL "\",\"arguments\":{\"text\":\"after\"}," META "}}");
    json_free(conn_until(&a, "\"id\":2,", &skipped));
    CHECK_MSG(!skipped.data, "after the cancel the agent got %s", skipped.data);
    strbuf_deinit(&skipped);
    /* The same again, but the agent leaves. */
    conn_send(&a, "%s", ask);
    json_free(conn_until(&a, "input_required", NULL));
    conn_close(&a);
    h_check_healthy(h, "modern agent cancels or leaves during MRTR", CONTROL);
}

/* A modern server's input_required reaches a modern agent with mcpd's own requestState. */
static void test_wrapped_state(Harness *h)
{
    Conn a, b;
    _cleanup_json_ yajl_val first = NULL, other = NULL, done = NULL, replay = NULL;
    const char *state;

    conn_open(&a, h);
    conn_open(&b, h);
    conn_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"mcp_mrtr_form\",\"arguments\":{}," META "}}");
    first = conn_until(&a, "\"id\":1,", NULL);
    state = path_string(first, "result", "requestState");
    CHECK_MSG(streq(path_string(first, "result", "resultType"), "input_required"),
              "the server's input_required did not pass");
    CHECK_MSG(state && !strstr(state, "srv-state"), "the server's requestState reached the agent");
    CHECK(
        json_get_object(json_get_object(json_get_object(first, "result"), "inputRequests"), "who"));
    if (!state)
        return;
    conn_send(&b,
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
              "\"name\":\"mcp_mrtr_form\",\"arguments\":{},\"requestState\":\"%s\","
              "\"inputResponses\":{\"who\":{\"action\":\"accept\",\"content\":{\"name\":"
              "\"Eve\"}}}," META "}}",
              state);
    other = conn_until(&b, "\"id\":1,", NULL);
    CHECK_MSG(error_code(other) == -32602, "another agent replayed the state");
    conn_send(&a,
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
              "\"name\":\"mcp_mrtr_form\",\"arguments\":{},\"requestState\":\"%s\","
              "\"inputResponses\":{\"who\":{\"action\":\"accept\",\"content\":{\"name\":"
              "\"Lin\"}}}," META "}}",
              state);
    done = conn_until(&a, "\"id\":2,", NULL);
    const char *text = json_get_string(
        json_array_at(json_get_array(json_get_object(done, "result"), "content"), 0), "text");
    CHECK_MSG(text && strstr(text, "state=srv-state-1 name=Lin"),
              "the retry reached the server as %s", text ? text : "(nothing)");
    /* A state serves one retry. */
    conn_send(&a,
              "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
              "\"name\":\"mcp_mrtr_form\",\"arguments\":{},\"requestState\":\"%s\","
              "\"inputResponses\":{}," META "}}",
              state);
    replay = conn_until(&a, "\"id\":3,", NULL);
    CHECK_MSG(error_code(replay) == -32602, "a used requestState was accepted again");
    conn_close(&a);
    conn_close(&b);
    h_check_healthy(h, "a modern server's requestState wrapped", CONTROL);
}

/* Two agents wait for input at once; each answer goes to its own call. */
static void test_mrtr_two_agents(Harness *h)
{
    static const char ask[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"mcp_asker_ask\",\"arguments\":{\"method\":\"elicitation/create\",\"params\":{"
        "\"message\":\"Name?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
        "\"name\":{\"type\":\"string\"}}}}}," META "}}";
    Conn c[2];
    yajl_val first[2] = {NULL, NULL};
    const char *names[2] = {"Alice", "Bob"};

    for (int i = 0; i < 2; i++) {
        conn_open(&c[i], h);
        conn_send(&c[i], "%s", ask);
        first[i] = conn_until(&c[i], "\"id\":\"x\"", NULL);
    }
    const char *s0 = path_string(first[0], "result", "requestState");
    const char *s1 = path_string(first[1], "result", "requestState");
    CHECK_MSG(s0 && s1 && !streq(s0, s1), "two agents share a requestState");
    for (int i = 1; i >= 0; i--) {
        yajl_val reqs = json_get_object(json_get_object(first[i], "result"), "inputRequests");
        const char *state = path_string(first[i], "result", "requestState");
        if (!reqs || reqs->u.object.len != 1 || !state) {
            CHECK_MSG(false, "agent %d got no input request", i);
            continue;
        }
        conn_send(&c[i],
                  "{\"jsonrpc\":\"2.0\",\"id\":\"y\",\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"mcp_asker_ask\",\"arguments\":{},\"inputResponses\":{\"%s\":{"
                  "\"action\":\"accept\",\"content\":{\"name\":\"%s\"}}},\"requestState\":"
                  "\"%s\"," META "}}",
                  reqs->u.object.keys[0], names[i], state);
        _cleanup_json_ yajl_val done = conn_until(&c[i], "\"id\":\"y\"", NULL);
        const char *text = json_get_string(
            json_array_at(json_get_array(json_get_object(done, "result"), "content"), 0), "text");
        CHECK_MSG(text && strstr(text, names[i]) && !strstr(text, names[1 - i]),
                  "agent %d's call ended with %s", i, text ? text : "(nothing)");
    }
    for (int i = 0; i < 2; i++) {
        json_free(first[i]);
        conn_close(&c[i]);
    }
    h_check_healthy(h, "two modern agents in MRTR at once", CONTROL);
}

/* The log level comes from each request's _meta (logging/setLevel is gone). */
static void test_log_level(Harness *h)
{
    Conn c;
    StrBuf seen = STRBUF_INIT;

    conn_open(&c, h);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"mcp_asker_say\",\"arguments\":{\"level\":\"info\",\"text\":"
                  "\"quiet-please\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" V
                  ",\"io.modelcontextprotocol/logLevel\":\"error\"}}}");
    json_free(conn_until(&c, "\"id\":1,", &seen));
    CHECK_MSG(!strstr(seen.data ? seen.data : "", "quiet-please"),
              "an info message reached an agent at level error: %s", seen.data);
    strbuf_reset(&seen);
    conn_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"mcp_asker_say\",\"arguments\":{\"level\":\"info\",\"text\":"
                  "\"loud-and-clear\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" V
                  ",\"io.modelcontextprotocol/logLevel\":\"debug\"}}}");
    json_free(conn_until(&c, "\"id\":2,", &seen));
    CHECK_MSG(strstr(seen.data ? seen.data : "", "loud-and-clear"),
              "no info message at level debug: %s", seen.data ? seen.data : "");
    strbuf_reset(&seen);
    conn_close(&c);
    /* An agent that never sent a logLevel hears no log message at all. */
    conn_open(&c, h);
    conn_send(&c,
              "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
              "\"name\":\"mcp_asker_say\",\"arguments\":{\"level\":\"error\",\"text\":"
              "\"not-asked-for\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" V "}}}");
    json_free(conn_until(&c, "\"id\":3,", &seen));
    CHECK_MSG(!strstr(seen.data ? seen.data : "", "not-asked-for"),
              "a log message reached an agent that set no logLevel: %s", seen.data);
    strbuf_deinit(&seen);
    conn_close(&c);
    h_check_healthy(h, "per-request log level", CONTROL);
}

/* libmcpc in the 2026 era: discover, stateless calls, MRTR through its handler, a session. */
typedef struct Answerer {
    mcpc_client *c;
    int asked;
} Answerer;

static void on_input(void *userdata, const char *id, const char *method, const char *params)
{
    Answerer *a = userdata;

    (void)params;
    a->asked++;
    if (streq(method, "elicitation/create"))
        CHECK(mcpc_respond(a->c, id, "{\"action\":\"accept\",\"content\":{\"name\":\"Grace\"}}") ==
              0);
    else
        CHECK(mcpc_respond_error(a->c, id, -32601, "not here") == 0);
}

static void test_libmcpc(Harness *h)
{
    mcpc_options o = {.socket_path = h->socket, .client_name = "modern-lib", .timeout_ms = 60000};
    Answerer a = {0};
    char *res = NULL;
    int is_error = -1;

    a.c = mcpc_new(&o);
    CHECK(mcpc_set_protocol_era(a.c, 7) == -EINVAL);
    CHECK(mcpc_set_protocol_era(a.c, MCPC_ERA_2026) == 0);
    mcpc_set_server_request_handler(a.c, on_input, &a);
    CHECK_MSG(mcpc_connect(a.c) == 0, "%s", mcpc_errmsg(a.c));
    CHECK(mcpc_protocol_era(a.c) == MCPC_ERA_2026);
    CHECK(mcpc_set_protocol_era(a.c, MCPC_ERA_2025) == -EISCONN);
    char *t = h_call_text(a.c, CONTROL, "{\"text\":\"from libmcpc\"}", &is_error);
    CHECK_MSG(t && strstr(t, "from libmcpc") && !is_error, "echo gave %s", t);
    free(t);
    CHECK_MSG(mcpc_session(a.c) != NULL, "no session token for a 2026-era client");
    CHECK(mcpc_call_tool(a.c, "mcp_asker_ask",
                         "{\"method\":\"elicitation/create\",\"params\":{\"message\":\"Name?\","
                         "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"name\":{"
                         "\"type\":\"string\"}}}}}",
                         &res, &is_error) == 0);
    CHECK_MSG(res && strstr(res, "Grace") && strstr(res, "\"resultType\":\"complete\""),
              "MRTR through libmcpc gave %s", res ? res : mcpc_errmsg(a.c));
    CHECK(a.asked == 1);
    free(res);
    res = NULL;

    /* mcpd lists it as a 2026-07-28 agent; a 2025 subagent joins its session. */
    mcpc_options so = {
        .socket_path = h->socket, .client_name = "modern-sub", .session = mcpc_session(a.c)};
    mcpc_client *sub = mcpc_new(&so);
    CHECK(mcpc_connect(sub) == 0);
    _cleanup_json_ yajl_val st = h_status(sub);
    yajl_val agents = json_get_array(st, "agents");
    bool seen = false, joined = false;
    for (size_t i = 0; i < json_array_len(agents); i++) {
        yajl_val ag = json_array_at(agents, i);
        if (streq(json_get_string(ag, "name"), "modern-lib"))
            seen = streq(json_get_string(ag, "protocolVersion"), "2026-07-28");
        if (streq(json_get_string(ag, "name"), "modern-sub"))
            joined = json_get(ag, "parent") != NULL;
    }
    CHECK_MSG(seen, "mcpd/status does not show modern-lib at 2026-07-28");
    CHECK_MSG(joined, "the subagent did not join the 2026-era agent's session");
    mcpc_free(sub);
    mcpc_free(a.c);

    /*
     * Without a handler libmcpc declares no elicitation: the server's request is refused. A
     * caller that declares it in its own _meta gets the input_required result as it is.
     */
    mcpc_client *plain = mcpc_new(&o);
    CHECK(mcpc_set_protocol_era(plain, MCPC_ERA_2026) == 0);
    CHECK(mcpc_connect(plain) == 0);
    CHECK(mcpc_call_tool(plain, "mcp_asker_ask",
                         "{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\","
                         "\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}",
                         &res, NULL) == 0);
    CHECK_MSG(res && strstr(res, "-32601"), "without a handler: %s",
              res ? res : mcpc_errmsg(plain));
    free(res);
    res = NULL;
    CHECK(mcpc_request(plain, "tools/call",
                       "{\"name\":\"mcp_asker_ask\",\"arguments\":{\"method\":"
                       "\"elicitation/create\",\"params\":{\"message\":\"m\",\"requestedSchema\":{"
                       "\"type\":\"object\",\"properties\":{}}}},\"_meta\":{"
                       "\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}}}}",
                       &res) == 0);
    CHECK_MSG(res && strstr(res, "input_required") && strstr(res, "requestState"),
              "a caller's own capabilities: %s", res ? res : mcpc_errmsg(plain));
    free(res);
    mcpc_free(plain);
    h_check_healthy(h, "libmcpc in the 2026 era", CONTROL);
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    Conn listener;
    _cleanup_json_ yajl_val end = NULL;
    const char *mrtr = getenv("MRTR_SERVER"), *surface = getenv("SURFACE_SERVER");
    _cleanup_free_ char *cfg = NULL;

    if (!mrtr || !surface) {
        fprintf(stderr, "MRTR_SERVER and SURFACE_SERVER must be set (run through meson)\n");
        return 1;
    }
    cfg = xasprintf("{\"mcpServers\": {"
                    "\"steady\": {\"command\": \"%s\"},"
                    "\"spare\": {\"command\": \"%s\"},"
                    "\"mrtr\": {\"command\": \"%s\"},"
                    "\"surf\": {\"command\": \"%s\", \"args\": [\"--name\", \"surf\"]},"
                    "\"asker\": {\"command\": \"%s\", \"args\": [\"--ask\"]}}}",
                    h_fake(), h_fake(), mrtr, surface, h_fake());

    h_setup(&h, "modern-agent");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "modern");
    h_settle(&h, c, "steady", "spare", "asker", "mrtr", "surf", NULL);
    test_discover(&h);
    test_stateless(&h);
    test_hostile_meta(&h);
    test_replace(&h);
    test_listen(&h, c);
    test_listen_resources(&h, c);
    test_mrtr(&h);
    test_mrtr_abandoned(&h, c);
    test_wrapped_state(&h);
    test_mrtr_two_agents(&h);
    test_log_level(&h);
    test_libmcpc(&h);
    mcpc_free(c);
    /* At shutdown an open listen gets its response: the stream ended on purpose. */
    conn_open(&listener, &h);
    conn_send(&listener, "{\"jsonrpc\":\"2.0\",\"id\":\"sub-end\","
                         "\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":{"
                         "\"toolsListChanged\":true}," META "}}");
    json_free(conn_until(&listener, "notifications/subscriptions/acknowledged", NULL));
    CHECK(h_stop(&h) == 0);
    end = conn_until(&listener, "\"id\":\"sub-end\"", NULL);
    CHECK_MSG(streq(path_string(end, "result", "resultType"), "complete"),
              "no listen response at shutdown");
    conn_close(&listener);
    h_teardown(&h);
    return h_finish("test-modern-agent");
}
