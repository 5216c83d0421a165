// SPDX-License-Identifier: MIT
// test-agent-raw-abuse: an agent on the raw socket that sends blank lines and reuses a live id.

/*
 * From attacking the daemon (task h-red): a line of only spaces and tabs is no message and must
 * not cost the agent its connection; a request id still in flight, sent again, is refused
 * (-32600) instead of running the tool twice with two answers under one id, and the first call
 * still gets its own answer.
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* How long the first call sleeps: long enough that the second surely arrives while it runs. */
#define SLEEP_MS "1500"
/* mcpd's calls in flight per agent (AGENT_MAX_CALLS_IN_FLIGHT), reached on purpose. */
#define AGENT_CALLS_LIMIT 256

/* Read lines until one holds want (or H_WAIT_MS passes); returns everything read. */
static char *read_until(int fd, const char *want)
{
    char *all = xstrdup("");

    for (int i = 0; i < 100 && !strstr(all, want); i++) {
        _cleanup_free_ char *more = h_raw_read(fd, H_WAIT_MS / 100);
        if (!more)
            continue;
        char *joined = xasprintf("%s%s", all, more);
        free(all);
        all = joined;
    }
    return all;
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"fake\": {\"command\": \"%s\"}}}", h_fake());

    h_setup(&h, "agent-raw-abuse");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "agent-raw-abuse");
    h_settle(&h, c, "fake", NULL);

    int fd = h_raw_connect(&h);
    CHECK(fd >= 0);
    CHECK(h_raw_write(fd, h_raw_initialize, strlen(h_raw_initialize)));
    _cleanup_free_ char *init = read_until(fd, "\"id\":0");
    CHECK_MSG(strstr(init, "\"result\""), "initialize: %s", init);
    static const char ready[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    CHECK(h_raw_write(fd, ready, sizeof(ready) - 1));

    /* Blank lines of every kind, then a ping: answered on the same connection. */
    static const char blanks[] = "   \n\t\t\n \t \r\n\r\n\n";
    static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
    CHECK(h_raw_write(fd, blanks, sizeof(blanks) - 1));
    CHECK(h_raw_write(fd, ping, sizeof(ping) - 1));
    _cleanup_free_ char *pong = read_until(fd, "\"id\":1");
    CHECK_MSG(strstr(pong, "\"id\":1") && strstr(pong, "\"result\"") && !strstr(pong, "-32700"),
              "ping after blank lines: %s", pong);

    /* The same id twice while the first runs: the second is refused, the first answered. */
    static const char slow[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"dup\",\"method\":\"tools/call\","
        "\"params\":{\"name\":\"mcp_fake_sleep\",\"arguments\":{\"ms\":" SLEEP_MS "}}}\n";
    static const char again[] = "{\"jsonrpc\":\"2.0\",\"id\":\"dup\",\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"mcp_fake_echo\",\"arguments\":{\"text\":"
                                "\"second\"}}}\n";
    CHECK(h_raw_write(fd, slow, sizeof(slow) - 1));
    CHECK(h_raw_write(fd, again, sizeof(again) - 1));
    _cleanup_free_ char *refused = read_until(fd, "-32600");
    CHECK_MSG(strstr(refused, "\"id\":\"dup\"") && strstr(refused, "already in flight"),
              "second use of a live id: %s", refused);
    CHECK_MSG(!strstr(refused, "second"), "the second call ran: %s", refused);
    _cleanup_free_ char *first = read_until(fd, "\"result\"");
    char *both = xasprintf("%s%s", refused, first);
    CHECK_MSG(strstr(both, "\"result\"") && strstr(both, "\"id\":\"dup\""),
              "the first call's answer: %s", both);
    free(both);
    /* Once answered, the id may be used again. */
    CHECK(h_raw_write(fd, again, sizeof(again) - 1));
    _cleanup_free_ char *reused = read_until(fd, "second");
    CHECK_MSG(strstr(reused, "second") && !strstr(reused, "-32600"), "reused id: %s", reused);

    /*
     * At the limit of calls in flight, a reused id is still said to be one (the request's own
     * fault, -32600), and only a new id is told the limit.
     */
    StrBuf many = STRBUF_INIT;
    for (int i = 0; i < AGENT_CALLS_LIMIT; i++)
        strbuf_printf(&many,
                      "{\"jsonrpc\":\"2.0\",\"id\":\"s%d\",\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"mcp_fake_sleep\",\"arguments\":{\"ms\":" SLEEP_MS "}}}\n",
                      i);
    CHECK(h_raw_write(fd, many.data, many.len));
    strbuf_deinit(&many);
    static const char dup_at_limit[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"s7\",\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"mcp_fake_echo\",\"arguments\":{\"text\":\"third\"}}}\n";
    static const char over[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"over\",\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"mcp_fake_echo\",\"arguments\":{\"text\":\"fourth\"}}}\n";
    CHECK(h_raw_write(fd, dup_at_limit, sizeof(dup_at_limit) - 1));
    CHECK(h_raw_write(fd, over, sizeof(over) - 1));
    _cleanup_free_ char *limit = read_until(fd, "too many calls in flight");
    CHECK_MSG(strstr(limit, "\"id\":\"s7\"") && strstr(limit, "already in flight"),
              "reused id at the limit: %s", limit);
    CHECK_MSG(strstr(limit, "\"id\":\"over\"") && strstr(limit, "too many calls in flight"),
              "new id at the limit: %s", limit);
    CHECK_MSG(!strstr(limit, "third") && !strstr(limit, "fourth"), "a refused call ran: %s", limit);
    _cleanup_free_ char *done = read_until(fd, "\"id\":\"s255\"");
    CHECK_MSG(strstr(done, "\"id\":\"s255\""), "the calls at the limit were answered");
    close(fd);

    h_check_healthy(&h, "agent sends blank lines and reuses a live id", "mcp_fake_echo");
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-agent-raw-abuse");
}
