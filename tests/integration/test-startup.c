// SPDX-License-Identifier: MIT
// test-startup: the start-up gate, the tool cache, deferred tools and background completion.

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* How long the slow server takes to answer initialize. */
#define SLOW_MS 3000

static char *slow_config(const char *extra)
{
    return xasprintf("{\"mcpServers\": {"
                     "\"quick\": {\"command\": \"%1$s\"},"
                     "\"slow\": {\"command\": \"%1$s\", \"args\": [\"--init-delay-ms\", \"%2$d\"]}"
                     "%3$s}}",
                     h_fake(), SLOW_MS, extra);
}

/*
 * When the test last started mcpd (now_ms(), taken before the start). A wait that mcpd counts
 * from its own start or a server's spawn is measured from here, not from the list: the client
 * may come late on a loaded machine (or under valgrind), never early, so the bound holds.
 */
static uint64_t g_started_ms;

static void start(Harness *h)
{
    g_started_ms = now_ms();
    h_start(h, NULL);
}

/* Milliseconds from the list call to its answer (*since_startp: from the last start()). */
static int64_t list_ms(mcpc_client *c, int *np, bool *slow_deferredp, int64_t *since_startp)
{
    uint64_t t0 = now_ms();
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val tools;

    *slow_deferredp = false;
    *np = -1;
    if (mcpc_list_tools(c, &out) != 0)
        return -1;
    int64_t ms = (int64_t)(now_ms() - t0);
    if (since_startp)
        *since_startp = (int64_t)(now_ms() - g_started_ms);
    r = json_parse(out, NULL);
    tools = json_get_array(r, "tools");
    *np = (int)json_array_len(tools);
    for (size_t i = 0; i < json_array_len(tools); i++) {
        yajl_val meta = json_get_object(json_array_at(tools, i), "_meta");
        if (streq(json_get_string(meta, "mcpd/server"), "slow") &&
            YAJL_IS_TRUE(json_get(meta, "mcpd/deferred")))
            *slow_deferredp = true;
    }
    return ms;
}

static int count_cache_files(Harness *h, const char *prefix)
{
    char dir[400];
    DIR *d;
    struct dirent *e;
    int n = 0;

    snprintf(dir, sizeof(dir), "%s/cache/mcpd/tools", h->dir);
    if (!(d = opendir(dir)))
        return 0;
    while ((e = readdir(d)))
        if (startswith(e->d_name, prefix))
            n++;
    closedir(d);
    return n;
}

/* No cache: tools/list waits for the slow server; its tools are live when they come. */
static void test_cold(Harness *h)
{
    mcpc_client *c = h_client(h, "cold");
    bool deferred;
    int n;
    int64_t ms;

    list_ms(c, &n, &deferred, &ms);
    CHECK_MSG(ms >= SLOW_MS, "cold list answered %lld ms after the start", (long long)ms);
    CHECK(n == 20 && !deferred);
    CHECK(count_cache_files(h, "slow-") == 1);
    char path[600];
    struct stat st;
    DIR *d;
    struct dirent *e;
    snprintf(path, sizeof(path), "%s/cache/mcpd/tools", h->dir);
    d = opendir(path);
    while (d && (e = readdir(d)))
        if (startswith(e->d_name, "slow-")) {
            snprintf(path, sizeof(path), "%s/cache/mcpd/tools/%s", h->dir, e->d_name);
            CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
        }
    if (d)
        closedir(d);
    mcpc_free(c);
}

static int g_list_changed;

static void on_notify(void *ud, const char *method, const char *params)
{
    (void)ud, (void)params;
    if (streq(method, "notifications/tools/list_changed"))
        g_list_changed++;
}

/* Warm cache: tools/list answers at the gate with the slow server's tools deferred. */
static void test_warm(Harness *h)
{
    mcpc_client *c = h_client(h, "warm");
    bool deferred;
    int n;
    int64_t ms = list_ms(c, &n, &deferred, NULL);
    char *t;

    CHECK_MSG(ms >= 0 && ms < 1000, "warm list took %lld ms", (long long)ms);
    CHECK_MSG(n == 20 && deferred, "n=%d deferred=%d", n, deferred);
    yajl_val st = h_status(c);
    CHECK(streq(json_get_string(h_server(st, "slow"), "state"), "connecting"));
    CHECK(YAJL_IS_TRUE(json_get(h_server(st, "slow"), "toolsDeferred")));
    json_free(st);
    /* A call to a deferred tool waits for the connection and then runs. */
    mcpc_set_notify(c, on_notify, NULL);
    t = h_call_text(c, "mcp_slow_echo", "{\"text\":\"worth the wait\"}", NULL);
    CHECK_MSG(streq(t, "worth the wait"), "deferred call gave %s", t);
    free(t);
    /* The live tools replace the deferred ones, and the agent hears of it. */
    for (int i = 0; i < 100 && !g_list_changed; i++)
        mcpc_process(c, 50);
    CHECK(g_list_changed >= 1);
    list_ms(c, &n, &deferred, NULL);
    CHECK(n == 20 && !deferred);
    mcpc_free(c);
}

/* A corrupt cache file and a cache for a changed config are both misses. */
static void test_cache_misses(Harness *h)
{
    char dir[400], path[700];
    DIR *d;
    struct dirent *e;
    mcpc_client *c;
    bool deferred;
    int n;

    snprintf(dir, sizeof(dir), "%s/cache/mcpd/tools", h->dir);
    d = opendir(dir);
    while (d && (e = readdir(d)))
        if (startswith(e->d_name, "slow-")) {
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            FILE *f = fopen(path, "w");
            fputs("{\"version\":1, \"tools\": [trunc", f);
            fclose(f);
        }
    if (d)
        closedir(d);
    start(h);
    c = h_client(h, "corrupt");
    int64_t ms;
    list_ms(c, &n, &deferred, &ms);
    CHECK_MSG(ms >= SLOW_MS && !deferred, "corrupt cache: %lld ms", (long long)ms);
    mcpc_free(c);
    CHECK(h_stop(h) == 0);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "corrupt"));

    /* Same name, other config: the old entry does not apply. */
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"quick\": {\"command\": \"%1$s\"},"
        "\"slow\": {\"command\": \"%1$s\", \"args\": [\"--init-delay-ms\", \"%2$d\", \"--tools\","
        " \"1\"]}}}",
        h_fake(), SLOW_MS);
    h_write_config(h, cfg);
    start(h);
    c = h_client(h, "changed");
    list_ms(c, &n, &deferred, &ms);
    CHECK_MSG(ms >= SLOW_MS && !deferred && n == 21, "changed config: %lld ms, %d tools",
              (long long)ms, n);
    mcpc_free(c);
    CHECK(h_stop(h) == 0);
}

/* A server that hangs forever: tools/list returns after its timeout with the others' tools. */
static void test_hang(Harness *h)
{
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"quick\": {\"command\": \"%1$s\"},"
        "\"hangs\": {\"command\": \"%1$s\", \"args\": [\"--hang-init\"], \"timeout\": 2000}}}",
        h_fake());
    mcpc_client *c;
    bool found;
    int n;

    h_write_config(h, cfg);
    start(h);
    c = h_client(h, "hang");
    n = h_list_count(c, "mcp_quick_echo", &found);
    /* The server's timeout runs from its spawn, after start(): see g_started_ms. */
    uint64_t ms = now_ms() - g_started_ms;
    CHECK_MSG(found && n == 10 && ms >= 2000 && ms < 60000, "hang: %d tools after %llu ms", n,
              (unsigned long long)ms);
    yajl_val st = h_status(c);
    const char *err = json_get_string(h_server(st, "hangs"), "lastError");
    CHECK(err && strstr(err, "timed out after 2000ms"));
    json_free(st);
    mcpc_free(c);
    CHECK(h_stop(h) == 0);
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg = slow_config("");

    h_setup(&h, "startup");
    /* Its servers start with mcpd (the warm start from the cache is what it checks), not on
     * their first call: lazy start has its own test (test-ondemand). */
    h_write_settings(&h, "{\"start\": \"eager\"}");
    h_write_config(&h, cfg);
    start(&h);
    test_cold(&h);
    CHECK(h_stop(&h) == 0);
    start(&h);
    test_warm(&h);
    CHECK(h_stop(&h) == 0);
    test_cache_misses(&h);
    test_hang(&h);
    h_teardown(&h);
    return h_finish("test-startup");
}
