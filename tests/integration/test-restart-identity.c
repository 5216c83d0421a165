// SPDX-License-Identifier: MIT
// test-restart-identity: a server several agents define is one server whatever the form each
// writes it in; setup-like rewrites that change which entry wins restart nothing (issue 38 item
// 5).

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/*
 * The five agents' files, each with "shared" in its own form, weakest first: each one written
 * makes its entry win (config.c's order: mcpd, Claude Code, Codex, Gemini CLI, Cursor), and each
 * one removed, newest first, hands the win back.
 */
typedef struct AgentFile {
    const char *rel;      /* under the harness's tree (home/, config/) */
    const char *provider; /* its provider id, as status shows it */
    const char *format;   /* printf format: the fake server's path, then the marker's */
} AgentFile;

static const AgentFile agents[] = {
    {"home/.cursor/mcp.json", "cursor",
     "{\"mcpServers\":{\"shared\":{\"command\":\"%s\",\"args\":[\"--log\",\"%s\"],"
     "\"env\":{},\"headers\":{}}}}"},
    {"home/.gemini/settings.json", "gemini",
     "{\"mcpServers\":{\"shared\":{\"args\":[\"--log\",\"%2$s\"],\"command\":\"%1$s\"}}}"},
    {"home/.codex/config.toml", "codex",
     "[mcp_servers.shared]\ncommand = \"%s\"\nargs = [\"--log\", \"%s\"]\nenv = {}\n"},
    {"home/.claude.json", "claude",
     "{\"numStartups\":3,\"mcpServers\":{\"shared\":{\"type\":\"stdio\",\"command\":\"%s\","
     "\"args\":[\"--log\",\"%s\"],\"env\":{}}}}"},
    {"config/mcpd/mcp.json", "mcpd",
     "{\"mcpServers\":{\"shared\":{\"command\":\"%s\",\"args\":[\"--log\",\"%s\"],"
     "\"type\":\"stdio\",\"enabled\":true}}}"},
};

static void write_agent(const Harness *h, const AgentFile *a, const char *marker)
{
    _cleanup_free_ char *path = xasprintf("%s/%s", h->dir, a->rel);
    _cleanup_free_ char *dir = paths_dirname(path);
    FILE *f;

    paths_mkdir_p(dir, 0700);
    f = fopen(path, "w");
    CHECK_MSG(f != NULL, "%s", path);
    if (f) {
        fprintf(f, a->format, h_fake(), marker);
        fclose(f);
    }
}

static void remove_agent(const Harness *h, const AgentFile *a)
{
    _cleanup_free_ char *path = xasprintf("%s/%s", h->dir, a->rel);
    CHECK_MSG(unlink(path) == 0, "%s", path);
}

/* Times the fake server was initialized: each start logs its initialize request. */
static int n_starts(const char *marker)
{
    return h_count_in_file(marker, H_FAKE_STARTED);
}

/* Reload, as setup's rewrite would have mcpd do, and check shared stays connected. */
static void reload_and_check(mcpc_client *c, const char *step, const char *provider)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val st = NULL;

    CHECK_MSG(mcpc_request(c, "mcpd/reload", "{}", &out) == 0, "%s: reload", step);
    CHECK_MSG(out && !strstr(out, "\"shared\":\"changed\""), "%s: %s", step, out ? out : "");
    CHECK_MSG(h_wait_state(c, "shared", "connected", H_WAIT_MS), "%s: shared not connected", step);
    /* The entry that wins is the one expected: the form really changed. */
    st = h_status(c);
    _cleanup_free_ char *shown = json_to_string(h_server(st, "shared"));
    _cleanup_free_ char *want = xasprintf("\"provider\":\"%s\"", provider);
    CHECK_MSG(strstr(shown, want), "%s: %s, not %s", step, shown, want);
}

int main(void)
{
    Harness h;
    mcpc_client *c;

    h_setup(&h, "restart-identity");
    _cleanup_free_ char *marker = paths_join(h.dir, "shared.log");
    /* mcpd's own user file is one of the five (the strongest): it is written last. */
    write_agent(&h, &agents[0], marker);
    /* Reloads come from the test, each at a known point: the watcher is off. */
    h_write_settings(&h, "{\"hotReload\":false}");
    h_start(&h, NULL);
    c = h_client(&h, "setup-agent");
    CHECK(h_wait_state(c, "shared", "connected", H_WAIT_MS));
    CHECK_INTEQ(n_starts(marker), 1);

    /* Setup: each agent's file gets the same server in its own form; the winner changes. */
    for (size_t i = 1; i < N_ELEMENTS(agents); i++) {
        write_agent(&h, &agents[i], marker);
        reload_and_check(c, agents[i].rel, agents[i].provider);
    }
    /* Undo: the files go again, newest first; the winner changes back each time. */
    for (size_t i = N_ELEMENTS(agents) - 1; i > 0; i--) {
        remove_agent(&h, &agents[i]);
        reload_and_check(c, agents[i].rel, agents[i - 1].provider);
    }
    CHECK_MSG(n_starts(marker) == 1, "shared started %d times", n_starts(marker));

    /* A real change (an env value) is still a new server. */
    h_sh("sed -i 's/\"env\":{}/\"env\":{\"X\":\"1\"}/' '%s/%s'", h.dir, agents[0].rel);
    _cleanup_free_ char *out = NULL;
    CHECK(mcpc_request(c, "mcpd/reload", "{}", &out) == 0);
    CHECK_MSG(out && strstr(out, "\"shared\":\"changed\""), "%s", out ? out : "");
    CHECK(h_wait_state(c, "shared", "connected", H_WAIT_MS));
    CHECK_INTEQ(n_starts(marker), 2);

    mcpc_free(c);
    CHECK_INTEQ(h_stop(&h), 0);
    h_teardown(&h);
    return h_finish("restart-identity");
}
