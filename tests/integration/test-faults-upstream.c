// SPDX-License-Identifier: MIT
// test-faults-upstream: servers that crash, hang, flood, lie and leak, against one mcpd.

/*
 * Every scenario ends with h_check_healthy(): a new control agent still gets an answer, mcpd's
 * fds are back to the baseline taken once all servers settled, and no process is left outside
 * a live server's process group. Memory is checked when mcpd exits (ASan, or valgrind with
 * `meson test --setup valgrind`): h_teardown() fails on a non-zero exit status.
 */

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/*
 * A line far over the 16 MiB default limit: streamed by the fake server, never allocated.
 * Under valgrind (MCPD_WRAPPER) mcpd reads about 1.5 MB/s, so a smaller one that still
 * crosses the limit keeps the memcheck run within its timeouts.
 */
#define HUGE_LINE_BYTES          "100000000"
#define HUGE_LINE_BYTES_VALGRIND "20000000"
/* stderr written by one server before it reads anything. */
#define FLOOD_BYTES 50000000
/* Log lines are rate-limited (a burst, then a trickle): the log must stay far below this. */
#define FLOOD_LOG_BOUND (4 * 1024 * 1024)

static char *server_error(mcpc_client *c, const char *server)
{
    _cleanup_json_ yajl_val st = h_status(c);
    const char *e = json_get_string(h_server(st, server), "lastError");
    return xstrdup(e ? e : "");
}

static int64_t server_int(mcpc_client *c, const char *server, const char *key)
{
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t v = -1;
    json_get_int(h_server(st, server), key, &v);
    return v;
}

static void expect_echo(mcpc_client *c, const char *tool, const char *text)
{
    _cleanup_free_ char *args = xasprintf("{\"text\":\"%s\"}", text);
    int is_error = -1;
    _cleanup_free_ char *t = h_call_text(c, tool, args, &is_error);
    CHECK_MSG(streq(t, text) && is_error == 0, "%s gave %s", tool, t);
}

/* The caller gets an MCP error naming the server; the server comes back with its tools. */
static void test_crash_mid_call(Harness *h, mcpc_client *c)
{
    int is_error;
    _cleanup_free_ char *t = h_call_text(c, "mcp_crashy_crash", NULL, &is_error);

    CHECK_MSG(is_error == 1 && startswith(t, "MCP error: ") && strstr(t, "crashy"), "crash gave %s",
              t);
    /* Status leaves "connected" at once: the exit was seen. */
    yajl_val st = h_status(c);
    CHECK(!streq(json_get_string(h_server(st, "crashy"), "state"), "connected"));
    json_free(st);
    expect_echo(c, CONTROL, "still here");
    CHECK(h_wait_state(c, "crashy", "connected", H_WAIT_MS));
    CHECK(server_int(c, "crashy", "restarts") == 1);
    expect_echo(c, "mcp_crashy_echo", "back");
    h_check_healthy(h, "upstream crashes mid-call", CONTROL);
}

/* Exits when initialize arrives: failed, with the exit in the error, nothing left behind. */
static void test_exit_in_initialize(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *err = server_error(c, "initexit");
    bool found;

    CHECK_MSG(strstr(err, "exit") && strstr(err, "5"), "initexit error: %s", err);
    h_list_count(c, "mcp_initexit_echo", &found);
    CHECK(!found);
    h_check_healthy(h, "upstream exits during initialize", CONTROL);
}

/* Never answers initialize: absent from the list, a timeout in status, the process killed. */
static void test_hang_init(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *err = server_error(c, "hangs");
    bool found;

    h_list_count(c, "mcp_hangs_echo", &found);
    CHECK(!found);
    CHECK_MSG(strstr(err, "timed out after 1500ms"), "hangs error: %s", err);
    CHECK(server_int(c, "hangs", "pid") == -1);
    h_check_healthy(h, "upstream hangs in initialize", CONTROL);
}

/* A call that never returns times out with an MCP error; the server answers the next one. */
static void test_hang_call(Harness *h, mcpc_client *c)
{
    int is_error;
    _cleanup_free_ char *t = h_call_text(c, "mcp_slow_sleep", "{\"ms\":600000}", &is_error);

    CHECK_MSG(is_error == 1 && startswith(t, "MCP error: ") && strstr(t, "timed out"),
              "hung call gave %s", t);
    expect_echo(c, "mcp_slow_echo", "awake");
    CHECK(server_int(c, "slow", "callsInFlight") == 0);
    h_check_healthy(h, "upstream hangs in a call", CONTROL);
}

/* Non-JSON lines on a server's stdout are skipped, not fatal (B9); stderr goes to the log. */
static void test_garbage_server(Harness *h, mcpc_client *c)
{
    expect_echo(c, "mcp_noisy_echo", "through the noise");
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "not JSON-RPC"));
    CHECK(log && strstr(log, "[noisy] stderr: "));
    h_check_healthy(h, "upstream writes garbage", CONTROL);
}

/* A 100 MB line before every answer: skipped within the limit, the answer still arrives. */
static void test_huge_line(Harness *h, mcpc_client *c)
{
    expect_echo(c, "mcp_huge_echo", "after the flood");
    expect_echo(c, "mcp_huge_echo", "and again");
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "skipping a stdout line longer than"));
    h_check_healthy(h, "upstream writes a 100 MB line (20 MB under valgrind)", CONTROL);
}

/* 50 MB of stderr: the server still works and the log is rate-limited, not flooded. */
static void test_stderr_flood(Harness *h, mcpc_client *c)
{
    struct stat st;

    expect_echo(c, "mcp_flood_echo", "heard over the noise");
    CHECK(stat(h->log, &st) == 0 && st.st_size < FLOOD_LOG_BOUND);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "stderr lines not logged"));
    /* mcpd/logs keeps a bounded tail of it. */
    _cleanup_free_ char *out = NULL;
    CHECK(mcpc_request(c, "mcpd/logs", "{\"server\":\"flood\"}", &out) == 0);
    CHECK(out && strlen(out) < 1024 * 1024 && strstr(out, "xxxx"));
    h_check_healthy(h, "upstream floods stderr", CONTROL);
}

/* Closes stdout but keeps running: reported, stopped, nothing left running. */
static void test_close_stdout(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *err = server_error(c, "closer");

    CHECK_MSG(strstr(err, "closed its stdout"), "closer error: %s", err);
    h_check_healthy(h, "upstream closes stdout but keeps running", CONTROL);
}

/* Ignores SIGTERM (and stdin EOF): a disconnect still ends it, by SIGKILL. */
static void test_ignore_sigterm(Harness *h, mcpc_client *c)
{
    int64_t pid = server_int(c, "stubborn", "pid");
    _cleanup_free_ char *out = NULL;

    CHECK(pid > 0);
    CHECK(mcpc_request(c, "mcpd/disconnect", "{\"server\":\"stubborn\"}", &out) == 0);
    for (int i = 0; i < H_WAIT_MS / 50 && pid > 0 && kill((pid_t)pid, 0) == 0; i++)
        h_sleep_ms(50);
    CHECK_MSG(kill((pid_t)pid, 0) < 0, "stubborn (pid %lld) still runs", (long long)pid);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "still running after SIGTERM: SIGKILL"));
    h_check_healthy(h, "upstream ignores SIGTERM", CONTROL);
}

/* Forks a grandchild that holds stdout (npx-style), then dies: the whole group goes. */
static void test_grandchild(Harness *h, mcpc_client *c)
{
    int is_error;
    _cleanup_free_ char *t = h_call_text(c, "mcp_gk_crash", NULL, &is_error);

    CHECK_MSG(is_error == 1 && startswith(t, "MCP error: "), "gk crash gave %s", t);
    CHECK(h_wait_state(c, "gk", "connected", H_WAIT_MS));
    expect_echo(c, "mcp_gk_echo", "new group");
    h_check_healthy(h, "upstream forks a grandchild and dies", CONTROL);
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    const char *f = h_fake();
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        "\"steady\": {\"command\": \"%1$s\"},"
        "\"crashy\": {\"command\": \"%1$s\", \"args\": [\"--name\", \"crashy\"]},"
        "\"initexit\": {\"command\": \"%1$s\", \"args\": [\"--exit-on-initialize\"],"
        " \"reconnect\": false},"
        "\"hangs\": {\"command\": \"%1$s\", \"args\": [\"--hang-init\"], \"timeout\": 1500,"
        " \"reconnect\": false},"
        "\"slow\": {\"command\": \"%1$s\", \"args\": [\"--no-progress\"], \"callTimeout\": 1500},"
        "\"noisy\": {\"command\": \"%1$s\", \"args\": [\"--garbage\", \"--stderr-noise\", \"5\"]},"
        "\"huge\": {\"command\": \"%1$s\", \"args\": [\"--huge-line\", \"%2$s\"]},"
        "\"flood\": {\"command\": \"%1$s\", \"args\": [\"--stderr-flood\", \"%3$d\"]},"
        "\"closer\": {\"command\": \"%1$s\", \"args\": [\"--close-stdout-after-init\","
        " \"--ignore-stdin-eof\"], \"reconnect\": false},"
        "\"stubborn\": {\"command\": \"%1$s\", \"args\": [\"--ignore-sigterm\","
        " \"--ignore-stdin-eof\"]},"
        "\"gk\": {\"command\": \"%1$s\", \"args\": [\"--name\", \"gk\", \"--fork-grandchild\"]}"
        "}}",
        f, getenv("MCPD_WRAPPER") ? HUGE_LINE_BYTES_VALGRIND : HUGE_LINE_BYTES, FLOOD_BYTES);

    h_setup(&h, "faults-up");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "faults");
    /* The servers that end up failed must be done with their fds before the baseline. */
    CHECK(h_wait_state(c, "initexit", "failed", H_WAIT_MS));
    CHECK(h_wait_state(c, "hangs", "failed", H_WAIT_MS));
    CHECK(h_wait_state(c, "closer", "failed", H_WAIT_MS));
    h_settle(&h, c, "steady", "crashy", "slow", "noisy", "huge", "flood", "gk", NULL);
    test_crash_mid_call(&h, c);
    test_exit_in_initialize(&h, c);
    test_hang_init(&h, c);
    test_hang_call(&h, c);
    test_garbage_server(&h, c);
    test_huge_line(&h, c);
    test_stderr_flood(&h, c);
    test_close_stdout(&h, c);
    test_ignore_sigterm(&h, c);
    test_grandchild(&h, c);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-faults-upstream");
}
