// SPDX-License-Identifier: MIT
// test-profiles: mcpd.json's profiles narrow what an agent sees, searches and calls; an agent
// gets one by asking (the bridge's --profile, libmcpc), by its project's .mcpd/mcpd.json or by
// its clientInfo.name; pinned tools are always shown; auto picks search mode past the token
// budget; a 2026-07-28 agent gets its profile too; an unknown profile is refused by name.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

static mcpc_client *agent(Harness *h, const char *name, const char *profile, const char *cwd,
                          int era)
{
    mcpc_options o = {.socket_path = h->socket,
                      .client_name = name,
                      .timeout_ms = 60000,
                      .profile = profile,
                      .cwd = cwd};
    mcpc_client *c = mcpc_new(&o);

    if (era == MCPC_ERA_2026)
        CHECK(mcpc_set_protocol_era(c, MCPC_ERA_2026) == 0);
    CHECK_MSG(mcpc_connect(c) == 0, "connect %s: %s", name, mcpc_errmsg(c));
    return c;
}

/* The names of the agent's tools/list, each followed by a space. */
static char *names(mcpc_client *c)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val v = NULL;
    StrBuf sb = STRBUF_INIT;

    if (mcpc_request(c, "tools/list", "{}", &out) != 0)
        return xasprintf("(list failed: %s)", mcpc_errmsg(c));
    v = json_parse(out, NULL);
    yajl_val tools = json_get_array(v, "tools");
    for (size_t i = 0; i < json_array_len(tools); i++)
        strbuf_printf(&sb, "%s ", json_get_string(json_array_at(tools, i), "name"));
    return strbuf_detach(&sb, NULL);
}

/* Whether every listed name starts with prefix (and there is one). */
static bool all_start_with(const char *list, const char *prefix)
{
    size_t n = 0;

    for (const char *p = list; *p; n++) {
        if (strncmp(p, prefix, strlen(prefix)) != 0)
            return false;
        p = strchr(p, ' ') + 1;
    }
    return n > 0;
}

/* The agent's toolMode and profile in status. */
static char *status_of(mcpc_client *c, const char *name)
{
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val agents = json_get_array(st, "agents");

    for (size_t i = 0; i < json_array_len(agents); i++) {
        yajl_val a = json_array_at(agents, i);
        if (streq(json_get_string(a, "name"), name)) {
            const char *p = json_get_string(a, "profile");
            return xasprintf("%s %s", json_get_string(a, "toolMode"), p ? p : "-");
        }
    }
    return xstrdup("(no agent)");
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg = NULL, *proj = NULL;
    int is_error;

    h_setup(&h, "profiles");
    cfg = xasprintf("{\"mcpServers\":{\"alpha\":{\"command\":\"%s\",\"args\":[\"--name\",\"alpha\","
                    "\"--tools\",\"30\"]},\"beta\":{\"command\":\"%s\",\"args\":[\"--name\","
                    "\"beta\"]}}}",
                    h_fake(), h_fake());
    h_write_config(&h, cfg);
    h_write_settings(&h, "{\"profiles\":{"
                         "\"beta-only\":{\"servers\":[\"beta\"]},"
                         "\"lean\":{\"tools\":[\"alpha/add\"],\"pinned\":[\"beta/echo\"],"
                         "\"mode\":\"search\"},"
                         "\"small-auto\":{\"servers\":[\"beta\"],\"mode\":\"auto\"},"
                         "\"big-auto\":{\"mode\":\"auto\",\"tokenBudget\":100}},"
                         "\"clientProfiles\":{\"client-b\":\"beta-only\"},"
                         "\"toolTokenBudget\":50000}");
    proj = xasprintf("%s/project", h.dir);
    CHECK(mkdir(proj, 0700) == 0);
    h_sh("mkdir -p '%s/.mcpd' && echo '{\"profile\":\"beta-only\"}' > '%s/.mcpd/mcpd.json'", proj,
         proj);
    h_start(&h, NULL);
    mcpc_client *all = h_client(&h, "all-agent");
    CHECK(h_wait_state(all, "alpha", "connected", H_WAIT_MS));
    CHECK(h_wait_state(all, "beta", "connected", H_WAIT_MS));
    _cleanup_free_ char *everything = names(all);
    CHECK_MSG(strstr(everything, "mcp_alpha_tool29 ") && strstr(everything, "mcp_beta_echo "), "%s",
              everything);

    /* Asked for (as the bridge's --profile asks): beta's tools only; alpha's not callable. */
    mcpc_client *b = agent(&h, "asker", "beta-only", NULL, MCPC_ERA_2025);
    _cleanup_free_ char *bl = names(b);
    CHECK_MSG(all_start_with(bl, "mcp_beta_") && strstr(bl, "mcp_beta_echo "), "%s", bl);
    _cleanup_free_ char *refused = h_call_text(b, "mcp_alpha_add", "{\"a\":1,\"b\":2}", &is_error);
    CHECK_MSG(is_error == -1 && strstr(refused, "not in this agent's profile beta-only"), "%s",
              refused);
    _cleanup_free_ char *echo = h_call_text(b, "mcp_beta_echo", "{\"text\":\"hi\"}", &is_error);
    CHECK_MSG(is_error == 0 && streq(echo, "hi"), "%s", echo);
    _cleanup_free_ char *bs = status_of(all, "asker");
    CHECK_MSG(streq(bs, "all beta-only"), "%s", bs);

    /* By clientInfo.name, and by the project's own setting: the same set. */
    mcpc_client *byname = agent(&h, "client-b", NULL, NULL, MCPC_ERA_2025);
    _cleanup_free_ char *nl = names(byname);
    CHECK_MSG(streq(nl, bl), "by client name: %s", nl);
    mcpc_client *byproj = agent(&h, "in-project", NULL, proj, MCPC_ERA_2025);
    _cleanup_free_ char *pl = names(byproj);
    CHECK_MSG(streq(pl, bl), "by project: %s", pl);

    /* An unknown profile is refused, naming the known ones. */
    mcpc_options o = {.socket_path = h.socket, .client_name = "lost", .profile = "nope"};
    mcpc_client *lost = mcpc_new(&o);
    CHECK(mcpc_connect(lost) != 0);
    CHECK_MSG(strstr(mcpc_errmsg(lost), "\"nope\"") && strstr(mcpc_errmsg(lost), "beta-only"), "%s",
              mcpc_errmsg(lost));
    mcpc_free(lost);

    /* Search mode with a pin: mcpd's two tools and the pinned one; the search sees the
     * profile's tools only. */
    mcpc_client *lean = agent(&h, "lean-agent", "lean", NULL, MCPC_ERA_2025);
    _cleanup_free_ char *ll = names(lean);
    CHECK_MSG(streq(ll, "mcpd_search_tools mcpd_call_tool mcp_beta_echo "), "%s", ll);
    _cleanup_free_ char *found = h_call_text(
        lean, "mcpd_search_tools", "{\"query\":\"add numbers tool\",\"limit\":50}", &is_error);
    CHECK_MSG(is_error == 0 && strstr(found, "mcp_alpha_add") && !strstr(found, "mcp_alpha_tool") &&
                  !strstr(found, "mcp_beta_add"),
              "%s", found);
    _cleanup_free_ char *ll2 = names(lean);
    CHECK_MSG(streq(ll2, "mcpd_search_tools mcpd_call_tool mcp_beta_echo mcp_alpha_add "), "%s",
              ll2);
    _cleanup_free_ char *sum = h_call_text(lean, "mcp_alpha_add", "{\"a\":2,\"b\":3}", &is_error);
    CHECK_MSG(is_error == 0 && strstr(sum, "5"), "%s", sum);

    /* auto: all under the budget, search over it (decided at the first list). */
    mcpc_client *small = agent(&h, "small-agent", "small-auto", NULL, MCPC_ERA_2025);
    mcpc_client *big = agent(&h, "big-agent", "big-auto", NULL, MCPC_ERA_2025);
    _cleanup_free_ char *sl = names(small), *bigl = names(big);
    CHECK_MSG(streq(sl, bl), "small auto: %s", sl);
    CHECK_MSG(streq(bigl, "mcpd_search_tools mcpd_call_tool "), "big auto: %s", bigl);
    _cleanup_free_ char *ss = status_of(all, "small-agent"), *bgs = status_of(all, "big-agent");
    CHECK_MSG(streq(ss, "all small-auto") && streq(bgs, "search big-auto"), "%s / %s", ss, bgs);

    /* A 2026-07-28 agent asks for its profile in each request's _meta. */
    mcpc_client *modern = agent(&h, "modern-agent", "beta-only", NULL, MCPC_ERA_2026);
    _cleanup_free_ char *ml = names(modern);
    CHECK_MSG(streq(ml, bl), "modern: %s", ml);

    /* `mcpctl bridge --profile`: the host's initialize carries it. */
    int st;
    _cleanup_free_ char *via = h_shell(
        &st,
        "printf '%%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
        "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":"
        "\"host\",\"version\":\"1\"}}}' '{\"jsonrpc\":\"2.0\",\"method\":"
        "\"notifications/initialized\"}' '{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
        "\"tools/list\"}' | '%s' --socket '%s' bridge --profile beta-only",
        getenv("MCPCTL_BINARY"), h.socket);
    CHECK_MSG(st == 0 && strstr(via, "\"mcp_beta_echo\"") && !strstr(via, "mcp_alpha_"),
              "bridge --profile: status %d: %.300s", st, via);

    /* A 2026-07-28 host through the bridge with $MCPD_TOOL_MODE: search mode, no profile. */
    _cleanup_free_ char *mvia = h_shell(
        &st,
        "printf '%%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":"
        "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
        "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"host\",\"version\":\"1\"},"
        "\"io.modelcontextprotocol/clientCapabilities\":{}}}}' | MCPD_TOOL_MODE=search '%s' "
        "--socket '%s' bridge",
        getenv("MCPCTL_BINARY"), h.socket);
    CHECK_MSG(st == 0 && strstr(mvia, "\"mcpd_search_tools\"") && !strstr(mvia, "mcp_alpha_"),
              "modern bridge, MCPD_TOOL_MODE=search: status %d: %.300s", st, mvia);

    /* `mcpctl setup --profile` writes it into the agent's entry. */
    h_sh("mkdir -p \"$HOME/.cursor\" && echo '{\"mcpServers\":{}}' > \"$HOME/.cursor/mcp.json\"");
    _cleanup_free_ char *set =
        h_shell(&st, "'%s' setup cursor --profile lean 2>&1", getenv("MCPCTL_BINARY"));
    int st2;
    _cleanup_free_ char *cur = h_shell(&st2, "cat \"$HOME/.cursor/mcp.json\"");
    CHECK_MSG(st == 0 && strstr(cur, "\"--profile\"") && strstr(cur, "\"lean\""),
              "setup --profile: status %d: %s / %s", st, set, cur);
    _cleanup_free_ char *bad =
        h_shell(&st, "'%s' setup cursor --profile 'a b' 2>&1", getenv("MCPCTL_BINARY"));
    CHECK_MSG(st == 2, "setup --profile 'a b': status %d: %s", st, bad);

    /* A 2026-07-28 agent in search mode (its profile's) finds, lists and calls a tool. */
    mcpc_client *mlean = agent(&h, "modern-lean", "lean", NULL, MCPC_ERA_2026);
    _cleanup_free_ char *mll = names(mlean);
    CHECK_MSG(streq(mll, "mcpd_search_tools mcpd_call_tool mcp_beta_echo "), "%s", mll);
    _cleanup_free_ char *mfound =
        h_call_text(mlean, "mcpd_search_tools", "{\"query\":\"add numbers\"}", &is_error);
    CHECK_MSG(is_error == 0 && strstr(mfound, "mcp_alpha_add"), "%s", mfound);
    _cleanup_free_ char *mll2 = names(mlean);
    CHECK_MSG(strstr(mll2, "mcp_alpha_add "), "%s", mll2);
    _cleanup_free_ char *msum = h_call_text(mlean, "mcp_alpha_add", "{\"a\":2,\"b\":5}", &is_error);
    CHECK_MSG(is_error == 0 && strstr(msum, "7"), "%s", msum);
    mcpc_free(mlean);

    /* Nothing of this reached the agent without a profile. */
    _cleanup_free_ char *again = names(all);
    CHECK_MSG(streq(again, everything), "%s", again);

    mcpc_free(modern);
    mcpc_free(big);
    mcpc_free(small);
    mcpc_free(lean);
    mcpc_free(byproj);
    mcpc_free(byname);
    mcpc_free(b);
    mcpc_free(all);
    CHECK_INTEQ(h_stop(&h), 0);
    h_teardown(&h);
    return h_finish("profiles");
}
