// SPDX-License-Identifier: MIT
// test-workspace: tool views (names, collisions, lookups), the start-up gate and sessions,
// against servers set by hand and a fake surface (nothing is started).

#include <errno.h>
#include <signal.h>

#include "daemon/core/toolset.h"
#include "tests/unit/core-fakes.h"

static Server *tools_server(Core *c, const char *name, const char *tools, ServerState st)
{
    ServerConfig cfg = core_cfg_disabled(name);
    Server *s = core_add_server(c, &cfg);

    s->tools = tools ? toolset_new_take(json_parse(tools, NULL)) : NULL;
    s->state = st;
    return s;
}

static void test_view_names_and_lookups(void)
{
    Core c;

    core_init(&c);
    Workspace *ws = c.workspaces.user_ws;
    Server *a =
        tools_server(&c, "alpha", "[{\"name\":\"read\"},{\"name\":\"only_a\"}]", SERVER_CONNECTED);
    /* "Alpha" names its tools as "alpha" does: mcp_alpha_read twice. */
    Server *b = tools_server(&c, "Alpha", "[{\"name\":\"read\"}]", SERVER_CONNECTED);
    const ViewTool *vt;

    ws_view_ensure(ws);
    CHECK_INTEQ(ws->n_view, 3);
    CHECK_INTEQ(ws->n_collisions, 1); /* the later one gets a suffix */
    vt = ws_view_find(ws, "mcp_alpha_only_a");
    CHECK(vt && vt->server_id == a->id && streq(vt->tool, "only_a"));
    unsigned from_a = 0, from_b = 0;
    for (size_t i = 0; i < ws->n_view; i++) {
        vt = ws_view_find(ws, ws->view[i].name); /* every exposed name finds itself */
        CHECK(vt == &ws->view[i]);
        from_a += vt->server_id == a->id && streq(vt->tool, "read");
        from_b += vt->server_id == b->id && streq(vt->tool, "read");
    }
    CHECK_INTEQ(from_a, 1);
    CHECK_INTEQ(from_b, 1);
    CHECK(strstr(ws->view_text->data, "\"mcpd/server\":\"Alpha\"") != NULL);
    CHECK(ws_view_find(ws, "nope") == NULL);
    /* A server's tools change: the view follows once rebuilt. */
    toolset_free(b->tools);
    b->tools = toolset_new_take(json_parse("[]", NULL));
    server_views_changed(&c.workspaces, b);
    CHECK(ws->dirty);
    ws_view_ensure(ws);
    CHECK_INTEQ(ws->n_view, 2);
    CHECK_INTEQ(ws->n_collisions, 0);
    vt = ws_view_find(ws, "mcp_alpha_read");
    CHECK(vt && vt->server_id == a->id);
    core_deinit(&c);
}

static void test_gate_waits_for_a_connecting_server(void)
{
    Core c;
    int fd;
    _cleanup_json_ yajl_val id = json_parse("5", NULL);

    core_init(&c);
    tools_server(&c, "ready", "[{\"name\":\"r\"}]", SERVER_CONNECTED);
    Server *slow = tools_server(&c, "slow", NULL, SERVER_CONNECTING);
    Peer *p = core_agent(&c, &fd);
    ws_list_tools(&c.workspaces, p, id);
    _cleanup_free_ char *none = core_read_line(&c, fd, CORE_QUIET_MS);
    CHECK(none == NULL); /* nothing to show for "slow" yet: the list waits */
    CHECK(c.workspaces.user_ws->waiters != NULL);
    /* Prompts wait behind the same gate. */
    ws_list_gated(&c.workspaces, p, id, 0, NULL);
    slow->tools = toolset_new_take(json_parse("[{\"name\":\"s\"}]", NULL));
    slow->state = SERVER_CONNECTED;
    server_views_changed(&c.workspaces, slow);
    _cleanup_free_ char *line = core_read_line(&c, fd, CORE_WAIT_MS);
    CHECK(line && strstr(line, "\"id\":5") && strstr(line, "\"name\":\"mcp_ready_r\"") &&
          strstr(line, "\"name\":\"mcp_slow_s\""));
    _cleanup_free_ char *second = core_read_line(&c, fd, CORE_WAIT_MS);
    CHECK(second && strstr(second, "fake list of kind 0"));
    CHECK(c.workspaces.user_ws->waiters == NULL);
    close(fd);
    core_deinit(&c);
}

static void test_sessions(void)
{
    Core c;
    int fd1, fd2, fd3;
    _cleanup_free_ char *why = NULL;

    core_init(&c);
    Peer *owner = core_agent(&c, &fd1), *sub = core_agent(&c, &fd2), *other = core_agent(&c, &fd3);
    CHECK_INTEQ(ws_attach(&c.workspaces, owner, NULL, NULL, &why), 0);
    Agent *ao = agent_get(&c.agents, owner->id), *as = agent_get(&c.agents, sub->id);
    CHECK_INTEQ(ao->workspace_id, c.workspaces.user_ws->id);
    _cleanup_free_ char *token = xstrdup(ws_peer_token(&c.workspaces, owner));
    CHECK_INTEQ(strlen(token), 2 * SESSION_TOKEN_BYTES);
    /* A subagent joins by the token: same workspace, the owner as its parent. */
    CHECK_INTEQ(ws_attach(&c.workspaces, sub, NULL, token, &why), 0);
    CHECK_INTEQ(as->parent_id, owner->id);
    CHECK_INTEQ(as->session_id, ao->session_id);
    CHECK_INTEQ(c.workspaces.user_ws->n_agents, 2);
    /* Another user's agent cannot join by a token it learnt. */
    other->uid = getuid() + 1;
    CHECK_INTEQ(ws_attach(&c.workspaces, other, NULL, token, &why), WS_E_NO_SESSION);
    CHECK(why && strstr(why, "mcpd/session"));
    free(why);
    why = NULL;
    /* The token dies with its owner; the subagent keeps its workspace. */
    ws_peer_left(&c.workspaces, owner);
    other->uid = getuid();
    CHECK_INTEQ(ws_attach(&c.workspaces, other, NULL, token, &why), WS_E_NO_SESSION);
    free(why);
    why = NULL;
    CHECK_INTEQ(c.workspaces.user_ws->n_agents, 1);
    /* A relative cwd is refused, naming the field. */
    CHECK_INTEQ(ws_attach(&c.workspaces, other, "relative/dir", NULL, &why), WS_E_BAD_CWD);
    CHECK(why && strstr(why, "mcpd/cwd") && strstr(why, "absolute"));
    close(fd1);
    close(fd2);
    close(fd3);
    core_deinit(&c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(test_view_names_and_lookups);
    RUN(test_gate_waits_for_a_connecting_server);
    RUN(test_sessions);
    return test_main_result();
}
