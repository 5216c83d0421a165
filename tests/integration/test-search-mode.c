// SPDX-License-Identifier: MIT
// test-search-mode: an agent in search mode (mcpd/toolMode) starts with mcpd's two tools, finds
// a tool with mcpd_search_tools, is told list_changed, sees it join its list, calls it directly
// and through mcpd_call_tool; an agent in all mode beside it is unaffected.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* A notification that must come: generous, a loaded box may be slow. */
#define NOTE_WAIT_MS 20000

static size_t list_len(mcpc_client *c, const char *name, bool *foundp)
{
    int n = h_list_count(c, name, foundp);

    return n < 0 ? 0 : (size_t)n;
}

static bool wait_list_changed(mcpc_client *c)
{
    for (int waited = 0; waited <= NOTE_WAIT_MS; waited += 50) {
        if (mcpc_take_list_changed(c) > 0)
            return true;
        mcpc_process(c, 50);
    }
    return false;
}

static int request(mcpc_client *c, const char *method, const char *params)
{
    char *out = NULL;
    int r = mcpc_request(c, method, params, &out);

    free(out);
    return r;
}

/* What status says this agent is shown: its mode and tokens. */
static int64_t shown_tokens(mcpc_client *c, const char *name, const char **modep)
{
    static char mode[16];
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val agents = json_get_array(st, "agents");
    int64_t tokens = -1;

    for (size_t i = 0; i < json_array_len(agents); i++) {
        yajl_val a = json_array_at(agents, i);
        if (!streq(json_get_string(a, "name"), name))
            continue;
        json_get_int(a, "toolTokens", &tokens);
        snprintf(mode, sizeof(mode), "%s", json_get_string(a, "toolMode"));
    }
    *modep = mode;
    return tokens;
}

static char *call(mcpc_client *c, const char *tool, const char *args, int *is_error)
{
    char *out = NULL;

    *is_error = -1;
    if (mcpc_call_tool(c, tool, args, &out, is_error) != 0)
        return xstrdup(mcpc_errmsg(c));
    return out;
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg = NULL;
    bool found;
    int is_error;

    h_setup(&h, "search-mode");
    cfg = xasprintf("{\"mcpServers\":{\"alpha\":{\"command\":\"%s\",\"args\":[\"--name\",\"alpha\","
                    "\"--tools\",\"30\"]},\"beta\":{\"command\":\"%s\",\"args\":[\"--name\","
                    "\"beta\"]}}}",
                    h_fake(), h_fake());
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "searching-agent"), *other = h_client(&h, "all-agent");
    CHECK(h_wait_state(c, "alpha", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "beta", "connected", H_WAIT_MS));
    size_t all = list_len(other, NULL, NULL);
    CHECK(all > 40);

    /* Bad modes are refused; search mode leaves mcpd's two tools. */
    CHECK(request(c, "mcpd/toolMode", "{\"mode\":\"some\"}") != 0);
    CHECK_MSG(strstr(mcpc_errmsg(c), "\"search\" or \"all\""), "%s", mcpc_errmsg(c));
    mcpc_take_list_changed(c);
    CHECK_INTEQ(request(c, "mcpd/toolMode", "{\"mode\":\"search\"}"), 0);
    CHECK(wait_list_changed(c));
    CHECK_INTEQ(list_len(c, "mcpd_search_tools", &found), 2);
    CHECK(found);
    /* What it starts with is a small share of what the agent beside it is shown. */
    const char *mode;
    int64_t search_tokens = shown_tokens(c, "searching-agent", &mode);
    CHECK_MSG(streq(mode, "search"), "mode %s", mode);
    int64_t all_tokens = shown_tokens(c, "all-agent", &mode);
    CHECK_MSG(streq(mode, "all") && search_tokens > 0 && search_tokens * 10 < all_tokens,
              "search %lld tokens, all %lld", (long long)search_tokens, (long long)all_tokens);

    /* A search returns the tool with its schema, and the tool joins the list. */
    _cleanup_free_ char *r =
        call(c, "mcpd_search_tools", "{\"query\":\"add two numbers\"}", &is_error);
    CHECK_MSG(is_error == 0 && strstr(r, "mcp_alpha_add") && strstr(r, "inputSchema"), "search: %s",
              r);
    CHECK(wait_list_changed(c));
    size_t n = list_len(c, "mcp_alpha_add", &found);
    CHECK_MSG(found && n > 2 && n <= 2 + 5, "%zu tools after the search", n);

    /* Called under its own name, and through mcpd_call_tool. */
    _cleanup_free_ char *sum = call(c, "mcp_alpha_add", "{\"a\":2,\"b\":3}", &is_error);
    CHECK_MSG(is_error == 0 && strstr(sum, "5"), "add: %s", sum);
    _cleanup_free_ char *echo =
        call(c, "mcpd_call_tool", "{\"name\":\"mcp_beta_echo\",\"arguments\":{\"text\":\"hey\"}}",
             &is_error);
    CHECK_MSG(is_error == 0 && strstr(echo, "hey"), "call tool: %s", echo);
    _cleanup_free_ char *loop =
        call(c, "mcpd_call_tool", "{\"name\":\"mcpd_call_tool\",\"arguments\":{}}", &is_error);
    CHECK_MSG(is_error == 1, "a call of itself: %s", loop);
    _cleanup_free_ char *empty = call(c, "mcpd_search_tools", "{\"query\":\"\"}", &is_error);
    CHECK_MSG(is_error == 1 && strstr(empty, "non-empty"), "empty query: %s", empty);

    /* The agent beside it still sees everything; back in all mode, so does this one. */
    CHECK_INTEQ(list_len(other, NULL, NULL), all);
    CHECK_INTEQ(request(c, "mcpd/toolMode", "{\"mode\":\"all\"}"), 0);
    CHECK(wait_list_changed(c));
    CHECK_INTEQ(list_len(c, NULL, NULL), all);

    mcpc_free(other);
    mcpc_free(c);
    CHECK_INTEQ(h_stop(&h), 0);
    h_teardown(&h);
    return h_finish("search-mode");
}
