// SPDX-License-Identifier: MIT
// probe-server: an MCP stdio server that tries what a sandbox decides, on request, for the
// sandbox tests: tools "read" {path}, "write" {path}, "connect" {port} (TCP to 127.0.0.1) and
// "echo" {text}. Each answers "OK:<what it read>" or "ERR:<strerror>", and says a failure on
// stderr as a server would ("probe-server: open /x: Permission denied"). With --read-at-start
// PATH it reads PATH before serving and exits 1 when it cannot (a server failing because of its
// sandbox). Its loop is stdio-server.c.

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "tests/helpers/stdio-server.h"

/* What a read gives back: the tests' files are a line; more is cut. */
#define PROBE_READ_MAX 256

/* A tool result whose text is s, JSON-escaped (only printable ASCII is kept). */
static void reply_text(yajl_val id, const char *s)
{
    fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
    stdio_server_put_id(id);
    fputs(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"", stdout);
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p >= 0x20 && *p < 0x7f)
            putchar(*p);
    }
    fputs("\"}]}}\n", stdout);
    fflush(stdout);
}

static void fail(char *out, size_t n, const char *what, const char *arg)
{
    int e = errno;

    fprintf(stderr, "probe-server: %s %s: %s\n", what, arg, strerror(e));
    snprintf(out, n, "ERR:%s", strerror(e));
}

static void do_read(const char *path, char *out, size_t n)
{
    char buf[PROBE_READ_MAX + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t k;

    if (fd < 0)
        return fail(out, n, "open", path);
    k = read(fd, buf, PROBE_READ_MAX);
    if (k < 0) {
        fail(out, n, "read", path);
        close(fd);
        return;
    }
    close(fd);
    buf[k] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(out, n, "OK:%s", buf);
}

static void do_write(const char *path, char *out, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd < 0)
        return fail(out, n, "open", path);
    if (write(fd, "written\n", 8) != 8) {
        fail(out, n, "write", path);
        close(fd);
        return;
    }
    close(fd);
    snprintf(out, n, "OK:written");
}

static void do_connect(const char *port, char *out, size_t n)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return fail(out, n, "socket", port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        fail(out, n, "connect 127.0.0.1", port);
    else
        snprintf(out, n, "OK:connected");
    close(fd);
}

static void tools_call(yajl_val id, yajl_val params)
{
    const char *name_path[] = {"name", NULL}, *path_path[] = {"arguments", "path", NULL},
               *port_path[] = {"arguments", "port", NULL},
               *text_path[] = {"arguments", "text", NULL};
    yajl_val name = yajl_tree_get(params, name_path, yajl_t_string);
    yajl_val path = yajl_tree_get(params, path_path, yajl_t_string);
    yajl_val port = yajl_tree_get(params, port_path, yajl_t_string);
    yajl_val text = yajl_tree_get(params, text_path, yajl_t_string);
    const char *tool = name ? name->u.string : "";
    char out[PROBE_READ_MAX + 64];

    if (strcmp(tool, "read") == 0 && path)
        do_read(path->u.string, out, sizeof(out));
    else if (strcmp(tool, "write") == 0 && path)
        do_write(path->u.string, out, sizeof(out));
    else if (strcmp(tool, "connect") == 0 && port)
        do_connect(port->u.string, out, sizeof(out));
    else if (strcmp(tool, "echo") == 0)
        snprintf(out, sizeof(out), "OK:%s", text ? text->u.string : "");
    else
        snprintf(out, sizeof(out), "ERR:bad call");
    reply_text(id, out);
}

static const char tools_json[] =
    "{\"tools\":["
    "{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":"
    "\"string\"}}}},"
    "{\"name\":\"write\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":"
    "\"string\"}}}},"
    "{\"name\":\"connect\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"port\":{"
    "\"type\":\"string\"}}}},"
    "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":"
    "\"string\"}}}}]}";

static bool request(const char *method, yajl_val id, yajl_val msg)
{
    static const char *const params_path[] = {"params", NULL};

    if (strcmp(method, "tools/list") == 0)
        stdio_server_reply(id, tools_json);
    else if (strcmp(method, "tools/call") == 0)
        tools_call(id, stdio_server_get(msg, params_path, yajl_t_any));
    else
        return false;
    return true;
}

int main(int argc, char **argv)
{
    static const StdioServer server = {
        .name = "probe-server",
        .initialize = "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
                      "\"serverInfo\":{\"name\":\"probe\",\"version\":\"1\"}}",
        .request = request,
    };

    if (argc == 3 && strcmp(argv[1], "--read-at-start") == 0) {
        char out[PROBE_READ_MAX + 64];
        do_read(argv[2], out, sizeof(out));
        if (strncmp(out, "OK:", 3) != 0)
            return 1;
    }
    return stdio_server_run(&server);
}
