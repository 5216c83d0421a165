// SPDX-License-Identifier: MIT
// test-basic: list and call across two servers, concurrent clients, paging, error results.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define N_CLIENTS 6
#define N_CALLS   40

static void write_two_servers(Harness *h)
{
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        "\"alpha\": {\"command\": \"%s\", \"args\": [\"--name\", \"alpha\", \"--tools\", \"3\"]},"
        "\"beta-2\": {\"command\": \"%s\", \"args\": [\"--name\", \"beta\", \"--page-size\", "
        "\"2\", \"--tools\", \"5\"], \"env\": {\"FAKE_GREETING\": \"hello from env\"}}"
        "}}",
        h_fake(), h_fake());
    h_write_config(h, cfg);
}

static void test_list_and_status(Harness *h)
{
    mcpc_client *c = h_client(h, "basic");
    bool found;
    int n;

    CHECK(h_wait_state(c, "alpha", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "beta-2", "connected", H_WAIT_MS));
    /* 10 builtin tools each, plus 3 and 5 generic ones; beta's come in pages of 2. */
    n = h_list_count(c, "mcp_beta_2_tool4", &found);
    CHECK_MSG(n == 10 + 3 + 10 + 5, "tools/list gave %d tools", n);
    CHECK(found);
    h_list_count(c, "mcp_alpha_echo", &found);
    CHECK(found);

    yajl_val st = h_status(c);
    yajl_val a = h_server(st, "alpha"), b = h_server(st, "beta-2");
    int64_t tools = 0, pid = 0;
    CHECK(json_get_int(a, "tools", &tools) == 0 && tools == 13);
    CHECK(json_get_int(b, "tools", &tools) == 0 && tools == 15);
    CHECK(json_get_int(a, "pid", &pid) == 0 && pid > 0);
    CHECK(streq(json_get_string(a, "transport"), "stdio"));
    json_free(st);

    /* The tools/list is sorted by name and carries mcpd's _meta. */
    char *out = NULL;
    CHECK(mcpc_list_tools(c, &out) == 0);
    yajl_val r = json_parse(out, NULL);
    yajl_val tl = json_get_array(r, "tools");
    for (size_t i = 1; i < json_array_len(tl); i++)
        CHECK(strcmp(json_get_string(json_array_at(tl, i - 1), "name"),
                     json_get_string(json_array_at(tl, i), "name")) < 0);
    yajl_val first = json_array_at(tl, 0), meta = json_get_object(first, "_meta");
    CHECK(streq(json_get_string(meta, "mcpd/server"), "alpha"));
    CHECK(streq(json_get_string(meta, "mcpd/path"), "mcp:alpha via mcpd (user)"));
    CHECK(YAJL_IS_FALSE(json_get(meta, "mcpd/deferred")));
    CHECK(json_get_object(json_get_object(first, "inputSchema"), "properties") != NULL);
    json_free(r);
    mcpc_string_free(out);
    mcpc_free(c);
}

static void test_calls(Harness *h)
{
    mcpc_client *c = h_client(h, "calls");
    char *t;
    int is_error;

    t = h_call_text(c, "mcp_alpha_echo", "{\"text\":\"ping \\\"quoted\\\"\\n\"}", &is_error);
    CHECK_MSG(streq(t, "ping \"quoted\"\n") && is_error == 0, "echo gave %s", t);
    free(t);
    t = h_call_text(c, "mcp_beta_2_add", "{\"a\":2,\"b\":40}", &is_error);
    CHECK_MSG(streq(t, "42"), "add gave %s", t);
    free(t);
    t = h_call_text(c, "mcp_beta_2_env", "{\"name\":\"FAKE_GREETING\"}", &is_error);
    CHECK_MSG(streq(t, "hello from env"), "env gave %s", t);
    free(t);
    /* Stdio servers start in $HOME by default. */
    t = h_call_text(c, "mcp_alpha_cwd", NULL, &is_error);
    CHECK_MSG(strstr(t, "/home") != NULL, "cwd gave %s", t);
    free(t);

    /* An upstream JSON-RPC error becomes an isError result with the original under _meta. */
    char *out = NULL;
    CHECK(mcpc_call_tool(c, "mcp_alpha_fail", NULL, &out, &is_error) == 0 && is_error);
    yajl_val r = json_parse(out, NULL);
    yajl_val text = json_array_at(json_get_array(r, "content"), 0);
    CHECK(startswith(json_get_string(text, "text"), "MCP error: "));
    CHECK(strstr(json_get_string(text, "text"), "fake failure") != NULL);
    int64_t code = 0;
    CHECK(json_get_int(json_get_object(json_get_object(r, "_meta"), "mcpd/error"), "code", &code) ==
              0 &&
          code == -32603);
    json_free(r);
    mcpc_string_free(out);

    /* An upstream isError result passes through unchanged. */
    t = h_call_text(c, "mcp_alpha_tool_error", NULL, &is_error);
    CHECK(streq(t, "tool said no") && is_error == 1);
    free(t);

    /* A large result (5 MB) arrives whole. */
    t = h_call_text(c, "mcp_alpha_big", "{\"bytes\":5000000}", &is_error);
    CHECK(strlen(t) == 5000000 && t[0] == 'x' && t[4999999] == 'x');
    free(t);

    /* An unknown tool is an invalid-params error, not a result. */
    CHECK(mcpc_call_tool(c, "mcp_nosuch_tool", NULL, &out, NULL) == MCPC_E_RPC);
    CHECK(strstr(mcpc_errmsg(c), "Unknown tool") != NULL);
    mcpc_free(c);
}

/* Several processes at once, each calling both servers; every answer is its own. */
static void test_concurrent(Harness *h)
{
    pid_t pids[N_CLIENTS];

    for (int i = 0; i < N_CLIENTS; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            mcpc_client *c = h_client(h, "worker");
            int bad = 0;
            for (int k = 0; k < N_CALLS; k++) {
                char args[64], want[64];
                snprintf(args, sizeof(args), "{\"text\":\"w%d-%d\"}", i, k);
                snprintf(want, sizeof(want), "w%d-%d", i, k);
                char *t = h_call_text(c, k % 2 ? "mcp_alpha_echo" : "mcp_beta_2_echo", args, NULL);
                if (!streq(t, want)) {
                    /* Say what came instead, so a failure under load can be told apart. */
                    fprintf(stderr, "worker %d call %d: got \"%s\", want \"%s\"\n", i, k,
                            t ? t : "(null)", want);
                    bad++;
                }
                free(t);
                if (k % 10 == 0) {
                    t = h_call_text(c, "mcp_alpha_sleep", "{\"ms\":50}", NULL);
                    free(t);
                }
            }
            mcpc_free(c);
            _exit(bad ? 1 : 0);
        }
    }
    for (int i = 0; i < N_CLIENTS; i++) {
        int st;
        waitpid(pids[i], &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "worker %d status 0x%x", i, st);
    }
}

/* mcpctl status, as a person would run it, shows both servers connected with tool counts. */
static void test_mcpctl(Harness *h)
{
    const char *ctl = getenv("MCPCTL_BINARY");
    char cmd[1024], line[512];
    FILE *p;
    bool alpha = false, beta = false;

    if (!ctl)
        return;
    snprintf(cmd, sizeof(cmd), "MCPD_SOCKET='%s' '%s' status", h->socket, ctl);
    p = popen(cmd, "r");
    while (fgets(line, sizeof(line), p)) {
        if (startswith(line, "alpha ") && strstr(line, "connected") && strstr(line, " 13 "))
            alpha = true;
        if (startswith(line, "beta-2 ") && strstr(line, "connected") && strstr(line, " 15 "))
            beta = true;
    }
    CHECK(pclose(p) == 0);
    CHECK(alpha && beta);
    snprintf(cmd, sizeof(cmd), "MCPD_SOCKET='%s' '%s' call mcp_alpha_tool_error >/dev/null",
             h->socket, ctl);
    CHECK(WEXITSTATUS(system(cmd)) == 1);
    snprintf(cmd, sizeof(cmd), "MCPD_SOCKET='%s' '%s' call mcp_alpha_add '{\"a\":1,\"b\":2}'",
             h->socket, ctl);
    p = popen(cmd, "r");
    CHECK(fgets(line, sizeof(line), p) && streq(line, "3\n"));
    CHECK(pclose(p) == 0);
    snprintf(cmd, sizeof(cmd), "MCPD_SOCKET='%s/nope' '%s' status 2>/dev/null", h->dir, ctl);
    CHECK(WEXITSTATUS(system(cmd)) == 3);
}

int main(void)
{
    Harness h;

    h_setup(&h, "basic");
    write_two_servers(&h);
    h_start(&h, NULL);
    test_list_and_status(&h);
    h.baseline_fds = h_mcpd_fds(&h);
    test_calls(&h);
    test_concurrent(&h);
    test_mcpctl(&h);
    /* Clients came and went: mcpd holds no more fds than when it settled. */
    mcpc_client *c = h_client(&h, "fds");
    mcpc_free(c);
    h_sleep_ms(100);
    int fds = h_mcpd_fds(&h);
    CHECK_MSG(fds <= h.baseline_fds, "fds %d vs baseline %d", fds, h.baseline_fds);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-basic");
}
