// SPDX-License-Identifier: MIT
// test-call: calls are owned by their agent and their server (cancel, agent gone, server settled
// or removed), replies keep the agent's id, against the fake stdio server and a fake surface.

#include <signal.h>

#include "daemon/core/toolset.h"
#include "tests/unit/core-fakes.h"

/* A tools/call of name with params text, as an agent would send it. */
static void call(Core *c, Peer *p, const char *id, const char *name, const char *args)
{
    _cleanup_free_ char *text =
        xasprintf("{\"name\":\"%s\",\"arguments\":%s}", name, args ? args : "{}");
    _cleanup_json_ yajl_val params = json_parse(text, NULL);
    _cleanup_json_ yajl_val idv = json_parse(id, NULL);

    call_tool(&c->calls, p, idv, params);
}

static void check_reply(Core *c, int fd, const char *id, const char *has)
{
    _cleanup_free_ char *line = core_read_line(c, fd, CORE_WAIT_MS);
    _cleanup_free_ char *want_id = xasprintf("\"id\":%s", id);

    CHECK(line != NULL);
    if (!line)
        return;
    if (!strstr(line, want_id) || !strstr(line, has))
        fprintf(stderr, "reply %s lacks %s or %s\n", line, want_id, has);
    CHECK(strstr(line, want_id) != NULL);
    CHECK(strstr(line, has) != NULL);
}

static void check_quiet(Core *c, int fd)
{
    _cleanup_free_ char *line = core_read_line(c, fd, CORE_QUIET_MS);

    if (line)
        fprintf(stderr, "unexpected: %s\n", line);
    CHECK(line == NULL);
}

/* ---- without a session: waiting, failing, limits ---- */

static void test_unknown_tool(void)
{
    Core c;
    int fd;

    core_init(&c);
    Peer *p = core_agent(&c, &fd);
    call(&c, p, "1", "nope", NULL);
    check_reply(&c, fd, "1", "Unknown tool: nope");
    CHECK_INTEQ(c.calls.calls.n, 0);
    close(fd);
    core_deinit(&c);
}

/* A server with one tool "t" and the given state, set by hand (nothing runs). */
static Server *hand_server(Core *c, const char *name, ServerState st)
{
    ServerConfig cfg = core_cfg_disabled(name);
    Server *s = core_add_server(c, &cfg);

    s->tools = toolset_new_take(json_parse("[{\"name\":\"t\"}]", NULL));
    s->state = st;
    s->cfg->timeout_ms = CORE_WAIT_MS; /* the deferred call's own bound */
    return s;
}

static void test_deferred_call_runs_on_settle(void)
{
    Core c;
    int fd;

    core_init(&c);
    Server *s = hand_server(&c, "srv", SERVER_CONNECTING);
    Peer *p = core_agent(&c, &fd);
    call(&c, p, "\"a\"", "mcp_srv_t", NULL);
    check_quiet(&c, fd);
    /* Waiting: owned by its server and its agent. */
    CHECK_INTEQ(s->calls.n, 1);
    CHECK_INTEQ(agent_get(&c.agents, p->id)->calls.n, 1);
    CHECK_INTEQ(agent_get(&c.agents, p->id)->calls_in_flight, 1);
    /* It settles as failed: the waiting call fails with the server's state and error. */
    s->state = SERVER_FAILED;
    s->last_error = xstrdup("it broke");
    calls_server_settled(&c.calls, s);
    check_reply(&c, fd, "\"a\"", "MCP server not connected: srv (failed: it broke)");
    CHECK_INTEQ(s->calls.n, 0);
    CHECK_INTEQ(agent_get(&c.agents, p->id)->calls.n, 0);
    CHECK_INTEQ(agent_get(&c.agents, p->id)->calls_in_flight, 0);
    close(fd);
    core_deinit(&c);
}

static void test_server_removed_fails_its_calls_only(void)
{
    Core c;
    int fd;

    core_init(&c);
    Server *a = hand_server(&c, "a", SERVER_CONNECTING);
    Server *b = hand_server(&c, "b", SERVER_CONNECTING);
    Peer *p = core_agent(&c, &fd);
    call(&c, p, "1", "mcp_a_t", NULL);
    call(&c, p, "2", "mcp_b_t", NULL);
    CHECK_INTEQ(a->calls.n, 1);
    CHECK_INTEQ(b->calls.n, 1);
    calls_server_removed(&c.calls, a);
    _cleanup_free_ char *line = core_read_line(&c, fd, CORE_WAIT_MS);
    CHECK(line && strstr(line, "MCP server a was disconnected"));
    CHECK_INTEQ(a->calls.n, 0);
    CHECK_INTEQ(b->calls.n, 1);
    CHECK_INTEQ(c.calls.calls.n, 1);
    close(fd);
    core_deinit(&c);
}

static void test_cancel_by_the_agents_own_id(void)
{
    Core c;
    int fd, fd2;

    core_init(&c);
    Server *s = hand_server(&c, "srv", SERVER_CONNECTING);
    Peer *p = core_agent(&c, &fd), *q = core_agent(&c, &fd2);
    call(&c, p, "\"x\"", "mcp_srv_t", NULL);
    call(&c, p, "7", "mcp_srv_t", NULL);
    call(&c, q, "\"x\"", "mcp_srv_t", NULL); /* the same id from another agent */
    CHECK_INTEQ(s->calls.n, 3);
    _cleanup_json_ yajl_val x = json_parse("\"x\"", NULL);
    _cleanup_json_ yajl_val seven = json_parse("7", NULL);
    _cleanup_json_ yajl_val seven_text = json_parse("\"7\"", NULL);
    call_cancel(&c.calls, p, seven_text); /* "7" is not 7: nothing */
    CHECK_INTEQ(s->calls.n, 3);
    call_cancel(&c.calls, p, x);
    CHECK_INTEQ(s->calls.n, 2);
    CHECK_INTEQ(agent_get(&c.agents, q->id)->calls.n, 1);
    call_cancel(&c.calls, p, seven);
    CHECK_INTEQ(s->calls.n, 1);
    CHECK_INTEQ(agent_get(&c.agents, p->id)->calls_in_flight, 0);
    check_quiet(&c, fd); /* an abort stays an abort: no reply */
    /* q goes: its call goes with it, without a reply. */
    calls_peer_gone(&c.calls, q);
    CHECK_INTEQ(s->calls.n, 0);
    CHECK_INTEQ(agent_get(&c.agents, q->id)->calls.n, 0);
    CHECK_INTEQ(c.calls.calls.n, 0);
    close(fd);
    close(fd2);
    core_deinit(&c);
}

static void test_limit_per_agent(void)
{
    Core c;
    int fd;

    core_init(&c);
    Server *s = hand_server(&c, "srv", SERVER_CONNECTING);
    Peer *p = core_agent(&c, &fd);
    for (int i = 1; i <= AGENT_MAX_CALLS_IN_FLIGHT; i++) {
        _cleanup_free_ char *id = xasprintf("%d", i);
        call(&c, p, id, "mcp_srv_t", NULL);
    }
    CHECK_INTEQ(s->calls.n, AGENT_MAX_CALLS_IN_FLIGHT);
    call(&c, p, "\"one more\"", "mcp_srv_t", NULL);
    check_reply(&c, fd, "\"one more\"", "too many calls in flight");
    CHECK_INTEQ(s->calls.n, AGENT_MAX_CALLS_IN_FLIGHT);
    close(fd);
    core_deinit(&c);
}

/* ---- with the fake server's session ---- */

static bool connected(void *arg)
{
    Server *s = arg;
    return s->state == SERVER_CONNECTED || s->state == SERVER_FAILED;
}

static Server *fake_server(Core *c)
{
    const char *fake = getenv("FAKE_SERVER");
    ServerConfig cfg = {
        .name = "fake",
        .type = TRANSPORT_STDIO,
        .command = (char *)fake,
        .enabled = true,
        .timeout_ms = CORE_WAIT_MS,
        .call_timeout_ms = CORE_WAIT_MS,
    };
    Server *s = core_add_server(c, &cfg);

    server_connect(s);
    CHECK(core_run_until(c, connected, s, CORE_WAIT_MS));
    CHECK_INTEQ(s->state, SERVER_CONNECTED);
    return s;
}

static void test_call_through_the_fake_server(void)
{
    Core c;
    int fd;

    if (!getenv("FAKE_SERVER")) {
        printf("skip: FAKE_SERVER not set\n");
        return;
    }
    core_init(&c);
    Server *s = fake_server(&c);
    Peer *p = core_agent(&c, &fd);
    CHECK(ws_view_find(c.workspaces.user_ws, "mcp_fake_echo") != NULL);
    call(&c, p, "\"e1\"", "mcp_fake_echo", "{\"text\":\"hello\"}");
    check_reply(&c, fd, "\"e1\"", "hello");
    CHECK_INTEQ(s->calls.n, 0);
    CHECK_INTEQ(s->calls_total, 1);
    /* In flight upstream: the agent going away cancels it there, and nothing is answered. */
    call(&c, p, "2", "mcp_fake_sleep", "{\"ms\":60000}");
    CHECK_INTEQ(s->calls.n, 1);
    CHECK_INTEQ(s->calls_in_flight, 1);
    calls_peer_gone(&c.calls, p);
    CHECK_INTEQ(s->calls.n, 0);
    CHECK_INTEQ(s->calls_in_flight, 0);
    CHECK_INTEQ(c.calls.calls.n, 0);
    check_quiet(&c, fd);
    close(fd);
    core_deinit(&c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(test_unknown_tool);
    RUN(test_deferred_call_runs_on_settle);
    RUN(test_server_removed_fails_its_calls_only);
    RUN(test_cancel_by_the_agents_own_id);
    RUN(test_limit_per_agent);
    RUN(test_call_through_the_fake_server);
    return test_main_result();
}
