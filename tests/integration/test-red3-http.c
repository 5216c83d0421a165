// SPDX-License-Identifier: MIT
// test-red3-http: hostile HTTP and SSE upstreams (raw-http-server), against the real mcpd.

/*
 * Round 3 of the attacks on remote servers (task h-red3). A JSON batch of a million junk values
 * was parsed whole into a tree before it was cut (about 143 MiB under ASan for a 16 MiB body);
 * now its entries are found by a scan and parsed one at a time, so it costs about its own bytes.
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
/*
 * RSS growth allowed for the 16 MiB junk batch: the body held while it arrives (a buffer that
 * doubles: up to 32 MiB) and ASan's shadow of it, with room; a tree of its million values took
 * about 143 MiB.
 */
#define BATCH_RSS_GROWTH_MAX_KIB (64L * 1024L)

static pid_t start_raw(Harness *h, const char *name, const char *mode, int *portp)
{
    _cleanup_free_ char *port_file = xasprintf("%s/%s.port", h->dir, name);
    _cleanup_free_ char *out = xasprintf("%s/%s.out", h->dir, name);
    char *argv[] = {
        getenv("RAW_HTTP_SERVER"), "--port-file", port_file, "--mode", (char *)mode, NULL};
    /* Not tagged as mcpd's: the health checks count tagged processes mcpd did not start. */
    pid_t pid = bg_spawn(argv, "MCPD_TEST_TAG=", out);

    *portp = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK_MSG(*portp > 0, "%s: the raw server did not start", name);
    return pid;
}

/* The junk batch: the answer in it still comes, and mcpd's memory grows by about the body. */
static void check_junk_batch(Harness *h, mcpc_client *c)
{
    int is_error = 0;
    long rss0 = h_rss_kib(h->pid), grown;
    _cleanup_free_ char *t = h_call_text(c, "mcp_batch_t", "{}", &is_error);

    CHECK_MSG(!is_error && t && strstr(t, "after the junk"), "batch: %.300s", t ? t : "(null)");
    grown = h_rss_kib(h->pid) - rss0;
    fprintf(stderr, "  junk batch: mcpd RSS grew by %ld KiB\n", grown);
    CHECK_MSG(grown < BATCH_RSS_GROWTH_MAX_KIB, "batch: RSS grew by %ld KiB (bound %ld)", grown,
              BATCH_RSS_GROWTH_MAX_KIB);
    CHECK_MSG(
        bg_count_lines(h->log, "dropped 1000000 of the 1000001 entries of a JSON batch", NULL) == 1,
        "batch: the drop was not reported once");
    h_check_healthy(h, "a JSON batch of a million junk values", CONTROL);
}

int main(void)
{
    static const char *const modes[] = {"batch"};
    static const char *const names[] = {"batch"};
    pid_t srv[N_ELEMENTS(modes)];
    int port[N_ELEMENTS(modes)];
    StrBuf cfg = STRBUF_INIT;
    Harness h;
    mcpc_client *c;

    h_setup(&h, "red3-http");
    strbuf_printf(&cfg, "{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}", h_fake());
    for (size_t i = 0; i < N_ELEMENTS(modes); i++) {
        srv[i] = start_raw(&h, names[i], modes[i], &port[i]);
        strbuf_printf(&cfg,
                      ", \"%s\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                      " \"reconnect\": false}",
                      names[i], port[i]);
    }
    strbuf_puts(&cfg, "}}");
    h_write_config(&h, strbuf_str(&cfg));
    strbuf_deinit(&cfg);
    h_start(&h, NULL);
    c = h_client(&h, "red3-http");
    h_settle(&h, c, "steady", "batch", NULL);

    check_junk_batch(&h, c);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    for (size_t i = 0; i < N_ELEMENTS(modes); i++)
        bg_stop(srv[i]);
    h_teardown(&h);
    return h_finish("test-red3-http");
}
