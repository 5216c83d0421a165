// SPDX-License-Identifier: MIT
// test-agent-connection-limits: more connections than mcpd serves at once, and silent ones holding
// places.

/*
 * Round 4 of the attacks by local processes (task h-red4). mcpd took every connection it was
 * offered: 10 000 idle ones held 330 MiB and as many fds, for as long as their owner liked. Now
 * it serves PEER_MAX at once: one more gets a JSON-RPC error naming the bound and is closed, the
 * refusals are logged once per spell, not once per connection, and a place that frees up is
 * taken again. A connection that never sent a byte does not hold its place against a newcomer
 * once it has been silent PEER_SILENT_EVICT_MS (a slowloris).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* daemon/downstream/peer.h: connections served at once, and a silent one's time to eviction. */
#define PEER_MAX             2048
#define PEER_SILENT_EVICT_MS 10000
/* Connections tried past the bound: each must be refused, and logged only once in all. */
#define N_EXTRA 20
/* Places freed, then taken again by a real agent. */
#define N_FREED 10

static int fds[PEER_MAX];

/* Our own fd limit to the hard one: the test holds PEER_MAX connections and a few more. */
static void raise_fd_limit(void)
{
    struct rlimit rl;

    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    rl.rlim_cur = rl.rlim_max;
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    CHECK_MSG(rl.rlim_cur > PEER_MAX + 64, "the hard fd limit (%llu) is too low for this test",
              (unsigned long long)rl.rlim_cur);
}

/* Occurrences of s in mcpd's log. */
static int log_count(const Harness *h, const char *s)
{
    _cleanup_free_ char *log = h_read_file(h->log);
    int n = 0;

    for (const char *p = log; p && (p = strstr(p, s)); p += strlen(s))
        n++;
    return n;
}

/* Open connections [from, to), each saying initialize when talk is set (the answer unread). */
static void open_many(const Harness *h, int from, int to, bool talk)
{
    for (int i = from; i < to; i++) {
        fds[i] = h_raw_connect(h);
        CHECK_MSG(fds[i] >= 0, "connection %d of %d failed", i, to);
        if (talk)
            CHECK(h_raw_write(fds[i], h_raw_initialize, strlen(h_raw_initialize)));
    }
}

static void close_many(int from, int to)
{
    for (int i = from; i < to; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* A new agent connects and is served. */
static void check_served(Harness *h, const char *when)
{
    mcpc_options o = {.socket_path = h->socket, .client_name = "late-agent", .timeout_ms = 60000};
    mcpc_client *c = mcpc_new(&o);
    int is_error = -1;

    CHECK_MSG(mcpc_connect(c) == 0, "%s: a new agent cannot connect: %s", when, mcpc_errmsg(c));
    _cleanup_free_ char *t = h_call_text(c, CONTROL, "{\"text\":\"served\"}", &is_error);
    CHECK_MSG(is_error == 0 && t && streq(t, "served"), "%s: the new agent got %s", when,
              t ? t : "(null)");
    mcpc_free(c);
}

/*
 * At the bound, with every connection talking: the extra ones are refused with the error and
 * closed; one warning for all of them; a place freed is taken again, and its end logged.
 */
static void check_full(Harness *h, mcpc_client *c)
{
    open_many(h, 0, PEER_MAX - 1, true); /* c holds the last place */
    /* A round trip on c: mcpd has accepted every connection made before it. */
    _cleanup_free_ char *t = h_call_text(c, CONTROL, "{\"text\":\"full\"}", NULL);
    CHECK(t && streq(t, "full"));
    for (int i = 0; i < N_EXTRA; i++) {
        int fd = h_raw_connect(h);
        CHECK(fd >= 0);
        _cleanup_free_ char *got = h_raw_read(fd, H_WAIT_MS);
        CHECK_MSG(strstr(got, "\"error\"") && strstr(got, "most connections at once (2048)"),
                  "connection %d past the bound got: %.300s", i, got);
        close(fd);
    }
    CHECK_MSG(log_count(h, "refusing new connections") == 1,
              "the refusals were logged %d times, not once",
              log_count(h, "refusing new connections"));
    close_many(0, N_FREED);
    for (int i = 0; i < N_FREED; i++)
        fds[i] = -1;
    for (int i = 0; i < H_WAIT_MS / 100 && log_count(h, "place is free again") == 0; i++)
        h_sleep_ms(100);
    CHECK_MSG(log_count(h, "20 connections were refused") == 1,
              "the end of the full spell was not logged with its count");
    check_served(h, "places freed");
    close_many(N_FREED, PEER_MAX - 1);
}

/*
 * Every place taken by connections that never send a byte: once they have been silent
 * PEER_SILENT_EVICT_MS, a new agent gets the place of the oldest, which is told why.
 */
static void check_silent(Harness *h, mcpc_client *c)
{
    open_many(h, 0, PEER_MAX - 1, false);
    _cleanup_free_ char *t = h_call_text(c, CONTROL, "{\"text\":\"silent\"}", NULL);
    CHECK(t && streq(t, "silent"));
    h_sleep_ms(PEER_SILENT_EVICT_MS + 2000);
    check_served(h, "silent connections held every place");
    _cleanup_free_ char *got = h_raw_read(fds[0], H_WAIT_MS);
    CHECK_MSG(strstr(got, "sent nothing for"), "the oldest silent connection got: %.300s", got);
    close_many(0, PEER_MAX - 1);
}

int main(void)
{
    _cleanup_free_ char *cfg = NULL;
    Harness h;
    mcpc_client *c;

    raise_fd_limit();
    h_setup(&h, "agent-connection-limits");
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "agent-connection-limits");
    h_settle(&h, c, "steady", NULL);

    check_full(&h, c);
    h_check_healthy(&h, "more connections than mcpd serves", CONTROL);
    check_silent(&h, c);
    h_check_healthy(&h, "silent connections in every place", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-agent-connection-limits");
}
