// SPDX-License-Identifier: MIT
// test-stdio-stray-messages: a stdio server that surrounds its answers with stray messages.

/*
 * From attacking the daemon (task h-red): replies to ids mcpd never sent, a reply whose id is
 * the other JSON type, duplicate answers, floods of requests to the client and of log
 * notifications. Each call still gets exactly its own answer, later calls are not confused by
 * the duplicates, and mcpd stays healthy. (mcpd passes this today; it guards the behaviour.)
 */

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Of each stray kind per call: thousands of lines, well past any per-message buffering. */
#define N_STRAY "2000"
/* Calls in a row: the duplicate answers of one must not become the answer of the next. */
#define N_CALLS 3
/* Log lines of one kind allowed for the whole flood: the bursts (10 and 20) and the rates (1
 * and 2 a second) over a run that takes seconds even under valgrind, far below the 12 000 stray
 * messages of each kind. */
#define LOG_LINES_MAX 200

int main(void)
{
    Harness h;
    mcpc_client *c;
    _cleanup_free_ char *cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"},"
                                         " \"stray\": {\"command\": \"%s\", \"args\": [\"--stray\","
                                         " \"" N_STRAY "\"]}}}",
                                         h_fake(), getenv("HOSTILE_SERVER"));

    h_setup(&h, "stdio-stray-messages");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "stdio-stray-messages");
    h_settle(&h, c, "steady", "stray", NULL);

    for (int i = 0; i < N_CALLS; i++) {
        _cleanup_free_ char *args = xasprintf("{\"text\":\"call%d\"}", i);
        _cleanup_free_ char *want = xasprintf("echo:call%d", i);
        int is_error = 1;
        _cleanup_free_ char *t = h_call_text(c, "mcp_stray_echo", args, &is_error);
        CHECK_MSG(!is_error && t && streq(t, want), "call %d: %s (error %d)", i, t ? t : "(null)",
                  is_error);
    }
    h_check_healthy(&h, "server sends stray replies, requests and notifications", CONTROL);

    /* The log says what the server does wrong, and does not grow with the flood: thousands of
     * stray answers and unanswerable requests give a burst of lines and a count, no more. The
     * count comes also when nothing follows the flood (a second after the first line left out):
     * in a fast build the whole flood fits in that second. */
    CHECK(h_wait_log(&h, "more such messages not logged)", H_WAIT_MS));
    CHECK(h_wait_log(&h, "requests nobody could answer not logged)", H_WAIT_MS));
    _cleanup_free_ char *log = h_read_file(h.log);
    size_t n_stray = 0, n_unanswered = 0;
    for (const char *q = log; q && (q = strstr(q, "answered a request mcpd never sent")); q++)
        n_stray++;
    for (const char *q = log; q && (q = strstr(q, "Method not found: hostile/unknown")); q++)
        n_unanswered++;
    CHECK_MSG(n_stray >= 1 && n_stray <= LOG_LINES_MAX, "%zu warnings of stray answers", n_stray);
    CHECK_MSG(n_unanswered >= 1 && n_unanswered <= LOG_LINES_MAX,
              "%zu lines of unanswerable requests", n_unanswered);
    /* An error with id null is the server saying it could not read a request, and says so. */
    size_t n_unread = 0;
    for (const char *q = log;
         q && (q = strstr(q, "could not read a request mcpd sent: Parse error")); q++)
        n_unread++;
    CHECK_MSG(n_unread >= 1 && n_unread <= LOG_LINES_MAX, "%zu lines of id-null errors", n_unread);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-stdio-stray-messages");
}
