// SPDX-License-Identifier: MIT
// names-server: an MCP stdio server whose tools are named on its command line, for the tests of
// tool names (test-bridge-names). `names-server NAME...` lists one tool per NAME (letters,
// digits and "_" only); a call of NAME answers the text "NAME:" + arguments.text, so a test sees
// which tool a name reached. Its loop is stdio-server.c.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "tests/helpers/stdio-server.h"

static char **tools;
static int n_tools;

static void tools_list(yajl_val id)
{
    fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
    stdio_server_put_id(id);
    fputs(",\"result\":{\"tools\":[", stdout);
    for (int i = 0; i < n_tools; i++)
        printf("%s{\"name\":\"%s\",\"description\":\"Answers with its name.\",\"inputSchema\":"
               "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}}",
               i ? "," : "", tools[i]);
    fputs("]}}\n", stdout);
    fflush(stdout);
}

static void tools_call(yajl_val id, yajl_val params)
{
    const char *name_path[] = {"name", NULL}, *text_path[] = {"arguments", "text", NULL};
    yajl_val name = yajl_tree_get(params, name_path, yajl_t_string);
    yajl_val text = yajl_tree_get(params, text_path, yajl_t_string);

    for (int i = 0; name && i < n_tools; i++)
        if (strcmp(name->u.string, tools[i]) == 0) {
            /* Plain text only: tool names and the tests' texts are letters, digits and "_". */
            fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
            stdio_server_put_id(id);
            printf(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s:%s\"}]}}\n",
                   tools[i], text ? text->u.string : "");
            fflush(stdout);
            return;
        }
    stdio_server_error(id, -32602, "Unknown tool");
}

static bool request(const char *method, yajl_val id, yajl_val msg)
{
    static const char *const params_path[] = {"params", NULL};

    if (strcmp(method, "tools/list") == 0)
        tools_list(id);
    else if (strcmp(method, "tools/call") == 0)
        tools_call(id, stdio_server_get(msg, params_path, yajl_t_any));
    else
        return false;
    return true;
}

int main(int argc, char **argv)
{
    static const StdioServer server = {
        .name = "names-server",
        .initialize = "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
                      "\"serverInfo\":{\"name\":\"names\",\"version\":\"1\"}}",
        .request = request,
    };

    tools = argv + 1;
    n_tools = argc - 1;
    return stdio_server_run(&server);
}
