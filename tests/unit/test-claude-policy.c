// SPDX-License-Identifier: MIT
// test-claude-policy: Claude Code's managed settings and MCP policy, from files shaped like the
// ones administrators deploy (code.claude.com/docs/en/managed-mcp): allow and deny lists, the
// servers an organization provides, plugins it turns on or off, the plugin directory override;
// and other agents' files in their 2026 documented shape where mcpd's reading was rechecked.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/claude-policy.h"
#include "daemon/config/config.h"
#include "daemon/config/source.h"
#include "daemon/config/trust.h"
#include "tests/unit/test.h"

static char *tmp, *home, *managed;

/* A private home, and a managed settings file of our own (never the machine's). */
static void home_setup(void)
{
    _cleanup_free_ char *conf = NULL, *none = NULL;

    tmp = test_tmpdir();
    home = paths_join(tmp, "home");
    conf = paths_join(home, ".config");
    none = paths_join(tmp, "none.json");
    managed = paths_join(tmp, "etc/claude-code/managed-settings.json");
    setenv("HOME", home, 1);
    setenv("XDG_CONFIG_HOME", conf, 1);
    _cleanup_free_ char *state = paths_join(home, ".local/state");
    setenv("XDG_STATE_HOME", state, 1); /* approvals stay in the test's tree */
    setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", none, 1);
    setenv("MCPD_CLAUDE_MANAGED_MCP", none, 1);
    setenv("MCPD_CLAUDE_MANAGED_SETTINGS", managed, 1);
    unsetenv("CODEX_HOME");
    unsetenv("CLAUDE_CONFIG_DIR");
    unsetenv("CLAUDE_CODE_PLUGIN_CACHE_DIR");
    unsetenv("CLAUDE_CODE_PLUGIN_SEED_DIR");
    unsetenv("COPILOT_HOME");
}

/* Write path (absolute, or relative to home), making its directories. */
static void write_at(const char *rel, const char *text)
{
    _cleanup_free_ char *path = rel[0] == '/' ? xstrdup(rel) : paths_join(home, rel);
    _cleanup_free_ char *dir = paths_dirname(path);

    CHECK(paths_mkdir_p(dir, 0700) == 0);
    test_write_file(path, text);
}

static void discover(ConfigSet *set, const char *root)
{
    DiscoverOptions opt = {NULL, root};
    Settings s;

    settings_init(&s);
    memset(set, 0, sizeof(*set));
    CHECK_INTEQ(config_discover(set, &opt, &s), 0);
}

/* The skip of name whose reason holds want, or NULL. */
static const ConfigSkip *find_skip(const ConfigSet *set, const char *name, const char *want)
{
    for (size_t i = 0; i < set->n_skipped; i++)
        if (streq(set->skipped[i].name, name) && strstr(set->skipped[i].reason, want))
            return &set->skipped[i];
    return NULL;
}

/* The problem about server whose message holds want, or NULL. */
static const ConfigProblem *find_problem(const ConfigSet *set, const char *server, const char *want)
{
    for (size_t i = 0; i < set->n_problems; i++)
        if ((!server || (set->problems[i].server && streq(set->problems[i].server, server))) &&
            strstr(set->problems[i].message, want))
            return &set->problems[i];
    return NULL;
}

/* The winner of name from Claude Code, or NULL. */
static const ServerConfig *claude_winner(const ConfigSet *set, const char *name)
{
    const ServerConfig *c = config_set_find(set, name);

    return c && streq(c->source.provider, "claude") ? c : NULL;
}

/*
 * A hard allowlist with a denylist (the managed-mcp page's example configuration), against the
 * user's own ~/.claude.json: remote servers must match a serverUrl, stdio ones a serverCommand
 * (${HOME} expanded on both sides), a serverName entry counts for neither, the denylist wins,
 * and the user's own allowedMcpServers is ignored under allowManagedMcpServersOnly.
 */
static void test_allow_and_deny(void)
{
    ConfigSet set;

    write_at(managed, "{\n"
                      "  \"allowManagedMcpServersOnly\": true,\n"
                      "  \"allowedMcpServers\": [\n"
                      "    {\"serverUrl\": \"https://*.corp.example.com/*\"},\n"
                      "    {\"serverCommand\": [\"npx\", \"-y\", "
                      "\"@modelcontextprotocol/server-filesystem\", \"${HOME}/src\"]},\n"
                      "    {\"serverName\": \"github\"}\n"
                      "  ],\n"
                      "  \"deniedMcpServers\": [\n"
                      "    {\"serverName\": \"dangerous\"},\n"
                      "    {\"serverUrl\": \"https://evil.example.com\"}\n"
                      "  ]\n"
                      "}\n");
    write_at(".claude/settings.json",
             "{\"allowedMcpServers\": [{\"serverCommand\": [\"node\", \"server.js\"]}]}\n");
    _cleanup_free_ char *claude = xasprintf(
        "{\"mcpServers\": {\n"
        "  \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", "
        "\"@modelcontextprotocol/server-filesystem\", \"%s/src\"]},\n"
        "  \"node-srv\": {\"command\": \"node\", \"args\": [\"server.js\"]},\n"
        "  \"docs\": {\"type\": \"http\", \"url\": \"https://docs.corp.example.com/mcp\"},\n"
        "  \"github\": {\"type\": \"http\", \"url\": \"https://api.githubcopilot.com/mcp/\"},\n"
        "  \"dangerous\": {\"type\": \"http\", \"url\": \"https://mcp.corp.example.com/x\"},\n"
        "  \"evil\": {\"type\": \"sse\", \"url\": \"https://EVIL.example.com./a/b\"}\n"
        "}}\n",
        home);
    write_at(".claude.json", claude);

    discover(&set, NULL);
    CHECK(claude_winner(&set, "fs") != NULL);
    CHECK(claude_winner(&set, "docs") != NULL);
    CHECK(config_set_find(&set, "node-srv") == NULL);
    CHECK(find_skip(&set, "node-srv", "not allowed by Claude Code's policy") != NULL);
    CHECK(find_skip(&set, "node-srv", "allowManagedMcpServersOnly") != NULL);
    /* A name entry does not let a remote server through once there are URL entries. */
    CHECK(config_set_find(&set, "github") == NULL);
    CHECK(find_problem(&set, "github", "serverUrl") != NULL);
    const ConfigProblem *p = find_problem(&set, "dangerous", "deniedMcpServers");
    CHECK(p && strstr(p->message, managed) && strstr(p->message, "{\"serverName\":\"dangerous\"}"));
    CHECK(config_set_find(&set, "dangerous") == NULL);
    /* Host case and a final dot do not matter; a pattern without a path covers every path. */
    CHECK(config_set_find(&set, "evil") == NULL);
    CHECK(find_skip(&set, "evil", "blocked by Claude Code's policy") != NULL);
    config_set_deinit(&set);

    /* Without allowManagedMcpServersOnly the user's own list broadens the managed one. */
    write_at(managed, "{\"allowedMcpServers\": [{\"serverCommand\": [\"npx\", \"-y\", "
                      "\"@modelcontextprotocol/server-filesystem\", \"${HOME}/src\"]}]}\n");
    discover(&set, NULL);
    CHECK(claude_winner(&set, "node-srv") != NULL);
    CHECK(claude_winner(&set, "fs") != NULL);
    /* No serverUrl entry anywhere and no name entry: remote servers are not allowed. */
    CHECK(config_set_find(&set, "docs") == NULL);
    config_set_deinit(&set);

    /* An empty allowlist lets nothing through; a denied name masks nothing below it. */
    write_at(managed, "{\"allowedMcpServers\": [], \"deniedMcpServers\": [{\"serverName\": "
                      "\"fs\"}]}\n");
    write_at(".claude/settings.json", "{}\n");
    write_at(".cursor/mcp.json", "{\"mcpServers\": {\"fs\": {\"command\": \"cursor-fs\"}}}\n");
    discover(&set, NULL);
    CHECK(claude_winner(&set, "docs") == NULL && claude_winner(&set, "node-srv") == NULL);
    const ServerConfig *c = config_set_find(&set, "fs");
    CHECK(c && streq(c->source.provider, "cursor"));
    config_set_deinit(&set);
}

/*
 * A project's own settings files take part: its deniedMcpServers blocks a .mcp.json server for
 * that project only.
 */
static void test_project_deny(void)
{
    _cleanup_free_ char *repo = paths_join(tmp, "repo");
    ConfigSet set;

    write_at(".claude.json", "{\"mcpServers\": {\"memory\": {\"command\": \"mcp-memory\"}}}\n");
    _cleanup_free_ char *local = paths_join(repo, ".claude/settings.local.json");
    write_at(local, "{\"deniedMcpServers\": [{\"serverCommand\": [\"mcp-memory\"]}]}\n");
    _cleanup_free_ char *root = realpath(repo, NULL);
    CHECK(root != NULL);
    /* Issue 39.7: before the user trusts the folder in Claude Code, its lists change nothing. */
    discover(&set, root);
    CHECK(claude_winner(&set, "memory") != NULL);
    CHECK(find_problem(&set, "memory", "settings.local.json") == NULL);
    config_set_deinit(&set);
    _cleanup_free_ char *trusted =
        xasprintf("{\"mcpServers\": {\"memory\": {\"command\": \"mcp-memory\"}}, \"projects\": "
                  "{\"%s\": {\"hasTrustDialogAccepted\": true}}}\n",
                  root);
    write_at(".claude.json", trusted);
    discover(&set, root);
    CHECK(config_set_find(&set, "memory") == NULL);
    CHECK(find_problem(&set, "memory", "settings.local.json") != NULL);
    config_set_deinit(&set);
    discover(&set, NULL);
    CHECK(claude_winner(&set, "memory") != NULL);
    config_set_deinit(&set);
}

/*
 * managedMcpServers: each entry Claude Code would refuse is a problem naming it; the others
 * load at user level from the managed file, ahead of the user's own entry of the same name, and
 * a plugin's server at the same URL gives way. strictPluginOnlyCustomization leaves the user's
 * own servers out and keeps plugins'.
 */
static void test_provided_and_strict(void)
{
    _cleanup_free_ char *plugin = paths_join(home, ".claude/plugins/cache/corp/tools/1.0.0");
    ConfigSet set;

    write_at(managed,
             "{\"managedMcpServers\": {\n"
             "  \"search\": {\"type\": \"http\", \"url\": \"https://search.corp.example.com/mcp\","
             " \"headers\": {\"X-Key\": \"org-key\"}},\n"
             "  \"plain\": {\"type\": \"http\", \"url\": \"http://localhost:8080/mcp\"},\n"
             "  \"runner\": {\"type\": \"http\", \"url\": \"https://r.example.com\","
             " \"command\": \"x\"},\n"
             "  \"templated\": {\"type\": \"sse\", \"url\": \"https://${HOST}/sse\"}\n"
             "}, \"enabledPlugins\": {\"tools@corp\": true}}\n");
    write_at(".claude.json", "{\"mcpServers\": {\"search\": {\"command\": \"my-search\"},"
                             " \"mine\": {\"command\": \"mine\"}}}\n");
    _cleanup_free_ char *installed =
        xasprintf("{\"version\": 2, \"plugins\": {\"tools@corp\": [{\"scope\": \"managed\", "
                  "\"installPath\": \"%s\"}]}}\n",
                  plugin);
    write_at(".claude/plugins/installed_plugins.json", installed);
    _cleanup_free_ char *mcp = paths_join(plugin, ".mcp.json");
    write_at(mcp, "{\"corp-search\": {\"type\": \"http\", \"url\": "
                  "\"https://search.corp.example.com/mcp\"},"
                  " \"corp-db\": {\"command\": \"${CLAUDE_PLUGIN_ROOT}/db\"}}\n");

    discover(&set, NULL);
    const ServerConfig *c = claude_winner(&set, "search");
    CHECK(c && c->type == TRANSPORT_HTTP && streq(c->source.path, managed) &&
          c->source.level == CONFIG_LEVEL_USER);
    CHECK(find_skip(&set, "search", "") != NULL); /* the user's own, shadowed */
    CHECK(find_problem(&set, "plain", "https://") != NULL);
    CHECK(find_problem(&set, "runner", "program to run") != NULL);
    CHECK(find_problem(&set, "templated", "${VAR}") != NULL);
    CHECK(!config_set_find(&set, "plain") && !config_set_find(&set, "runner") &&
          !config_set_find(&set, "templated"));
    CHECK(claude_winner(&set, "mine") != NULL);
    /* The managed settings turn the plugin on: the administrator's word, user level. */
    c = claude_winner(&set, "corp-db");
    CHECK(c && c->source.level == CONFIG_LEVEL_USER);
    CHECK(config_set_find(&set, "corp-search") == NULL);
    CHECK(find_skip(&set, "corp-search", "managedMcpServers") != NULL);
    config_set_deinit(&set);

    write_at(managed, "{\"strictPluginOnlyCustomization\": [\"skills\", \"mcp\"], "
                      "\"enabledPlugins\": {\"tools@corp\": true}}\n");
    discover(&set, NULL);
    CHECK(config_set_find(&set, "mine") == NULL);
    CHECK(find_skip(&set, "mine", "strictPluginOnlyCustomization") != NULL);
    CHECK(claude_winner(&set, "corp-db") != NULL);
    config_set_deinit(&set);
}

/*
 * Plugins the managed settings switch off stay off whatever the user's settings say; the
 * plugin directory moves with $CLAUDE_CODE_PLUGIN_CACHE_DIR ("~/" is home), data directory
 * included; managed-mcp.json servers pass the denylist, and the allowlist only when they use
 * ${VAR}.
 */
static void test_managed_plugins_and_cache_dir(void)
{
    _cleanup_free_ char *cache = paths_join(home, "seed/plugins");
    _cleanup_free_ char *fmt = paths_join(cache, "cache/acme/fmt/2.0.0");
    _cleanup_free_ char *lint = paths_join(cache, "cache/acme/lint/1.0.0");
    ConfigSet set;

    setenv("CLAUDE_CODE_PLUGIN_CACHE_DIR", "~/seed/plugins", 1);
    write_at(managed, "{\"enabledPlugins\": {\"lint@acme\": false}}\n");
    write_at(".claude/settings.json",
             "{\"enabledPlugins\": {\"fmt@acme\": true, \"lint@acme\": true}}\n");
    _cleanup_free_ char *installed =
        xasprintf("{\"version\": 2, \"plugins\": {"
                  "\"fmt@acme\": [{\"scope\": \"user\", \"installPath\": \"%s\"}],"
                  "\"lint@acme\": [{\"scope\": \"user\", \"installPath\": \"%s\"}]}}\n",
                  fmt, lint);
    _cleanup_free_ char *installed_path = paths_join(cache, "installed_plugins.json");
    write_at(installed_path, installed);
    _cleanup_free_ char *fmt_mcp = paths_join(fmt, ".mcp.json");
    write_at(fmt_mcp, "{\"mcpServers\": {\"fmt\": {\"command\": \"${CLAUDE_PLUGIN_ROOT}/fmt\","
                      " \"env\": {\"STATE\": \"${CLAUDE_PLUGIN_DATA}\"}}}}\n");
    _cleanup_free_ char *lint_mcp = paths_join(lint, ".mcp.json");
    write_at(lint_mcp, "{\"mcpServers\": {\"lint\": {\"command\": \"lint\"}}}\n");

    discover(&set, NULL);
    const ServerConfig *c = claude_winner(&set, "fmt");
    _cleanup_free_ char *want = paths_join(fmt, "fmt");
    _cleanup_free_ char *data = paths_join(cache, "data/fmt-acme");
    CHECK(c && streq(c->command, want));
    struct stat st;
    CHECK(stat(data, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(config_set_find(&set, "lint") == NULL);
    const ConfigSkip *k = find_skip(&set, "lint", "is disabled");
    CHECK(k && strstr(k->reason, managed));
    config_set_deinit(&set);
    unsetenv("CLAUDE_CODE_PLUGIN_CACHE_DIR");

    /* managed-mcp.json: exclusive; the user may deny its servers for themselves. */
    _cleanup_free_ char *mcp_file = paths_join(tmp, "etc/claude-code/managed-mcp.json");
    setenv("MCPD_CLAUDE_MANAGED_MCP", mcp_file, 1);
    write_at(mcp_file,
             "{\"mcpServers\": {\n"
             "  \"company\": {\"command\": \"/usr/local/bin/company-mcp\"},\n"
             "  \"wiki\": {\"type\": \"http\", \"url\": \"https://wiki.example.com/mcp\"},\n"
             "  \"per-user\": {\"command\": \"${HOME}/bin/per-user\"}\n"
             "}}\n");
    write_at(managed, "{\"allowedMcpServers\": [{\"serverName\": \"other\"}]}\n");
    write_at(".claude/settings.json",
             "{\"deniedMcpServers\": [{\"serverUrl\": \"https://wiki.example.com/*\"}]}\n");
    discover(&set, NULL);
    CHECK(claude_winner(&set, "company") != NULL);
    CHECK(config_set_find(&set, "wiki") == NULL);
    CHECK(find_problem(&set, "wiki", "deniedMcpServers") != NULL);
    CHECK(config_set_find(&set, "per-user") == NULL);
    CHECK(find_problem(&set, "per-user", "allowedMcpServers") != NULL);
    config_set_deinit(&set);
}

/* Lists of the wrong type are reported, naming the file and the key. */
static void test_wrong_types(void)
{
    ConfigSet set;

    write_at(managed, "{\"managedMcpServers\": [{\"name\": \"x\"}]}\n");
    write_at(".claude/settings.json", "{\"managedMcpServers\": {}}\n");
    discover(&set, NULL);
    CHECK(find_problem(&set, NULL, "\"managedMcpServers\" must be an object") != NULL);
    CHECK(find_problem(&set, NULL, "managed settings only") != NULL);
    config_set_deinit(&set);
    /* A managed policy list that is not a list leaves the policy unknown: see below. */
    write_at(managed, "{\"deniedMcpServers\": {\"serverName\": \"x\"}}\n");
    discover(&set, NULL);
    const ConfigProblem *p = find_problem(&set, NULL, "\"deniedMcpServers\" must be a list");
    CHECK(p && streq(p->path, managed));
    config_set_deinit(&set);
}

/*
 * Managed settings that cannot be read whole fail closed: a fragment's policy list that is not a
 * list (null would drop the base's allowlist in the merge), a broken base file (which would skip
 * every fragment), or more fragments than are read (which ones count would be arbitrary) hold
 * back every server of the user's own, with a problem naming the file; nothing is widened.
 */
static void test_managed_fail_closed(void)
{
    _cleanup_free_ char *etc = paths_dirname(managed);
    _cleanup_free_ char *d = paths_join(etc, "managed-settings.d");
    _cleanup_free_ char *frag = paths_join(d, "10-team.json");
    const ConfigProblem *p;
    ConfigSet set;

    write_at(".claude.json", "{\"mcpServers\": {\"evil\": {\"command\": \"evil\"}, "
                             "\"docs\": {\"command\": \"docs\"}}}\n");
    write_at(managed, "{\"allowedMcpServers\": [{\"serverName\": \"docs\"}]}\n");
    discover(&set, NULL);
    CHECK(config_set_find(&set, "evil") == NULL && claude_winner(&set, "docs") != NULL);
    config_set_deinit(&set);

    write_at(frag, "{\"allowedMcpServers\": null}\n");
    discover(&set, NULL);
    CHECK(config_set_find(&set, "evil") == NULL && config_set_find(&set, "docs") == NULL);
    p = find_problem(&set, NULL, "\"allowedMcpServers\" must be a list");
    CHECK(p && streq(p->path, frag));
    CHECK(find_skip(&set, "evil", "policy is unknown") != NULL);
    config_set_deinit(&set);

    write_at(frag, "{\"deniedMcpServers\": [{\"serverName\": \"evil\"}]}\n");
    write_at(managed, "{\"allowedMcpServers\": [\n");
    discover(&set, NULL);
    CHECK(config_set_find(&set, "evil") == NULL && config_set_find(&set, "docs") == NULL);
    CHECK(find_skip(&set, "evil", managed) != NULL);
    config_set_deinit(&set);

    /*
     * A deny fragment that does not parse (or is not an object) is not left out while the others
     * apply: that would run the very server it denies. The file is named.
     */
    write_at(managed, "{}\n");
    write_at(frag, "{\"deniedMcpServers\": [{\"serverName\": \"evil\"},]}\n");
    discover(&set, NULL);
    CHECK(config_set_find(&set, "evil") == NULL && config_set_find(&set, "docs") == NULL);
    p = find_problem(&set, NULL, "fragment cannot be read");
    CHECK(p && streq(p->path, frag) && strstr(p->message, "fix the fragment or remove it"));
    CHECK(find_skip(&set, "evil", "policy is unknown") != NULL);
    config_set_deinit(&set);
    write_at(frag, "[{\"serverName\": \"evil\"}]\n");
    discover(&set, NULL);
    CHECK(config_set_find(&set, "evil") == NULL && config_set_find(&set, "docs") == NULL);
    p = find_problem(&set, NULL, "fragment must be an object, not array");
    CHECK(p && streq(p->path, frag));
    config_set_deinit(&set);
    write_at(frag, "{}\n");

    for (int i = 0; i <= 256; i++) {
        _cleanup_free_ char *f = xasprintf("%s/%03d.json", d, i);
        write_at(f, "{}\n");
    }
    discover(&set, NULL);
    CHECK(config_set_find(&set, "evil") == NULL && config_set_find(&set, "docs") == NULL);
    p = find_problem(&set, NULL, "more than 256 fragments");
    CHECK(p && streq(p->path, d));
    config_set_deinit(&set);
}

/*
 * Claude Code's answers for a project's .mcp.json also live in its settings files: the user's
 * settings.json approves and rejects; the project's .claude/settings.json and settings.local.json
 * (in the repository's tree) only reject, and only once the user accepted Claude Code's trust
 * dialog for the folder.
 */
static void test_settings_approvals(void)
{
    _cleanup_free_ char *repo = paths_join(tmp, "repo");
    _cleanup_free_ char *mcp = paths_join(repo, ".mcp.json");
    _cleanup_free_ char *local = paths_join(repo, ".claude/settings.local.json");
    ConfigSet set;

    write_at(mcp, "{\"mcpServers\": {\"proj\": {\"command\": \"proj-server\"},"
                  " \"other\": {\"command\": \"other-server\"}}}\n");
    write_at(local, "{\"enabledMcpjsonServers\": [\"proj\"]}\n");
    _cleanup_free_ char *root = realpath(repo, NULL);
    CHECK(root != NULL);
    _cleanup_free_ char *untrusted =
        xasprintf("{\"projects\": {\"%s\": {\"hasTrustDialogAccepted\": false}}}\n", root);
    write_at(".claude.json", untrusted);
    discover(&set, root);
    CHECK(config_set_find(&set, "proj") == NULL && find_skip(&set, "proj", "untrusted"));
    config_set_deinit(&set);

    _cleanup_free_ char *trusted =
        xasprintf("{\"projects\": {\"%s\": {\"hasTrustDialogAccepted\": true}}}\n", root);
    write_at(".claude.json", trusted);
    discover(&set, root);
    /*
     * Issue 38.3: once the user accepted Claude Code's trust dialog for the folder, the approvals
     * Claude Code keeps in settings.local.json count, as in Claude Code; nothing else is approved.
     */
    CHECK(claude_winner(&set, "proj") != NULL);
    CHECK(config_set_find(&set, "other") == NULL && find_skip(&set, "other", "untrusted"));
    config_set_deinit(&set);
    /* Someone else's settings.local.json is nobody's answer. */
    if (geteuid() == 0) {
        CHECK_INTEQ(chown(local, 4242, 4242), 0);
        discover(&set, root);
        CHECK(config_set_find(&set, "proj") == NULL && find_skip(&set, "proj", "untrusted"));
        config_set_deinit(&set);
        CHECK_INTEQ(chown(local, getuid(), getgid()), 0);
    }
    /* One the repository tracks came with it: like settings.json, it may only reject. */
    _cleanup_free_ char *git = xasprintf(
        "cd '%s' && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git init -q && "
        "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git add -f .claude/settings.local.json",
        root);
    CHECK_INTEQ(system(git), 0);
    discover(&set, root);
    CHECK(config_set_find(&set, "proj") == NULL && find_skip(&set, "proj", "untrusted"));
    config_set_deinit(&set);
    _cleanup_free_ char *dotgit = paths_join(root, ".git");
    test_rm_rf(dotgit);

    /* The user's own settings reject it; a project file cannot approve anything. */
    write_at(".claude/settings.json", "{\"disabledMcpjsonServers\": [\"proj\"]}\n");
    _cleanup_free_ char *shared = paths_join(repo, ".claude/settings.json");
    write_at(shared,
             "{\"enableAllProjectMcpServers\": true, \"enabledMcpjsonServers\": [\"other\"]}\n");
    discover(&set, root);
    CHECK(config_set_find(&set, "proj") == NULL);
    CHECK(find_skip(&set, "proj", "disabledMcpjsonServers") != NULL);
    CHECK(config_set_find(&set, "other") == NULL && find_skip(&set, "other", "untrusted"));
    config_set_deinit(&set);

    /* The user's settings approve it; the project's file still rejects (restrictions count). */
    write_at(".claude/settings.json", "{\"enabledMcpjsonServers\": [\"other\"]}\n");
    write_at(shared, "{\"disabledMcpjsonServers\": [\"other\"]}\n");
    discover(&set, root);
    CHECK(config_set_find(&set, "other") == NULL);
    CHECK(find_skip(&set, "other", "disabledMcpjsonServers") != NULL);
    write_at(shared, "{}\n");
    config_set_deinit(&set);
    discover(&set, root);
    CHECK(claude_winner(&set, "other") != NULL);
    config_set_deinit(&set);
}

/*
 * GitHub Copilot CLI: a repository's .github/mcp.json (the documented shared file) in the
 * user file's format, "type": "local", "tools"; it wins over ~/.copilot/mcp-config.json and,
 * being the project's, waits for approval like every project file.
 */
static void test_copilot_repository_file(void)
{
    _cleanup_free_ char *repo = paths_join(tmp, "repo");
    _cleanup_free_ char *file = paths_join(repo, ".github/mcp.json");
    ConfigSet set;

    write_at(file, "{\n"
                   "  \"mcpServers\": {\n"
                   "    \"playwright\": {\n"
                   "      \"type\": \"local\",\n"
                   "      \"command\": \"npx\",\n"
                   "      \"args\": [\"@playwright/mcp@latest\"],\n"
                   "      \"env\": {},\n"
                   "      \"tools\": [\"*\"]\n"
                   "    }\n"
                   "  }\n"
                   "}\n");
    write_at(".copilot/mcp-config.json",
             "{\"mcpServers\": {\"playwright\": {\"type\": \"local\", \"command\": \"pw-old\","
             " \"tools\": [\"*\"]}, \"github\": {\"type\": \"http\", \"url\":"
             " \"https://api.githubcopilot.com/mcp/\", \"headers\": {\"Authorization\":"
             " \"Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}\"}, \"tools\": [\"*\"]}}}\n");
    _cleanup_free_ char *root = realpath(repo, NULL);
    CHECK(root != NULL);

    discover(&set, root);
    CHECK(config_set_find(&set, "github") != NULL);
    const ConfigSkip *k = find_skip(&set, "playwright", "untrusted");
    CHECK(k && strstr(k->source.path, ".github/mcp.json"));
    config_set_deinit(&set);

    _cleanup_free_ char *why = NULL;
    Settings s;
    settings_init(&s);
    CHECK_INTEQ(trust_approve_root(root, &s, NULL, NULL, NULL, &why), 0);
    discover(&set, root);
    const ServerConfig *c = config_set_find(&set, "playwright");
    CHECK(c && streq(c->source.provider, "copilot") && streq(c->command, "npx") &&
          c->source.level == CONFIG_LEVEL_PROJECT && c->type == TRANSPORT_STDIO);
    CHECK(find_skip(&set, "playwright", "") != NULL); /* the user's, shadowed */
    config_set_deinit(&set);
}

/*
 * An agent started in home: the project's .claude/settings.json is the user's own file, which
 * may be a link (dotfiles); it is read once, as the user's, and its deny list still applies.
 */
static void test_home_as_project(void)
{
    _cleanup_free_ char *real = paths_join(home, "dotfiles/claude-settings.json");
    _cleanup_free_ char *link = paths_join(home, ".claude/settings.json");
    ConfigSet set;

    write_at(real, "{\"deniedMcpServers\": [{\"serverName\": \"memory\"}]}\n");
    write_at(".claude.json", "{\"mcpServers\": {\"memory\": {\"command\": \"mcp-memory\"},"
                             " \"fetch\": {\"command\": \"mcp-fetch\"}}}\n");
    _cleanup_free_ char *dir = paths_dirname(link);
    CHECK(paths_mkdir_p(dir, 0700) == 0 && symlink(real, link) == 0);
    _cleanup_free_ char *root = realpath(home, NULL);
    CHECK(root != NULL);
    discover(&set, root);
    CHECK(find_problem(&set, NULL, "link") == NULL);
    CHECK(config_set_find(&set, "memory") == NULL && claude_winner(&set, "fetch") != NULL);
    config_set_deinit(&set);
}

/*
 * managed-settings.d/ beside managed-settings.json (code.claude.com/docs/en/settings, "Settings
 * files"): every *.json there, in name order, merges over the base file: lists join (a deny
 * list from the security team's fragment adds to the base's), a later fragment's scalar wins,
 * dot files and other names are not read (a fragment that does not parse fails closed: see
 * test_managed_fail_closed).
 */
static void test_managed_drop_ins(void)
{
    _cleanup_free_ char *etc = paths_dirname(managed);
    _cleanup_free_ char *d = paths_join(etc, "managed-settings.d");
    _cleanup_free_ char *sec = paths_join(d, "00-security.json");
    _cleanup_free_ char *plat = paths_join(d, "50-platform.json");
    _cleanup_free_ char *hidden = paths_join(d, ".90-draft.json");
    _cleanup_free_ char *other = paths_join(d, "README.md");
    ConfigSet set;

    write_at(managed, "{\"deniedMcpServers\": [{\"serverName\": \"dangerous\"}],\n"
                      " \"allowedMcpServers\": [{\"serverName\": \"docs\"}],\n"
                      " \"allowManagedMcpServersOnly\": true}\n");
    write_at(sec, "{\n"
                  "  \"deniedMcpServers\": [\n"
                  "    {\"serverName\": \"dangerous\"},\n"
                  "    {\"serverUrl\": \"https://*.pastebin-mcp.example/*\"}\n"
                  "  ]\n"
                  "}\n");
    write_at(plat, "{\n"
                   "  \"allowManagedMcpServersOnly\": false,\n"
                   "  \"permissions\": {\"deny\": [\"WebFetch\"]}\n"
                   "}\n");
    write_at(hidden, "{\"deniedMcpServers\": [{\"serverName\": \"fetch\"}]}\n");
    write_at(other, "{\"deniedMcpServers\": [{\"serverName\": \"fetch\"}]}\n");
    write_at(".claude/settings.json", "{\"allowedMcpServers\": [{\"serverName\": \"fetch\"}, "
                                      "{\"serverName\": \"paste\"}]}\n");
    write_at(
        ".claude.json",
        "{\"mcpServers\": {\n"
        "  \"dangerous\": {\"command\": \"rm-everything\"},\n"
        "  \"paste\": {\"type\": \"http\", \"url\": \"https://eu.pastebin-mcp.example/mcp\"},\n"
        "  \"fetch\": {\"command\": \"uvx\", \"args\": [\"mcp-server-fetch\"]}\n"
        "}}\n");

    discover(&set, NULL);
    CHECK(config_set_find(&set, "dangerous") == NULL);
    /* Denied by the fragment's list, joined to the base's. */
    CHECK(config_set_find(&set, "paste") == NULL);
    CHECK(find_skip(&set, "paste", "deniedMcpServers in ") != NULL);
    /* The rule's own file is named. */
    CHECK(find_problem(&set, "paste", "00-security.json") != NULL);
    /*
     * The platform fragment turned allowManagedMcpServersOnly off, so the user's own allowlist
     * counts (with it on, fetch, a stdio server, would need a managed serverCommand entry); the
     * dot file and README.md, which deny it, are not read.
     */
    CHECK(claude_winner(&set, "fetch") != NULL);
    CHECK(find_problem(&set, NULL, "README") == NULL);
    CHECK_INTEQ((long long)set.n_problems, 2);
    config_set_deinit(&set);

    /* Without the base file the fragments still apply. */
    CHECK(unlink(managed) == 0);
    discover(&set, NULL);
    CHECK(config_set_find(&set, "paste") == NULL && config_set_find(&set, "dangerous") == NULL);
    CHECK(claude_winner(&set, "fetch") != NULL);
    /* The two blocked servers only. */
    CHECK_INTEQ((long long)set.n_problems, 2);
    CHECK(find_problem(&set, "dangerous", "00-security.json") != NULL);
    config_set_deinit(&set);
}

/*
 * $CLAUDE_CODE_PLUGIN_SEED_DIR (code.claude.com/docs/en/plugins/org, "Seed containers and
 * CI"): read-only plugin directories baked into an image, ':'-separated, "~" home. A plugin
 * enabled in settings and installed nowhere else comes from the first seed holding it, at the
 * version the seed's installed_plugins.json records (the seed was built at another path), else
 * its last version directory; a seed plugin nobody enabled is not loaded, and one only a
 * project's settings enable is held back by the trust gate like any plugin.
 */
static void test_plugin_seed(void)
{
    _cleanup_free_ char *seed_a = paths_join(tmp, "opt/claude-seed");
    _cleanup_free_ char *seed_b = paths_join(home, "seed-b");
    _cleanup_free_ char *fmt1 = paths_join(seed_a, "cache/acme/fmt/1.0.0");
    _cleanup_free_ char *fmt2 = paths_join(seed_a, "cache/acme/fmt/10.0.0");
    _cleanup_free_ char *fmt3 = paths_join(seed_a, "cache/acme/fmt/9.0.0");
    _cleanup_free_ char *fmt9 = paths_join(seed_b, "cache/acme/fmt/9.9.9");
    _cleanup_free_ char *db = paths_join(seed_b, "cache/acme/db/3.1.0");
    _cleanup_free_ char *idle = paths_join(seed_b, "cache/acme/idle/1.0.0");
    _cleanup_free_ char *proj = paths_join(seed_b, "cache/acme/proj/0.1.0");
    _cleanup_free_ char *project = paths_join(tmp, "work/repo");
    _cleanup_free_ char *env = xasprintf("%s::~/seed-b", seed_a);
    ConfigSet set;

    setenv("CLAUDE_CODE_PLUGIN_SEED_DIR", env, 1);
    write_at(managed, "{\"enabledPlugins\": {\"fmt@acme\": true}}\n");
    write_at(".claude/settings.json", "{\"enabledPlugins\": {\"db@acme\": true}}\n");
    _cleanup_free_ char *installed = paths_join(seed_a, "installed_plugins.json");
    write_at(installed, "{\"version\": 2, \"plugins\": {\"fmt@acme\": [{\"scope\": \"user\", "
                        "\"installPath\": \"/build/seed/cache/acme/fmt/1.0.0\"}]}}\n");
    const char *dirs[][2] = {{fmt1, "fmt-one"},  {fmt2, "fmt-two"}, {fmt3, "fmt-three"},
                             {fmt9, "fmt-nine"}, {db, "db"},        {idle, "idle"},
                             {proj, "proj"}};
    for (size_t i = 0; i < N_ELEMENTS(dirs); i++) {
        _cleanup_free_ char *mcp = paths_join(dirs[i][0], ".mcp.json");
        _cleanup_free_ char *text = xasprintf(
            "{\"mcpServers\": {\"%s\": {\"command\": \"${CLAUDE_PLUGIN_ROOT}/bin/server\"}}}\n",
            dirs[i][1]);
        write_at(mcp, text);
    }

    discover(&set, NULL);
    const ServerConfig *c = claude_winner(&set, "fmt-one");
    _cleanup_free_ char *want = paths_join(fmt1, "bin/server");
    CHECK(c && streq(c->command, want) && c->source.level == CONFIG_LEVEL_USER);
    CHECK(config_set_find(&set, "fmt-two") == NULL && config_set_find(&set, "fmt-nine") == NULL);
    CHECK(claude_winner(&set, "db") != NULL);
    CHECK(config_set_find(&set, "idle") == NULL && config_set_find(&set, "proj") == NULL);
    CHECK_INTEQ((long long)set.n_problems, 0);
    config_set_deinit(&set);

    /* Without the seed's record: the newest version (10.0.0, not 9.0.0 as names sort). */
    CHECK(unlink(installed) == 0);
    discover(&set, NULL);
    CHECK(claude_winner(&set, "fmt-two") != NULL && config_set_find(&set, "fmt-one") == NULL &&
          config_set_find(&set, "fmt-three") == NULL);
    config_set_deinit(&set);

    /* A project's settings enabling a seed plugin: gated, recorded against that file. */
    _cleanup_free_ char *proj_settings = paths_join(project, ".claude/settings.json");
    write_at(proj_settings, "{\"enabledPlugins\": {\"proj@acme\": true}}\n");
    _cleanup_free_ char *root = realpath(project, NULL);
    CHECK(root != NULL);
    discover(&set, root);
    CHECK(config_set_find(&set, "proj") == NULL);
    const ConfigSkip *k = find_skip(&set, "proj", "untrusted");
    CHECK(k && k->source.level == CONFIG_LEVEL_PROJECT && strstr(k->source.path, ".claude"));
    config_set_deinit(&set);
    unsetenv("CLAUDE_CODE_PLUGIN_SEED_DIR");
}

/*
 * Claude Code reads the .mcp.json of the directory it starts in and of every directory above it,
 * the nearer file winning (a monorepo's shared servers, a package's own). The parents' files are
 * project files too: their servers wait for approval like the project's own (the trust rule: a
 * clone must not run anything by itself), and Claude Code's approval of a name counts for them.
 */
static void test_mcp_json_parents(void)
{
    _cleanup_free_ char *mono = paths_join(tmp, "work/mono");
    _cleanup_free_ char *pkg = paths_join(mono, "packages/api");
    _cleanup_free_ char *top = paths_join(mono, ".mcp.json");
    _cleanup_free_ char *own = paths_join(pkg, ".mcp.json");
    ConfigSet set;

    write_at(top, "{\"mcpServers\": {\n"
                  "  \"db\": {\"command\": \"npx\", \"args\": [\"-y\", \"@acme/db-mcp\"]},\n"
                  "  \"docs\": {\"type\": \"http\", \"url\": \"https://docs.acme.dev/mcp\"}\n"
                  "}}\n");
    write_at(own, "{\"mcpServers\": {\"db\": {\"command\": \"./scripts/db-mcp\"}}}\n");
    _cleanup_free_ char *root = realpath(pkg, NULL);
    _cleanup_free_ char *top_real = realpath(top, NULL);
    CHECK(root != NULL && top_real != NULL);

    discover(&set, root);
    /* Nothing runs before approval, the parent's servers included. */
    CHECK(config_set_find(&set, "db") == NULL && config_set_find(&set, "docs") == NULL);
    const ConfigSkip *k = find_skip(&set, "docs", "untrusted");
    CHECK(k && streq(k->source.path, top_real));
    CHECK(find_skip(&set, "docs", "approve it by name") != NULL);
    config_set_deinit(&set);

    /*
     * mcpctl trust approves the project's own servers; those of the parent's file (another
     * project's, perhaps someone else's) only by name, and it says which it left.
     */
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val took = NULL, above = NULL;
    Settings st;
    settings_init(&st);
    CHECK_INTEQ(trust_approve_root(root, &st, NULL, &took, &above, &why), 0);
    CHECK(json_array_len(took) == 1 &&
          streq(json_get_string(json_array_at(took, 0), "name"), "db"));
    bool docs_left = false;
    for (size_t i = 0; i < json_array_len(above); i++)
        docs_left |= streq(json_get_string(json_array_at(above, i), "name"), "docs") &&
                     streq(json_get_string(json_array_at(above, i), "path"), top_real);
    CHECK(docs_left);
    discover(&set, root);
    CHECK(claude_winner(&set, "db") != NULL && config_set_find(&set, "docs") == NULL);
    config_set_deinit(&set);
    CHECK_INTEQ(trust_approve_root(root, &st, "docs", NULL, NULL, &why), 0);
    discover(&set, root);
    CHECK(claude_winner(&set, "docs") != NULL && claude_winner(&set, "db") != NULL);
    config_set_deinit(&set);
    size_t revoked = 0;
    CHECK_INTEQ(trust_revoke_root(root, NULL, &revoked, &why), 0);
    CHECK_INTEQ((long long)revoked, 2);

    _cleanup_free_ char *approved =
        xasprintf("{\"projects\": {\"%s\": {\"hasTrustDialogAccepted\": true, "
                  "\"enabledMcpjsonServers\": [\"db\", \"docs\"]}}}\n",
                  root);
    write_at(".claude.json", approved);
    discover(&set, root);
    const ServerConfig *db = claude_winner(&set, "db"), *docs = claude_winner(&set, "docs");
    _cleanup_free_ char *own_real = realpath(own, NULL);
    /* The package's own entry of db wins over the monorepo's. */
    CHECK(db && own_real && streq(db->source.path, own_real) &&
          strstr(db->command, "scripts/db-mcp"));
    CHECK(docs && streq(docs->source.path, top_real));
    CHECK(find_skip(&set, "db", "shadowed") != NULL);
    config_set_deinit(&set);
}

static void run_fresh(const char *name, void (*fn)(void))
{
    home_setup();
    test_run(name, fn);
    test_rm_rf(tmp);
    free(tmp);
    free(home);
    free(managed);
}

#define RUN_FRESH(fn) run_fresh(#fn, fn)

int main(void)
{
    log_set_level(LOG_ERR);
    RUN_FRESH(test_allow_and_deny);
    RUN_FRESH(test_project_deny);
    RUN_FRESH(test_provided_and_strict);
    RUN_FRESH(test_managed_plugins_and_cache_dir);
    RUN_FRESH(test_wrong_types);
    RUN_FRESH(test_managed_fail_closed);
    RUN_FRESH(test_settings_approvals);
    RUN_FRESH(test_copilot_repository_file);
    RUN_FRESH(test_home_as_project);
    RUN_FRESH(test_managed_drop_ins);
    RUN_FRESH(test_plugin_seed);
    RUN_FRESH(test_mcp_json_parents);
    return test_main_result();
}
