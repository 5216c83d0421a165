// SPDX-License-Identifier: MIT
// test-log-flood-slow-agents: a server flooding log messages into agents that do not read.

/*
 * Round 4 of the attacks by servers (task h-red4). A server's log messages go to every agent
 * that sees it; an agent that does not read had them queued up to its own bound (four maximal
 * messages: 64 MiB by default), and every such agent as much again, so a flood into a hundred
 * slow agents held 6.4 GiB before any was dropped. Now the output queued to all agents together
 * is bounded too (PEER_QUEUE_TOTAL_FACTOR maximal messages): past it the agent holding the most
 * is dropped with the reason, and the agents that read keep being served.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
#define FLOOD   "mcp_hostile_flood"
/* maxMessageBytes for this test: each agent may queue 4 MiB, all of them 16 MiB. */
#define MAX_MESSAGE (1024 * 1024)
#define TOTAL_MAX   (16 * MAX_MESSAGE)
/* Agents that never read. */
#define N_SLOW 10
/*
 * Log messages of 1 KiB flooded: about 3 MiB to each agent, under one agent's bound (4 MiB) but
 * 30 MiB for the ten, past the total's.
 */
#define N_LOGS      2800
#define INITIALIZED "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"

/* Bytes queued to all agents, from mcpd's status. */
static int64_t queued_total(mcpc_client *c)
{
    yajl_val st = h_status(c), agents = json_get_array(st, "agents");
    int64_t sum = 0;

    for (size_t i = 0; agents && i < agents->u.array.len; i++) {
        int64_t q = 0;
        json_get_int(agents->u.array.values[i], "bytesQueued", &q);
        sum += q;
    }
    json_free(st);
    return sum;
}

int main(void)
{
    _cleanup_free_ char *cfg = NULL, *settings = NULL;
    int slow[N_SLOW];
    Harness h;
    mcpc_client *c;

    h_setup(&h, "log-flood-slow-agents");
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}, \"hostile\": "
                    "{\"command\": \"%s\", \"args\": [\"--log-flood\", \"%d\"]}}}",
                    h_fake(), getenv("HOSTILE_SERVER"), N_LOGS);
    h_write_config(&h, cfg);
    settings = xasprintf("{\"maxMessageBytes\": %d}", MAX_MESSAGE);
    h_write_settings(&h, settings);
    h_start(&h, NULL);
    c = h_client(&h, "log-flood-slow-agents");
    h_settle(&h, c, "steady", "hostile", NULL);

    for (int i = 0; i < N_SLOW; i++) {
        slow[i] = h_raw_connect(&h);
        CHECK(slow[i] >= 0 && h_raw_write(slow[i], h_raw_initialize, strlen(h_raw_initialize)) &&
              h_raw_write(slow[i], INITIALIZED, strlen(INITIALIZED)));
    }
    /* The flood: this agent reads its share while it waits for the answer. */
    int is_error = -1;
    _cleanup_free_ char *t = h_call_text(c, FLOOD, "{}", &is_error);
    CHECK_MSG(is_error == 0 && t && streq(t, "flooded"), "the flood call got %s", t ? t : "(null)");
    int64_t total = queued_total(c);
    fprintf(stderr, "  %d agents not reading, %d log messages of 1 KiB: %lld bytes queued\n",
            N_SLOW, N_LOGS, (long long)total);
    CHECK_MSG(total <= TOTAL_MAX, "%lld bytes queued to agents, over the bound of %d",
              (long long)total, TOTAL_MAX);
    _cleanup_free_ char *log = h_read_file(h.log);
    CHECK_MSG(log && strstr(log, "and this client holds the most"),
              "no agent was dropped for the total queued");
    for (int i = 0; i < N_SLOW; i++)
        close(slow[i]);
    h_check_healthy(&h, "a log flood into agents that do not read", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-log-flood-slow-agents");
}
