// SPDX-License-Identifier: MIT
// mrtr-server: an MCP stdio server whose tool "form" asks for input the 2026-07-28 way (MRTR):
// called without requestState it answers {"resultType":"input_required", inputRequests: {who:
// elicitation/create}, requestState: "srv-state-<n>"}; called again with that requestState and
// inputResponses.who it answers the text "state=<requestState> name=<content.name>", so a test
// sees that the state came back to the server unchanged (test-modern-agent). Its loop is
// stdio-server.c.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "tests/helpers/stdio-server.h"

static int n_asked;

/* Letters, digits, "-" and "_" only: what the tests send, so no JSON escaping is needed. */
static const char *plain(yajl_val v)
{
    if (!YAJL_IS_STRING(v))
        return "?";
    for (const char *p = v->u.string; *p; p++)
        if (!(*p == '-' || *p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z')))
            return "?";
    return v->u.string;
}

static void form(yajl_val id, yajl_val params)
{
    const char *state_path[] = {"requestState", NULL};
    const char *name_path[] = {"inputResponses", "who", "content", "name", NULL};
    yajl_val state = yajl_tree_get(params, state_path, yajl_t_any);
    yajl_val name = yajl_tree_get(params, name_path, yajl_t_any);
    char buf[512];

    if (!state) {
        snprintf(buf, sizeof(buf),
                 "{\"resultType\":\"input_required\",\"inputRequests\":{\"who\":{\"method\":"
                 "\"elicitation/create\",\"params\":{\"message\":\"Who?\",\"requestedSchema\":{"
                 "\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}}}},"
                 "\"requestState\":\"srv-state-%d\"}",
                 ++n_asked);
        stdio_server_reply(id, buf);
        return;
    }
    snprintf(buf, sizeof(buf), "{\"content\":[{\"type\":\"text\",\"text\":\"state=%s name=%s\"}]}",
             plain(state), plain(name));
    stdio_server_reply(id, buf);
}

static bool request(const char *method, yajl_val id, yajl_val msg)
{
    static const char *const params_path[] = {"params", NULL}, *const name_path[] = {"params",
                                                                                     "name", NULL};
    yajl_val tool = stdio_server_get(msg, name_path, yajl_t_string);

    if (strcmp(method, "tools/list") == 0)
        stdio_server_reply(id,
                           "{\"tools\":[{\"name\":\"form\",\"description\":\"Asks who you are "
                           "(MRTR).\",\"inputSchema\":{\"type\":\"object\",\"properties\":{}}}]}");
    else if (strcmp(method, "tools/call") == 0 && tool && strcmp(tool->u.string, "form") == 0)
        form(id, stdio_server_get(msg, params_path, yajl_t_any));
    else
        return false;
    return true;
}

int main(void)
{
    static const StdioServer server = {
        .name = "mrtr-server",
        .initialize = "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
                      "\"serverInfo\":{\"name\":\"mrtr\",\"version\":\"1\"}}",
        .request = request,
    };

    return stdio_server_run(&server);
}
