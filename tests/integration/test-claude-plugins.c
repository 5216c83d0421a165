// SPDX-License-Identifier: MIT
// test-claude-plugins: a Claude Code plugin installed for one project is served in that
// project's workspace only, and only once the user approves it (the project trust gate).

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL     "mcp_steady_echo"
#define PLUGIN_TOOL "mcp_teamsrv_echo"
/* Long enough for a started server to have touched its marker on a loaded machine. */
#define SETTLE_MS 1500

static void write_file(const char *path, const char *text, mode_t mode)
{
    _cleanup_free_ char *dir = paths_dirname(path);

    CHECK(paths_mkdir_p(dir, 0700) == 0);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
    CHECK(chmod(path, mode) == 0);
}

/* Whether c's tool view holds tool. */
static bool in_view(mcpc_client *c, const char *tool)
{
    bool found = false;

    return h_list_count(c, tool, &found) >= 0 && found;
}

/* The tool view follows a server's connection a moment later: wait for the tool to show. */
static bool comes_to_see(mcpc_client *c, const char *tool)
{
    for (int waited = 0; waited < H_WAIT_MS; waited += 100) {
        if (in_view(c, tool))
            return true;
        h_sleep_ms(100);
    }
    return false;
}

/*
 * The user's own server, a repository whose .claude/settings.json enables "team@acme", and
 * Claude Code's record of that plugin installed for the repository (project scope). The
 * plugin's server runs ${CLAUDE_PLUGIN_ROOT}/bin/serve, which leaves a mark in
 * ${CLAUDE_PLUGIN_DATA} before it becomes the fake server. *rootp: the repository (realpath),
 * *datap: the plugin's data directory.
 */
static void make_fixture(Harness *h, char **rootp, char **datap)
{
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *home = paths_join(h->dir, "home");
    _cleanup_free_ char *repo = paths_join(h->dir, "repo");
    _cleanup_free_ char *plugin = paths_join(home, ".claude/plugins/cache/acme/team/1.0.0");
    _cleanup_free_ char *serve = paths_join(plugin, "bin/serve");
    _cleanup_free_ char *script =
        xasprintf("#!/bin/sh\ntouch \"$TEAM_DATA/ran\"\nexec '%s' \"$@\"\n", h_fake());
    _cleanup_free_ char *mcp = paths_join(plugin, ".mcp.json");
    _cleanup_free_ char *settings = paths_join(repo, ".claude/settings.json");
    _cleanup_free_ char *installed_path =
        paths_join(home, ".claude/plugins/installed_plugins.json");

    unsetenv("CLAUDE_CONFIG_DIR");
    h_write_config(h, cfg);
    write_file(serve, script, 0755);
    write_file(mcp,
               "{\"mcpServers\": {\"teamsrv\": {\"command\": \"${CLAUDE_PLUGIN_ROOT}/bin/serve\","
               " \"env\": {\"TEAM_DATA\": \"${CLAUDE_PLUGIN_DATA}\"}}}}\n",
               0644);
    write_file(settings, "{\"enabledPlugins\": {\"team@acme\": true}}\n", 0644);
    *rootp = realpath(repo, NULL);
    CHECK(*rootp != NULL);
    _cleanup_free_ char *installed =
        xasprintf("{\"version\": 2, \"plugins\": {\"team@acme\": [{\"scope\": \"project\", "
                  "\"projectPath\": \"%s\", \"installPath\": \"%s\", \"version\": \"1.0.0\"}]}}\n",
                  *rootp, plugin);
    write_file(installed_path, installed, 0644);
    *datap = paths_join(home, ".claude/plugins/data/team-acme");
}

static void test_project_plugin(void)
{
    Harness h;

    h_setup(&h, "claude-plugins");
    _cleanup_free_ char *root = NULL, *data = NULL;
    make_fixture(&h, &root, &data);
    _cleanup_free_ char *mark = paths_join(data, "ran");
    h_start(&h, NULL);
    mcpc_client *user = h_client(&h, "agent-elsewhere");
    mcpc_options o = {.socket_path = h.socket, .client_name = "agent-in-repo", .cwd = root};
    mcpc_client *agent = mcpc_new(&o);
    CHECK(user && agent && mcpc_connect(agent) == 0);
    h_settle(&h, agent, "steady", NULL);

    /* Before approval: held back in the repository, named with what it would run. */
    h_sleep_ms(SETTLE_MS);
    CHECK_MSG(access(mark, F_OK) < 0, "the project's plugin ran before it was approved");
    CHECK(!in_view(agent, PLUGIN_TOOL));
    _cleanup_json_ yajl_val st = h_status(agent);
    CHECK(!h_server(st, "teamsrv"));
    int rc = -1;
    _cleanup_free_ char *shown =
        h_shell(&rc, "'%s' --socket '%s' status", getenv("MCPCTL_BINARY"), h.socket);
    _cleanup_free_ char *approve = xasprintf("mcpctl trust %s", root);
    CHECK_MSG(strstr(shown, "teamsrv") && strstr(shown, "untrusted") && strstr(shown, approve) &&
                  strstr(shown, "/bin/serve"),
              "%s", shown);
    CHECK(!in_view(user, PLUGIN_TOOL));

    /* Approved: it runs in the repository, with its root and data directory filled in. */
    rc = -1;
    _cleanup_free_ char *t =
        h_shell(&rc, "'%s' --socket '%s' trust '%s'", getenv("MCPCTL_BINARY"), h.socket, root);
    CHECK_MSG(rc == 0 && strstr(t, "teamsrv"), "rc %d: %s", rc, t);
    CHECK(h_wait_state(agent, "teamsrv", "connected", H_WAIT_MS));
    CHECK(comes_to_see(agent, PLUGIN_TOOL));
    CHECK_MSG(access(mark, F_OK) == 0, "no mark in %s", data);

    /* Never in another workspace: the user's own agent elsewhere does not see it. */
    CHECK(!in_view(user, PLUGIN_TOOL));
    CHECK(in_view(user, CONTROL));

    h_settle(&h, agent, "steady", "teamsrv", NULL);
    mcpc_free(agent);
    mcpc_free(user);
    h_check_healthy(&h, "project plugin", CONTROL);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
}

int main(void)
{
    test_project_plugin();
    return h_finish("claude-plugins");
}
