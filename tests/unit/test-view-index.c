// SPDX-License-Identifier: MIT
// test-view-index: a call finds its tool in the view through the name index (many tools,
// names that share prefixes, names that need JSON escapes, rebuilds).

#include "common/jsonrpc.h"
#include "daemon/core/toolset.h"
#include "tests/unit/core-fakes.h"

/* Tools of one server: enough for the index to grow past its first size many times. */
#define N_TOOLS 1000

static Server *many_tools_server(Core *c, const char *name, size_t n)
{
    ServerConfig cfg = core_cfg_disabled(name);
    Server *s = core_add_server(c, &cfg);
    StrBuf sb = STRBUF_INIT;

    strbuf_putc(&sb, '[');
    for (size_t i = 0; i < n; i++)
        strbuf_printf(&sb, "%s{\"name\":\"t%zu\"}", i ? "," : "", i);
    /* A name that needs escapes upstream. */
    strbuf_printf(&sb, "%s{\"name\":\"say \\\"hi\\\"\"}]", n ? "," : "");
    s->tools = toolset_new_take(json_parse(strbuf_str(&sb), NULL));
    s->state = SERVER_CONNECTED;
    strbuf_deinit(&sb);
    return s;
}

static void test_every_name_found_and_no_other(void)
{
    Core c;

    core_init(&c);
    Workspace *ws = c.workspaces.user_ws;
    Server *s = many_tools_server(&c, "big", N_TOOLS);
    size_t plain = 0;

    ws_view_ensure(ws);
    CHECK_INTEQ(ws->n_view, N_TOOLS + 1);
    CHECK(ws->view_index_mask + 1 >= 2 * ws->n_view);
    for (size_t i = 0; i < ws->n_view; i++) {
        const ViewTool *vt = ws_view_find(ws, ws->view[i].name);
        _cleanup_free_ char *longer = xasprintf("%sx", ws->view[i].name);
        CHECK(vt == &ws->view[i]);
        CHECK(vt->server_id == s->id);
        CHECK_INTEQ(vt->tool_len, strlen(vt->tool));
        CHECK(vt->tool_plain == jsonrpc_text_plain(vt->tool, vt->tool_len));
        plain += vt->tool_plain;
        CHECK(ws_view_find(ws, longer) == NULL);
    }
    CHECK_INTEQ(plain, N_TOOLS); /* all but the quoted one */
    CHECK(ws_view_find(ws, "") == NULL);
    CHECK(ws_view_find(ws, NULL) == NULL);
    CHECK(ws_view_find(ws, "mcp_big_t") == NULL);
    /* The tools change: the index follows the rebuilt view. */
    toolset_free(s->tools);
    s->tools = toolset_new_take(json_parse("[{\"name\":\"only\"}]", NULL));
    server_views_changed(&c.workspaces, s);
    CHECK(ws_view_find(ws, "mcp_big_t1") == NULL);
    const ViewTool *vt = ws_view_find(ws, ws->view[0].name);
    CHECK(vt && streq(vt->tool, "only"));
    core_deinit(&c);
}

/* No tools at all: nothing is found, nothing is read out of bounds. */
static void test_empty_view(void)
{
    Core c;

    core_init(&c);
    Workspace *ws = c.workspaces.user_ws;
    many_tools_server(&c, "none", 0);
    ws_view_ensure(ws);
    CHECK_INTEQ(ws->n_view, 1); /* the quoted one only */
    CHECK(ws_view_find(ws, "mcp_none_t0") == NULL);
    CHECK(ws_view_find(ws, ws->view[0].name) == &ws->view[0]);
    CHECK(!ws->view[0].tool_plain);
    core_deinit(&c);
}

int main(void)
{
    (void)core_agent, (void)core_read_line; /* core-fakes.h helpers this test has no use for */
    RUN(test_every_name_found_and_no_other);
    RUN(test_empty_view);
    return test_main_result();
}
