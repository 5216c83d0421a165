// SPDX-License-Identifier: MIT
// names-server: an MCP stdio server whose tools are named on its command line, for the tests of
// tool names (test-bridge-names). `names-server NAME...` lists one tool per NAME (letters,
// digits and "_" only); a call of NAME answers the text "NAME:" + arguments.text, so a test sees
// which tool a name reached. Standalone on purpose (libc and yajl only), like fake-server.c.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

static char **tools;
static int n_tools;

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

static void tools_list(yajl_val id)
{
    fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
    put_id(id);
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
            put_id(id);
            printf(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s:%s\"}]}}\n",
                   tools[i], text ? text->u.string : "");
            fflush(stdout);
            return;
        }
    fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
    put_id(id);
    fputs(",\"error\":{\"code\":-32602,\"message\":\"Unknown tool\"}}\n", stdout);
    fflush(stdout);
}

static void handle(yajl_val msg)
{
    const char *method_path[] = {"method", NULL}, *id_path[] = {"id", NULL},
               *params_path[] = {"params", NULL};
    yajl_val method = yajl_tree_get(msg, method_path, yajl_t_string);
    yajl_val id = yajl_tree_get(msg, id_path, yajl_t_any);
    const char *m = method ? method->u.string : "";

    if (!id)
        return; /* notifications need no answer */
    if (strcmp(m, "initialize") == 0)
        reply(id, "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
                  "\"serverInfo\":{\"name\":\"names\",\"version\":\"1\"}}");
    else if (strcmp(m, "tools/list") == 0)
        tools_list(id);
    else if (strcmp(m, "tools/call") == 0)
        tools_call(id, yajl_tree_get(msg, params_path, yajl_t_any));
    else if (strcmp(m, "ping") == 0)
        reply(id, "{}");
    else {
        fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
        put_id(id);
        fputs(",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n", stdout);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    char *line = NULL;
    size_t cap = 0;

    tools = argv + 1;
    n_tools = argc - 1;
    while (getline(&line, &cap, stdin) > 0) {
        char err[256];
        yajl_val msg = yajl_tree_parse(line, err, sizeof(err));
        if (!msg) {
            fprintf(stderr, "names-server: bad request: %s\n", err);
            continue;
        }
        handle(msg);
        yajl_tree_free(msg);
    }
    free(line);
    return 0;
}
