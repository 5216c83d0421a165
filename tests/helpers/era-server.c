// SPDX-License-Identifier: MIT
// era-server: a 2025-era MCP stdio server that takes mcpd's server/discover probe one way or
// another, for test-era-probe: `era-server MODE [--ignore-ping] [--chatter]`. MODE says what the
// probe gets: "error" (-32601, as the npm servers answer it), "invalid" (-32600 Invalid Request),
// "null-id" (an error whose id is null: it could not read the request), "ignore" (nothing, as
// servers that drop unknown methods do). --ignore-ping leaves ping unanswered before initialize
// too (a server that says nothing at all); --chatter sends a log notification and a stderr line
// before each answer (neither is an answer). Each request it gets is named on stderr
// ("era-server: got server/discover"), which mcpd's log shows. One tool: echo {text}.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "tests/helpers/stdio-server.h"

static const char *mode = "error";
static bool ignore_ping, chatter, initialized;

static void say_something(const char *method)
{
    if (!chatter)
        return;
    printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":"
           "\"info\",\"data\":\"era-server is about to answer %s\"}}\n",
           method);
    fflush(stdout);
    fprintf(stderr, "era-server: still here\n");
}

static void discover(yajl_val id)
{
    if (strcmp(mode, "error") == 0)
        stdio_server_error(id, -32601, "Method not found");
    else if (strcmp(mode, "invalid") == 0)
        stdio_server_error(id, -32600, "Invalid Request");
    else if (strcmp(mode, "null-id") == 0)
        stdio_server_error(NULL, -32700, "Parse error");
}

static bool request(const char *method, yajl_val id, yajl_val msg)
{
    static const char *const text_path[] = {"params", "arguments", "text", NULL};
    yajl_val text = stdio_server_get(msg, text_path, yajl_t_string);
    char buf[512];

    fprintf(stderr, "era-server: got %s\n", method);
    fflush(stderr);
    if (strcmp(method, "server/discover") == 0 && strcmp(mode, "ignore") == 0)
        return true;
    if (strcmp(method, "ping") == 0 && ignore_ping && !initialized)
        return true;
    say_something(method);
    if (strcmp(method, "server/discover") == 0)
        discover(id);
    else if (strcmp(method, "initialize") == 0) {
        initialized = true;
        return false;
    } else if (strcmp(method, "tools/list") == 0)
        stdio_server_reply(id, "{\"tools\":[{\"name\":\"echo\",\"description\":\"Echoes text.\","
                               "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{"
                               "\"type\":\"string\"}}}}]}");
    else if (strcmp(method, "tools/call") == 0) {
        /* Plain text only: the tests send letters and spaces. */
        snprintf(buf, sizeof(buf), "{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}",
                 text ? text->u.string : "");
        stdio_server_reply(id, buf);
    } else
        return false;
    return true;
}

int main(int argc, char **argv)
{
    static const StdioServer server = {
        .name = "era-server",
        .initialize = "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
                      "\"serverInfo\":{\"name\":\"era\",\"version\":\"1\"}}",
        .request = request,
    };

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ignore-ping") == 0)
            ignore_ping = true;
        else if (strcmp(argv[i], "--chatter") == 0)
            chatter = true;
        else if (argv[i][0] != '-')
            mode = argv[i];
        else {
            fprintf(stderr, "usage: era-server error|invalid|null-id|ignore [--ignore-ping] "
                            "[--chatter]\n");
            return 2;
        }
    }
    return stdio_server_run(&server);
}
