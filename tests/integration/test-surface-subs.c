// SPDX-License-Identifier: MIT
// test-surface-subs: resource subscriptions are bounded per server; the daemon keeps serving.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_alpha_echo"
/* mcpd's SURFACE_MAX_SUBS (daemon/core/surface.c). */
#define MAX_SUBS 1024

static char *subscribe(mcpc_client *c, const char *method, unsigned i, bool *okp)
{
    _cleanup_free_ char *params = xasprintf("{\"uri\":\"doc://beta/%u\"}", i);
    char *out = NULL;

    *okp = mcpc_request(c, method, params, &out) == 0;
    if (*okp)
        return out;
    free(out);
    return xstrdup(mcpc_errmsg(c));
}

static int server_subs(mcpc_client *c, const char *server)
{
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t n = -1;

    json_get_int(h_server(st, server), "subscriptions", &n);
    return (int)n;
}

/* A client subscribing to ever more URIs is refused past the bound, with a clear reason. */
static void test_subscriptions_bounded(Harness *h)
{
    mcpc_client *a = h_client(h, "greedy");
    unsigned ok = 0;
    bool good = true;

    for (unsigned i = 0; i < MAX_SUBS && good; i++) {
        _cleanup_free_ char *r = subscribe(a, "resources/subscribe", i, &good);
        ok += good;
        if (!good)
            fprintf(stderr, "subscription %u refused: %s\n", i, r);
    }
    CHECK_MSG(ok == MAX_SUBS, "%u of %d subscriptions accepted", ok, MAX_SUBS);
    _cleanup_free_ char *over = subscribe(a, "resources/subscribe", MAX_SUBS, &good);
    CHECK_MSG(!good && strstr(over, "beta") && strstr(over, "1024"), "past the bound: %s", over);
    /* One already held is still fine, and leaving one makes room for another. */
    _cleanup_free_ char *again = subscribe(a, "resources/subscribe", 0, &good);
    CHECK_MSG(good, "an existing subscription again: %s", again);
    _cleanup_free_ char *leave = subscribe(a, "resources/unsubscribe", 0, &good);
    CHECK_MSG(good, "unsubscribe: %s", leave);
    _cleanup_free_ char *room = subscribe(a, "resources/subscribe", MAX_SUBS, &good);
    CHECK_MSG(good, "after an unsubscribe: %s", room);
    CHECK_MSG(server_subs(a, "beta") == MAX_SUBS, "beta holds %d", server_subs(a, "beta"));
    mcpc_free(a);
    /* The agent gone, its subscriptions go with it. */
    mcpc_client *c = h_client(h, "after");
    int n = -1;
    for (int waited = 0; waited < H_WAIT_MS && (n = server_subs(c, "beta")) != 0; waited += 100)
        h_sleep_ms(100);
    CHECK_MSG(n == 0, "beta still holds %d after the agent left", n);
    mcpc_free(c);
}

int main(void)
{
    Harness h;
    const char *server = getenv("SURFACE_SERVER");
    mcpc_client *c;

    if (!server) {
        fprintf(stderr, "SURFACE_SERVER is not set\n");
        return 1;
    }
    h_setup(&h, "surface-subs");
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\":{"
                  "\"alpha\":{\"command\":\"%s\",\"args\":[\"--name\",\"alpha\"]},"
                  "\"beta\":{\"command\":\"%s\",\"args\":[\"--name\",\"beta\"]}}}",
                  server, server);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "main");
    h_settle(&h, c, "alpha", "beta", NULL);
    test_subscriptions_bounded(&h);
    mcpc_free(c);
    h_check_healthy(&h, "surface-subs", CONTROL);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-surface-subs");
}
