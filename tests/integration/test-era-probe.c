// SPDX-License-Identifier: MIT
// test-era-probe: how an auto stdio server's era is found on its first connect. Any error to
// server/discover (-32601, -32600, or an error with id null) is the answer, a notification or a
// stderr line is not; a server that ignores the probe but answers ping goes on to initialize
// after a short grace, one that says nothing after its bound; a slow start (longer than the old
// 5 s probe bound) is waited for, so a slow 2026-07-28 server is not taken for a 2025 one. On a
// restart the era comes from the cache: no probe at all.

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/*
 * How long the slow servers sleep before they read anything: past the old probe bound (5 s),
 * well inside the new one (UPSTREAM_DISCOVER_SILENCE_MS, 15 s) even on a loaded machine.
 */
#define SLOW_START_S 6
/* The silent server's "timeout": half of it is its probe bound, kept short so the test is. */
#define SILENT_TIMEOUT_MS 6000
/* Waits for a connect: the slow servers' sleep, then a loaded machine's margin. */
#define CONNECT_WAIT_MS (SLOW_START_S * 1000 + 30000)

/* The 2025 servers that stay up in both starts: name, era-server's arguments. */
static const struct {
    const char *name, *args, *reason;
} olds[] = {
    {"errs", "\"error\", \"--chatter\"", "server/discover failed: MCP error -32601"},
    {"invalid", "\"invalid\"", "server/discover failed: MCP error -32600"},
    {"nullid", "\"null-id\"", "server/discover failed: MCP error -32700: Parse error"},
    {"ignores", "\"ignore\"", "it answered ping but not server/discover"},
    {"silent", "\"ignore\", \"--ignore-ping\"", "it answered neither server/discover nor ping"},
};

/* The mcpServers object: the five 2025 servers, and with slow the two slow ones. */
static char *config(const char *era, const char *modern, bool slow)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\": {");
    for (size_t i = 0; i < N_ELEMENTS(olds); i++) {
        strbuf_printf(&sb, "%s\"%s\": {\"command\": \"%s\", \"args\": [%s]", i ? ", " : "",
                      olds[i].name, era, olds[i].args);
        if (streq(olds[i].name, "silent"))
            strbuf_printf(&sb, ", \"timeout\": %d", SILENT_TIMEOUT_MS);
        strbuf_putc(&sb, '}');
    }
    if (slow)
        strbuf_printf(&sb,
                      ", \"slowold\": {\"command\": \"sh\", \"args\": [\"-c\", \"sleep %d; exec "
                      "'%s' error\"]}, \"slowmodern\": {\"command\": \"sh\", \"args\": [\"-c\", "
                      "\"sleep %d; exec '%s'\"]}",
                      SLOW_START_S, era, SLOW_START_S, modern);
    strbuf_puts(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

int main(void)
{
    const char *era = getenv("ERA_SERVER"), *modern = getenv("MODERN_SERVER");
    Harness h;
    mcpc_client *c;
    char *t;

    if (!era || !modern) {
        fprintf(stderr, "ERA_SERVER or MODERN_SERVER is not set (run through meson test)\n");
        return 99;
    }
    h_setup(&h, "era-probe");
    _cleanup_free_ char *cfg1 = config(era, modern, true);
    h_write_config(&h, cfg1);

    /* First start, nothing cached: each server's era found by the probe. */
    h_start(&h, NULL);
    c = h_client(&h, "first");
    for (size_t i = 0; i < N_ELEMENTS(olds); i++)
        CHECK_MSG(h_wait_state(c, olds[i].name, "connected", CONNECT_WAIT_MS), "%s never connected",
                  olds[i].name);
    CHECK_MSG(h_wait_state(c, "slowold", "connected", CONNECT_WAIT_MS), "slowold never connected");
    CHECK_MSG(h_wait_state(c, "slowmodern", "connected", CONNECT_WAIT_MS),
              "the slow 2026-07-28 server never connected (taken for a 2025 one?)");
    _cleanup_free_ char *log1 = h_read_file(h.log);
    for (size_t i = 0; i < N_ELEMENTS(olds); i++) {
        _cleanup_free_ char *who = xasprintf("[%s] ", olds[i].name);
        CHECK_MSG(h_line_has(log1, who, olds[i].reason), "%s: no \"%s\" in the log", olds[i].name,
                  olds[i].reason);
        CHECK_MSG(h_line_has(log1, who, "era-server: got initialize"), "%s got no initialize",
                  olds[i].name);
    }
    /* The chatter came before the answer, and was not taken for it. */
    CHECK(h_line_has(log1, "[errs] ", "era-server: still here"));
    /* The slow ones: the answer waited for, not a timeout. */
    CHECK_MSG(h_line_has(log1, "[slowold] ", "server/discover failed: MCP error -32601"),
              "slowold: the probe did not wait for its start");
    CHECK(h_line_has(log1, "[slowmodern] ", "speaking MCP 2026-07-28"));
    CHECK(!h_line_has(log1, "[slowmodern] ", "initialize"));
    CHECK(!strstr(log1, "timed out after"));
    t = h_call_text(c, "mcp_ignores_echo", "{\"text\":\"after the probe\"}", NULL);
    CHECK_MSG(streq(t, "after the probe"), "ignores: echo gave %s", t);
    free(t);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);

    /* Second start (without the slow two): the eras come from the cache, no server is probed. */
    _cleanup_free_ char *cfg2 = config(era, modern, false);
    h_write_config(&h, cfg2);
    size_t mark = strlen(log1);
    h_start(&h, NULL);
    c = h_client(&h, "second");
    for (size_t i = 0; i < N_ELEMENTS(olds); i++)
        CHECK_MSG(h_wait_state(c, olds[i].name, "connected", CONNECT_WAIT_MS), "%s never connected",
                  olds[i].name);
    _cleanup_free_ char *all = h_read_file(h.log);
    const char *log2 = all && strlen(all) >= mark ? all + mark : "";
    for (size_t i = 0; i < N_ELEMENTS(olds); i++) {
        _cleanup_free_ char *who = xasprintf("[%s] ", olds[i].name);
        CHECK_MSG(!h_line_has(log2, who, "got server/discover"), "%s was probed again",
                  olds[i].name);
        CHECK(h_line_has(log2, who, "tools from the cache (era 2025)"));
    }
    h_settle(&h, c, "errs", "invalid", "nullid", "ignores", "silent", NULL);
    CHECK(h_check_healthy(&h, "the eras found by the probe", "mcp_errs_echo"));
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-era-probe");
}
