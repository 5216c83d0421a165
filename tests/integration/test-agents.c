// SPDX-License-Identifier: MIT
// test-agents: every popular agent's files in their real shape, a 6 MB ~/.claude.json, JSONC,
// YAML; the servers they name run through mcpd; a broken file hides nothing else.

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

static const char *fixtures; /* argv[1]: tests/fixtures/agents */

#define CONTROL "mcp_steady_echo"

/*
 * ~/.claude.json as Claude Code grows it: megabytes of chat history per project, the
 * servers after it. 6 MB is over the 4 MiB every other config file may have.
 */
static void write_big_claude_json(const char *path, const char *root)
{
    FILE *f = fopen(path, "w");
    size_t n = 0;

    if (!f)
        abort();
    fprintf(f, "{\"numStartups\": 412, \"projects\": {\"%s\": {\"history\": [", root);
    for (int i = 0; n < 6u * 1024u * 1024u; i++)
        n += (size_t)fprintf(f,
                             "%s{\"display\": \"message %d, long enough to look like one a "
                             "person would type into a chat\", \"pastedContents\": {}}",
                             i ? "," : "", i);
    fprintf(f, "], \"mcpServers\": {\"claude-big\": {\"command\": \"npx\", \"args\": [\"big\"]}},"
               " \"enabledMcpjsonServers\": []}},"
               " \"mcpServers\": {\"claude-top-big\": {\"type\": \"http\", \"url\": "
               "\"http://127.0.0.1:9/mcp\"}, \"my server\": {\"command\": \"npx\"}}}\n");
    fclose(f);
}

static char *install_fixtures(Harness *h)
{
    _cleanup_free_ char *home = paths_join(h->dir, "home");
    _cleanup_free_ char *config = paths_join(h->dir, "config");
    _cleanup_free_ char *claude = paths_join(home, ".claude.json");
    char *root = paths_join(h->dir, "project");

    h_sh("cp -a '%s/home/.' '%s/' && cp -a '%s/config/.' '%s/'", fixtures, home, fixtures, config);
    h_sh("mkdir -p '%s' && cp -a '%s/project/.' '%s/'", root, fixtures, root);
    h_sh("find '%s' '%s' '%s' -type f -exec sed -i 's#@FAKE@#%s#g' {} +", home, config, root,
         h_fake());
    write_big_claude_json(claude, root);
    /* Commands the fixtures name must not start real tools: stubs that exit at once. */
    h_sh("mkdir -p '%s/bin' && for c in npx uvx node; do "
         "printf '#!/bin/sh\\nexit 1\\n' > '%s/bin/'$c; chmod 755 '%s/bin/'$c; done",
         h->dir, h->dir, h->dir);
    _cleanup_free_ char *path = xasprintf("%s/bin:%s", h->dir, getenv("PATH"));
    setenv("PATH", path, 1);
    unsetenv("COPILOT_HOME");
    unsetenv("CODEX_HOME");
    return root;
}

typedef struct Winner {
    const char *name, *provider, *file, *level, *transport;
    bool enabled;
} Winner;

static const Winner winners[] = {
    {"claude-big", "claude", "home/.claude.json", "project", "stdio", true},
    {"claude-top-big", "claude", "home/.claude.json", "user", "http", true},
    {"vscode-user-stdio", "vscode", "config/Code/User/mcp.json", "user", "stdio", true},
    {"vscode-user-http", "vscode", "config/Code/User/mcp.json", "user", "http", true},
    {"vscodium-one", "vscode", "config/VSCodium/User/mcp.json", "user", "stdio", true},
    {"copilot-local", "copilot", "home/.copilot/mcp-config.json", "user", "stdio", true},
    {"copilot-http", "copilot", "home/.copilot/mcp-config.json", "user", "http", true},
    {"desktop-fs", "claude-desktop", "config/Claude/claude_desktop_config.json", "user", "stdio",
     true},
    {"desktop-dup", "claude-desktop", "config/Claude/claude_desktop_config.json", "user", "stdio",
     true},
    {"oc-shared", "opencode", "project/opencode.json", "project", "stdio", true},
    {"oc-proj", "opencode", "project/opencode.json", "project", "stdio", true},
    {"ocglobal", "opencode", "config/opencode/opencode.jsonc", "user", "stdio", true},
    {"oc-remote", "opencode", "config/opencode/opencode.jsonc", "user", "auto", false},
    {"zed-custom", "zed", "project/.zed/settings.json", "project", "stdio", true},
    {"zedold", "zed", "config/zed/settings.json", "user", "stdio", true},
    {"zed-remote", "zed", "config/zed/settings.json", "user", "auto", true},
    {"cline-stdio", "cline", "home/.cline/data/settings/cline_mcp_settings.json", "user", "stdio",
     true},
    {"cline-http", "cline", "home/.cline/data/settings/cline_mcp_settings.json", "user", "http",
     true},
    {"cline-off", "cline", "home/.cline/data/settings/cline_mcp_settings.json", "user", "stdio",
     false},
    {"roo-shared", "roo", "project/.roo/mcp.json", "project", "stdio", true},
    {"roo-remote", "roo", "project/.roo/mcp.json", "project", "http", true},
    {"roo-global", "roo",
     "config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json", "user",
     "stdio", true},
    {"kiro-shared", "kiro", "project/.kiro/settings/mcp.json", "project", "stdio", true},
    {"kiro-user", "kiro", "home/.kiro/settings/mcp.json", "user", "stdio", true},
    {"ag-remote", "antigravity", "home/.gemini/antigravity/mcp_config.json", "user", "auto", true},
    {"ag-stdio", "antigravity", "home/.gemini/antigravity/mcp_config.json", "user", "stdio", true},
    {"agy-remote", "antigravity-cli", "home/.gemini/config/mcp_config.json", "user", "auto", true},
    {"agy-stdio", "antigravity-cli", "home/.gemini/config/mcp_config.json", "user", "stdio", false},
    {"goosefx", "goose", "config/goose/config.yaml", "user", "stdio", true},
    {"goose-http", "goose", "config/goose/config.yaml", "user", "http", false},
    {"goose-sse", "goose", "config/goose/config.yaml", "user", "sse", true},
    {"continue-json", "continue", "project/.continue/mcpServers/from-claude.json", "project",
     "stdio", true},
    {"continue-pw", "continue", "project/.continue/mcpServers/playwright-mcp.yaml", "project",
     "stdio", true},
    {"continue-user", "continue", "home/.continue/config.yaml", "user", "stdio", true},
    {"codex-ml", "codex", "home/.codex/config.toml", "user", "stdio", true},
    {"gemini-jsonc", "gemini", "home/.gemini/settings.json", "user", "stdio", true},
    {"steady", "mcpd", "config/mcpd/mcp.json", "user", "stdio", true},
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

static void check_winner(Harness *h, yajl_val servers, const Winner *w)
{
    _cleanup_free_ char *path = paths_join(h->dir, w->file);
    yajl_val e = find_named(servers, w->name, NULL);
    bool enabled = false;

    json_get_bool(e, "enabled", &enabled);
    CHECK_MSG(e && streq(json_get_string(e, "provider"), w->provider) &&
                  streq(json_get_string(e, "path"), path) &&
                  streq(json_get_string(e, "level"), w->level) &&
                  streq(json_get_string(e, "transport"), w->transport) && enabled == w->enabled,
              "%s: want %s %s %s %s, got %s %s %s %s", w->name, w->provider, path, w->level,
              w->transport, json_get_string(e, "provider"), json_get_string(e, "path"),
              json_get_string(e, "level"), json_get_string(e, "transport"));
}

static yajl_val discover(mcpc_client *c, const char *root)
{
    _cleanup_free_ char *params = xasprintf("{\"cwd\":\"%s\"}", root);
    _cleanup_free_ char *out = NULL;

    CHECK(mcpc_request(c, "mcpd/discover", params, &out) == 0);
    return out ? json_parse(out, NULL) : NULL;
}

/* A problem filed under file (relative to the harness dir) for server, containing want. */
static void expect_problem(Harness *h, yajl_val r, const char *file, const char *server,
                           const char *want)
{
    _cleanup_free_ char *path = paths_join(h->dir, file);
    yajl_val ps = json_get_array(r, "problems");

    for (size_t i = 0; i < json_array_len(ps); i++) {
        yajl_val p = json_array_at(ps, i);
        const char *err = json_get_string(p, "error");
        if (streq(json_get_string(p, "path"), path) &&
            (!server || streq(json_get_string(p, "server"), server)) && err && strstr(err, want))
            return;
    }
    _cleanup_free_ char *all = json_to_string(ps);
    CHECK_MSG(false, "no problem for %s (%s) with \"%s\" in %s", file, server ? server : "-", want,
              all);
}

static void expect_skip(Harness *h, yajl_val r, const char *name, const char *file,
                        const char *want)
{
    _cleanup_free_ char *path = paths_join(h->dir, file);
    yajl_val k = find_named(json_get_array(r, "skipped"), name, path);
    const char *reason = json_get_string(k, "reason");

    CHECK_MSG(reason && strstr(reason, want), "%s in %s: want \"%s\", got %s", name, file, want,
              reason ? reason : "(not skipped)");
}

/* The user approves the project, as mcpctl trust does (the gate itself: test-trust). */
static void trust_project(Harness *h, const char *root)
{
    h_sh("'%s' --socket '%s' trust '%s' >/dev/null", getenv("MCPCTL_BINARY"), h->socket, root);
}

/* Before approval, every agent's project entry is held back and masks nothing. */
static void check_gate(Harness *h, mcpc_client *c, const char *root)
{
    static const char *const held[][2] = {
        {"oc-proj", "project/opencode.json"},
        {"zed-custom", "project/.zed/settings.json"},
        {"roo-remote", "project/.roo/mcp.json"},
        {"kiro-shared", "project/.kiro/settings/mcp.json"},
        {"continue-pw", "project/.continue/mcpServers/playwright-mcp.yaml"},
    };
    yajl_val d = discover(c, root);

    for (size_t i = 0; i < N_ELEMENTS(held); i++)
        expect_skip(h, d, held[i][0], held[i][1], "untrusted: this project's entry would run");
    yajl_val kiro = find_named(json_get_array(d, "servers"), "kiro-shared", NULL);
    _cleanup_free_ char *user_kiro = paths_join(h->dir, "home/.kiro/settings/mcp.json");
    CHECK(kiro && streq(json_get_string(kiro, "path"), user_kiro));
    json_free(d);
}

static void check_precedence_and_problems(Harness *h, yajl_val d)
{
    /* Within an agent, the agent's own rule: the project's entry wins for these. */
    expect_skip(h, d, "oc-shared", "config/opencode/opencode.jsonc", "shadowed by");
    expect_skip(h, d, "zed-custom", "config/zed/settings.json", "shadowed by");
    expect_skip(h, d, "roo-shared",
                "config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/"
                "mcp_settings.json",
                "shadowed by");
    expect_skip(h, d, "kiro-shared", "home/.kiro/settings/mcp.json", "shadowed by");
    expect_skip(h, d, "developer", "config/goose/config.yaml", "runs inside goose");
    /* What cannot be used is a problem naming the file, the server and what to do. */
    expect_problem(h, d, "config/zed/settings.json", "zed-ext", "cannot run Zed extensions");
    expect_problem(h, d, "project/.roo/mcp.json", "roo-bad",
                   "\"websocket\" is not a transport Roo Code knows (\"stdio\", \"sse\", "
                   "\"streamable-http\")");
    expect_problem(h, d, "project/.continue/mcpServers/playwright-mcp.yaml", NULL,
                   "\"mcpServers[1]\" has no \"name\"");
    /* A name Claude Code refuses is reported in its words, and not served under another. */
    expect_problem(
        h, d, "home/.claude.json", "my server",
        "Claude Code refuses this name (\"Invalid name my server. Names can only contain "
        "letters, numbers, hyphens, and underscores.\"");
    CHECK(!find_named(json_get_array(d, "servers"), "my_server", NULL));
    CHECK(!find_named(json_get_array(d, "servers"), "my server", NULL));
}

/* The agents' servers that point at the fake server run, and their tools answer. */
static void check_tools(mcpc_client *c)
{
    static const char *const tools[] = {"mcp_goosefx_echo", "mcp_ocglobal_echo", "mcp_zedold_echo"};

    for (size_t i = 0; i < N_ELEMENTS(tools); i++) {
        int is_error = -1;
        _cleanup_free_ char *text = h_call_text(c, tools[i], "{\"text\":\"hi\"}", &is_error);
        CHECK_MSG(is_error == 0 && streq(text, "hi"), "%s: %s", tools[i], text);
    }
}

static void test_every_agent(void)
{
    Harness h;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());

    h_setup(&h, "agents");
    h_write_config(&h, cfg);
    _cleanup_free_ char *root = install_fixtures(&h);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "agents");
    h_settle(&h, c, "steady", "goosefx", "ocglobal", "zedold", NULL);
    check_gate(&h, c, root);
    trust_project(&h, root);

    yajl_val d = discover(c, root);
    yajl_val servers = json_get_array(d, "servers");
    for (size_t i = 0; i < N_ELEMENTS(winners); i++)
        check_winner(&h, servers, &winners[i]);
    CHECK_MSG(json_array_len(servers) == N_ELEMENTS(winners), "%zu servers, want %zu",
              json_array_len(servers), N_ELEMENTS(winners));
    check_precedence_and_problems(&h, d);
    /* A duplicate key: the last one wins, as JSON.parse does. */
    yajl_val dup = json_get(find_named(servers, "desktop-dup", NULL), "config");
    yajl_val dup_args = json_get_array(dup, "args");
    CHECK_MSG(json_array_len(dup_args) == 1 &&
                  streq(json_array_at(dup_args, 0)->u.string, "second"),
              "desktop-dup: %s", dup ? "wrong args" : "missing");
    json_free(d);
    check_tools(c);

    /* One broken file hides nothing else, and its problem names the line and column. */
    _cleanup_free_ char *vsc = paths_join(h.dir, "config/Code/User/mcp.json");
    FILE *f = fopen(vsc, "w");
    CHECK(f != NULL);
    fputs("{\n  // a comment is fine here\n  \"servers\": {\"x\" {}}\n}\n", f);
    fclose(f);
    d = discover(c, root);
    expect_problem(&h, d, "config/Code/User/mcp.json", NULL, "line 3, column ");
    servers = json_get_array(d, "servers");
    CHECK(find_named(servers, "vscode-user-stdio", NULL) == NULL);
    CHECK(find_named(servers, "vscodium-one", NULL) && find_named(servers, "claude-big", NULL) &&
          find_named(servers, "goosefx", NULL) && find_named(servers, "continue-pw", NULL));
    json_free(d);

    h_check_healthy(&h, "every agent's files, one of them broken", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
}

static void write_file(Harness *h, const char *rel, const char *text)
{
    _cleanup_free_ char *path = paths_join(h->dir, rel), *dir = paths_dirname(path);
    FILE *f;

    CHECK(paths_mkdir_p(dir, 0700) == 0);
    CHECK((f = fopen(path, "w")) != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/*
 * A bad entry or field in each agent's file: a problem naming the file, the server and the
 * field; the good entry beside it still loads; a file that does not parse names the line and
 * column; the daemon keeps serving.
 */
static void test_bad_entries(void)
{
    Harness h;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *root = NULL;
    const char *ok = "\"good\": {\"command\": \"true\"}";

    h_setup(&h, "agents-bad");
    h_write_config(&h, cfg);
    root = paths_join(h.dir, "project");
    CHECK(paths_mkdir_p(root, 0700) == 0);
    write_file(&h, "config/goose/config.yaml", "extensions:\n  a: [unclosed\n  b: 1\n");
    write_file(&h, "config/zed/settings.json", "{\n  // fine\n  \"context_servers\": {\n");
    _cleanup_free_ char *oc =
        xasprintf("{\"mcp\": {\"oc-bad\": {\"type\": \"local\", \"command\": \"npx x\"}, \"good\": "
                  "{\"type\": \"local\", \"command\": [\"true\"]}}}");
    write_file(&h, "project/opencode.json", oc);
    _cleanup_free_ char *cl =
        xasprintf("{\"mcpServers\": {\"cl-bad\": {\"command\": \"x\", \"timeout\": -5}, %s}}", ok);
    write_file(&h, "home/.cline/data/settings/cline_mcp_settings.json", cl);
    write_file(&h, "home/.copilot/mcp-config.json",
               "{\"mcpServers\": {\"cp-bad\": {\"type\": \"local\", \"command\": \"x\", "
               "\"tools\": \"*\"}, \"cp-good\": {\"type\": \"local\", \"command\": \"x\"}}}");
    write_file(&h, "home/.gemini/antigravity/mcp_config.json",
               "{\"mcpServers\": {\"ag-bad\": {\"serverUrl\": 5}}}");
    write_file(&h, "project/.kiro/settings/mcp.json",
               "{\"mcpServers\": {\"k-bad\": {\"command\": \"x\", \"disabled\": \"yes\"}}}");
    write_file(&h, "home/.continue/config.yaml", "name: c\nmcpServers: 5\n");
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "agents-bad");
    h_settle(&h, c, "steady", NULL);
    trust_project(&h, root);

    yajl_val d = discover(c, root);
    expect_problem(&h, d, "config/goose/config.yaml", NULL, "line 3, column ");
    expect_problem(&h, d, "config/zed/settings.json", NULL, "line 4, column ");
    expect_problem(&h, d, "project/opencode.json", "oc-bad",
                   "a \"local\" server needs \"command\": [\"program\", \"arg\", ...]");
    expect_problem(&h, d, "home/.cline/data/settings/cline_mcp_settings.json", "cl-bad",
                   "\"timeout\" must be a number of seconds from 0 to 86400");
    expect_problem(&h, d, "home/.copilot/mcp-config.json", "cp-bad",
                   "\"tools\" must be an array of tool names");
    expect_problem(&h, d, "home/.gemini/antigravity/mcp_config.json", "ag-bad",
                   "\"serverUrl\" must be a string");
    expect_problem(&h, d, "project/.kiro/settings/mcp.json", "k-bad",
                   "\"disabled\" must be true or false");
    expect_problem(&h, d, "home/.continue/config.yaml", NULL,
                   "\"mcpServers\" must be a list of servers");
    yajl_val servers = json_get_array(d, "servers");
    yajl_val good = find_named(servers, "good", NULL);
    _cleanup_free_ char *oc_path = paths_join(h.dir, "project/opencode.json");
    CHECK_MSG(good && streq(json_get_string(good, "path"), oc_path), "good: %s",
              good ? json_get_string(good, "path") : "missing");
    CHECK(find_named(servers, "cp-good", NULL) && find_named(servers, "steady", NULL));
    CHECK(!find_named(servers, "cl-bad", NULL) && !find_named(servers, "k-bad", NULL));
    json_free(d);

    h_check_healthy(&h, "a bad entry or file in each agent's config", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test-agents FIXTURES\n");
        return 2;
    }
    fixtures = argv[1];
    test_every_agent();
    test_bad_entries();
    return h_finish("agents");
}
