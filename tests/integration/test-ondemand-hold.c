// SPDX-License-Identifier: MIT
// test-ondemand-hold: what keeps a lazy server up past its idle timeout (issue 34): an MCP task
// in flight, and `mcpctl pin SERVER` until `mcpctl unpin SERVER` (or its end); each server
// goes idle once what held it is gone.

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"
#include "tests/integration/raw.h"

/* Short, so the test takes seconds; the checks wait on states, never on times. */
#define IDLE_MS "300"
/* Longer than IDLE_MS several times over: a server not held would be idle by then. */
#define PAST_IDLE_MS 1500
/* The task's length: it must outlast PAST_IDLE_MS on a loaded machine too. */
#define TASK_MS "6000"

/* A task not yet completed keeps its server up; once it completes the server goes idle. */
static void test_task_keeps_up(Harness *h, mcpc_client *c)
{
    Raw r;
    _cleanup_free_ char *state = NULL;

    raw_init(&r, h, "tasker", NULL);
    raw_send(&r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"mcp_tasky_task_sleep\",\"arguments\":{\"ms\":" TASK_MS
                 "},\"task\":{\"ttl\":60000}}}");
    _cleanup_free_ char *created = raw_read_text(&r, H_WAIT_MS);
    CHECK_MSG(created && strstr(created, "\"taskId\"") && strstr(created, "\"working\""),
              "no CreateTaskResult: %s", created);
    CHECK(h_wait_state(c, "tasky", "connected", H_WAIT_MS));
    int64_t pid = h_server_int(c, "tasky", "pid");
    h_sleep_ms(PAST_IDLE_MS);
    state = h_server_str(c, "tasky", "state");
    CHECK_MSG(streq(state, "connected") && h_server_int(c, "tasky", "pid") == pid,
              "a server with a task in flight was stopped (%s)", state);
    /* The task completes (its status notification or the poll's end): then idle. */
    CHECK_MSG(h_wait_state(c, "tasky", "idle", H_WAIT_MS + 6000),
              "the server stayed up after its task completed");
    raw_close(&r);
}

/*
 * A task whose result was fetched holds nothing, even when its server never said it ended
 * (no notifications/tasks/status): mcpd keeps it to its ttl for tasks/get, not its server.
 */
static void test_fetched_task_holds_nothing(Harness *h, mcpc_client *c)
{
    Raw r;

    raw_init(&r, h, "fetcher", NULL);
    raw_send(&r,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"mcp_silent_task_sleep\",\"arguments\":{\"ms\":100},\"task\":{\"ttl\":600000}}}");
    _cleanup_free_ char *created = raw_read_text(&r, H_WAIT_MS);
    const char *at = created ? strstr(created, "\"taskId\":\"") : NULL;
    CHECK_MSG(at, "no CreateTaskResult: %s", created);
    if (!at)
        return raw_close(&r);
    at += strlen("\"taskId\":\"");
    _cleanup_free_ char *tid = xstrndup(at, strcspn(at, "\""));
    raw_send(&r,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks/result\",\"params\":"
             "{\"taskId\":\"%s\"}}",
             tid);
    _cleanup_free_ char *result = raw_read_text(&r, H_WAIT_MS);
    CHECK_MSG(result && strstr(result, "task slept 100 ms"), "tasks/result: %s", result);
    /* The agent stays: only the task could hold the server now. */
    CHECK_MSG(h_wait_state(c, "silent", "idle", H_WAIT_MS), "a fetched task kept its server up");
    raw_close(&r);
}

/* `mcpctl pin` holds a server up; `mcpctl unpin` ends it and the server goes idle. */
static void test_pin_command(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *out = xasprintf("%s/pin.out", h->dir);
    int st = -1;
    pid_t holder = fork();

    if (holder == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        execl(getenv("MCPCTL_BINARY"), "mcpctl", "--socket", h->socket, "pin", "held",
              (char *)NULL);
        _exit(127);
    }
    /* Pinning an idle server starts it. */
    CHECK_MSG(h_wait_state(c, "held", "connected", H_WAIT_MS), "mcpctl pin did not start it");
    int64_t pid = h_server_int(c, "held", "pid");
    CHECK_INTEQ(h_server_int(c, "held", "pins"), 1);
    h_sleep_ms(PAST_IDLE_MS);
    _cleanup_free_ char *state = h_server_str(c, "held", "state");
    CHECK_MSG(streq(state, "connected") && h_server_int(c, "held", "pid") == pid,
              "a pinned server was stopped (%s)", state);

    _cleanup_free_ char *text =
        h_shell(&st, "'%s' --socket '%s' unpin held 2>&1", getenv("MCPCTL_BINARY"), h->socket);
    CHECK_MSG(st == 0 && strstr(text, "unpinned held"), "unpin (%d): %s", st, text);
    CHECK_MSG(waitpid(holder, &st, 0) == holder && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "mcpctl pin ended with %d", st);
    _cleanup_free_ char *said = h_read_file(out);
    CHECK_MSG(said && strstr(said, "pinned held (") && strstr(said, "unpinned held"),
              "mcpctl pin said: %s", said);
    CHECK_MSG(h_wait_state(c, "held", "idle", H_WAIT_MS), "unpinned, it stayed up");

    /* Nothing to unpin: said, and a failing exit. */
    _cleanup_free_ char *none =
        h_shell(&st, "'%s' --socket '%s' unpin held 2>&1", getenv("MCPCTL_BINARY"), h->socket);
    CHECK_MSG(st != 0 && strstr(none, "no `mcpctl pin held` is running"), "(%d): %s", st, none);
    /* An unknown server: mcpd's error, a failing exit. */
    _cleanup_free_ char *unknown =
        h_shell(&st, "'%s' --socket '%s' pin nowhere 2>&1", getenv("MCPCTL_BINARY"), h->socket);
    CHECK_MSG(st != 0 && strstr(unknown, "nowhere"), "(%d): %s", st, unknown);
}

int main(void)
{
    Harness h;

    h_setup(&h, "ondemand-hold");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        "\"tasky\": {\"command\": \"%1$s\", \"args\": [\"--tasks\"], \"idleTimeoutMs\": " IDLE_MS
        "},"
        "\"silent\": {\"command\": \"%1$s\", \"args\": [\"--tasks-silent\"], "
        "\"idleTimeoutMs\": " IDLE_MS "},"
        "\"held\": {\"command\": \"%1$s\", \"idleTimeoutMs\": " IDLE_MS "}}}",
        h_fake());
    h_write_config(&h, cfg);
    h_write_settings(&h, "{\"start\": \"lazy\"}"); /* the default, which the harness changes */
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "ondemand-hold");
    /* No cache yet: each starts once to fill it, then goes idle. */
    CHECK(h_wait_state(c, "tasky", "idle", H_WAIT_MS));
    CHECK(h_wait_state(c, "held", "idle", H_WAIT_MS));
    CHECK(h_wait_state(c, "silent", "idle", H_WAIT_MS));

    test_task_keeps_up(&h, c);
    test_fetched_task_holds_nothing(&h, c);
    test_pin_command(&h, c);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    if (h_failures)
        h_dump_log(&h);
    h_teardown(&h);
    return h_finish("test-ondemand-hold");
}
