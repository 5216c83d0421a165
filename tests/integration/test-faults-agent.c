// SPDX-License-Identifier: MIT
// test-faults-agent: agents that send garbage, huge lines, floods and stray messages.

/*
 * Raw socket clients write bytes mcpc never would. Every scenario ends with
 * h_check_healthy(): a new control agent still gets an answer, mcpd's fds are back to the
 * baseline, and no process is left over.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Far over the 16 MiB default maxMessageBytes this test runs with. */
#define HUGE_LINE_BYTES (100u * 1024u * 1024u)
#define N_FLOOD_CALLS   5000
/* 1 MiB results, more of them than the 64 MiB output queue (4 x maxMessageBytes) holds. */
#define N_BIG_CALLS 100
#define N_CONNS     1000

/* Send a request and return what came back until EOF (the writer side is shut). */
static char *exchange(Harness *h, const char *text)
{
    int fd = h_raw_connect(h);
    char *out;

    CHECK(fd >= 0);
    CHECK(h_raw_write(fd, text, strlen(text)));
    shutdown(fd, SHUT_WR);
    out = h_raw_read(fd, 20000);
    close(fd);
    return out;
}

/* Garbage is answered with -32700 and the connection dropped; a batch with -32600. */
static void test_garbage(Harness *h)
{
    char *out = exchange(h, "this is not json\n");
    CHECK_MSG(strstr(out, "-32700") != NULL, "got %s", out);
    free(out);
    out = exchange(h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n"
                      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
    CHECK_MSG(strstr(out, "-32600") && strstr(out, "\"id\":2,\"result\":{}"), "got %s", out);
    free(out);
    /* Binary junk, NULs and invalid UTF-8 included. */
    static const char bin[] = "\x00\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":\x01}\n";
    int fd = h_raw_connect(h);
    CHECK(h_raw_write(fd, bin, sizeof(bin) - 1));
    free(h_raw_read(fd, 20000));
    close(fd);
    h_check_healthy(h, "agent sends garbage", CONTROL);
}

/* Requests before initialize are refused; unknown methods are -32601. */
static void test_protocol_errors(Harness *h)
{
    _cleanup_free_ char *text =
        xasprintf("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\"}\n%s"
                  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no/such\"}\n",
                  h_raw_initialize);
    _cleanup_free_ char *out = exchange(h, text);
    CHECK_MSG(strstr(out, "\"id\":\"a\",\"error\""), "got %s", out);
    CHECK_MSG(strstr(out, "\"mcpd/session\":\""), "got %s", out);
    CHECK_MSG(strstr(out, "\"id\":2,\"error\":{\"code\":-32601"), "got %s", out);
    h_check_healthy(h, "agent breaks the protocol", CONTROL);
}

/* A 100 MB line: refused once past maxMessageBytes and dropped, never buffered whole. */
static void test_huge_line(Harness *h)
{
    static char chunk[65536];
    int fd = h_raw_connect(h);
    size_t sent = 0;

    memset(chunk, 'a', sizeof(chunk));
    CHECK(fd >= 0);
    while (sent < HUGE_LINE_BYTES && h_raw_write(fd, chunk, sizeof(chunk)))
        sent += sizeof(chunk);
    CHECK_MSG(sent < HUGE_LINE_BYTES, "mcpd read all %zu bytes of one line", sent);
    _cleanup_free_ char *out = h_raw_read(fd, 20000);
    CHECK_MSG(strstr(out, "maxMessageBytes") != NULL, "got %s", out);
    close(fd);
    h_check_healthy(h, "agent sends a 100 MB line", CONTROL);
}

/* Half a line, then gone; and a whole request, then gone before the answer. */
static void test_vanish(Harness *h)
{
    int fd = h_raw_connect(h);
    CHECK(h_raw_write(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,", 24));
    close(fd);

    static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                               "{\"name\":\"mcp_steady_sleep\",\"arguments\":{\"ms\":500}}}\n";
    fd = h_raw_connect(h);
    CHECK(h_raw_write(fd, h_raw_initialize, strlen(h_raw_initialize)));
    CHECK(h_raw_write(fd, call, sizeof(call) - 1));
    h_sleep_ms(100);
    close(fd);
    h_sleep_ms(800); /* the answer arrives for a peer that is gone */
    h_check_healthy(h, "agent vanishes mid-line and mid-call", CONTROL);
}

/* Pipelines many requests, never reads: small answers queue; huge ones get it dropped. */
static void test_no_reading(Harness *h)
{
    StrBuf sb = STRBUF_INIT;
    int fd = h_raw_connect(h);

    strbuf_puts(&sb, h_raw_initialize);
    for (int i = 1; i <= N_FLOOD_CALLS; i++)
        strbuf_printf(&sb,
                      "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"" CONTROL "\",\"arguments\":{\"text\":\"flood %d\"}}}\n",
                      i, i);
    CHECK(h_raw_write(fd, sb.data, sb.len));
    /* Others are served while it sits on its answers. */
    mcpc_client *c = h_client(h, "beside");
    int is_error;
    _cleanup_free_ char *t = h_call_text(c, CONTROL, "{\"text\":\"beside\"}", &is_error);
    CHECK(streq(t, "beside"));
    mcpc_free(c);
    close(fd);
    h_check_healthy(h, "agent sends thousands of requests without reading", CONTROL);

    strbuf_reset(&sb);
    fd = h_raw_connect(h);
    strbuf_puts(&sb, h_raw_initialize);
    for (int i = 1; i <= N_BIG_CALLS; i++)
        strbuf_printf(&sb,
                      "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"mcp_steady_big\",\"arguments\":{\"bytes\":1048576}}}\n",
                      i);
    CHECK(h_raw_write(fd, sb.data, sb.len));
    strbuf_deinit(&sb);
    /* mcpd drops it once its queue passes the bound: our reads then end in EOF. */
    CHECK_MSG(h_wait_log(h, "the client is not reading", 4 * H_WAIT_MS),
              "a client that never reads 100 MB of answers was not dropped");
    close(fd);
    h_check_healthy(h, "agent never reads 100 MB of answers", CONTROL);
}

/* 1000 connections at once, each initialized and answered, then all gone. */
static void test_many_connections(Harness *h)
{
    static int fds[N_CONNS];
    int answered = 0;

    for (int i = 0; i < N_CONNS; i++) {
        fds[i] = h_raw_connect(h);
        if (fds[i] < 0 || !h_raw_write(fds[i], h_raw_initialize, strlen(h_raw_initialize)))
            fprintf(stderr, "connection %d: %s\n", i, strerror(errno));
    }
    for (int i = 0; i < N_CONNS; i++) {
        if (fds[i] < 0)
            continue;
        shutdown(fds[i], SHUT_WR);
        _cleanup_free_ char *out = h_raw_read(fds[i], 30000);
        answered += strstr(out, "\"protocolVersion\"") != NULL;
    }
    CHECK_MSG(answered == N_CONNS, "%d of %d connections answered", answered, N_CONNS);
    /* While they are all still open, the daemon serves others. */
    mcpc_client *c = h_client(h, "during");
    int is_error;
    _cleanup_free_ char *t = h_call_text(c, CONTROL, "{\"text\":\"among many\"}", &is_error);
    CHECK(streq(t, "among many"));
    mcpc_free(c);
    for (int i = 0; i < N_CONNS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    h_check_healthy(h, "1000 agents connect at once", CONTROL);
}

/* Cancels for ids never sent, of every type, and responses nobody asked for: all ignored. */
static void test_stray_messages(Harness *h)
{
    _cleanup_free_ char *text = xasprintf(
        "%s"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
        "12345}}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
        "\"nope\",\"reason\":\"x\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
        "null}}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
        "{\"a\":1}}}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
        "cancelled\",\"params\":{\"requestId\":0}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"error\":{\"code\":-1,\"message\":\"no\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
        h_raw_initialize);
    _cleanup_free_ char *out = exchange(h, text);
    CHECK_MSG(strstr(out, "\"id\":1,\"result\":{}"), "got %s", out);
    /* Exactly two answers: initialize and the ping. */
    size_t lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++)
        lines++;
    CHECK_MSG(lines == 2, "%zu answers: %s", lines, out);
    h_check_healthy(h, "agent cancels unknown ids and sends stray responses", CONTROL);
}

int main(void)
{
    Harness h;
    struct rlimit rl;
    mcpc_client *c;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());

    /* 1000 connections need the fds on both ends; mcpd raises its own soft limit too. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    h_setup(&h, "faults-agent");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "faults");
    /* c stays open to the end, so the baseline and every check count the same clients. */
    h_settle(&h, c, "steady", NULL);
    test_garbage(&h);
    test_protocol_errors(&h);
    test_huge_line(&h);
    test_vanish(&h);
    test_no_reading(&h);
    test_stray_messages(&h);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= N_CONNS + 64)
        test_many_connections(&h);
    else
        printf("test-faults-agent: 1000-connection check skipped (fd limit %llu)\n",
               (unsigned long long)rl.rlim_cur);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-faults-agent");
}
