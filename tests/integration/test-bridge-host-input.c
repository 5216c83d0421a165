// SPDX-License-Identifier: MIT
// test-bridge-host-input: what a host may write to `mcpctl bridge` that once cost it its messages.

/*
 * Found by attacking the daemon (task h-red): a line of only spaces or tabs went on to mcpd,
 * which cannot parse it and closes the connection, so every later request of the host was
 * lost; and a last request written without its newline before the host closed stdin was
 * dropped without a word. The bridge now skips blank lines and ends a last unterminated one.
 */

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
#define INIT                                                                                       \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"     \
    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"host\",\"version\":\"1\"}}}\\n"
#define INITIALIZED "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\\n"

/* printf input | mcpctl bridge; its stdout. input is printf text inside single quotes. */
static char *bridge(Harness *h, const char *input, int *statusp)
{
    return h_shell(statusp, "printf '%s' | '%s' --socket '%s' bridge", input,
                   getenv("MCPCTL_BINARY"), h->socket);
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *out = NULL, *out2 = NULL;
    int st;

    h_setup(&h, "bridge-host-input");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "bridge-host-input");
    h_settle(&h, c, "steady", NULL);

    /* Blank lines of spaces, tabs and a CR between requests: the session goes on. */
    out = bridge(&h,
                 INIT INITIALIZED "   \\n\\t \\t\\n \\r\\n"
                                  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\\n",
                 &st);
    CHECK_MSG(st == 0 && strstr(out, "\"id\":2,\"result\":{}"), "status %d, output %s", st, out);
    CHECK_MSG(!strstr(out, "-32700"), "a blank line was a parse error: %s", out);
    h_check_healthy(&h, "host writes blank lines", CONTROL);

    /* The last request has no newline when the host closes stdin: it is still answered. */
    out2 = bridge(&h, INIT INITIALIZED "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", &st);
    CHECK_MSG(st == 0 && strstr(out2, "\"id\":3,\"result\":{}"), "status %d, output %s", st, out2);
    h_check_healthy(&h, "host ends without a newline", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-bridge-host-input");
}
