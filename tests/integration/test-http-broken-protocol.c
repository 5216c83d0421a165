// SPDX-License-Identifier: MIT
// test-http-broken-protocol: HTTP upstreams that break HTTP itself (raw-http-server), against the
// real mcpd.

/*
 * Round 2 of the attacks on remote servers (task h-red2): a server that accepts the connection
 * and never answers (at initialize, or at a call), an SSE answer of keep-alive comments only, a
 * JSON answer that is a batch of a million junk values, a gzip body nobody asked for, and a
 * session id with a bare CR (header injection into the next request), a control byte, or 90 KB.
 * Each time mcpd keeps serving the others, names the server and the fault, and leaks nothing.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Short enough that the hanging servers do not drag the test out, long enough for a loaded box;
 * four times as long under valgrind, as every wait of the harness (h_wait_ms): 4 s was too short
 * there for the servers that must connect. */
#define HANG_TIMEOUT_MS (4000 * (h_wait_ms() / 30000))
/* The junk batch is parsed into a tree: its RSS growth must stay well under this. */
#define BATCH_RSS_GROWTH_MAX_KIB (512L * 1024L)
/* Calls to the hanging server in a row: a connection kept per call would show as fds. */
#define HANG_CALLS 3

static pid_t start_raw(Harness *h, const char *name, const char *mode, int *portp)
{
    _cleanup_free_ char *port_file = xasprintf("%s/%s.port", h->dir, name);
    _cleanup_free_ char *out = xasprintf("%s/%s.out", h->dir, name);
    _cleanup_free_ char *log = xasprintf("%s/%s.log", h->dir, name);
    char *argv[] = {getenv("RAW_HTTP_SERVER"),
                    "--port-file",
                    port_file,
                    "--mode",
                    (char *)mode,
                    "--log",
                    log,
                    NULL};
    /* Not tagged as mcpd's: the health checks count tagged processes mcpd did not start. */
    pid_t pid = bg_spawn(argv, "MCPD_TEST_TAG=", out);

    *portp = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK_MSG(*portp > 0, "%s: the raw server did not start", name);
    return pid;
}

/* A call whose answer is an error holding every string in want (NULL-terminated). */
static void check_call_error(mcpc_client *c, const char *tool, const char *want1, const char *want2)
{
    int is_error = 0;
    _cleanup_free_ char *t = h_call_text(c, tool, "{}", &is_error);

    CHECK_MSG(is_error && t && strstr(t, want1) && (!want2 || strstr(t, want2)),
              "%s: want an error with \"%s\" and \"%s\": %.400s", tool, want1, want2 ? want2 : "",
              t ? t : "(null)");
}

/* Server name's lastError (waiting for it to fail) holds want1 and want2. */
static void check_failed(mcpc_client *c, const char *name, const char *want1, const char *want2)
{
    const char *e = NULL;
    yajl_val st = NULL;

    CHECK_MSG(h_wait_state(c, name, "failed", H_WAIT_MS), "%s never failed", name);
    st = h_status(c);
    e = json_get_string(h_server(st, name), "lastError");
    CHECK_MSG(e && strstr(e, want1) && (!want2 || strstr(e, want2)),
              "%s: lastError lacks \"%s\"/\"%s\": %.400s", name, want1, want2 ? want2 : "",
              e ? e : "(none)");
    json_free(st);
}

/* A session id with a bare CR: the injected header must never reach the server. */
static void check_no_injection(Harness *h, const char *name)
{
    _cleanup_free_ char *log = xasprintf("%s/%s.log", h->dir, name);

    CHECK_MSG(bg_count_lines(log, "X-Injected", NULL) == 0, "%s: a header was injected", name);
}

/* The longest Mcp-Session-Id the server saw come back (0: none). */
static long max_session_len(Harness *h, const char *name)
{
    _cleanup_free_ char *path = xasprintf("%s/%s.log", h->dir, name);
    _cleanup_free_ char *log = h_read_file(path);
    long best = 0;

    for (const char *p = log; p && (p = strstr(p, "session-len ")); p++)
        best = MAX(best, strtol(p + 12, NULL, 10));
    return best;
}

int main(void)
{
    static const char *const modes[] = {"hang-init",   "hang",         "comments",
                                        "batch",       "gzip",         "session-cr",
                                        "session-ctl", "session-huge", "batch-notes"};
    static const char *const names[] = {"stall", "hang", "comments", "batch", "gzip",
                                        "cr",    "ctl",  "huge",     "notes"};
    pid_t srv[N_ELEMENTS(modes)];
    int port[N_ELEMENTS(modes)];
    StrBuf cfg = STRBUF_INIT;
    Harness h;
    mcpc_client *c;

    h_setup(&h, "http-broken-protocol");
    strbuf_printf(&cfg, "{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}", h_fake());
    for (size_t i = 0; i < N_ELEMENTS(modes); i++) {
        srv[i] = start_raw(&h, names[i], modes[i], &port[i]);
        strbuf_printf(&cfg,
                      ", \"%s\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                      " \"timeout\": %d, \"callTimeout\": %d, \"reconnect\": false}",
                      names[i], port[i], HANG_TIMEOUT_MS, HANG_TIMEOUT_MS);
    }
    strbuf_puts(&cfg, "}}");
    h_write_config(&h, strbuf_str(&cfg));
    strbuf_deinit(&cfg);
    h_start(&h, NULL);
    c = h_client(&h, "http-broken-protocol");
    h_settle(&h, c, "steady", "hang", "comments", "batch", "gzip", "notes", NULL);

    /* Slowloris at initialize: the others were served meanwhile (h_settle), this one fails. */
    check_failed(c, "stall", "\"stall\" timed out", NULL);
    h_check_healthy(&h, "a server that never answers initialize", CONTROL);

    /* Slowloris at a call: each call fails at its timeout, naming the server; no fd is kept. */
    /* Both timers are callTimeout: upstream.c's names the server, the transport's its URL. */
    _cleanup_free_ char *hang_url = xasprintf("127.0.0.1:%d", port[1]);
    for (int i = 0; i < HANG_CALLS; i++) {
        int is_err = 0;
        _cleanup_free_ char *e = h_call_text(c, "mcp_hang_t", "{}", &is_err);
        CHECK_MSG(is_err && e && strstr(e, "callTimeout") &&
                      (strstr(e, "MCP server \"hang\" timed out") || strstr(e, hang_url)),
                  "hang: %.400s", e ? e : "(null)");
    }
    h_check_healthy(&h, "a server that never answers a call", CONTROL);

    /* Keep-alive comments are not activity: the call still ends at its timeout. */
    check_call_error(c, "mcp_comments_t", "timed out", NULL);
    h_check_healthy(&h, "an SSE answer of keep-alive comments only", CONTROL);

    /* A million junk values around the answer: the answer still comes, memory stays bounded. */
    long rss0 = h_rss_kib(h.pid);
    int is_error = 0;
    _cleanup_free_ char *t = h_call_text(c, "mcp_batch_t", "{}", &is_error);
    CHECK_MSG(!is_error && t && strstr(t, "after the junk"), "batch: %.300s", t ? t : "(null)");
    long grown = h_rss_kib(h.pid) - rss0;
    fprintf(stderr, "  junk batch: mcpd RSS grew by %ld KiB\n", grown);
    CHECK_MSG(grown < BATCH_RSS_GROWTH_MAX_KIB, "batch: RSS grew by %ld KiB", grown);
    h_check_healthy(&h, "a JSON batch of a million junk values", CONTROL);

    /* 100k log notifications around the answer: the answer comes, the agent gets no flood. */
    free(t);
    t = h_call_text(c, "mcp_notes_t", "{}", &is_error);
    CHECK_MSG(!is_error && t && strstr(t, "after the junk"), "notes: %.300s", t ? t : "(null)");
    CHECK_MSG(bg_count_lines(h.log, "dropped 98976 of the 100001 entries of a JSON batch", NULL) ==
                  1,
              "notes: the dropped notifications were not counted in one warning");
    h_check_healthy(&h, "a JSON batch of 100k notifications", CONTROL);

    /* A gzip body: never decoded (mcpd does not ask for it), refused as not JSON. */
    check_call_error(c, "mcp_gzip_t", "Content-Encoding: gzip", "not ask for");
    h_check_healthy(&h, "a gzip body nobody asked for", CONTROL);

    /* Session ids that cannot go back in a header: the server fails, saying so. */
    check_failed(c, "cr", "Mcp-Session-Id", "control");
    check_no_injection(&h, "cr");
    check_failed(c, "ctl", "Mcp-Session-Id", "control");
    check_failed(c, "huge", "Mcp-Session-Id", "bytes");
    CHECK_MSG(max_session_len(&h, "huge") == 0, "huge: a %ld byte session id was sent back",
              max_session_len(&h, "huge"));
    h_check_healthy(&h, "session ids with a CR, a control byte, 90 KB", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    for (size_t i = 0; i < N_ELEMENTS(modes); i++)
        bg_stop(srv[i]);
    h_teardown(&h);
    return h_finish("test-http-broken-protocol");
}
