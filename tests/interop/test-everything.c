// SPDX-License-Identifier: MIT
// test-everything: the real @modelcontextprotocol/server-everything as a stdio upstream.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

int main(void)
{
    const char *js = getenv("EVERYTHING_JS");
    Harness h;
    mcpc_client *c;
    bool found;
    char *t;
    int is_error;

    if (!js) {
        fprintf(stderr, "EVERYTHING_JS is not set (run through tests/interop/run.sh)\n");
        return 99;
    }
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"everything\": {\"command\": \"node\", \"args\": [\"%s\", \"stdio\"],"
        " \"timeout\": 60000},"
        " \"fake\": {\"command\": \"%s\"}}}",
        js, h_fake());

    h_setup(&h, "everything");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "interop");
    CHECK(h_wait_state(c, "everything", "connected", 60000));
    CHECK(h_wait_state(c, "fake", "connected", H_WAIT_MS));
    h_list_count(c, "mcp_everything_echo", &found);
    CHECK(found);
    h_list_count(c, "mcp_everything_get_sum", &found);
    CHECK(found);

    t = h_call_text(c, "mcp_everything_echo", "{\"message\":\"hello through mcpd\"}", &is_error);
    CHECK_MSG(streq(t, "Echo: hello through mcpd") && !is_error, "echo gave %s", t);
    free(t);
    t = h_call_text(c, "mcp_everything_get_sum", "{\"a\":2,\"b\":3}", &is_error);
    CHECK_MSG(strstr(t, "5") != NULL && !is_error, "get-sum gave %s", t);
    free(t);
    /* The same daemon serves the C fake server next to it. */
    t = h_call_text(c, "mcp_fake_echo", "{\"text\":\"side by side\"}", NULL);
    CHECK(streq(t, "side by side"));
    free(t);

    yajl_val st = h_status(c);
    yajl_val ev = h_server(st, "everything");
    int64_t tools = 0;
    CHECK(json_get_int(ev, "tools", &tools) == 0 && tools >= 10);
    CHECK(streq(json_get_string(json_get_object(ev, "serverInfo"), "name"),
                "mcp-servers/everything"));
    json_free(st);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-everything");
}
