// SPDX-License-Identifier: MIT
// test-supervise: crash detection, restart with backoff, the breaker, reload, disconnect.

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

static int64_t server_int(mcpc_client *c, const char *server, const char *key)
{
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t v = -1;

    json_get_int(h_server(st, server), key, &v);
    return v;
}

/* Kill a server: status leaves "connected" at once; it comes back after a backoff. */
static void test_kill(Harness *h, mcpc_client *c)
{
    int64_t pid = server_int(c, "a", "pid");
    char *t;

    CHECK(pid > 0);
    uint64_t t0 = now_ms();
    kill((pid_t)pid, SIGKILL);
    bool left = false;
    for (int i = 0; i < 1000 && !left; i++) {
        _cleanup_json_ yajl_val st = h_status(c);
        left = !streq(json_get_string(h_server(st, "a"), "state"), "connected");
        if (!left)
            h_sleep_ms(1);
    }
    uint64_t noticed = now_ms() - t0;
    CHECK(left);
    printf("test-supervise: crash noticed after %llu ms\n", (unsigned long long)noticed);
    /* A call in the gap waits for the restart and then runs. */
    t = h_call_text(c, "mcp_a_echo", "{\"text\":\"after the crash\"}", NULL);
    CHECK_MSG(streq(t, "after the crash"), "call in the gap gave %s", t);
    free(t);
    CHECK(h_wait_state(c, "a", "connected", H_WAIT_MS));
    CHECK(server_int(c, "a", "restarts") == 1);
    CHECK(server_int(c, "a", "pid") != pid);
    (void)h;
}

/* A server that exits at once every time trips the breaker and stays failed. */
static void test_breaker(Harness *h, mcpc_client *c)
{
    (void)h;
    CHECK(h_wait_state(c, "dies", "failed", 60000));
    _cleanup_json_ yajl_val st = h_status(c);
    const char *err = json_get_string(h_server(st, "dies"), "lastError");
    CHECK_MSG(err && strstr(err, "not retrying"), "breaker error: %s", err ? err : "-");
    /* Its tools are not listed, and a call says why. */
    bool found;
    h_list_count(c, "mcp_dies_echo", &found);
    CHECK(!found);
}

/* Disconnecting "a" removes exactly its tools, not those of "a_b" (B2, B3). */
static void test_disconnect_prefix(Harness *h, mcpc_client *c)
{
    bool found;
    _cleanup_free_ char *out = NULL;

    (void)h;
    CHECK(h_wait_state(c, "a_b", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "My-Server", "connected", H_WAIT_MS));
    CHECK(mcpc_request(c, "mcpd/disconnect", "{\"server\":\"a\"}", &out) == 0);
    h_list_count(c, "mcp_a_echo", &found);
    CHECK(!found);
    h_list_count(c, "mcp_a_b_echo", &found);
    CHECK(found);
    yajl_val st = h_status(c);
    CHECK(streq(json_get_string(h_server(st, "a"), "state"), "stopped"));
    json_free(st);
    /* Sanitised names: "My-Server" disconnects cleanly too. */
    mcpc_string_free(out);
    out = NULL;
    CHECK(mcpc_request(c, "mcpd/disconnect", "{\"server\":\"My-Server\"}", &out) == 0);
    h_list_count(c, "mcp_my_server_echo", &found);
    CHECK(!found);
    mcpc_string_free(out);
    out = NULL;
    /* mcpd/connect brings "a" back. */
    CHECK(mcpc_request(c, "mcpd/connect", "{\"server\":\"a\"}", &out) == 0);
    mcpc_string_free(out);
    out = NULL;
    CHECK(mcpc_request(c, "mcpd/wait", "{\"server\":\"a\",\"timeoutMs\":20000}", &out) == 0);
    CHECK(out && strstr(out, "\"connected\":true"));
    h_list_count(c, "mcp_a_echo", &found);
    CHECK(found);
}

/* Reload after editing the config adds, removes and changes servers. */
static void test_reload(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {"
                  "\"a\": {\"command\": \"%1$s\"},"
                  "\"a_b\": {\"command\": \"%1$s\", \"args\": [\"--tools\", \"2\"]},"
                  "\"fresh\": {\"command\": \"%1$s\"}}}",
                  h_fake());
    _cleanup_free_ char *out = NULL;
    int64_t pid_a = server_int(c, "a", "pid"), pid_ab = server_int(c, "a_b", "pid");
    bool found;

    h_write_config(h, cfg);
    CHECK(mcpc_request(c, "mcpd/reload", NULL, &out) == 0);
    CHECK_MSG(out && strstr(out, "\"fresh\":\"added\"") && strstr(out, "\"dies\":\"removed\"") &&
                  strstr(out, "\"lazy\":\"removed\"") && strstr(out, "\"a_b\":\"changed\"") &&
                  strstr(out, "\"a\":\"kept\""),
              "reload gave %s", out);
    CHECK(h_wait_state(c, "fresh", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "a_b", "connected", H_WAIT_MS));
    CHECK(server_int(c, "a", "pid") == pid_a);
    CHECK(server_int(c, "a_b", "pid") != pid_ab);
    h_list_count(c, "mcp_a_b_tool1", &found);
    CHECK(found);
    h_list_count(c, "mcp_fresh_echo", &found);
    CHECK(found);
    _cleanup_json_ yajl_val st = h_status(c);
    CHECK(h_server(st, "dies") == NULL && h_server(st, "My-Server") == NULL);
    /* Exactly one process per server: nothing left over from removed or changed ones. */
    int n = -1;
    for (int i = 0; i < 300 && n != 3; i++) {
        n = h_count_tagged(h);
        if (n != 3)
            h_sleep_ms(50); /* stopped servers get up to 4 s to exit */
    }
    CHECK_MSG(n == 3, "%d processes", n);
}

/* idleTimeoutMs stops an unused server, keeps its tools listed, restarts it on a call. */
static void test_idle(Harness *h, mcpc_client *c)
{
    bool found;
    char *t;

    (void)h;
    t = h_call_text(c, "mcp_lazy_pid", NULL, NULL);
    int64_t pid = atoll(t);
    free(t);
    CHECK(pid > 0);
    CHECK(h_wait_state(c, "lazy", "idle", H_WAIT_MS));
    _cleanup_json_ yajl_val st = h_status(c);
    CHECK(YAJL_IS_TRUE(json_get(h_server(st, "lazy"), "idle")));
    /* Listed as while it runs: a call starts it (agents' lists do not change). */
    CHECK(YAJL_IS_FALSE(json_get(h_server(st, "lazy"), "toolsDeferred")));
    h_list_count(c, "mcp_lazy_echo", &found);
    CHECK(found);
    t = h_call_text(c, "mcp_lazy_pid", NULL, NULL);
    CHECK_MSG(atoll(t) > 0 && atoll(t) != pid, "woken server pid %s (was %lld)", t, (long long)pid);
    free(t);
}

/* pingIntervalMs: a server that stops answering (SIGSTOP) is marked dead and replaced. */
static void test_ping(Harness *h, mcpc_client *c)
{
    (void)h;
    CHECK(h_wait_state(c, "pinged", "connected", H_WAIT_MS));
    int64_t pid = server_int(c, "pinged", "pid");
    kill((pid_t)pid, SIGSTOP);
    bool left = false;
    for (int i = 0; i < 500 && !left; i++) {
        _cleanup_json_ yajl_val st = h_status(c);
        left = !streq(json_get_string(h_server(st, "pinged"), "state"), "connected");
        if (!left)
            h_sleep_ms(20);
    }
    CHECK(left);
    _cleanup_json_ yajl_val st = h_status(c);
    const char *err = json_get_string(h_server(st, "pinged"), "lastError");
    CHECK_MSG(err && strstr(err, "health ping failed"), "ping error: %s", err ? err : "-");
    CHECK(h_wait_state(c, "pinged", "connected", H_WAIT_MS));
    CHECK(server_int(c, "pinged", "pid") != pid);
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {"
                  "\"a\": {\"command\": \"%1$s\"},"
                  "\"a_b\": {\"command\": \"%1$s\"},"
                  "\"My-Server\": {\"command\": \"%1$s\"},"
                  "\"lazy\": {\"command\": \"%1$s\", \"idleTimeoutMs\": 400},"
                  "\"pinged\": {\"command\": \"%1$s\", \"pingIntervalMs\": 300},"
                  "\"dies\": {\"command\": \"%1$s\", \"args\": [\"--exit-immediately\"]}}}",
                  h_fake());

    h_setup(&h, "supervise");
    h_write_config(&h, cfg);
    /* test_reload checks what its own reload reports: no automatic one may come first. */
    h_write_settings(&h, "{\"hotReload\": false}");
    h_start(&h, NULL);
    c = h_client(&h, "supervise");
    CHECK(h_wait_state(c, "a", "connected", H_WAIT_MS));
    test_kill(&h, c);
    test_breaker(&h, c);
    test_idle(&h, c);
    test_ping(&h, c);
    test_disconnect_prefix(&h, c);
    test_reload(&h, c);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-supervise");
}
