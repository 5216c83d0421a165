// SPDX-License-Identifier: MIT
// test-claude-json-watch: ~/.claude.json is watched like every config file (issue 38 item 2): a
// server `claude mcp add -s user` writes while mcpd runs connects, nothing else restarts, and
// Claude Code's own rewrites of keys discovery does not read reload nothing.

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/*
 * How long a change is given to be applied, and how long a rewrite that changes nothing is
 * watched for a reload that must not come: the quiet time is 500 ms (watch.c), so a reload
 * would come well within 2 s.
 */
#define QUIET_WATCH_MS 2000

/* Write ~/.claude.json as Claude Code does: a temporary file renamed over it. */
static void write_claude_json(const Harness *h, const char *text)
{
    _cleanup_free_ char *path = xasprintf("%s/home/.claude.json", h->dir);
    _cleanup_free_ char *tmp = xasprintf("%s/home/.claude.json.tmp.%d", h->dir, (int)getpid());
    FILE *f = fopen(tmp, "w");

    CHECK_MSG(f != NULL, "%s", tmp);
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
    CHECK_MSG(rename(tmp, path) == 0, "rename to %s", path);
}

/* ~/.claude.json with Claude Code's state around the servers: counters, tips, a project. */
static char *claude_json(int startups, const char *user_servers, const char *project,
                         const char *project_servers)
{
    return xasprintf("{\"numStartups\":%d,\"tipsHistory\":{\"memory\":%d},"
                     "\"cachedChangelog\":\"%0*d\",\"projects\":{\"%s\":{\"allowedTools\":[],"
                     "\"lastCost\":%d,\"mcpServers\":{%s}}},\"mcpServers\":{%s}}",
                     startups, startups, 4000 + startups, 0, project, startups, project_servers,
                     user_servers);
}

static char *fake_entry(const char *name, const char *marker)
{
    return xasprintf("\"%s\":{\"type\":\"stdio\",\"command\":\"%s\",\"args\":[\"--log\",\"%s\"]}",
                     name, h_fake(), marker);
}

static int n_starts(const char *marker)
{
    return h_count_in_file(marker, H_FAKE_STARTED);
}

static int n_reloads(const Harness *h)
{
    return h_count_in_file(h->log, "hot reload after");
}

/* Wait until server is connected; return how long it took (ms), or -1. */
static int64_t time_to_connect(mcpc_client *c, const char *server)
{
    uint64_t t0 = now_ms();

    if (!h_wait_state(c, server, "connected", H_WAIT_MS))
        return -1;
    return (int64_t)(now_ms() - t0);
}

int main(void)
{
    Harness h;
    mcpc_client *c, *agent;

    h_setup(&h, "claude-json-watch");
    _cleanup_free_ char *project = paths_join(h.dir, "project");
    _cleanup_free_ char *m_other = paths_join(h.dir, "other.log");
    _cleanup_free_ char *m_x = paths_join(h.dir, "x.log");
    _cleanup_free_ char *m_y = paths_join(h.dir, "y.log");
    _cleanup_free_ char *other = fake_entry("other", m_other);
    _cleanup_free_ char *x = fake_entry("x", m_x);
    _cleanup_free_ char *y = fake_entry("y", m_y);
    _cleanup_free_ char *native = xasprintf("{\"mcpServers\":{%s}}", other);
    h_sh("mkdir -p '%s'", project);
    h_write_config(&h, native);
    _cleanup_free_ char *start = claude_json(1, "", project, "");
    write_claude_json(&h, start);
    h_start(&h, NULL);
    c = h_client(&h, "watcher");
    mcpc_options o = {.socket_path = h.socket, .client_name = "in-project", .cwd = project};
    agent = mcpc_new(&o);
    CHECK(mcpc_connect(agent) == 0);
    CHECK(h_wait_state(c, "other", "connected", H_WAIT_MS));
    /* The project's first read is over once a list is answered: the rewrites come after it. */
    _cleanup_free_ char *first = NULL;
    CHECK(mcpc_list_tools(agent, &first) == 0);

    /* Claude Code's own rewrites (counters, tips, a cost): nothing discovery reads changed. */
    for (int i = 2; i <= 6; i++) {
        _cleanup_free_ char *text = claude_json(i, "", project, "");
        write_claude_json(&h, text);
        h_sleep_ms(100);
    }
    h_sleep_ms(QUIET_WATCH_MS);
    CHECK_MSG(n_reloads(&h) == 0, "%d reloads after rewrites of unrelated keys", n_reloads(&h));

    /* `claude mcp add -s user x`: the user-level mcpServers gains x. */
    _cleanup_free_ char *with_x = claude_json(7, x, project, "");
    write_claude_json(&h, with_x);
    int64_t ms = time_to_connect(c, "x");
    printf("  user-level x connected %lld ms after the rewrite\n", (long long)ms);
    CHECK_MSG(ms >= 0, "x never connected");
    CHECK_INTEQ(n_starts(m_other), 1);

    /* `claude mcp add -s local y` in the project: only that workspace has something new. */
    _cleanup_free_ char *with_y = claude_json(8, x, project, y);
    write_claude_json(&h, with_y);
    ms = time_to_connect(c, "y");
    printf("  project-level y connected %lld ms after the rewrite\n", (long long)ms);
    CHECK_MSG(ms >= 0, "y never connected");
    CHECK_INTEQ(n_starts(m_other), 1);
    CHECK_INTEQ(n_starts(m_x), 1);
    CHECK_INTEQ(n_starts(m_y), 1);
    bool found = false;
    h_list_count(agent, "mcp_y_echo", &found);
    CHECK_MSG(found, "the project's agent does not see y's tools");
    /* A file read off the loop is compared with itself after: an unchanged one (this
     * ~/.claude.json, the project's missing files) never has its workspace read again. */
    int again = h_count_in_file(h.log, "reading again");
    CHECK_MSG(again == 0, "the project was read again %d times", again);

    mcpc_free(agent);
    mcpc_free(c);
    CHECK_INTEQ(h_stop(&h), 0);
    h_teardown(&h);
    return h_finish("claude-json-watch");
}
