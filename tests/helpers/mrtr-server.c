// SPDX-License-Identifier: MIT
// mrtr-server: an MCP stdio server whose tool "form" asks for input the 2026-07-28 way (MRTR):
// called without requestState it answers {"resultType":"input_required", inputRequests: {who:
// elicitation/create}, requestState: "srv-state-<n>"}; called again with that requestState and
// inputResponses.who it answers the text "state=<requestState> name=<content.name>", so a test
// sees that the state came back to the server unchanged (test-modern-agent). Standalone on
// purpose (libc and yajl only), like fake-server.c.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

static int n_asked;

/* The id of a request as JSON text (integers and plain strings, which is all mcpd sends). */
static void put_id(yajl_val id)
{
    if (YAJL_IS_STRING(id))
        printf("\"%s\"", id->u.string);
    else if (YAJL_IS_NUMBER(id))
        fputs(id->u.number.r, stdout);
    else
        fputs("null", stdout);
}

static void reply(yajl_val id, const char *result)
{
    fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
    put_id(id);
    printf(",\"result\":%s}\n", result);
    fflush(stdout);
}

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
        reply(id, buf);
        return;
    }
    snprintf(buf, sizeof(buf),
             "{\"content\":[{\"type\":\"text\",\"text\":\"state=%s name=%s\"}]}", plain(state),
             plain(name));
    reply(id, buf);
}

static void handle(yajl_val msg)
{
    const char *method_path[] = {"method", NULL}, *id_path[] = {"id", NULL},
               *params_path[] = {"params", NULL}, *name_path[] = {"params", "name", NULL};
    yajl_val method = yajl_tree_get(msg, method_path, yajl_t_string);
    yajl_val id = yajl_tree_get(msg, id_path, yajl_t_any);
    yajl_val tool = yajl_tree_get(msg, name_path, yajl_t_string);
    const char *m = method ? method->u.string : "";

    if (!id)
        return; /* notifications need no answer */
    if (strcmp(m, "initialize") == 0)
        reply(id, "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
                  "\"serverInfo\":{\"name\":\"mrtr\",\"version\":\"1\"}}");
    else if (strcmp(m, "tools/list") == 0)
        reply(id, "{\"tools\":[{\"name\":\"form\",\"description\":\"Asks who you are (MRTR).\","
                  "\"inputSchema\":{\"type\":\"object\",\"properties\":{}}}]}");
    else if (strcmp(m, "tools/call") == 0 && tool && strcmp(tool->u.string, "form") == 0)
        form(id, yajl_tree_get(msg, params_path, yajl_t_any));
    else if (strcmp(m, "ping") == 0)
        reply(id, "{}");
    else {
        fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
        put_id(id);
        fputs(",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n", stdout);
        fflush(stdout);
    }
}

int main(void)
{
    char *line = NULL;
    size_t cap = 0;

    while (getline(&line, &cap, stdin) > 0) {
        char err[256];
        yajl_val msg = yajl_tree_parse(line, err, sizeof(err));
        if (!msg) {
            fprintf(stderr, "mrtr-server: bad request: %s\n", err);
            continue;
        }
        handle(msg);
        yajl_tree_free(msg);
    }
    free(line);
    return 0;
}
