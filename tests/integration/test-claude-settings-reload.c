// SPDX-License-Identifier: MIT
// test-claude-settings-reload: editing the user's or a project's Claude Code settings files
// (enabledMcpjsonServers, enabledPlugins, disabledMcpjsonServers) changes what mcpd serves in
// that project at once, with no command, as Claude Code would on its next start; so does an
// administrator's managed-settings.json denying a server, which status then names.

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL  "mcp_steady_echo"
#define KIT_TOOL "mcp_kitsrv_echo"
#define MCP_TOOL "mcp_projsrv_echo"

static void write_file(const char *path, const char *text)
{
    _cleanup_free_ char *dir = paths_dirname(path);

    CHECK(paths_mkdir_p(dir, 0700) == 0);
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

static bool in_view(mcpc_client *c, const char *tool)
{
    bool found = false;

    return h_list_count(c, tool, &found) >= 0 && found;
}

/* Wait (generously) until c's tool view holds tool, or no longer does. */
static bool comes_to(mcpc_client *c, const char *tool, bool shown)
{
    for (int waited = 0; waited < H_WAIT_MS; waited += 100) {
        if (in_view(c, tool) == shown)
            return true;
        h_sleep_ms(100);
    }
    return false;
}

/*
 * The user's own server; a plugin "kit@acme" installed at user scope and enabled in the user's
 * settings; a repository whose .mcp.json defines projsrv and whose folder the user trusted in
 * Claude Code (hasTrustDialogAccepted), with a .claude/settings.json that says nothing yet.
 * *rootp: the repository (realpath).
 */
static void make_fixture(Harness *h, char **rootp)
{
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *home = paths_join(h->dir, "home");
    _cleanup_free_ char *repo = paths_join(h->dir, "repo");
    _cleanup_free_ char *kit = paths_join(home, ".claude/plugins/cache/acme/kit/1.0.0");

    unsetenv("CLAUDE_CONFIG_DIR");
    unsetenv("CLAUDE_CODE_PLUGIN_CACHE_DIR");
    h_write_config(h, cfg);
    _cleanup_free_ char *kit_mcp = paths_join(kit, ".mcp.json");
    _cleanup_free_ char *kit_servers =
        xasprintf("{\"mcpServers\": {\"kitsrv\": {\"command\": \"%s\"}}}\n", h_fake());
    write_file(kit_mcp, kit_servers);
    _cleanup_free_ char *installed_path =
        paths_join(home, ".claude/plugins/installed_plugins.json");
    _cleanup_free_ char *installed = xasprintf(
        "{\"version\": 2, \"plugins\": {\"kit@acme\": [{\"scope\": \"user\", \"installPath\": "
        "\"%s\", \"version\": \"1.0.0\"}]}}\n",
        kit);
    write_file(installed_path, installed);
    _cleanup_free_ char *user_settings = paths_join(home, ".claude/settings.json");
    write_file(user_settings, "{\"enabledPlugins\": {\"kit@acme\": true}}\n");
    _cleanup_free_ char *mcp = paths_join(repo, ".mcp.json");
    _cleanup_free_ char *servers =
        xasprintf("{\"mcpServers\": {\"projsrv\": {\"command\": \"%s\"}}}\n", h_fake());
    write_file(mcp, servers);
    _cleanup_free_ char *shared = paths_join(repo, ".claude/settings.json");
    write_file(shared, "{}\n");
    *rootp = realpath(repo, NULL);
    CHECK(*rootp != NULL);
    _cleanup_free_ char *claude_json = paths_join(home, ".claude.json");
    _cleanup_free_ char *trusted =
        xasprintf("{\"projects\": {\"%s\": {\"hasTrustDialogAccepted\": true}}}\n", *rootp);
    write_file(claude_json, trusted);
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *root = NULL;

    h_setup(&h, "claude-settings-reload");
    make_fixture(&h, &root);
    /* The administrator's file, in the test's tree (the daemon inherits the variable). */
    _cleanup_free_ char *managed = paths_join(h.dir, "etc/claude-code/managed-settings.json");
    _cleanup_free_ char *managed_mcp = paths_join(h.dir, "etc/claude-code/managed-mcp.json");
    write_file(managed, "{}\n");
    setenv("MCPD_CLAUDE_MANAGED_SETTINGS", managed, 1);
    setenv("MCPD_CLAUDE_MANAGED_MCP", managed_mcp, 1);
    _cleanup_free_ char *shared = paths_join(root, ".claude/settings.json");
    _cleanup_free_ char *local = paths_join(root, ".claude/settings.local.json");
    _cleanup_free_ char *user_settings = paths_join(h.dir, "home/.claude/settings.json");
    h_start(&h, NULL);
    mcpc_client *user = h_client(&h, "agent-elsewhere");
    mcpc_options o = {.socket_path = h.socket, .client_name = "agent-in-repo", .cwd = root};
    mcpc_client *agent = mcpc_new(&o);
    CHECK(user && agent && mcpc_connect(agent) == 0);
    h_settle(&h, agent, "steady", "kitsrv", NULL);

    /* Nothing approves the project's server yet: held back, the user's plugin served. */
    CHECK(comes_to(agent, KIT_TOOL, true));
    CHECK(!in_view(agent, MCP_TOOL));

    /* The project's own file turns the user's plugin off for this project only, and cannot
     * approve its own server, even in a folder trusted in Claude Code (it came with the clone). */
    write_file(shared, "{\"enabledMcpjsonServers\": [\"projsrv\"],\n"
                       " \"enabledPlugins\": {\"kit@acme\": false}}\n");
    CHECK_MSG(comes_to(agent, KIT_TOOL, false), "editing %s did not stop the plugin", shared);
    CHECK_MSG(!in_view(agent, MCP_TOOL), "%s approved its own repository's server", shared);
    CHECK(in_view(user, KIT_TOOL));

    /* The user's own settings approve it: it runs. */
    write_file(user_settings, "{\"enabledPlugins\": {\"kit@acme\": true},\n"
                              " \"enabledMcpjsonServers\": [\"projsrv\"]}\n");
    CHECK_MSG(comes_to(agent, MCP_TOOL, true), "editing %s did not start projsrv", user_settings);
    CHECK(h_wait_state(agent, "projsrv", "connected", H_WAIT_MS));

    /* A settings.local.json created later (the user's own answer) rejects the server. */
    write_file(local, "{\"disabledMcpjsonServers\": [\"projsrv\"]}\n");
    CHECK_MSG(comes_to(agent, MCP_TOOL, false), "creating %s did not stop projsrv", local);

    /* Removing every answer gives the plugin back; the server waits for approval again. */
    CHECK(unlink(local) == 0);
    write_file(user_settings, "{\"enabledPlugins\": {\"kit@acme\": true}}\n");
    write_file(shared, "{}\n");
    CHECK_MSG(comes_to(agent, KIT_TOOL, true), "the plugin did not come back");
    CHECK(!in_view(agent, MCP_TOOL));

    /* The administrator denies the plugin's server by its command: gone everywhere, and why. */
    _cleanup_free_ char *denied =
        xasprintf("{\"deniedMcpServers\": [{\"serverCommand\": [\"%s\"]}]}\n", h_fake());
    write_file(managed, denied);
    CHECK_MSG(comes_to(agent, KIT_TOOL, false), "denying kitsrv in %s did not stop it", managed);
    CHECK(comes_to(user, KIT_TOOL, false));
    int rc = -1;
    _cleanup_free_ char *shown =
        h_shell(&rc, "'%s' --socket '%s' status", getenv("MCPCTL_BINARY"), h.socket);
    CHECK_MSG(strstr(shown, "\"kitsrv\" is blocked") && strstr(shown, "deniedMcpServers") &&
                  strstr(shown, managed),
              "%s", shown);
    CHECK(in_view(agent, CONTROL));
    write_file(managed, "{}\n");
    CHECK_MSG(comes_to(agent, KIT_TOOL, true), "the plugin did not come back after the deny");

    h_settle(&h, agent, "steady", "kitsrv", NULL);
    mcpc_free(agent);
    mcpc_free(user);
    h_check_healthy(&h, "claude settings edits", CONTROL);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-claude-settings-reload");
}
