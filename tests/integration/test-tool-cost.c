// SPDX-License-Identifier: MIT
// test-tool-cost: mcpd/status, mcpctl status and mcpctl tools give what tool definitions cost
// a model (issue 33 item 1): per server, in total and per agent, the same figures a host's text
// of the agent's own tools/list gives.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/tokens.h"
#include "common/util.h"
#include "tests/integration/harness.h"

static int64_t get(yajl_val o, const char *key)
{
    int64_t v = -1;

    json_get_int(o, key, &v);
    return v;
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg = NULL, *list = NULL;
    TokenCost all = {0}, alpha = {0};
    int st;

    h_setup(&h, "tool-cost");
    cfg = xasprintf("{\"mcpServers\":{\"alpha\":{\"command\":\"%s\",\"args\":[\"--name\",\"alpha\","
                    "\"--tools\",\"7\"]},\"beta\":{\"command\":\"%s\",\"args\":[\"--name\","
                    "\"beta\",\"--tools\",\"2\"]}}}",
                    h_fake(), h_fake());
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "cost-agent");
    CHECK(h_wait_state(c, "alpha", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "beta", "connected", H_WAIT_MS));

    /* What a host makes of this agent's own list: the figures mcpd must give. */
    CHECK_INTEQ(mcpc_list_tools(c, &list), 0);
    _cleanup_json_ yajl_val r = json_parse(list, NULL);
    yajl_val tools = json_get_array(r, "tools");
    for (size_t i = 0; i < json_array_len(tools); i++) {
        yajl_val t = json_array_at(tools, i);
        tokens_cost_add(&all, NULL, t);
        if (streq(json_get_string(json_get_object(t, "_meta"), "mcpd/server"), "alpha"))
            tokens_cost_add(&alpha, NULL, t);
    }
    CHECK(all.tools > alpha.tools && alpha.tools > 7 && all.bytes > 1000 && all.tokens > 100);

    _cleanup_json_ yajl_val s = h_status(c);
    CHECK_INTEQ(get(h_server(s, "alpha"), "toolBytes"), alpha.bytes);
    CHECK_INTEQ(get(h_server(s, "alpha"), "toolTokens"), alpha.tokens);
    CHECK_INTEQ(get(s, "toolBytes"), all.bytes);
    CHECK_INTEQ(get(s, "toolTokens"), all.tokens);
    yajl_val agents = json_get_array(s, "agents");
    bool seen = false;
    for (size_t i = 0; i < json_array_len(agents); i++) {
        yajl_val a = json_array_at(agents, i);
        if (!streq(json_get_string(a, "name"), "cost-agent"))
            continue;
        seen = true;
        CHECK_INTEQ(get(a, "toolTokens"), all.tokens);
        CHECK_INTEQ(get(a, "toolBytes"), all.bytes);
    }
    CHECK(seen);

    /* mcpctl shows the same figures, per server and in total. */
    _cleanup_free_ char *want_total = xasprintf(" %zu %9zu %8zu", all.tools, all.bytes, all.tokens);
    _cleanup_free_ char *want_alpha =
        xasprintf(" %zu %9zu %8zu", alpha.tools, alpha.bytes, alpha.tokens);
    _cleanup_free_ char *want_agent = xasprintf(" %9zu %8zu\n", all.bytes, all.tokens);
    _cleanup_free_ char *status =
        h_shell(&st, "'%s' --socket '%s' status", getenv("MCPCTL_BINARY"), h.socket);
    CHECK_MSG(st == 0 && strstr(status, "TOOL DEFINITIONS") && strstr(status, want_total) &&
                  strstr(status, want_alpha) && strstr(status, "SHOWN TO AGENT") &&
                  strstr(status, want_agent),
              "mcpctl status: %s", status);
    _cleanup_free_ char *out =
        h_shell(&st, "'%s' --socket '%s' tools", getenv("MCPCTL_BINARY"), h.socket);
    CHECK_MSG(st == 0 && strstr(out, want_total) && strstr(out, want_alpha), "mcpctl tools: %s",
              out);

    mcpc_free(c);
    CHECK_INTEQ(h_stop(&h), 0);
    h_teardown(&h);
    return h_finish("tool-cost");
}
