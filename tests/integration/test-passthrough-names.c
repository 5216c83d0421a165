// SPDX-License-Identifier: MIT
// test-passthrough-names: a single-server passthrough agent (initialize _meta["mcpd/server"])
// calls names its server does not list: the server answers them itself, as it would direct,
// while a tool the user's filters hide is still refused by mcpd and never reaches the server.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Silence that ends a raw read: generous, the daemon may be slow under load. */
#define READ_IDLE_MS 3000

#define PASS_INIT                                                                                  \
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"     \
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"pass\",\"version\":\"1\"},"     \
    "\"_meta\":{\"mcpd/server\":\"pt\"}}}\n"
#define CALL(id, name)                                                                             \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"" name   \
    "\",\"arguments\":{\"text\":\"x\"}}}\n"

static int64_t calls_total(mcpc_client *c)
{
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t n = -1;

    json_get_int(h_server(st, "pt"), "callsTotal", &n);
    return n;
}

/* The line of out that answers id, parsed (NULL: none). */
static yajl_val answer(const char *out, int id)
{
    char key[32];

    snprintf(key, sizeof(key), "\"id\":%d,", id);
    for (const char *line = out; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        _cleanup_free_ char *one = xstrndup(line, n);
        if (strstr(one, key))
            return json_parse(one, NULL);
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

int main(void)
{
    Harness h;

    h_setup(&h, "passthrough-names");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\":{\"pt\":{\"command\":\"%s\",\"disabledTools\":[\"add\"]}}}", h_fake());
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "watcher");
    h_settle(&h, c, "pt", NULL);

    int64_t before = calls_total(c);
    static const char hidden[] = PASS_INIT CALL(1, "add");
    int fd = h_raw_connect(&h);
    CHECK(fd >= 0 && h_raw_write(fd, hidden, strlen(hidden)));
    _cleanup_free_ char *out1 = h_raw_read(fd, READ_IDLE_MS);
    close(fd);
    _cleanup_json_ yajl_val a1 = answer(out1, 1);
    yajl_val e1 = json_get_object(a1, "error");
    CHECK_MSG(e1 && strstr(json_get_string(e1, "message"), "Unknown tool: add"),
              "a filtered tool is refused by mcpd: %s", out1 ? out1 : "-");
    CHECK_MSG(calls_total(c) == before, "the filtered call reached the server (%lld -> %lld)",
              (long long)before, (long long)calls_total(c));

    static const char unknown[] = PASS_INIT CALL(2, "nosuch") CALL(3, "echo");
    fd = h_raw_connect(&h);
    CHECK(fd >= 0 && h_raw_write(fd, unknown, strlen(unknown)));
    _cleanup_free_ char *out2 = h_raw_read(fd, READ_IDLE_MS);
    close(fd);
    _cleanup_json_ yajl_val a2 = answer(out2, 2), a3 = answer(out2, 3);
    CHECK_MSG(calls_total(c) == before + 2, "the unknown name went to the server: %lld -> %lld",
              (long long)before, (long long)calls_total(c));
    /* The server's own refusal comes back (as the error result mcpd makes of errors). */
    CHECK_MSG(a2 && strstr(out2, "Unknown tool: nosuch"), "the server's answer: %s",
              out2 ? out2 : "-");
    CHECK_MSG(json_get_object(a3, "result"), "echo still works: %s", out2 ? out2 : "-");

    h_check_healthy(&h, "passthrough-names", "mcp_pt_echo");
    mcpc_free(c);
    h_teardown(&h);
    return h_finish("passthrough-names");
}
