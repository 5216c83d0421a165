// SPDX-License-Identifier: MIT
// test-era-cache: each server's protocol era kept in its tool cache entry, so a daemon restart
// sends a 2025 server straight to initialize (no server/discover probe to sit out again).

#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/*
 * What a 2025 server that ignores server/discover but answers ping costs on a first connect: the
 * probe's grace after the ping's answer (UPSTREAM_DISCOVER_GRACE_MS); a restart does not pay it.
 */
#define GRACE_MS 1000
/* The echo tool of a server that stays up throughout, for h_check_healthy(). */
#define CONTROL "mcp_old_echo"

/* How often needle occurs in the file at path. */
static int count_in(const char *path, const char *needle)
{
    _cleanup_free_ char *text = h_read_file(path);
    int n = 0;

    for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The size of mcpd's log now: what a start writes comes after it (the log is appended to). */
static size_t log_mark(const Harness *h)
{
    _cleanup_free_ char *text = h_read_file(h->log);
    return text ? strlen(text) : 0;
}

/* The log written since mark (to free). */
static char *log_since(const Harness *h, size_t mark)
{
    _cleanup_free_ char *text = h_read_file(h->log);
    return xstrdup(text && strlen(text) >= mark ? text + mark : "");
}

/* The cache entry of server name (to free), or NULL if there is not exactly one. */
static char *entry_path(const Harness *h, const char *name)
{
    _cleanup_free_ char *pattern = xasprintf("%s/cache/mcpd/tools/%s-*.json", h->dir, name);
    glob_t g;
    char *path = NULL;

    if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1)
        path = xstrdup(g.gl_pathv[0]);
    globfree(&g);
    return path;
}

/* The "era" member of server name's cache entry (to free), or NULL. */
static char *entry_era(const Harness *h, const char *name)
{
    _cleanup_free_ char *path = entry_path(h, name);
    _cleanup_free_ char *text = path ? h_read_file(path) : NULL;
    _cleanup_json_ yajl_val root = text ? json_parse(text, NULL) : NULL;
    const char *era = json_get_string(root, "era");

    return era ? xstrdup(era) : NULL;
}

/* Replace server name's stored era with value (raw JSON), as an old or damaged file would. */
static void set_entry_era(const Harness *h, const char *name, const char *from, const char *value)
{
    _cleanup_free_ char *path = entry_path(h, name);

    CHECK_MSG(path, "no cache entry for %s", name);
    if (path)
        h_sh("sed -i 's/\"era\":\"%s\"/\"era\":%s/' '%s' && grep -qF '\"era\":%s' '%s'", from,
             value, path, value, path);
}

/* Wait for every server of a start to be connected. */
static mcpc_client *start_and_connect(Harness *h, const char *client)
{
    mcpc_client *c;

    h_start(h, NULL);
    c = h_client(h, client);
    CHECK(h_wait_state(c, "old", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "modern", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "damaged", "connected", H_WAIT_MS));
    return c;
}

int main(void)
{
    const char *modern = getenv("MODERN_SERVER");
    Harness h;
    mcpc_client *c;
    size_t mark;
    char *v;

    if (!modern) {
        fprintf(stderr, "MODERN_SERVER is not set (run through meson test)\n");
        return 99;
    }
    h_setup(&h, "era-cache");
    /* Its servers start with mcpd (the warm start from the cache is what it checks), not on
     * their first call: lazy start has its own test (test-ondemand). */
    h_write_settings(&h, "{\"start\": \"eager\"}");
    _cleanup_free_ char *olog = paths_join(h.dir, "old.log");
    _cleanup_free_ char *mlog = paths_join(h.dir, "modern.log");
    _cleanup_free_ char *dlog = paths_join(h.dir, "damaged.log");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        " \"old\": {\"command\": \"%s\", \"args\": [\"--ignore-unknown\", \"--log\", \"%s\"]},"
        " \"modern\": {\"command\": \"%s\", \"args\": [\"--log\", \"%s\"]},"
        " \"damaged\": {\"command\": \"%s\", \"args\": [\"--log\", \"%s\"]}}}",
        h_fake(), olog, modern, mlog, h_fake(), dlog);
    h_write_config(&h, cfg);

    /* First start, nothing cached: the 2025 server that ignores the probe costs the grace. */
    mark = log_mark(&h);
    c = start_and_connect(&h, "first");
    _cleanup_free_ char *log1 = log_since(&h, mark);
    long first_ms = h_connect_ms(log1, "old");
    printf("  first start: the 2025 server ignoring server/discover connected in %ld ms\n",
           first_ms);
    CHECK_MSG(first_ms >= GRACE_MS - 100, "old connected in %ld ms: was it probed?", first_ms);
    CHECK(h_line_has(log1, "[old] ", "it answered ping but not server/discover"));
    CHECK(count_in(olog, "\"server/discover\"") == 1);
    CHECK(count_in(olog, "\"initialize\"") == 1);
    CHECK(count_in(mlog, "initialize") == 0);
    /* Each entry holds the era its server spoke, in the words of the "protocol" field. */
    CHECK_MSG(streq(v = entry_era(&h, "old"), "2025"), "old: era %s", v);
    free(v);
    CHECK_MSG(streq(v = entry_era(&h, "modern"), "2026-07-28"), "modern: era %s", v);
    free(v);
    CHECK_MSG(streq(v = entry_era(&h, "damaged"), "2025"), "damaged: era %s", v);
    free(v);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);

    /* A value mcpd never wrote is ignored (a debug line), not trusted: that server is probed. */
    set_entry_era(&h, "damaged", "2025", "\"1999\"");

    /* Second start: the era comes from the cache; the 2025 server gets initialize at once. */
    int modern_probes = count_in(mlog, "server/discover ");
    mark = log_mark(&h);
    c = start_and_connect(&h, "second");
    _cleanup_free_ char *log2 = log_since(&h, mark);
    long second_ms = h_connect_ms(log2, "old");
    printf("  second start: the same server connected in %ld ms (no probe, no grace)\n", second_ms);
    CHECK_MSG(second_ms >= 0, "old did not connect after a restart");
    CHECK_MSG(count_in(olog, "\"server/discover\"") == 1, "old was probed again after a restart");
    CHECK(count_in(olog, "\"initialize\"") == 2);
    CHECK(h_line_has(log2, "[old] ", "tools from the cache (era 2025)"));
    /* The modern server is still asked server/discover, and never initialize. */
    CHECK(h_line_has(log2, "[modern] ", "tools from the cache (era 2026-07-28)"));
    CHECK(count_in(mlog, "server/discover ") > modern_probes);
    CHECK(count_in(mlog, "initialize") == 0);
    /* The damaged value: named at debug level, the server probed, the entry written afresh. */
    CHECK_MSG(h_line_has(log2, "[damaged] ", "era \"1999\" is not"), "no word of the damaged era");
    CHECK(count_in(dlog, "\"server/discover\"") == 2);
    CHECK_MSG(streq(v = entry_era(&h, "damaged"), "2025"), "damaged: era %s", v);
    free(v);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    /* Not a string at all: the same. */
    set_entry_era(&h, "damaged", "2025", "{\"x\":[1]}");

    /*
     * Third start, a wrong guess: the modern server's entry says 2025 (as if its binary had been
     * upgraded in place). One initialize, refused; then it is probed and connects, and its entry
     * says 2026-07-28 again. Never a loop.
     */
    set_entry_era(&h, "modern", "2026-07-28", "\"2025\"");
    mark = log_mark(&h);
    c = start_and_connect(&h, "third");
    _cleanup_free_ char *log3 = log_since(&h, mark);
    CHECK_MSG(count_in(mlog, "initialize") == 1, "modern got %d initialize",
              count_in(mlog, "initialize"));
    CHECK_MSG(streq(v = entry_era(&h, "modern"), "2026-07-28"), "modern: era %s", v);
    free(v);
    CHECK_MSG(h_line_has(log3, "[damaged] ", "era {\"x\":[1]} is not"),
              "no word of the damaged era");
    CHECK(count_in(dlog, "\"server/discover\"") == 3);
    /* And the 2025 server, still from the cache: no probe. */
    CHECK(count_in(olog, "\"server/discover\"") == 1);
    CHECK(count_in(olog, "\"initialize\"") == 3);

    h_settle(&h, c, "old", "modern", "damaged", NULL);
    CHECK(h_check_healthy(&h, "the era read back from the cache", CONTROL));
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-era-cache");
}
