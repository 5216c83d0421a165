// SPDX-License-Identifier: MIT
// test-hostile-json: JSON past mcpd's limits (depth, values, UTF-8) from agents, servers, cache.

/*
 * Every text mcpd reads is parsed under JSON_MAX_DEPTH and JSON_MAX_VALUES with strict UTF-8.
 * Agents get -32600 naming the problem; a server's answer past a limit fails that call (or its
 * tools/list) with a message naming the limit; a cache file past it is a logged miss. Each
 * scenario ends with h_check_healthy(): mcpd came through and serves everyone else.
 */

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Depths from issue 13: 1M levels fit in 2 MB before initialize, 100k in any later message. */
#define DEEP_AGENT  1000000
#define DEEP_SERVER 100000
/* 8M elements as "0," take 16,000,000 bytes: a legal line under the 16 MiB default. */
#define BIG_ELEMENTS 8000000
/* Silence after which a raw read gives up: generous, the box is shared and runs ASan. */
#define RAW_READ_MS 60000

/* A line: prefix, n "[", "0", n "]", suffix, "\n". */
static char *nested_line(const char *prefix, long n, const char *suffix)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, prefix);
    for (long i = 0; i < n; i++)
        strbuf_putc(&sb, '[');
    strbuf_putc(&sb, '0');
    for (long i = 0; i < n; i++)
        strbuf_putc(&sb, ']');
    strbuf_puts(&sb, suffix);
    strbuf_putc(&sb, '\n');
    return strbuf_detach(&sb, NULL);
}

/* Read from fd until a complete line holding marker came, or RAW_READ_MS of silence. */
static char *read_until(int fd, const char *marker)
{
    StrBuf sb = STRBUF_INIT;
    char buf[65536];
    const char *hit;

    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        ssize_t n;
        if (poll(&pfd, 1, RAW_READ_MS) <= 0 || (n = read(fd, buf, sizeof(buf))) <= 0)
            break;
        strbuf_append(&sb, buf, (size_t)n);
        if ((hit = strstr(strbuf_str(&sb), marker)) && strchr(hit, '\n'))
            break;
    }
    return strbuf_detach(&sb, NULL);
}

/*
 * Send lines on a raw connection (after initialize when init). Then read until a line holding
 * marker came, or, when marker is NULL, shut the write side and read to EOF.
 */
static char *raw_exchange(Harness *h, bool init, const char *lines, const char *marker)
{
    int fd = h_raw_connect(h);
    char *out;

    CHECK(fd >= 0);
    if (init)
        CHECK(h_raw_write(fd, h_raw_initialize, strlen(h_raw_initialize)));
    CHECK(h_raw_write(fd, lines, strlen(lines)));
    if (marker) {
        out = read_until(fd, marker);
    } else {
        shutdown(fd, SHUT_WR);
        out = h_raw_read(fd, RAW_READ_MS);
    }
    close(fd);
    return out;
}

/* Whether out is valid UTF-8 with no lone surrogate escapes, as a strict client demands. */
static bool strict_utf8(const char *out)
{
    Utf8Problem prob;
    bool ok = utf8_json_check(out, strlen(out), &prob, NULL);

    if (!ok)
        fprintf(stderr, "invalid UTF-8 at byte %zu (%s)\n", prob.offset, prob.why);
    return ok;
}

static void test_agent_deep(Harness *h)
{
    _cleanup_free_ char *ping = nested_line(
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"a\":", DEEP_AGENT, "}}");
    _cleanup_free_ char *out = raw_exchange(h, false, ping, NULL);
    CHECK_MSG(strstr(out, "\"id\":7,\"error\":{\"code\":-32600") &&
                  strstr(out, "nested deeper than 128 levels"),
              "got %.300s", out);
    free(out);

    _cleanup_free_ char *call =
        nested_line("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                    "\"params\":{\"name\":\"" CONTROL "\",\"arguments\":{\"x\":",
                    DEEP_SERVER, "}}}");
    out = raw_exchange(h, true, call, NULL);
    CHECK_MSG(strstr(out, "\"id\":8,\"error\":{\"code\":-32600") &&
                  strstr(out, "nested deeper than 128 levels"),
              "got %.300s", out);
    h_check_healthy(h, "agent sends JSON nested 1M and 100k deep", CONTROL);
}

/*
 * A ping whose params hold an array of n zeros, from a child process: refused when n passes
 * JSON_MAX_VALUES (the message, its four members, the array and the zeros are all values),
 * answered otherwise.
 */
static void send_big_ping(Harness *h, long n)
{
    StrBuf sb = STRBUF_INIT;
    bool refused = n + 6 > JSON_MAX_VALUES;

    strbuf_puts(&sb, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"a\":[0");
    for (long i = 1; i < n; i++)
        strbuf_append(&sb, ",0", 2);
    strbuf_puts(&sb, "]}}\n");
    _cleanup_free_ char *out = raw_exchange(h, true, strbuf_str(&sb), NULL);
    if (refused)
        CHECK_MSG(strstr(out, "\"id\":9,\"error\":{\"code\":-32600") &&
                      strstr(out, "values in one JSON text"),
                  "got %.300s", out);
    else
        CHECK_MSG(strstr(out, "\"id\":9,\"result\":{}"), "got %.300s", out);
    strbuf_deinit(&sb);
}

/*
 * An agent sends a ping holding an array of n zeros (8M make 16 MB, a legal line). Meanwhile
 * another agent keeps pinging; its longest wait is printed for the record (never checked: the
 * box is shared and runs ASan).
 */
static void big_ping_beside(Harness *h, mcpc_client *c, long n)
{
    uint64_t worst = 0;
    int status = 0, n_pings = 0;
    pid_t pid = fork();

    if (pid == 0) {
        send_big_ping(h, n);
        _exit(h_failures ? 1 : 0);
    }
    CHECK(pid > 0);
    while (pid > 0 && waitpid(pid, &status, WNOHANG) == 0) {
        _cleanup_free_ char *res = NULL;
        uint64_t t0 = now_ms();
        CHECK(mcpc_request(c, "ping", NULL, &res) == 0);
        uint64_t dt = now_ms() - t0;
        worst = dt > worst ? dt : worst;
        n_pings++;
        h_sleep_ms(5);
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the ping of %ld zeros went wrong", n);
    fprintf(stderr, "ping of %ld zeros: %d pings from another agent meanwhile, worst %llu ms\n", n,
            n_pings, (unsigned long long)worst);
}

static void test_agent_big(Harness *h, mcpc_client *c)
{
    big_ping_beside(h, c, BIG_ELEMENTS);
    /* The largest message accepted: the most a parse can hold the loop. */
    big_ping_beside(h, c, JSON_MAX_VALUES - 6);
    h_check_healthy(h, "agent sends an array of 8M elements, and one just within the limit",
                    CONTROL);
}

static void test_server_deep_and_big(Harness *h, mcpc_client *c)
{
    int is_error = 0;
    _cleanup_free_ char *deep = h_call_text(c, "mcp_hostile_deep", "{}", &is_error);
    CHECK_MSG(is_error != 0 && strstr(deep, "nested deeper than 128 levels"), "got %d %s", is_error,
              deep);
    _cleanup_free_ char *big = h_call_text(c, "mcp_hostile_big", "{}", &is_error);
    CHECK_MSG(is_error != 0 && strstr(big, "values in one JSON text"), "got %d %s", is_error, big);
    /* The server itself is still fine for calls within the limits. */
    _cleanup_free_ char *echo = h_call_text(c, "mcp_hostile_echo", "{\"text\":\"hi\"}", NULL);
    CHECK_MSG(streq(echo, "echo:hi"), "got %s", echo);
    h_check_healthy(h, "server answers nested 100k deep and with 8M elements", CONTROL);
}

static void test_bad_utf8(Harness *h)
{
    _cleanup_free_ char *out =
        raw_exchange(h, true,
                     "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"mcp_hostile_bad_utf8\",\"arguments\":{}}}\n",
                     "\"id\":11,");
    CHECK(strict_utf8(out));
    CHECK_MSG(strstr(out, "\"id\":10,\"result\"") && strstr(out, "mcp_hostile_bad_utf8"),
              "got %.300s", out);
    CHECK_MSG(strstr(out, "overlong " UTF8_REPLACEMENT), "got %.2000s", out);
    /* The answer to the call (forwarded as bytes when valid) is repaired the same way. */
    const char *call = strstr(out, "\"id\":11,\"result\"");
    CHECK_MSG(call && strstr(call, "escaped " UTF8_REPLACEMENT " and " UTF8_REPLACEMENT "x"),
              "got %.500s", call ? call : out);
    free(out);

    /* An agent's own invalid UTF-8 is refused, and not echoed back raw. */
    out = raw_exchange(h, true,
                       "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"nope\xc0\xaf\",\"arguments\":{}}}\n"
                       "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"nope\\udc00\",\"arguments\":{}}}\n"
                       "/* \" */ {\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tools/call\","
                       "\"params\":{\"name\":\"nope\\udc00\",\"arguments\":{}}}\n",
                       NULL);
    CHECK(strict_utf8(out));
    CHECK_MSG(strstr(out, "\"id\":12,\"error\":{\"code\":-32600") && strstr(out, "overlong form"),
              "got %.500s", out);
    CHECK_MSG(strstr(out, "\"id\":13,\"error\":{\"code\":-32600") && strstr(out, "surrogate"),
              "got %.500s", out);
    /* A quote in a comment does not hide the escape from the check (the comment before the
     * message keeps its id from being recovered, so the refusal goes to id null). */
    const char *after = strstr(out, "\"id\":13");
    const char *null_id = after ? strstr(after, "\"id\":null,\"error\":{\"code\":-32600") : NULL;
    CHECK_MSG(null_id && strstr(null_id, "lone UTF-16 surrogate escape"), "got %s", after);
    h_check_healthy(h, "invalid UTF-8 from a server and from an agent", CONTROL);
}

static void test_int64_min_id(Harness *h)
{
    _cleanup_free_ char *out = raw_exchange(
        h, true, "{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775808,\"method\":\"ping\"}\n", NULL);
    CHECK_MSG(strstr(out, "\"id\":-9223372036854775808,\"result\":{}"), "got %.300s", out);
    h_check_healthy(h, "INT64_MIN id", CONTROL);
}

/* A server whose inputSchema is nested 100k deep: failed with a clear lastError, no crash. */
static void check_deep_schema(mcpc_client *c)
{
    _cleanup_json_ yajl_val st = NULL;
    const char *err = NULL;

    for (int i = 0; i < H_WAIT_MS / 100; i++) {
        st = json_free(st);
        st = h_status(c);
        err = json_get_string(h_server(st, "deepschema"), "lastError");
        if (err && strstr(err, "nested deeper than 128 levels"))
            break;
        h_sleep_ms(100);
    }
    CHECK_MSG(err && strstr(err, "nested deeper than 128 levels"), "lastError %s",
              err ? err : "(none)");
}

/* Replace every cache file of server name with JSON nested DEEP_AGENT deep. */
static int plant_deep_cache(Harness *h, const char *name)
{
    _cleanup_free_ char *cmd = xasprintf("ls %s/cache/mcpd/tools/%s-*.json", h->dir, name);
    _cleanup_free_ char *deep = nested_line("", DEEP_AGENT, "");
    FILE *ls = popen(cmd, "r");
    char path[1024];
    int n = 0;

    while (ls && fgets(path, sizeof(path), ls)) {
        path[strcspn(path, "\n")] = '\0';
        FILE *f = fopen(path, "w");
        CHECK(f && fputs(deep, f) >= 0);
        if (f)
            fclose(f);
        n++;
    }
    if (ls)
        pclose(ls);
    return n;
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    const char *hostile = getenv("HOSTILE_SERVER");
    _cleanup_free_ char *cfg = NULL;

    if (!hostile) {
        fprintf(stderr, "HOSTILE_SERVER is not set\n");
        return 1;
    }
    cfg = xasprintf("{\"mcpServers\": {"
                    "\"steady\": {\"command\": \"%1$s\"},"
                    "\"hostile\": {\"command\": \"%2$s\", \"args\": [\"--deep-result\", \"%3$d\","
                    " \"--big-result\", \"%4$d\", \"--bad-utf8\"], \"callTimeout\": 120000},"
                    "\"deepschema\": {\"command\": \"%2$s\", \"args\": [\"--deep-schema\","
                    " \"%3$d\"]}"
                    "}}",
                    h_fake(), hostile, DEEP_SERVER, BIG_ELEMENTS);
    signal(SIGPIPE, SIG_IGN);
    h_setup(&h, "hostile-json");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "hostile");
    check_deep_schema(c);
    h_settle(&h, c, "steady", "hostile", NULL);
    test_agent_deep(&h);
    test_agent_big(&h, c);
    test_server_deep_and_big(&h, c);
    test_bad_utf8(&h);
    test_int64_min_id(&h);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);

    /* Restart: no crash loop from what the first run saw, and a deep cache file is a miss. */
    CHECK_MSG(plant_deep_cache(&h, "steady") > 0, "no cache file for steady to plant");
    h_start(&h, NULL);
    c = h_client(&h, "hostile-2");
    check_deep_schema(c);
    h_settle(&h, c, "steady", "hostile", NULL);
    _cleanup_free_ char *log = h_read_file(h.log);
    CHECK_MSG(log && strstr(log, "cache miss") && strstr(log, "nested deeper than 128 levels"),
              "the planted cache file was not reported");
    h_check_healthy(&h, "restart with a cache file nested 1M deep", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-hostile-json");
}
