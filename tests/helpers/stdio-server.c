// SPDX-License-Identifier: MIT
// stdio-server: the JSON-RPC loop the small standalone test servers share (a line in, a reply
// out). Standalone on purpose (libc and yajl only), like fake-server.c: a bug in mcpd's own JSON
// code cannot hide behind the same bug here.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/helpers/stdio-server.h"

yajl_val stdio_server_get(yajl_val msg, const char *const *path, yajl_type t)
{
    return yajl_tree_get(msg, (const char **)path, t);
}

void stdio_server_put_id(yajl_val id)
{
    if (YAJL_IS_STRING(id))
        printf("\"%s\"", id->u.string);
    else if (YAJL_IS_NUMBER(id))
        fputs(id->u.number.r, stdout);
    else
        fputs("null", stdout);
}

void stdio_server_reply(yajl_val id, const char *result)
{
    fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
    stdio_server_put_id(id);
    printf(",\"result\":%s}\n", result);
    fflush(stdout);
}

void stdio_server_error(yajl_val id, int code, const char *message)
{
    fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
    stdio_server_put_id(id);
    printf(",\"error\":{\"code\":%d,\"message\":\"%s\"}}\n", code, message);
    fflush(stdout);
}

static void handle(const StdioServer *s, yajl_val msg)
{
    static const char *const method_path[] = {"method", NULL}, *const id_path[] = {"id", NULL};
    yajl_val method = stdio_server_get(msg, method_path, yajl_t_string);
    yajl_val id = stdio_server_get(msg, id_path, yajl_t_any);
    const char *m = method ? method->u.string : "";

    if (!id || !method)
        return; /* notifications need no answer, and no server here sends requests */
    if (s->request && s->request(m, id, msg))
        return;
    if (strcmp(m, "initialize") == 0)
        stdio_server_reply(id, s->initialize);
    else if (strcmp(m, "ping") == 0)
        stdio_server_reply(id, "{}");
    else
        stdio_server_error(id, -32601, "Method not found");
}

int stdio_server_run(const StdioServer *s)
{
    char *line = NULL;
    size_t cap = 0;

    while (getline(&line, &cap, stdin) > 0) {
        char err[256];
        yajl_val msg = yajl_tree_parse(line, err, sizeof(err));
        if (!msg) {
            fprintf(stderr, "%s: bad request: %s\n", s->name, err);
            continue;
        }
        handle(s, msg);
        yajl_tree_free(msg);
    }
    free(line);
    return 0;
}
