// SPDX-License-Identifier: MIT
// test-ondemand: lazy start and idle stop (issue 34 item 1): a stdio server with cached tools
// starts on its first call and stops when unused; a subscription, a call in flight or a pin
// keeps it up; status says idle apart from failed; agents' tools/list is the same bytes
// whether servers run or are idle; a lazy start that fails reports its cause to the caller.

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/util.h"
#include "tests/integration/harness.h"
#include "tests/integration/raw.h"

/* Short, so the test takes seconds; the checks wait on states, never on times. */
#define IDLE_MS "400"

/* The agent's tools/list answer, byte for byte (always under id 7). */
static char *raw_tools(Raw *r)
{
    raw_send(r, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}");
    for (;;) {
        char *line = raw_read_text(r, H_WAIT_MS);
        if (!line || !strstr(line, "\"method\":\"notifications/"))
            return line; /* not a list_changed or the like */
        free(line);
    }
}

static void check_state(mcpc_client *c, const char *server, const char *want)
{
    _cleanup_free_ char *st = h_server_str(c, server, "state");

    CHECK_MSG(streq(st, want), "%s is %s, not %s", server, st, want);
}

static void on_slow_done(void *ud, unsigned long long id, int status, const char *json)
{
    (void)id, (void)json;
    *(int *)ud = status == 0 ? 1 : -1;
}

/* A pin, a subscription and a call in flight each start an idle server and keep it up. */
static void test_kept_up(Harness *h, mcpc_client *c, Raw *r, const char *idle_list)
{
    mcpc_client *slow = h_client(h, "slow");
    _cleanup_free_ char *pin = NULL, *sub = NULL;
    unsigned long long call_id;
    int done = 0;
    int64_t pids[3];
    const char *names[] = {"pinned", "sub", "busy"};

    /* From idle: a pin, a subscription and a call each start their server. */
    for (int i = 0; i < 3; i++)
        CHECK_MSG(h_wait_state(c, names[i], "idle", H_WAIT_MS), "%s never went idle", names[i]);
    CHECK(mcpc_request(c, "mcpd/pin", "{\"server\":\"pinned\"}", &pin) == 0);
    CHECK(mcpc_request(c, "resources/subscribe", "{\"uri\":\"mem://shared\"}", &sub) == 0);
    CHECK(mcpc_call_tool_async(slow, "mcp_busy_sleep", "{\"ms\":2500}", on_slow_done, NULL, &done,
                               &call_id) == 0);
    CHECK(mcpc_dispatch(slow) == 0);
    for (int i = 0; i < 3; i++) {
        CHECK(h_wait_state(c, names[i], "connected", H_WAIT_MS));
        pids[i] = h_server_int(c, names[i], "pid");
    }
    /* "a" goes idle after its timeout; the three are still up, the same processes. */
    CHECK(h_wait_state(c, "a", "idle", H_WAIT_MS));
    h_sleep_ms(1000);
    for (int i = 0; i < 3; i++) {
        check_state(c, names[i], "connected");
        CHECK_MSG(h_server_int(c, names[i], "pid") == pids[i], "%s was restarted", names[i]);
    }
    CHECK_INTEQ(h_server_int(c, "pinned", "pins"), 1);
    _cleanup_free_ char *some_idle = raw_tools(r);
    CHECK_MSG(some_idle && streq(some_idle, idle_list), "list with some idle:\n%s\nvs\n%s",
              some_idle, idle_list);

    /* Each goes idle once what held it is gone. */
    for (int i = 0; !done && i < H_WAIT_MS / 50; i++) {
        struct pollfd pfd = {mcpc_fd(slow), POLLIN, 0};
        poll(&pfd, 1, 50);
        mcpc_dispatch(slow);
    }
    CHECK_MSG(done == 1, "the slow call: %d", done);
    CHECK(h_wait_state(c, "busy", "idle", H_WAIT_MS));
    mcpc_free(slow);
    _cleanup_free_ char *unpin = NULL, *unsub = NULL;
    CHECK(mcpc_request(c, "mcpd/pin", "{\"server\":\"pinned\",\"pinned\":false}", &unpin) == 0);
    CHECK(h_wait_state(c, "pinned", "idle", H_WAIT_MS));
    CHECK(mcpc_request(c, "resources/unsubscribe", "{\"uri\":\"mem://shared\"}", &unsub) == 0);
    CHECK(h_wait_state(c, "sub", "idle", H_WAIT_MS));
}

/* A lazy start that fails: the caller reads the cause, status says failed; the next call
 * tries again. */
static void test_failed_start(Harness *h, mcpc_client *c, const char *flag)
{
    int is_error = 0;

    h_sh("touch '%s'", flag);
    _cleanup_free_ char *t = h_call_text(c, "mcp_broken_pid", NULL, &is_error);
    CHECK_MSG(is_error == 1 && strstr(t, "broken") && strstr(t, "broken on purpose"),
              "failed lazy start: %s", t);
    check_state(c, "broken", "failed");
    _cleanup_free_ char *err = h_server_str(c, "broken", "lastError");
    CHECK_MSG(strstr(err, "broken on purpose"), "lastError: %s", err);
    unlink(flag);
    _cleanup_free_ char *again = h_call_text(c, "mcp_broken_pid", NULL, &is_error);
    CHECK_MSG(is_error == 0 && atoll(again) > 0, "after the fix: %s", again);
    (void)h;
}

int main(void)
{
    Harness h;
    Raw r;
    const char *surface = getenv("SURFACE_SERVER");

    h_setup(&h, "ondemand");
    _cleanup_free_ char *flag = xasprintf("%s/broken-flag", h.dir);
    _cleanup_free_ char *broken_sh = xasprintf(
        "test -e '%s' && { echo broken on purpose >&2; exit 3; }; exec '%s'", flag, h_fake());
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {"
                  "\"a\": {\"command\": \"%1$s\", \"idleTimeoutMs\": " IDLE_MS "},"
                  "\"pinned\": {\"command\": \"%1$s\", \"idleTimeoutMs\": " IDLE_MS "},"
                  "\"busy\": {\"command\": \"%1$s\", \"idleTimeoutMs\": " IDLE_MS "},"
                  "\"sub\": {\"command\": \"%2$s\", \"args\": [\"--name\", \"sub\"], "
                  "\"idleTimeoutMs\": " IDLE_MS "},"
                  "\"broken\": {\"command\": \"/bin/sh\", \"args\": [\"-c\", \"%3$s\"], "
                  "\"idleTimeoutMs\": " IDLE_MS "},"
                  "\"eager\": {\"command\": \"%1$s\", \"start\": \"eager\"}}}",
                  h_fake(), surface, broken_sh);
    h_write_config(&h, cfg);
    h_write_settings(&h, "{\"start\": \"lazy\"}"); /* the default, which the harness changes */

    /* No cache yet: every server starts once to fill it, then the lazy ones go idle. */
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "ondemand");
    const char *lazy[] = {"a", "pinned", "busy", "sub", "broken"};
    for (size_t i = 0; i < N_ELEMENTS(lazy); i++)
        CHECK_MSG(h_wait_state(c, lazy[i], "idle", H_WAIT_MS), "%s never went idle", lazy[i]);
    CHECK_INTEQ(h_server_int(c, "a", "restarts"), 0);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);

    /* Restarted with the cache: the lazy ones are idle without having run, the eager one up. */
    h_start(&h, NULL);
    c = h_client(&h, "ondemand");
    CHECK(h_wait_state(c, "eager", "connected", H_WAIT_MS));
    for (size_t i = 0; i < N_ELEMENTS(lazy); i++) {
        check_state(c, lazy[i], "idle");
        CHECK_MSG(h_server_int(c, lazy[i], "pid") < 0, "%s runs", lazy[i]);
    }
    {
        _cleanup_json_ yajl_val st = h_status(c);
        CHECK(YAJL_IS_TRUE(json_get(h_server(st, "a"), "idle")));
        CHECK(YAJL_IS_FALSE(json_get(h_server(st, "a"), "toolsDeferred")));
        CHECK_STREQ(json_get_string(h_server(st, "a"), "start"), "lazy");
        CHECK_STREQ(json_get_string(h_server(st, "eager"), "start"), "eager");
    }
    /* mcpctl status: "idle" shown, and an idle server is no reason for a failing exit. */
    int status = -1;
    _cleanup_free_ char *text =
        h_shell(&status, "'%s' --socket '%s' status 2>&1", getenv("MCPCTL_BINARY"), h.socket);
    CHECK_MSG(status == 0 && strstr(text, "idle"), "mcpctl status (%d):\n%s", status, text);

    raw_init_caps(&r, &h, "lister", NULL, "{}");
    _cleanup_free_ char *idle_list = raw_tools(&r);
    CHECK(idle_list && strstr(idle_list, "mcp_a_pid"));
    /* mcpd's fds with only the eager server up: the lazy starts must leave none behind. */
    h_settle(&h, c, "eager", NULL);

    /* The first call starts the server and waits for it. */
    _cleanup_free_ char *pid = h_call_text(c, "mcp_a_pid", NULL, NULL);
    CHECK_MSG(atoll(pid) > 0, "lazy start: %s", pid);
    check_state(c, "a", "connected");
    _cleanup_free_ char *p2 = h_call_text(c, "mcp_pinned_pid", NULL, NULL);
    _cleanup_free_ char *p3 = h_call_text(c, "mcp_busy_pid", NULL, NULL);
    int sub_error = -1;
    _cleanup_free_ char *p4 = h_call_text(c, "mcp_sub_echo", "{}", &sub_error);
    _cleanup_free_ char *p5 = h_call_text(c, "mcp_broken_pid", NULL, NULL);
    CHECK(atoll(p2) > 0 && atoll(p3) > 0 && atoll(p5) > 0);
    CHECK_MSG(sub_error == 0, "sub's first call: %s", p4);
    _cleanup_free_ char *running_list = raw_tools(&r);
    CHECK_MSG(running_list && streq(running_list, idle_list), "running:\n%s\nidle:\n%s",
              running_list, idle_list);

    test_kept_up(&h, c, &r, idle_list);
    CHECK(h_wait_state(c, "broken", "idle", H_WAIT_MS));
    _cleanup_free_ char *idle_again = raw_tools(&r);
    CHECK_MSG(idle_again && streq(idle_again, idle_list), "idle again:\n%s", idle_again);
    /* An idle stop is no failure: no restart counted, no backoff. */
    CHECK_INTEQ(h_server_int(c, "a", "restarts"), 0);

    test_failed_start(&h, c, flag);
    raw_close(&r);
    /* As at the start: only the eager server runs (no fd left of the lazy starts). */
    CHECK(h_wait_state(c, "broken", "idle", H_WAIT_MS));
    CHECK(h_check_healthy(&h, "ondemand", "mcp_eager_echo"));
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-ondemand");
}
