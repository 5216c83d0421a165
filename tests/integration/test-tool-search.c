// SPDX-License-Identifier: MIT
// test-tool-search: mcpd/searchTools ranks an agent's tools, live and cached (a server that no
// longer starts), and answers bad input (empty, 1 MiB and binary queries, limits of 0 and 10^9),
// through the method and through the mcpd_search_tools tool, and a search while every server is
// down, with a clear answer or error, the daemon and the other agents unaffected.

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* The tools one search returns at most (WSSEARCH_LIMIT_MAX in daemon/core/wssearch.h). */
#define LIMIT_MAX 50

static yajl_val search(mcpc_client *c, const char *params, char **errp)
{
    _cleanup_free_ char *out = NULL;

    *errp = NULL;
    if (mcpc_request(c, "mcpd/searchTools", params, &out) != 0) {
        *errp = xstrdup(mcpc_errmsg(c));
        return NULL;
    }
    return json_parse(out, NULL);
}

static const char *first_name(yajl_val r)
{
    return json_get_string(json_array_at(json_get_array(r, "tools"), 0), "name");
}

static void check_error(mcpc_client *c, const char *params, const char *needle)
{
    _cleanup_free_ char *err = NULL;
    _cleanup_json_ yajl_val r = search(c, params, &err);

    CHECK_MSG(!r && err && strstr(err, needle), "%.60s: error %s", params, err ? err : "(none)");
}

static void test_bad_input(mcpc_client *c)
{
    _cleanup_free_ char *err = NULL;
    StrBuf big = STRBUF_INIT;

    check_error(c, "{}", "non-empty string");
    check_error(c, "{\"query\":\"\"}", "non-empty string");
    check_error(c, "{\"query\":7}", "non-empty string");
    check_error(c, "{\"query\":\"add\",\"limit\":0}", "limit must be");
    check_error(c, "{\"query\":\"add\",\"limit\":\"x\"}", "limit must be");
    strbuf_puts(&big, "{\"query\":\"");
    for (size_t i = 0; i < (1u << 20) / 8; i++)
        strbuf_puts(&big, "add two ");
    strbuf_puts(&big, "\"}");
    check_error(c, big.data, "at most 4096");
    strbuf_deinit(&big);

    /* A limit of 10^9 is cut to the most one search returns. */
    _cleanup_json_ yajl_val all = search(c, "{\"query\":\"tool\",\"limit\":1000000000}", &err);
    CHECK_MSG(all && json_array_len(json_get_array(all, "tools")) > 5 &&
                  json_array_len(json_get_array(all, "tools")) <= LIMIT_MAX,
              "limit 10^9: %s", err ? err : "");
    /* Binary: control characters, escapes of NUL, invalid UTF-8 (repaired by the parser). */
    _cleanup_json_ yajl_val bin =
        search(c, "{\"query\":\"\\u0000\\u0001\\u001f\xff\xfe\\u00e9\\ud83d\\ude00\"}", &err);
    CHECK_MSG(bin || err, "binary query: neither result nor error");
    if (bin)
        CHECK_INTEQ(json_array_len(json_get_array(bin, "tools")), 0);
}

/* mcpd_search_tools called as a tool: its result's text, and whether it is an error. */
static char *tool_search(mcpc_client *c, const char *args, int *is_error)
{
    return h_call_text(c, "mcpd_search_tools", args, is_error);
}

static void test_bad_tool_input(mcpc_client *c)
{
    StrBuf big = STRBUF_INIT;
    int is_error;

    static const struct {
        const char *args, *needle;
    } bad[] = {
        {"{}", "non-empty string"},
        {"{\"query\":\"\"}", "non-empty string"},
        {"{\"query\":[1]}", "non-empty string"},
        {"{\"query\":\"add\",\"limit\":0}", "limit must be"},
        {"{\"query\":\"add\",\"limit\":-3}", "limit must be"},
        {"{\"query\":\"add\",\"limit\":1.5}", "limit must be"},
    };
    for (size_t i = 0; i < N_ELEMENTS(bad); i++) {
        _cleanup_free_ char *t = tool_search(c, bad[i].args, &is_error);
        CHECK_MSG(is_error == 1 && strstr(t, bad[i].needle), "%s: %s", bad[i].args, t);
    }
    strbuf_puts(&big, "{\"query\":\"");
    for (size_t i = 0; i < (1u << 20) / 8; i++)
        strbuf_puts(&big, "add two ");
    strbuf_puts(&big, "\"}");
    _cleanup_free_ char *huge = tool_search(c, big.data, &is_error);
    CHECK_MSG(is_error == 1 && strstr(huge, "4096"), "1 MiB query: %.200s", huge);
    strbuf_deinit(&big);
    _cleanup_free_ char *many =
        tool_search(c, "{\"query\":\"tool\",\"limit\":1000000000}", &is_error);
    _cleanup_json_ yajl_val mv = json_parse(many, NULL);
    size_t n = json_array_len(json_get_array(mv, "tools"));
    CHECK_MSG(is_error == 0 && n > 5 && n <= LIMIT_MAX, "limit 10^9: %zu tools", n);
    _cleanup_free_ char *bin =
        tool_search(c, "{\"query\":\"\\u0000\\u0001\\u001f\xff\xfe\\ud83d\\ude00\"}", &is_error);
    CHECK_MSG(is_error == 0 && strstr(bin, "no tool matches"), "binary: %s", bin);
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *link = NULL, *cfg = NULL, *err = NULL;
    mcpc_client *c;

    h_setup(&h, "tool-search");
    link = xasprintf("%s/alpha-server", h.dir);
    CHECK_INTEQ(symlink(h_fake(), link), 0);
    cfg = xasprintf("{\"mcpServers\":{\"alpha\":{\"command\":\"%s\",\"args\":[\"--name\",\"alpha\","
                    "\"--tools\",\"40\"]},\"beta\":{\"command\":\"%s\",\"args\":[\"--name\","
                    "\"beta\"]}}}",
                    link, h_fake());
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "searcher");
    CHECK(h_wait_state(c, "alpha", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "beta", "connected", H_WAIT_MS));

    _cleanup_json_ yajl_val r = search(c, "{\"query\":\"sum of two numbers\"}", &err);
    CHECK_MSG(r && strstr(first_name(r) ? first_name(r) : "", "_add"), "first hit %s (%s)",
              r ? first_name(r) : "-", err ? err : "");
    yajl_val hit = json_array_at(json_get_array(r, "tools"), 0);
    CHECK(json_get_object(hit, "inputSchema") && json_get_string(hit, "description"));
    CHECK(json_array_len(json_get_array(r, "tools")) <= 5); /* the default limit */
    int64_t searched = 0;
    json_get_int(r, "searched", &searched);
    CHECK(searched > 40);
    mcpc_client *other = h_client(&h, "bystander");
    int before = h_list_count(other, NULL, NULL), is_error;
    test_bad_input(c);
    test_bad_tool_input(c);
    /* Nothing else affected: the searcher still calls, the agent beside it lists the same. */
    _cleanup_free_ char *echo = h_call_text(c, "mcp_beta_echo", "{\"text\":\"still\"}", &is_error);
    CHECK_MSG(is_error == 0 && streq(echo, "still"), "%s", echo);
    CHECK_INTEQ(h_list_count(other, NULL, NULL), before);
    mcpc_free(other);
    mcpc_free(c);
    CHECK_INTEQ(h_stop(&h), 0);

    /* alpha no longer starts: its cached tools are still found, marked deferred. */
    CHECK_INTEQ(unlink(link), 0);
    CHECK_INTEQ(symlink("/bin/false", link), 0);
    h_start(&h, NULL);
    c = h_client(&h, "searcher");
    CHECK(h_wait_state(c, "beta", "connected", H_WAIT_MS));
    _cleanup_json_ yajl_val r2 = search(c, "{\"query\":\"alpha add numbers\",\"limit\":3}", &err);
    yajl_val h2 = json_array_at(json_get_array(r2, "tools"), 0);
    CHECK_MSG(h2 && streq(json_get_string(json_get_object(h2, "_meta"), "mcpd/server"), "alpha") &&
                  YAJL_IS_TRUE(json_get(json_get_object(h2, "_meta"), "mcpd/deferred")),
              "cached alpha not found: %s", r2 ? first_name(r2) : err);
    mcpc_free(c);
    CHECK_INTEQ(h_stop(&h), 0);

    /* Every server down (none restarts): a search is still answered, from what the view
     * still holds, and a query nothing matches is said to match nothing; not an error. */
    _cleanup_free_ char *cfg3 = xasprintf(
        "{\"mcpServers\":{\"alpha\":{\"command\":\"%s\",\"args\":[\"--name\",\"alpha\","
        "\"--tools\",\"40\"],\"reconnect\":false},\"beta\":{\"command\":\"/bin/false\","
        "\"reconnect\":false},\"gamma\":{\"command\":\"/bin/false\",\"reconnect\":false}}}",
        link);
    h_write_config(&h, cfg3);
    h_start(&h, NULL);
    c = h_client(&h, "searcher");
    CHECK(h_wait_state(c, "alpha", "failed", H_WAIT_MS));
    CHECK(h_wait_state(c, "beta", "failed", H_WAIT_MS));
    CHECK(h_wait_state(c, "gamma", "failed", H_WAIT_MS));
    _cleanup_json_ yajl_val r3 = search(c, "{\"query\":\"add numbers\",\"limit\":3}", &err);
    CHECK_MSG(r3 && json_get_array(r3, "tools") && json_get(r3, "searched"), "all down: %s",
              err ? err : "no answer");
    _cleanup_free_ char *none = tool_search(c, "{\"query\":\"zzqx\"}", &is_error);
    CHECK_MSG(is_error == 0 && strstr(none, "no tool matches"), "all down, no match: %s", none);
    _cleanup_free_ char *some = tool_search(c, "{\"query\":\"add numbers\"}", &is_error);
    CHECK_MSG(is_error == 0, "all down: %s", some);
    mcpc_free(c);
    CHECK_INTEQ(h_stop(&h), 0);
    h_teardown(&h);
    return h_finish("tool-search");
}
