// SPDX-License-Identifier: MIT
// test-stable-order: tools/list, prompts/list, resources/list and resources/templates/list are
// byte-identical across 20 restarts of mcpd, whatever order the servers connect in (random
// start delays), the order of their entries in the config, and their own order of their lists.

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Restarts compared (issue 33: "byte-identical across 20 restarts"). */
#define RESTARTS 20
/* A server's start-up delay is drawn from [0, this): enough to reorder who connects first. */
#define MAX_DELAY_MS 400

typedef struct Srv {
    const char *name;
    bool surface; /* surface-server (prompts, resources, templates) or fake-server (tools) */
    const char *extra;
} Srv;

/* dup-x and dup_x sanitise to one name: their tools collide and get hashed suffixes. */
static const Srv servers[] = {
    {"alpha", false, "\"--tools\",\"6\""}, {"beta", false, "\"--tools\",\"3\""},
    {"dup-x", false, "\"--tools\",\"2\""}, {"dup_x", false, "\"--tools\",\"2\""},
    {"s1", true, "\"--resources\",\"5\""}, {"s2", true, "\"--resources\",\"5\""},
};
#define N_SERVERS N_ELEMENTS(servers)

/* The config for one start: servers in a shuffled order, each with its own delay and order. */
static void write_config(Harness *h, const char *fake, const char *surface)
{
    size_t order[N_SERVERS];
    StrBuf sb = STRBUF_INIT;

    for (size_t i = 0; i < N_SERVERS; i++)
        order[i] = i;
    for (size_t i = N_SERVERS - 1; i > 0; i--) {
        size_t j = (size_t)rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    strbuf_puts(&sb, "{\"mcpServers\":{");
    for (size_t k = 0; k < N_SERVERS; k++) {
        const Srv *s = &servers[order[k]];
        bool reverse = rand() % 2;
        strbuf_printf(&sb,
                      "%s\"%s\":{\"command\":\"%s\",\"args\":[\"--name\",\"%s\",%s,"
                      "\"--init-delay-ms\",\"%d\"%s]}",
                      k ? "," : "", s->name, s->surface ? surface : fake, s->name, s->extra,
                      rand() % MAX_DELAY_MS,
                      reverse ? (s->surface ? ",\"--reverse\"" : ",\"--reverse-list\"") : "");
    }
    strbuf_puts(&sb, "}}");
    h_write_config(h, sb.data);
    strbuf_deinit(&sb);
}

static const char *const methods[] = {"tools/list", "prompts/list", "resources/list",
                                      "resources/templates/list"};
#define N_METHODS N_ELEMENTS(methods)

/* One start: every server connected, then each list as the daemon wrote it. */
static bool lists_of_one_start(Harness *h, char *out[N_METHODS])
{
    mcpc_client *c = h_client(h, "stable-order");
    bool ok = true;

    for (size_t i = 0; i < N_SERVERS && ok; i++) {
        ok = h_wait_state(c, servers[i].name, "connected", H_WAIT_MS);
        CHECK_MSG(ok, "server %s connected", servers[i].name);
    }
    for (size_t m = 0; m < N_METHODS && ok; m++) {
        ok = mcpc_request(c, methods[m], "{}", &out[m]) == 0;
        CHECK_MSG(ok, "%s: %s", methods[m], mcpc_errmsg(c));
    }
    mcpc_free(c);
    return ok;
}

int main(void)
{
    const char *fake = h_fake(), *surface = getenv("SURFACE_SERVER");
    char *first[N_METHODS] = {0};
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    Harness h;

    if (!surface) {
        fprintf(stderr, "SURFACE_SERVER is not set\n");
        return 99;
    }
    printf("# seed %u\n", seed);
    srand(seed);
    h_setup(&h, "stable-order");
    for (int run = 0; run < RESTARTS; run++) {
        char *now[N_METHODS] = {0};
        write_config(&h, fake, surface);
        h_start(&h, NULL);
        if (lists_of_one_start(&h, now)) {
            for (size_t m = 0; m < N_METHODS; m++) {
                if (!first[m]) {
                    first[m] = now[m];
                    now[m] = NULL;
                    continue;
                }
                CHECK_MSG(streq(first[m], now[m]), "run %d: %s differs from run 0", run,
                          methods[m]);
                if (!streq(first[m], now[m]))
                    fprintf(stderr, "run 0: %s\nrun %d: %s\n", first[m], run, now[m]);
            }
        }
        for (size_t m = 0; m < N_METHODS; m++)
            free(now[m]);
        CHECK_INTEQ(h_stop(&h), 0);
        if (h_failures)
            break;
    }
    /* Each list holds what it should, so identical lists are not identical empty ones. */
    CHECK(first[0] && strstr(first[0], "\"mcp_alpha_tool5\"") && strstr(first[0], "dup_x"));
    CHECK(first[2] && strstr(first[2], "item4"));
    CHECK(first[1] && strstr(first[1], "greet"));
    for (size_t m = 0; m < N_METHODS; m++)
        free(first[m]);
    h_teardown(&h);
    return h_finish("stable-order");
}
