// SPDX-License-Identifier: MIT
// test-progress-ask: which calls ask their server for progress (daemon/core/progress-memo.c).
// A tool's first call asks, and a long tool's report restarts callTimeout; a quick tool's later
// calls do not ask (the server parses no token it has no use for), unless the agent asks; a
// tool that ran long asks from then on.

#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"
#include "tests/integration/raw.h"

/* The callTimeout of the server: the long call below runs twice as long, reporting progress. */
#define CALL_TIMEOUT_MS 1500
#define LONG_CALL_MS    3000

/* Whether the upstream line of the tools/call whose arguments hold marker asked for progress:
 * 1 yes, 0 no, -1 no such line. */
static int asked(const char *uplog, const char *marker)
{
    _cleanup_free_ char *text = h_read_file(uplog);
    int found = -1;

    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n"))
        if (strstr(line, "\"tools/call\"") && strstr(line, marker))
            found = strstr(line, "\"progressToken\"") != NULL;
    return found;
}

/* Call tool with args (a JSON object) and _meta (members, or NULL); returns the result text. */
static char *call(Raw *a, int id, const char *tool, const char *args, const char *meta)
{
    char line[512];

    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
             "\"arguments\":%s%s%s%s}}",
             id, tool, args, meta ? ",\"_meta\":{" : "", meta ? meta : "", meta ? "}" : "");
    raw_send(a, "%s", line);
    for (;;) {
        _cleanup_json_ yajl_val m = raw_read(a, LONG_CALL_MS + H_WAIT_MS);
        if (!m)
            return NULL;
        int64_t got = -1;
        if (json_get_int(m, "id", &got) == 0 && got == id) {
            const char *t = result_text(m);
            return xstrdup(t ? t : "(no text)");
        }
    }
}

int main(void)
{
    Harness h;
    char uplog[400];
    Raw a;

    h_setup(&h, "progress-ask");
    snprintf(uplog, sizeof(uplog), "%s/up.log", h.dir);
    _cleanup_free_ char *cfg = xasprintf("{\"mcpServers\": {\"up\": {\"command\": \"%s\", \"args\":"
                                         " [\"--log\", \"%s\"], \"callTimeout\": %d}}}",
                                         h_fake(), uplog, CALL_TIMEOUT_MS);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "setup");
    CHECK(h_wait_state(c, "up", "connected", H_WAIT_MS));
    mcpc_free(c);
    raw_init(&a, &h, "agent", NULL);

    /* A quick tool: its first call asks, the next do not, unless the agent asks. */
    _cleanup_free_ char *e1 = call(&a, 1, "mcp_up_echo", "{\"text\":\"e-one\"}", NULL);
    _cleanup_free_ char *e2 = call(&a, 2, "mcp_up_echo", "{\"text\":\"e-two\"}", NULL);
    _cleanup_free_ char *e3 =
        call(&a, 3, "mcp_up_echo", "{\"text\":\"e-three\"}", "\"progressToken\":\"mine\"");
    CHECK(e1 && streq(e1, "e-one") && e2 && streq(e2, "e-two") && e3 && streq(e3, "e-three"));
    CHECK_MSG(asked(uplog, "e-one") == 1, "a tool's first call did not ask for progress");
    CHECK_MSG(asked(uplog, "e-two") == 0, "a quick tool's second call asked for progress");
    CHECK_MSG(asked(uplog, "e-three") == 1, "the agent's own progress token was not passed on");

    /* A long tool's first call asks; its reports keep it alive past callTimeout. */
    char args[64];
    snprintf(args, sizeof(args), "{\"ms\":%d}", LONG_CALL_MS);
    _cleanup_free_ char *s1 = call(&a, 4, "mcp_up_sleep", args, NULL);
    CHECK_MSG(s1 && !strstr(s1, "MCP error"), "a long call that reports progress: %s",
              s1 ? s1 : "(none)");
    CHECK(asked(uplog, args) == 1);

    /* It ran long: its quick calls ask too now, so that a long one is not cut. */
    _cleanup_free_ char *s2 = call(&a, 5, "mcp_up_sleep", "{\"ms\":7}", NULL);
    CHECK(s2 && !strstr(s2, "MCP error"));
    CHECK_MSG(asked(uplog, "{\"ms\":7}") == 1, "a tool that ran long stopped asking for progress");

    raw_close(&a);
    if (h_failures)
        h_dump_log(&h);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_failures ? 1 : 0;
}
