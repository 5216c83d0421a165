// SPDX-License-Identifier: MIT
// test-config: mcpctl config over a home holding every provider's files; secrets from !cmd stay
// secret; Claude Code plugins and Gemini CLI extensions found in their directories, hot.

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

static const char *fixtures; /* argv[1]: tests/fixtures/config */

/* Run mcpctl with args against h's daemon; its stdout (to free) and exit status. */
static char *mcpctl(Harness *h, int *statusp, const char *args)
{
    _cleanup_free_ char *cmd =
        xasprintf("'%s' --socket '%s' %s", getenv("MCPCTL_BINARY"), h->socket, args);
    FILE *f = popen(cmd, "r");
    StrBuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    int st;

    if (!f)
        abort();
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(&sb, buf, n);
    st = pclose(f);
    if (statusp)
        *statusp = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return strbuf_detach(&sb, NULL);
}

/* The fixture tree in the harness's home, with ~/.claude.json naming the project's path. */
static char *install_fixtures(Harness *h)
{
    _cleanup_free_ char *home = paths_join(h->dir, "home");
    char *root = paths_join(h->dir, "project");

    h_sh("cp -a '%s/home/.' '%s/'", fixtures, home);
    h_sh("mkdir -p '%s' && cp -a '%s/project/.' '%s/'", root, fixtures, root);
    /* mcpd's own user file lives under the harness's XDG_CONFIG_HOME. */
    h_sh("cp '%s/home/.config/mcpd/mcp.json' '%s'", fixtures, h->config);
    h_sh("sed 's#@ROOT@#%s#g' '%s/home/.claude.json.in' > '%s/.claude.json'", root, fixtures, home);
    /*
     * Commands the fixtures name (npx, uvx, node, python) must not start real tools here:
     * stubs that exit at once come first in PATH.
     */
    h_sh("mkdir -p '%s/bin' && for c in npx uvx node python mcp-server-memory; do "
         "printf '#!/bin/sh\\nexit 1\\n' > '%s/bin/'$c; chmod 755 '%s/bin/'$c; done",
         h->dir, h->dir, h->dir);
    _cleanup_free_ char *path = xasprintf("%s/bin:%s", h->dir, getenv("PATH"));
    setenv("PATH", path, 1);
    setenv("MCPD_FIXTURE_TOKEN", "tok-never-shown-9f3a", 1);
    unsetenv("MCPD_FIXTURE_UNSET");
    unsetenv("CODEX_HOME");
    return root;
}

typedef struct Winner {
    const char *name, *provider, *file, *level, *transport;
} Winner;

/* The right winner for every name in the fixtures (the same table as tests/unit/test-sources). */
static const Winner winners[] = {
    {"shared", "mcpd", "project/.mcpd/mcp.json", "project", "stdio"},
    {"user-native", "mcpd", "config/mcpd/mcp.json", "user", "stdio"},
    {"disabled-native", "mcpd", "config/mcpd/mcp.json", "user", "stdio"},
    {"broken", "claude", "home/.claude.json", "user", "stdio"},
    {"claude-top", "claude", "home/.claude.json", "user", "stdio"},
    {"sentry", "claude", "home/.claude.json", "user", "http"},
    {"claude-local", "claude", "home/.claude.json", "project", "stdio"},
    {"claude-user-cwd", "claude", "home/.claude.json", "user", "stdio"},
    {"codex-gh", "codex", "home/.codex/config.toml", "user", "stdio"},
    {"codex-remote", "codex", "home/.codex/config.toml", "user", "http"},
    {"codex-off", "codex", "home/.codex/config.toml", "user", "stdio"},
    {"gemini-stdio", "codex", "home/.codex/config.toml", "user", "stdio"},
    {"codex-proj", "codex", "project/.codex/config.toml", "project", "stdio"},
    {"gemini-http", "gemini", "home/.gemini/settings.json", "user", "http"},
    {"gemini-sse", "gemini", "home/.gemini/settings.json", "user", "sse"},
    {"gemini-auto", "gemini", "home/.gemini/settings.json", "user", "auto"},
    {"gemini-proj", "gemini", "project/.gemini/settings.json", "project", "stdio"},
    {"cursor-remote", "cursor", "home/.cursor/mcp.json", "user", "auto"},
    {"cursor-proj", "cursor", "project/.cursor/mcp.json", "project", "stdio"},
    {"windsurf-remote", "windsurf", "home/.codeium/windsurf/mcp_config.json", "user", "auto"},
    {"windsurf-off", "windsurf", "home/.codeium/windsurf/mcp_config.json", "user", "stdio"},
    {"windsurf-proj", "windsurf", "project/.windsurf/mcp_config.json", "project", "stdio"},
    {"vscode-stdio", "vscode", "project/.vscode/mcp.json", "project", "stdio"},
    {"vscode-http", "vscode", "project/.vscode/mcp.json", "project", "http"},
    {"plain-a", "mcp-json", "project/mcp.json", "project", "stdio"},
    {"plain-both", "claude", "project/.mcp.json", "project", "stdio"},
    {"plain-b", "claude", "project/.mcp.json", "project", "stdio"},
};

static yajl_val find_named(yajl_val arr, const char *name, const char *path)
{
    for (size_t i = 0; i < json_array_len(arr); i++) {
        yajl_val e = json_array_at(arr, i);
        if (streq(json_get_string(e, "name"), name) &&
            (!path || streq(json_get_string(e, "path"), path)))
            return e;
    }
    return NULL;
}

static void check_winners(Harness *h, yajl_val r)
{
    yajl_val servers = json_get_array(r, "servers");

    CHECK_MSG(json_array_len(servers) == N_ELEMENTS(winners), "%zu servers",
              json_array_len(servers));
    for (size_t i = 0; i < N_ELEMENTS(winners); i++) {
        const Winner *w = &winners[i];
        _cleanup_free_ char *path = paths_join(h->dir, w->file);
        yajl_val e = find_named(servers, w->name, NULL);
        CHECK_MSG(e && streq(json_get_string(e, "provider"), w->provider) &&
                      streq(json_get_string(e, "path"), path) &&
                      streq(json_get_string(e, "level"), w->level) &&
                      streq(json_get_string(e, "transport"), w->transport),
                  "%s: want %s %s %s %s, got %s %s %s %s", w->name, w->provider, path, w->level,
                  w->transport, json_get_string(e, "provider"), json_get_string(e, "path"),
                  json_get_string(e, "level"), json_get_string(e, "transport"));
    }
}

static void test_all_providers(void)
{
    Harness h;
    int status;

    h_setup(&h, "config");
    _cleanup_free_ char *root = install_fixtures(&h);
    h_start(&h, NULL);
    /* The user approves the fixture project, as mcpctl trust does (the gate: test-trust). */
    _cleanup_free_ char *trust_args = xasprintf("trust '%s'", root);
    _cleanup_free_ char *trust_out = mcpctl(&h, &status, trust_args);
    CHECK_MSG(status == 0, "mcpctl trust: %d %s", status, trust_out);

    _cleanup_free_ char *args = xasprintf("config --json --cwd '%s'", root);
    _cleanup_free_ char *out = mcpctl(&h, &status, args);
    _cleanup_json_ yajl_val r = json_parse(out, NULL);
    CHECK_MSG(status == 0 && r, "mcpctl config --json: status %d, %s", status, out);
    CHECK(streq(json_get_string(r, "root"), root));
    check_winners(&h, r);

    /* Every loser with its reason. */
    yajl_val skipped = json_get_array(r, "skipped");
    _cleanup_free_ char *user_native = paths_join(h.dir, "config/mcpd/mcp.json");
    _cleanup_free_ char *proj_native = paths_join(h.dir, "project/.mcpd/mcp.json");
    yajl_val k = find_named(skipped, "shared", user_native);
    CHECK(k && strstr(json_get_string(k, "reason"), "shadowed by") &&
          strstr(json_get_string(k, "reason"), proj_native));
    k = find_named(skipped, "broken", user_native);
    CHECK(k && strstr(json_get_string(k, "reason"), "stdio server requires \"command\" field"));
    k = find_named(skipped, "disabled-native", NULL);
    CHECK(k && strstr(json_get_string(k, "reason"), "masked by the disabled entry"));
    k = find_named(skipped, "exa", NULL);
    CHECK(k && strstr(json_get_string(k, "reason"), "Exa server, filtered"));
    /*
     * One error (broken) and one warning: vscode-http's ${input:...} prompt, which mcpd cannot
     * answer, named with its field.
     */
    yajl_val problems = json_get_array(r, "problems");
    CHECK(json_array_len(problems) == 2 &&
          streq(json_get_string(json_array_at(problems, 0), "server"), "broken"));
    yajl_val warn = json_array_len(problems) == 2 ? json_array_at(problems, 1) : NULL;
    CHECK(warn && streq(json_get_string(warn, "server"), "vscode-http") &&
          streq(json_get_string(warn, "severity"), "warning") &&
          strstr(json_get_string(warn, "error"), "\"headers.Authorization\" uses ${input:...}"));

    /* Values from the environment and the Exa key never show; env and headers are ***. */
    CHECK(!strstr(out, "tok-never-shown-9f3a"));
    CHECK(!strstr(out, "fixture-exa-key"));
    yajl_val cg = find_named(json_get_array(r, "servers"), "codex-gh", NULL);
    CHECK(
        streq(json_get_string(json_get_object(json_get(cg, "config"), "env"), "LOG_LEVEL"), "***"));

    /* The table for people: one line per winner, with its source file. */
    _cleanup_free_ char *targs = xasprintf("config --cwd '%s'", root);
    _cleanup_free_ char *table = mcpctl(&h, &status, targs);
    CHECK(status == 0 && strstr(table, "Servers for project "));
    for (size_t i = 0; i < N_ELEMENTS(winners); i++) {
        _cleanup_free_ char *path = paths_join(h.dir, winners[i].file);
        _cleanup_free_ char *line =
            xasprintf("\n%-24s %-13s %-7s %-9s %s", winners[i].name, winners[i].provider,
                      winners[i].level, winners[i].transport, path);
        CHECK_MSG(strstr(table, line), "no line for %s in:\n%s", winners[i].name, table);
    }
    CHECK(strstr(table, "Not used:") && strstr(table, "problem: "));
    /* A problem names its file, its server and its field, in mcpctl config and mcpctl status. */
    _cleanup_free_ char *named = xasprintf("problem: %s: server \"broken\", field \"command\": "
                                           "stdio server requires \"command\" field",
                                           user_native);
    CHECK_MSG(strstr(table, named), "no \"%s\" in:\n%s", named, table);
    _cleanup_free_ char *st = mcpctl(&h, &status, "status");
    CHECK_MSG(strstr(st, named), "no \"%s\" in:\n%s", named, st);

    /* Without a project: the user-level servers only. */
    _cleanup_free_ char *uout = mcpctl(&h, &status, "config --json --cwd /");
    _cleanup_json_ yajl_val u = json_parse(uout, NULL);
    CHECK(u && streq(json_get_string(u, "root"), "/"));
    CHECK(find_named(json_get_array(u, "servers"), "claude-local", NULL) == NULL);
    yajl_val shared = find_named(json_get_array(u, "servers"), "shared", NULL);
    CHECK(shared && streq(json_get_string(shared, "path"), user_native));

    /* A cwd that does not exist is a clear error, and the daemon keeps serving. */
    _cleanup_free_ char *bad = mcpctl(&h, &status, "config --cwd /nonexistent/mcpd-project 2>&1");
    CHECK_MSG(status == 1 && strstr(bad, "/nonexistent/mcpd-project"), "%d %s", status, bad);
    mcpc_client *c = h_client(&h, "config");
    _cleanup_free_ char *res = NULL;
    CHECK(mcpc_request(c, "mcpd/discover", "{\"cwd\":\"relative/dir\"}", &res) == MCPC_E_RPC);
    CHECK(strstr(mcpc_errmsg(c), "absolute path"));
    mcpc_free(c);

    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
}

/* Every regular file under dir must not contain needle. */
static const char *walk_needle;
static int walk_hits;
static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F || !S_ISREG(st->st_mode))
        return 0;
    _cleanup_free_ char *text = h_read_file(path);
    if (text && strstr(text, walk_needle)) {
        fprintf(stderr, "secret found in %s\n", path);
        walk_hits++;
    }
    return 0;
}

static int files_containing(const char *dir, const char *needle)
{
    walk_needle = needle;
    walk_hits = 0;
    nftw(dir, walk_one, 16, FTW_PHYS);
    return walk_hits;
}

#define SECRET "s3cr3t-from-cmd-7c1e"

static void test_secret_from_command(void)
{
    Harness h;
    int status;

    h_setup(&h, "secret");
    setenv("MCPD_IT_NAMED", "named-value", 1);
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {"
                  "\"sec\": {\"command\": \"%s\", \"args\": [\"--name\", \"sec\"], \"env\": {"
                  "\"SECRET\": \"!printf '%%s\\\\n' " SECRET "\", \"NAMED\": \"MCPD_IT_NAMED\", "
                  "\"EMPTY\": \"!true\"}},"
                  "\"bad\": {\"command\": \"%s\", \"reconnect\": false, \"env\": {"
                  "\"X\": \"!echo no vault >&2; exit 7\"}}"
                  "}}",
                  h_fake(), h_fake());
    h_write_config(&h, cfg);
    chmod(h.config, 0600);
    h_write_settings(&h, "{\"bogusSetting\": 1}");
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "secret");
    CHECK(h_wait_state(c, "sec", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "bad", "failed", H_WAIT_MS));

    /* The server got the resolved values... */
    int is_error = 0;
    _cleanup_free_ char *v = h_call_text(c, "mcp_sec_env", "{\"name\":\"SECRET\"}", &is_error);
    CHECK_MSG(streq(v, SECRET) && !is_error, "SECRET is \"%s\"", v);
    _cleanup_free_ char *named = h_call_text(c, "mcp_sec_env", "{\"name\":\"NAMED\"}", NULL);
    CHECK_MSG(streq(named, "named-value"), "NAMED is \"%s\"", named);
    _cleanup_free_ char *empty = h_call_text(c, "mcp_sec_env", "{\"name\":\"EMPTY\"}", NULL);
    CHECK_MSG(streq(empty, ""), "EMPTY is \"%s\"", empty);

    /* ...the failing one says which server, key and command, and why. */
    yajl_val st = h_status(c);
    const char *err = json_get_string(h_server(st, "bad"), "lastError");
    CHECK_MSG(err && strstr(err, "Server \"bad\": env.X: `!echo no vault >&2; exit 7` exited with "
                                 "status 7; its output is not shown"),
              "lastError: %s", err ? err : "(none)");
    /* Settings problems are in status too. */
    _cleanup_free_ char *stext = json_to_string(st);
    CHECK(strstr(stext, "unknown setting \\\"bogusSetting\\\""));
    CHECK(!strstr(stext, SECRET));
    json_free(st);

    /* ...and the secret is nowhere else: status, discover, logs, cache files. */
    _cleanup_free_ char *status_out = mcpctl(&h, &status, "status");
    _cleanup_free_ char *status_json = mcpctl(&h, &status, "--json status");
    _cleanup_free_ char *disc = mcpctl(&h, &status, "config --json");
    _cleanup_free_ char *logs = mcpctl(&h, &status, "logs sec");
    CHECK(!strstr(status_out, SECRET) && !strstr(status_json, SECRET));
    CHECK(strstr(disc, "\"SECRET\":\"***\"") && !strstr(disc, SECRET));
    CHECK(!strstr(disc, "named-value"));
    CHECK(!strstr(logs, SECRET));
    _cleanup_free_ char *cache = paths_join(h.dir, "cache");
    _cleanup_free_ char *tools = paths_join(cache, "mcpd/tools");
    struct stat sb;
    CHECK_MSG(stat(tools, &sb) == 0, "no cache written under %s", tools);
    CHECK(files_containing(cache, SECRET) == 0);
    mcpc_free(c);

    /* A config file others may write: its !commands are refused, naming the file. */
    chmod(h.config, 0666);
    c = h_client(&h, "secret-2");
    _cleanup_free_ char *reload = NULL;
    CHECK(mcpc_request(c, "mcpd/disconnect", "{\"server\":\"sec\"}", &reload) == 0);
    free(reload);
    reload = NULL;
    CHECK(mcpc_request(c, "mcpd/connect", "{\"server\":\"sec\"}", &reload) == 0);
    CHECK(h_wait_state(c, "sec", "failed", H_WAIT_MS));
    st = h_status(c);
    err = json_get_string(h_server(st, "sec"), "lastError");
    CHECK_MSG(err && strstr(err, "refusing to run a !command") && strstr(err, h.config) &&
                  strstr(err, "writable by others"),
              "lastError: %s", err ? err : "(none)");
    json_free(st);
    mcpc_free(c);

    CHECK(h_stop(&h) == 0);
    /* The log is checked last, when everything has been written. */
    CHECK(files_containing(h.log, SECRET) == 0);
    CHECK(files_containing(h.log, "named-value") == 0);
    h_teardown(&h);
}

/*
 * Sources found in directories: an enabled Claude Code plugin's server runs through mcpd from
 * the start, with ${CLAUDE_PLUGIN_ROOT} filled in; a Gemini CLI extension installed while mcpd
 * runs is picked up without a reload (its directory moved into ~/.gemini/extensions, as an
 * installer does), and removing it stops its server.
 */
static void test_plugin_and_extension_dirs(void)
{
    Harness h;

    h_setup(&h, "plugins");
    _cleanup_free_ char *none = paths_join(h.dir, "none.json");
    setenv("MCPD_CLAUDE_MANAGED_MCP", none, 1);
    setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", none, 1);
    _cleanup_free_ char *home = paths_join(h.dir, "home");
    _cleanup_free_ char *plugin = paths_join(home, ".claude/plugins/cache/acme/echo-tools/1.2.0");
    _cleanup_free_ char *installed =
        xasprintf("{\"version\": 2, \"plugins\": {\"echo-tools@acme\": [{\"scope\": \"user\", "
                  "\"installPath\": \"%s\", \"version\": \"1.2.0\", \"installedAt\": "
                  "\"2026-11-02T10:00:00.000Z\"}]}}",
                  plugin);
    _cleanup_free_ char *mcp =
        xasprintf("{\"mcpServers\": {\"plug\": {\"command\": \"%s\", \"args\": [\"--name\", "
                  "\"plug\"], \"env\": {\"ROOT\": \"${CLAUDE_PLUGIN_ROOT}/data\"}}}}",
                  h_fake());
    _cleanup_free_ char *manifest = xasprintf(
        "{\"name\": \"gext\", \"version\": \"0.1.0\", \"mcpServers\": {\"gext\": {\"command\": "
        "\"%s\", \"args\": [\"--name\", \"gext\"], \"cwd\": \"${extensionPath}\"}}}",
        h_fake());
    h_sh("mkdir -p '%s/.claude/plugins' '%s' '%s/.gemini/extensions' '%s/staging/gext'", home,
         plugin, home, h.dir);
    h_sh("printf '%%s' '%s' > '%s/.claude/plugins/installed_plugins.json'", installed, home);
    h_sh("printf '%%s' '{\"enabledPlugins\": {\"echo-tools@acme\": true}}' > "
         "'%s/.claude/settings.json'",
         home);
    h_sh("printf '%%s' '%s' > '%s/.mcp.json'", mcp, plugin);
    h_sh("printf '%%s' '%s' > '%s/staging/gext/gemini-extension.json'", manifest, h.dir);
    h_write_config(&h, "{\"mcpServers\": {}}");
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "plugins");

    CHECK(h_wait_state(c, "plug", "connected", H_WAIT_MS));
    _cleanup_free_ char *root = h_call_text(c, "mcp_plug_env", "{\"name\":\"ROOT\"}", NULL);
    _cleanup_free_ char *want = paths_join(plugin, "data");
    CHECK_MSG(streq(root, want), "ROOT is \"%s\"", root ? root : "(none)");
    h_settle(&h, c, "plug", NULL);

    h_sh("mv '%s/staging/gext' '%s/.gemini/extensions/gext'", h.dir, home);
    CHECK_MSG(h_wait_state(c, "gext", "connected", H_WAIT_MS),
              "the extension installed while mcpd runs was not picked up");
    h_sh("rm -rf '%s/.gemini/extensions/gext'", home);
    bool gone = false;
    for (int waited = 0; !gone && waited <= H_WAIT_MS; waited += 50) {
        _cleanup_json_ yajl_val st = h_status(c);
        gone = h_server(st, "gext") == NULL;
        if (!gone)
            h_sleep_ms(50);
    }
    CHECK_MSG(gone, "the removed extension's server is still there");

    CHECK(h_check_healthy(&h, "plugins", "mcp_plug_echo"));
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    unsetenv("MCPD_CLAUDE_MANAGED_MCP");
    unsetenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    fixtures = argv[1];
    test_secret_from_command();
    test_all_providers();
    test_plugin_and_extension_dirs();
    return h_finish("integration-config");
}
