// SPDX-License-Identifier: MIT
// test-agent-notification-flood: an agent that floods notification lines, against the real mcpd.

/*
 * Round 3 of the attacks by agents (task h-red3). An agent writing tiny notification lines as
 * fast as the socket takes them had up to four 64 KiB reads of them handled per wake-up, ten
 * thousand lines and more in one go, so every other agent's call took 0.6-1 s (30 times its
 * usual). Now an agent's lines are handled 1024 per wake-up, the rest after everyone else's.
 */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Control calls made while the flood runs. */
#define N_CALLS 20
/*
 * Their mean time allowed during the flood: a bound against starvation, not a measurement.
 * Measured under ASan: 42-57 ms with the flood's lines handled 1024 per wake-up, 222-243 ms
 * when each wake-up handled all four reads' lines (a call with no flood: under 1 ms); on a
 * machine running two suites at once a fixed run took 258 ms, so a tighter bound is a timing
 * test that fails under load. The figure is printed on every run.
 */
#define FLOOD_CALL_MS_MAX 1000
/* The notification flooded: unknown, so mcpd answers nothing and only has to read it. */
#define NOTE "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n"
/* A burst of several wake-ups' worth of lines (PEER_LINES_PER_WAKE is 1024). */
#define BURST_LINES 6000
/* Bursts in a row: each ends differently against mcpd's reads, so several cover the cases. */
#define BURST_ROUNDS 5
/* Bytes written per write: a read's worth (FRAMER_READ_CHUNK) of notifications. */
#define CHUNK_BYTES 65536

/* The flooding agent: initialize, then notifications as fast as the socket takes them. */
static pid_t start_flood(Harness *h)
{
    pid_t pid = fork();

    if (pid == 0) {
        size_t per = CHUNK_BYTES / (sizeof(NOTE) - 1);
        char *chunk = malloc(per * (sizeof(NOTE) - 1));
        int fd = h_raw_connect(h);
        for (size_t i = 0; i < per; i++)
            memcpy(chunk + i * (sizeof(NOTE) - 1), NOTE, sizeof(NOTE) - 1);
        if (fd < 0 || !h_raw_write(fd, h_raw_initialize, strlen(h_raw_initialize)))
            _exit(1);
        while (h_raw_write(fd, chunk, per * (sizeof(NOTE) - 1)))
            ;
        _exit(0);
    }
    return pid;
}

/* N_CALLS control calls; their mean time in ms. */
static uint64_t control_calls(mcpc_client *c, const char *when)
{
    uint64_t t0 = now_ms();

    for (int i = 0; i < N_CALLS; i++) {
        int is_err = 0;
        _cleanup_free_ char *t = h_call_text(c, CONTROL, "{\"text\":\"ping\"}", &is_err);
        CHECK_MSG(!is_err && t && strstr(t, "ping"), "control %s the flood: %.300s", when,
                  t ? t : "(null)");
    }
    return (now_ms() - t0) / N_CALLS;
}

/*
 * An agent that writes more lines than one wake-up handles and dies at once, its own input
 * unread: mcpd's socket holds the rest and the EOF, and epoll says EPOLLHUP/EPOLLERR (not
 * EPOLLRDHUP). Edge-triggered, the short read of the rest left the EOF unread and the connection
 * open for good; mcpd must handle every line and close it.
 */
static void check_burst_and_die(Harness *h)
{
    pid_t pid = fork();

    if (pid == 0) {
        size_t per = BURST_LINES, n = per * (sizeof(NOTE) - 1);
        char *burst = malloc(n);
        int fd = h_raw_connect(h);
        for (size_t i = 0; i < per; i++)
            memcpy(burst + i * (sizeof(NOTE) - 1), NOTE, sizeof(NOTE) - 1);
        if (fd < 0 || !h_raw_write(fd, h_raw_initialize, strlen(h_raw_initialize)) ||
            !h_raw_write(fd, burst, n))
            _exit(1);
        _exit(0); /* the initialize answer unread: the close resets mcpd's side */
    }
    CHECK(pid > 0 && waitpid(pid, NULL, 0) == pid);
    h_check_healthy(h, "an agent that wrote a burst and died", CONTROL);
}

int main(void)
{
    _cleanup_free_ char *cfg = NULL;
    Harness h;
    mcpc_client *c;
    uint64_t ms;
    pid_t flood;

    h_setup(&h, "agent-notification-flood");
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "agent-notification-flood");
    h_settle(&h, c, "steady", NULL);

    flood = start_flood(&h);
    h_sleep_ms(1000); /* the flood is under way */
    ms = control_calls(c, "during");
    fprintf(stderr, "  notification flood: control calls took %llu ms each\n",
            (unsigned long long)ms);
    CHECK_MSG(!h_measurable("the flood's call time bound") || ms < FLOOD_CALL_MS_MAX,
              "an agent's flood held the others up: %llu ms a call", (unsigned long long)ms);
    CHECK_MSG(waitpid(flood, NULL, WNOHANG) == 0, "the flooding agent was cut off");
    kill(flood, SIGKILL);
    waitpid(flood, NULL, 0);
    h_check_healthy(&h, "an agent flooding notifications", CONTROL);
    for (int i = 0; i < BURST_ROUNDS; i++)
        check_burst_and_die(&h);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-agent-notification-flood");
}
