// SPDX-License-Identifier: MIT
// test-trace-context: W3C trace context (traceparent, tracestate in a tools/call's _meta) reaches
// the server unchanged, for agents and servers of both eras (2025 and 2026-07-28).

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"
#include "tests/integration/raw.h"

#define TRACEPARENT "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
#define TRACESTATE  "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
#define TRACE       "\"traceparent\":\"" TRACEPARENT "\",\"tracestate\":\"" TRACESTATE "\""
/* The _meta of a 2026-07-28 request, with the trace context. */
#define MODERN_META                                                                                \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{},"                                           \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"modern-agent\",\"version\":\"1\"}," TRACE  \
    "}"

/* The answer to request id on r (notifications skipped). */
static yajl_val answer(Raw *r, const char *id)
{
    for (;;) {
        yajl_val m = raw_read(r, H_WAIT_MS);
        if (!m)
            return NULL;
        _cleanup_free_ char *got = json_get(m, "id") ? json_to_string(json_get(m, "id")) : NULL;
        if (got && streq(got, id))
            return m;
        json_free(m);
    }
}

/* The legacy server echoes the _meta it got: the trace context must be in it as sent. */
static void check_echoed(yajl_val m, const char *who)
{
    const char *text = result_text(m);
    _cleanup_json_ yajl_val meta = text ? json_parse(text, NULL) : NULL;

    CHECK_MSG(streq(json_get_string(meta, "traceparent"), TRACEPARENT) &&
                  streq(json_get_string(meta, "tracestate"), TRACESTATE),
              "%s: the server got _meta %s", who, text ? text : "(no answer)");
}

int main(void)
{
    const char *modern = getenv("MODERN_SERVER");
    Harness h;
    Raw old, now;

    if (!modern) {
        fprintf(stderr, "MODERN_SERVER is not set (run through meson test)\n");
        return 99;
    }
    h_setup(&h, "trace-context");
    _cleanup_free_ char *mlog = paths_join(h.dir, "modern.log");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"legacy\": {\"command\": \"%s\", \"args\": [\"--echo-meta\"]},"
        " \"modern\": {\"command\": \"%s\", \"args\": [\"--log\", \"%s\"]}}}",
        h_fake(), modern, mlog);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "control");
    CHECK(h_wait_state(c, "legacy", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "modern", "connected", H_WAIT_MS));

    /* A 2025 agent, to a 2025 server and to a 2026-07-28 one. */
    raw_init(&old, &h, "legacy-agent", NULL);
    raw_send(&old, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                   "\"mcp_legacy_echo\",\"arguments\":{\"text\":\"x\"},\"_meta\":{" TRACE "}}}");
    _cleanup_json_ yajl_val a1 = answer(&old, "1");
    check_echoed(a1, "2025 agent, 2025 server");
    raw_send(&old, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                   "\"mcp_modern_echo\",\"arguments\":{\"text\":\"one\"},\"_meta\":{" TRACE "}}}");
    _cleanup_json_ yajl_val a2 = answer(&old, "2");
    CHECK(a2 && json_get(a2, "result"));

    /* A 2026-07-28 agent, to both. */
    raw_open(&now, &h);
    raw_send(&now, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
                   "\"mcp_legacy_echo\",\"arguments\":{\"text\":\"x\"}," MODERN_META "}}");
    _cleanup_json_ yajl_val a3 = answer(&now, "3");
    check_echoed(a3, "2026 agent, 2025 server");
    raw_send(&now, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                   "\"mcp_modern_echo\",\"arguments\":{\"text\":\"two\"}," MODERN_META "}}");
    _cleanup_json_ yajl_val a4 = answer(&now, "4");
    CHECK(a4 && json_get(a4, "result"));

    /* The modern server logs each request's _meta: both calls carried the context. */
    _cleanup_free_ char *log = h_read_file(mlog);
    int calls = 0, traced = 0;
    for (char *line = log ? strtok(log, "\n") : NULL; line; line = strtok(NULL, "\n"))
        if (!strncmp(line, "tools/call ", 11)) {
            calls++;
            traced += strstr(line, TRACE) != NULL;
        }
    CHECK_MSG(calls == 2 && traced == 2, "%d of %d calls reached the modern server with the trace",
              traced, calls);

    raw_close(&old);
    raw_close(&now);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    if (h_failures)
        h_dump_log(&h);
    h_teardown(&h);
    return h_finish("test-trace-context");
}
