// SPDX-License-Identifier: MIT
// test-sources-agents: agents' config files as their users write them today, read by the
// providers: what each field becomes, and what mcpd cannot honour reported per server.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/agents.h"
#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/config-expand.h"
#include "daemon/config/config.h"
#include "daemon/config/source.h"
#include "daemon/config/tool-filter.h"
#include "daemon/config/trust-gate.h"
#include "tests/unit/test.h"

static char *tmp, *home;

/* A private home; no machine-wide file (Gemini's, Claude Code's managed one) is read. */
static void home_setup(void)
{
    _cleanup_free_ char *conf = NULL, *none = NULL;

    tmp = test_tmpdir();
    home = paths_join(tmp, "home");
    conf = paths_join(home, ".config");
    none = paths_join(tmp, "none.json");
    setenv("HOME", home, 1);
    setenv("XDG_CONFIG_HOME", conf, 1);
    setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", none, 1);
    setenv("MCPD_CLAUDE_MANAGED_MCP", none, 1);
    unsetenv("CODEX_HOME");
    unsetenv("CLAUDE_CONFIG_DIR");
    unsetenv("COPILOT_HOME");
    unsetenv("MCPD_TEST_UNSET_TOKEN");
}

/* Write ~/rel, making its directories. */
static void write_home(const char *rel, const char *text)
{
    _cleanup_free_ char *path = paths_join(home, rel);
    _cleanup_free_ char *cmd = xasprintf("mkdir -p \"$(dirname '%s')\"", path);

    if (system(cmd) != 0)
        abort();
    test_write_file(path, text);
}

/* Discovery of the user workspace (no project root), with default settings. */
static void discover_user(ConfigSet *set)
{
    DiscoverOptions opt = {NULL, NULL};
    Settings s;

    settings_init(&s);
    memset(set, 0, sizeof(*set));
    CHECK_INTEQ(config_discover(set, &opt, &s), 0);
}

/* The problem about server whose message holds want, or NULL. */
static const ConfigProblem *find_problem(const ConfigSet *set, const char *server, const char *want)
{
    for (size_t i = 0; i < set->n_problems; i++)
        if (set->problems[i].server && streq(set->problems[i].server, server) &&
            strstr(set->problems[i].message, want))
            return &set->problems[i];
    return NULL;
}

/* How many problems name server. */
static size_t count_problems(const ConfigSet *set, const char *server)
{
    size_t n = 0;

    for (size_t i = 0; i < set->n_problems; i++)
        n += set->problems[i].server && streq(set->problems[i].server, server);
    return n;
}

static void expect_problem(const ConfigSet *set, const char *server, const char *want, bool warning)
{
    const ConfigProblem *p = find_problem(set, server, want);

    CHECK(p && p->warning == warning);
    if (!p) {
        fprintf(stderr, "  no problem about %s with \"%s\"; there are:\n", server, want);
        for (size_t i = 0; i < set->n_problems; i++)
            fprintf(stderr, "    %s: %s\n", set->problems[i].server ? set->problems[i].server : "-",
                    set->problems[i].message);
    }
}

/*
 * Codex: scopes and [oauth] client_id are sign-in options mcpd honours; a literal bearer_token
 * is refused as Codex refuses it; oauth_resource and a bearer variable mcpd does not have are
 * noted; Codex's own approval fields are not noise; a typo is named.
 */
static void test_codex_fields(void)
{
    ConfigSet set;
    const ServerConfig *c;

    write_home(".codex/config.toml", "model = \"gpt-5-codex\"\n"
                                     "\n"
                                     "[mcp_servers.figma]\n"
                                     "url = \"https://mcp.figma.com/mcp\"\n"
                                     "scopes = [\"file_content:read\", \"files:read\"]\n"
                                     "oauth_resource = \"https://mcp.figma.com\"\n"
                                     "\n"
                                     "[mcp_servers.figma.oauth]\n"
                                     "client_id = \"figma-client\"\n"
                                     "\n"
                                     "[mcp_servers.linear]\n"
                                     "url = \"https://mcp.linear.app/mcp\"\n"
                                     "bearer_token_env_var = \"MCPD_TEST_UNSET_TOKEN\"\n"
                                     "required = true\n"
                                     "default_tools_approval_mode = \"approve\"\n"
                                     "\n"
                                     "[mcp_servers.linear.tools.create_issue]\n"
                                     "approval_mode = \"prompt\"\n"
                                     "\n"
                                     "[mcp_servers.leaky]\n"
                                     "url = \"https://example.com/mcp\"\n"
                                     "bearer_token = \"sk-literal\"\n"
                                     "\n"
                                     "[mcp_servers.typo]\n"
                                     "command = \"npx\"\n"
                                     "arg = [\"-y\", \"some-server\"]\n");
    discover_user(&set);
    c = config_set_find(&set, "figma");
    CHECK(c && c->type == TRANSPORT_HTTP);
    CHECK(c && streq(json_get_string(c->oauth, "clientId"), "figma-client"));
    yajl_val scopes = c ? json_get(c->oauth, "scopes") : NULL;
    CHECK(json_array_len(scopes) == 2 && streq(json_array_at(scopes, 1)->u.string, "files:read"));
    expect_problem(&set, "figma", "\"oauth_resource\"", true);
    CHECK_INTEQ(count_problems(&set, "figma"), 1);

    c = config_set_find(&set, "linear");
    CHECK(c && !json_get(c->headers, "Authorization"));
    expect_problem(&set, "linear", "MCPD_TEST_UNSET_TOKEN is not set in mcpd's environment", true);
    CHECK_INTEQ(count_problems(&set, "linear"), 1); /* required, tools: Codex's own */

    CHECK(config_set_find(&set, "leaky") == NULL);
    expect_problem(&set, "leaky", "\"bearer_token_env_var\"", false);

    CHECK(config_set_find(&set, "typo") != NULL);
    expect_problem(&set, "typo", "unknown field \"arg\" ignored", true);
    config_set_deinit(&set);
}

/*
 * Cursor's static OAuth client ("auth": {CLIENT_ID, CLIENT_SECRET, scopes}) is mcpd's "oauth";
 * read as mcpd's own "auth" it was an empty credential and the client was lost.
 */
static void test_cursor_static_oauth(void)
{
    ConfigSet set;
    const ServerConfig *c;

    write_home(".cursor/mcp.json",
               "{\n"
               "  \"mcpServers\": {\n"
               "    \"pipes\": {\n"
               "      \"url\": \"https://pipes.example.com/mcp\",\n"
               "      \"auth\": {\n"
               "        \"CLIENT_ID\": \"cursor-client\",\n"
               "        \"CLIENT_SECRET\": \"${env:MCPD_TEST_UNSET_TOKEN}\",\n"
               "        \"scopes\": [\"openid\", \"kb:read\"]\n"
               "      }\n"
               "    },\n"
               "    \"local\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"], \"env\": {}}\n"
               "  }\n"
               "}\n");
    discover_user(&set);
    c = config_set_find(&set, "pipes");
    CHECK(c && c->type == TRANSPORT_AUTO && !c->auth_type && !c->credential_id);
    CHECK(c && streq(json_get_string(c->oauth, "clientId"), "cursor-client"));
    CHECK(c && json_get_string(c->oauth, "clientSecret"));
    CHECK(c && json_array_len(json_get(c->oauth, "scopes")) == 2);
    /* The secret's variable is not set: said once, with the field. */
    expect_problem(&set, "pipes",
                   "\"oauth.clientSecret\" uses ${MCPD_TEST_UNSET_TOKEN}, which is not set", true);
    CHECK_INTEQ(count_problems(&set, "pipes"), 1);
    CHECK(config_set_find(&set, "local") != NULL);
    config_set_deinit(&set);
}

/* Cursor's and VS Code's other predefined variables. */
static void test_predefined_variables(void)
{
    _cleanup_json_ yajl_val in = json_string_new("${workspaceFolder}${/}.cache${pathSeparator}"
                                                 "${workspaceFolderBasename}");
    _cleanup_json_ yajl_val out = config_expand(in, "/srv/code/shop");
    _cleanup_json_ yajl_val none = config_expand(in, NULL);

    CHECK_STREQ(out->u.string, "/srv/code/shop/.cache/shop");
    /* Without a project there is no folder: left as written, never an empty path. */
    CHECK_STREQ(none->u.string, "${workspaceFolder}/.cache/${workspaceFolderBasename}");
}

/*
 * Zed's "timeout" is the tool-call timeout in seconds: mcpd's callTimeout, not its start-up
 * limit in ms. Settings are JSONC; "remote" and "oauth" {client_id} are Zed's current fields.
 */
static void test_zed_timeout_seconds(void)
{
    ConfigSet set;
    Settings s;
    const ServerConfig *c;

    settings_init(&s);
    write_home(".config/zed/settings.json",
               "// Zed settings\n"
               "{\n"
               "  \"theme\": \"One Dark\",\n"
               "  \"context_servers\": {\n"
               "    \"postgres\": {\n"
               "      \"source\": \"custom\",\n"
               "      \"enabled\": true,\n"
               "      \"remote\": false,\n"
               "      \"command\": \"npx\",\n"
               "      \"args\": [\"-y\", \"@modelcontextprotocol/server-postgres\"],\n"
               "      \"env\": {},\n"
               "      \"timeout\": 120, // seconds\n"
               "    },\n"
               "    \"linear\": {\n"
               "      \"url\": \"https://mcp.linear.app/mcp\",\n"
               "      \"headers\": {},\n"
               "      \"timeout\": 30,\n"
               "      \"oauth\": {\"client_id\": \"zed-client\"},\n"
               "    },\n"
               "    \"bad\": {\"command\": \"x\", \"timeout\": \"soon\"},\n"
               "  },\n"
               "}\n");
    discover_user(&set);
    c = config_set_find(&set, "postgres");
    CHECK(c && c->call_timeout_ms == 120000 && c->timeout_ms == s.timeout_ms);
    CHECK_INTEQ(count_problems(&set, "postgres"), 0);
    c = config_set_find(&set, "linear");
    CHECK(c && c->call_timeout_ms == 30000 && c->timeout_ms == s.timeout_ms);
    CHECK(c && streq(json_get_string(c->oauth, "client_id"), "zed-client"));
    CHECK_INTEQ(count_problems(&set, "linear"), 0);
    CHECK(config_set_find(&set, "bad") == NULL);
    expect_problem(&set, "bad", "\"timeout\" must be a whole number of seconds", false);
    config_set_deinit(&set);
}

/*
 * OpenCode merges ~/.config/opencode/config.json (where `opencode mcp add` writes), then
 * opencode.json, then opencode.jsonc: all three are read, the later winning a name.
 */
static void test_opencode_global_files(void)
{
    ConfigSet set;
    const ServerConfig *c;

    write_home(".config/opencode/config.json",
               "{\"$schema\": \"https://opencode.ai/config.json\", \"mcp\": {\n"
               "  \"added\": {\"type\": \"local\", \"command\": [\"npx\", \"-y\", \"added\"]},\n"
               "  \"both\": {\"type\": \"local\", \"command\": [\"from-config-json\"]}\n"
               "}}\n");
    write_home(".config/opencode/opencode.json",
               "{\"mcp\": {\n"
               "  \"both\": {\"type\": \"local\", \"command\": [\"from-opencode-json\"]},\n"
               "  \"sentry\": {\"type\": \"remote\", \"url\": \"https://mcp.sentry.dev/mcp\",\n"
               "             \"oauth\": {\"clientId\": \"oc-client\", \"scope\": \"read\"}},\n"
               "  \"newer\": {\"type\": \"local\", \"command\": [\"srv\"], \"cwd\": \"/srv\",\n"
               "            \"disabled\": true,\n"
               "            \"timeout\": {\"startup\": 15000, \"request\": 90000}}\n"
               "}}\n");
    discover_user(&set);
    CHECK(config_set_find(&set, "added") != NULL);
    c = config_set_find(&set, "both");
    CHECK(c && streq(c->command, "from-opencode-json"));
    c = config_set_find(&set, "sentry");
    CHECK(c && c->type == TRANSPORT_AUTO &&
          streq(json_get_string(c->oauth, "clientId"), "oc-client"));
    /* The newer fields: disabled, cwd, and timeout split into start-up and request. */
    c = config_set_find(&set, "newer");
    CHECK(c && !c->enabled && streq(c->cwd, "/srv") && c->timeout_ms == 15000 &&
          c->call_timeout_ms == 90000);
    CHECK_INTEQ(count_problems(&set, "newer"), 0);
    config_set_deinit(&set);
}

/*
 * Goose's env_keys come from its keyring: one neither mcpd's environment nor goose's Secret
 * Service item (none in this test's session) has is reported.
 */
static void test_goose_env_keys(void)
{
    ConfigSet set;
    const ServerConfig *c;

    setenv("MCPD_TEST_SET_TOKEN", "t", 1);
    write_home(".config/goose/config.yaml",
               "GOOSE_PROVIDER: anthropic\n"
               "extensions:\n"
               "  github:\n"
               "    enabled: true\n"
               "    type: stdio\n"
               "    name: github\n"
               "    cmd: npx\n"
               "    args: [-y, '@modelcontextprotocol/server-github']\n"
               "    envs: {}\n"
               "    env_keys:\n"
               "      - MCPD_TEST_UNSET_TOKEN\n"
               "      - MCPD_TEST_SET_TOKEN\n"
               "    timeout: 300\n"
               "    bundled: null\n");
    discover_user(&set);
    c = config_set_find(&set, "github");
    CHECK(c && c->call_timeout_ms == 300000);
    expect_problem(&set, "github",
                   "\"env_keys\": MCPD_TEST_UNSET_TOKEN is neither in mcpd's environment nor in "
                   "goose's Secret Service item",
                   true);
    CHECK_INTEQ(count_problems(&set, "github"), 1);
    unsetenv("MCPD_TEST_SET_TOKEN");
    config_set_deinit(&set);
}

/* Placeholders only the agent can fill are reported with the field, not passed on silently. */
static void test_unfilled_placeholders(void)
{
    ConfigSet set;

    write_home(".codeium/windsurf/mcp_config.json",
               "{\"mcpServers\": {\"ws\": {\"command\": \"npx\", \"args\": [\"srv\"],\n"
               "  \"env\": {\"API_KEY\": \"${file:/home/me/.keys/api}\",\n"
               "           \"HOME_DIR\": \"${env:HOME}\", \"BARE\": \"${HOME}\"}}}}\n");
    write_home(".gemini/settings.json",
               "{\"mcpServers\": {\"gh\": {\"command\": \"npx\",\n"
               "  \"args\": [\"--token=${MCPD_TEST_UNSET_TOKEN}\"],\n"
               "  \"env\": {\"LEVEL\": \"${MCPD_TEST_UNSET_TOKEN:-info}\"}}}}\n");
    write_home(".continue/config.yaml", "name: Local Assistant\n"
                                        "version: 1.0.0\n"
                                        "schema: v1\n"
                                        "mcpServers:\n"
                                        "  - uses: anthropic/memory-mcp\n"
                                        "  - name: brave\n"
                                        "    command: npx\n"
                                        "    args: [\"-y\", \"brave-search\"]\n"
                                        "    env:\n"
                                        "      BRAVE_API_KEY: ${{ secrets.BRAVE_API_KEY }}\n");
    discover_user(&set);
    CHECK(config_set_find(&set, "ws") != NULL);
    expect_problem(&set, "ws", "\"env.API_KEY\" uses ${file:...}", true);
    /* ${env:HOME} is filled; a bare ${HOME} is not a form Windsurf fills: kept, and said. */
    expect_problem(&set, "ws", "\"env.BARE\" holds ${HOME}, which Windsurf passes", true);
    CHECK_INTEQ(count_problems(&set, "ws"), 2);
    const ServerConfig *ws = config_set_find(&set, "ws");
    CHECK(ws && streq(json_get_string(ws->env, "BARE"), "${HOME}"));
    CHECK(ws && getenv("HOME") && streq(json_get_string(ws->env, "HOME_DIR"), getenv("HOME")));
    /* An unset variable without a default is named; one with a default is not. */
    expect_problem(&set, "gh", "\"args[0]\" uses ${MCPD_TEST_UNSET_TOKEN}, which is not set", true);
    CHECK_INTEQ(count_problems(&set, "gh"), 1);
    CHECK(config_set_find(&set, "brave") != NULL);
    expect_problem(&set, "brave", "\"env.BRAVE_API_KEY\" uses ${{...}", true);
    /* A Hub block is named as one, not as an entry missing its name. */
    expect_problem(&set, "anthropic/memory-mcp", "is the Continue Hub block", false);
    config_set_deinit(&set);
}

/*
 * The forms of the agents whose own documentation or code says which they fill: Cursor
 * ${env:NAME} and its predefined variables, no bare ${NAME}; Gemini CLI ${NAME} and $NAME, no
 * ${env:NAME}; Cline ${env:NAME} only; OpenCode its {env:NAME} only.
 */
static void test_agent_expansion_forms_more(void)
{
    ConfigSet set;
    ServerConfig *c;

    setenv("MCPD_TEST_TOKEN", "tok", 1);
    write_home(".cursor/mcp.json", "{\"mcpServers\": {\"cur\": {\"command\": \"npx\",\n"
                                   "  \"args\": [\"${userHome}/srv\", \"${MCPD_TEST_TOKEN}\"],\n"
                                   "  \"env\": {\"TOKEN\": \"${env:MCPD_TEST_TOKEN}\"}}}}\n");
    write_home(".gemini/settings.json", "{\"mcpServers\": {\"gem\": {\"command\": \"npx\",\n"
                                        "  \"args\": [\"$MCPD_TEST_TOKEN\", "
                                        "\"${MCPD_TEST_TOKEN}\", \"${env:MCPD_TEST_TOKEN}\"]}}}\n");
    write_home(
        ".cline/data/settings/cline_mcp_settings.json",
        "{\"mcpServers\": {\"cli\": {\"command\": \"npx\",\n"
        "  \"args\": [\"${env:MCPD_TEST_TOKEN}\", \"${MCPD_TEST_TOKEN}\", \"${userHome}\"]}}}\n");
    write_home(".config/opencode/opencode.json",
               "{\"mcp\": {\"oc\": {\"type\": \"local\",\n"
               "  \"command\": [\"npx\", \"{env:MCPD_TEST_TOKEN}\", \"${MCPD_TEST_TOKEN}\"]}}}\n");
    discover_user(&set);

    c = config_set_find(&set, "cur");
    _cleanup_free_ char *srv = paths_join(home, "srv");
    CHECK(c && c->n_args == 2 && streq(c->args[0], srv) && streq(c->args[1], "${MCPD_TEST_TOKEN}"));
    CHECK(c && streq(json_get_string(c->env, "TOKEN"), "tok"));
    expect_problem(&set, "cur", "\"args[1]\" holds ${MCPD_TEST_TOKEN}, which Cursor passes", true);

    c = config_set_find(&set, "gem");
    CHECK(c && c->n_args == 3 && streq(c->args[0], "tok") && streq(c->args[1], "tok") &&
          streq(c->args[2], "${env:MCPD_TEST_TOKEN}"));

    c = config_set_find(&set, "cli");
    CHECK(c && c->n_args == 3 && streq(c->args[0], "tok") &&
          streq(c->args[1], "${MCPD_TEST_TOKEN}") && streq(c->args[2], "${userHome}"));
    expect_problem(&set, "cli", "\"args[1]\" holds ${MCPD_TEST_TOKEN}, which Cline passes", true);

    c = config_set_find(&set, "oc");
    CHECK(c && c->n_args == 2 && streq(c->args[0], "tok") &&
          streq(c->args[1], "${MCPD_TEST_TOKEN}"));
    config_set_deinit(&set);

    /*
     * Claude Code ${NAME} and ${NAME:-d} only; and ${mcpd:env:NAME} (mcpd's own reference) is
     * text in any agent's file but mcpd's own and Codex's mapped ones (issue 39.4): Zed, Claude.
     */
    write_home(
        ".claude.json",
        "{\"mcpServers\": {\"cl\": {\"command\": \"npx\", \"args\": [\"${MCPD_TEST_TOKEN}\","
        " \"${env:MCPD_TEST_TOKEN}\", \"${userHome}\", \"${mcpd:env:MCPD_TEST_TOKEN}\"]}}}\n");
    write_home(".config/zed/settings.json",
               "{\"context_servers\": {\"zd\": {\"url\": \"http://h/mcp\", \"headers\": "
               "{\"X\": \"${mcpd:env:MCPD_TEST_TOKEN}\"}}}}\n");
    discover_user(&set);
    c = config_set_find(&set, "cl");
    CHECK(c && c->n_args == 4 && streq(c->args[0], "tok") &&
          streq(c->args[1], "${env:MCPD_TEST_TOKEN}") && streq(c->args[2], "${userHome}") &&
          streq(c->args[3], "${mcpd:env:MCPD_TEST_TOKEN}"));
    c = config_set_find(&set, "zd");
    CHECK(c && streq(json_get_string(c->headers, "X"), "${mcpd:env:MCPD_TEST_TOKEN}"));
    config_set_deinit(&set);
    _cleanup_free_ char *cj = paths_join(home, ".claude.json");
    _cleanup_free_ char *zj = paths_join(home, ".config/zed/settings.json");
    unlink(cj);
    unlink(zj);
    unsetenv("MCPD_TEST_TOKEN");
}

/*
 * Each agent fills only its own ${...} forms, and passes the rest to the server as written:
 * Codex and Zed expand nothing (a variable reaches a Codex server through env_vars), VS Code
 * fills ${env:NAME} and its predefined variables but not a bare ${NAME}; each kept one is a
 * warning naming the server, the field and the agent.
 */
static void test_agent_expansion_forms(void)
{
    ConfigSet set;
    ServerConfig *c;

    setenv("MCPD_TEST_TOKEN", "tok", 1);
    setenv("MCPD_TEST_FWD", "fwd", 1);
    write_home(".codex/config.toml", "model = \"gpt-5-codex\"\n"
                                     "\n"
                                     "[mcp_servers.notes]\n"
                                     "command = \"uvx\"\n"
                                     "args = [\"notes-mcp\", \"--root\", \"${HOME}/notes\"]\n"
                                     "env_vars = [\"MCPD_TEST_FWD\"]\n"
                                     "\n"
                                     "[mcp_servers.notes.env]\n"
                                     "API_KEY = \"${MCPD_TEST_TOKEN}\"\n"
                                     "EMPTY = \"\"\n");
    write_home(".config/Code/User/mcp.json",
               "{\n"
               "  \"inputs\": [],\n"
               "  \"servers\": {\n"
               "    \"fetch\": {\n"
               "      \"type\": \"stdio\",\n"
               "      \"command\": \"uvx\",\n"
               "      \"args\": [\"mcp-server-fetch\", \"--cache\", \"${userHome}/.cache\"],\n"
               "      \"env\": {\"TOKEN\": \"${env:MCPD_TEST_TOKEN}\", \"RAW\": "
               "\"${MCPD_TEST_TOKEN}\"}\n"
               "    }\n"
               "  }\n"
               "}\n");
    write_home(".config/zed/settings.json",
               "// Zed settings\n"
               "{\n"
               "  \"theme\": \"One Dark\",\n"
               "  \"context_servers\": {\n"
               "    \"pg\": {\n"
               "      \"command\": \"npx\",\n"
               "      \"args\": [\"-y\", \"pg-mcp\", \"--password=${MCPD_TEST_TOKEN}\"],\n"
               "      \"env\": {\"PGHOST\": \"${env:MCPD_TEST_TOKEN}\"}\n"
               "    }\n"
               "  }\n"
               "}\n");
    discover_user(&set);

    c = config_set_find(&set, "notes");
    CHECK(c && c->n_args == 3 && streq(c->args[2], "${HOME}/notes"));
    CHECK(c && streq(json_get_string(c->env, "API_KEY"), "${MCPD_TEST_TOKEN}"));
    CHECK(c && streq(json_get_string(c->env, "EMPTY"), ""));
    CHECK(c && streq(json_get_string(c->env, "MCPD_TEST_FWD"), "fwd")); /* env_vars */
    expect_problem(&set, "notes",
                   "\"env.API_KEY\" holds ${MCPD_TEST_TOKEN}, which OpenAI Codex passes to the "
                   "server as written",
                   true);
    expect_problem(&set, "notes", "\"args[2]\" holds ${HOME}", true);

    c = config_set_find(&set, "fetch");
    _cleanup_free_ char *cache = paths_join(home, ".cache");
    CHECK(c && c->n_args == 3 && streq(c->args[2], cache));
    CHECK(c && streq(json_get_string(c->env, "TOKEN"), "tok"));
    CHECK(c && streq(json_get_string(c->env, "RAW"), "${MCPD_TEST_TOKEN}"));
    expect_problem(&set, "fetch", "\"env.RAW\" holds ${MCPD_TEST_TOKEN}, which VS Code passes",
                   true);
    CHECK_INTEQ(count_problems(&set, "fetch"), 1);

    c = config_set_find(&set, "pg");
    CHECK(c && c->n_args == 3 && streq(c->args[2], "--password=${MCPD_TEST_TOKEN}"));
    CHECK(c && streq(json_get_string(c->env, "PGHOST"), "${env:MCPD_TEST_TOKEN}"));
    expect_problem(&set, "pg", "\"env.PGHOST\" holds ${MCPD_TEST_TOKEN}, which Zed passes", true);
    config_set_deinit(&set);
    unsetenv("MCPD_TEST_TOKEN");
    unsetenv("MCPD_TEST_FWD");
}

/*
 * Windsurf's JetBrains plugin file (~/.codeium/mcp_config.json) is read like the editor's own,
 * which wins a shared name; Roo Code's timeout outside 1 to 3600 s is refused as Roo refuses it,
 * the problem naming the file, the server and the field.
 */
static void test_windsurf_jetbrains_and_roo_timeout(void)
{
    ConfigSet set;
    ServerConfig *c;

    write_home(".codeium/windsurf/mcp_config.json",
               "{\"mcpServers\": {\"shared\": {\"command\": \"editor\"}}}\n");
    write_home(".codeium/mcp_config.json",
               "{\n"
               "  \"mcpServers\": {\n"
               "    \"jb-fetch\": {\"command\": \"uvx\", \"args\": [\"mcp-server-fetch\"]},\n"
               "    \"jb-remote\": {\"serverUrl\": \"https://mcp.example.com/sse\", "
               "\"disabled\": true},\n"
               "    \"shared\": {\"command\": \"plugin\"}\n"
               "  }\n"
               "}\n");
    write_home(
        ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/"
        "mcp_settings.json",
        "{\n"
        "  \"mcpServers\": {\n"
        "    \"ok\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"], \"timeout\": 300,\n"
        "           \"alwaysAllow\": [], \"disabled\": false},\n"
        "    \"zero\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"], \"timeout\": 0},\n"
        "    \"long\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"], \"timeout\": 7200}\n"
        "  }\n"
        "}\n");
    discover_user(&set);

    c = config_set_find(&set, "jb-fetch");
    CHECK(c && streq(c->command, "uvx") && streq(c->source.provider, "windsurf"));
    _cleanup_free_ char *jb = paths_join(home, ".codeium/mcp_config.json");
    CHECK(c && streq(c->source.path, jb));
    c = config_set_find(&set, "jb-remote");
    CHECK(c && streq(c->url, "https://mcp.example.com/sse") && !c->enabled);
    c = config_set_find(&set, "shared");
    CHECK(c && streq(c->command, "editor"));

    c = config_set_find(&set, "ok");
    CHECK(c && c->call_timeout_ms == 300000);
    CHECK(config_set_find(&set, "zero") == NULL && config_set_find(&set, "long") == NULL);
    expect_problem(&set, "zero", "\"timeout\" must be a number of seconds from 1 to 3600: Roo Code",
                   false);
    expect_problem(&set, "long", "\"timeout\" must be a number of seconds from 1 to 3600", false);
    const ConfigProblem *p = find_problem(&set, "long", "\"timeout\"");
    CHECK(p && p->field && streq(p->field, "timeout") && strstr(p->path, "mcp_settings.json"));
    config_set_deinit(&set);
}

/*
 * Gemini CLI's extensions: each installed one's gemini-extension.json adds its servers, with
 * ${extensionPath} filled in, after settings.json's (whose entry of a name wins); one that
 * extension-enablement.json switches off here is skipped; a linked one is read where it lives.
 */
static void test_gemini_extensions(void)
{
    _cleanup_free_ char *linked = paths_join(tmp, "src/my-ext");
    _cleanup_free_ char *cmd = xasprintf("mkdir -p '%s'", linked);
    _cleanup_free_ char *install = xasprintf("{\"source\": \"%s\", \"type\": \"link\"}", linked);
    _cleanup_free_ char *manifest = paths_join(linked, "gemini-extension.json");
    _cleanup_free_ char *enablement =
        xasprintf("{\"off-ext\": {\"overrides\": [\"!%s/*\"]}}", home);
    _cleanup_free_ char *want_arg =
        paths_join(home, ".gemini/extensions/nanobanana/mcp-server/index.js");
    ConfigSet set;
    const ServerConfig *c;

    write_home(".gemini/settings.json",
               "{\"mcpServers\": {\"shared\": {\"command\": \"from-settings\"}}}\n");
    write_home(".gemini/extensions/nanobanana/gemini-extension.json",
               "{\n"
               "  \"name\": \"nanobanana\",\n"
               "  \"version\": \"1.0.5\",\n"
               "  \"mcpServers\": {\n"
               "    \"nanobanana\": {\n"
               "      \"command\": \"node\",\n"
               "      \"args\": [\"${extensionPath}${/}mcp-server${/}index.js\"],\n"
               "      \"cwd\": \"${extensionPath}\"\n"
               "    },\n"
               "    \"shared\": {\"command\": \"from-extension\"}\n"
               "  },\n"
               "  \"contextFileName\": \"GEMINI.md\"\n"
               "}\n");
    write_home(".gemini/extensions/off-ext/gemini-extension.json",
               "{\"name\": \"off-ext\", \"version\": \"0.1.0\",\n"
               " \"mcpServers\": {\"off-srv\": {\"command\": \"off\"}}}\n");
    write_home(".gemini/extensions/extension-enablement.json", enablement);
    write_home(".gemini/extensions/my-ext/.gemini-extension-install.json", install);
    if (system(cmd) != 0)
        abort();
    test_write_file(manifest,
                    "{\"name\": \"my-ext\", \"version\": \"0.0.1\",\n"
                    " \"mcpServers\": {\"linked\": {\"httpUrl\": \"http://localhost:9/mcp\"}}}\n");
    discover_user(&set);
    c = config_set_find(&set, "nanobanana");
    CHECK(c && c->n_args == 1 && streq(c->args[0], want_arg));
    CHECK(c && c->cwd && strstr(c->cwd, "/.gemini/extensions/nanobanana"));
    CHECK_INTEQ(count_problems(&set, "nanobanana"), 0);
    c = config_set_find(&set, "shared");
    CHECK(c && streq(c->command, "from-settings"));
    CHECK(config_set_find(&set, "off-srv") == NULL);
    bool skipped = false;
    for (size_t i = 0; i < set.n_skipped; i++)
        skipped |= streq(set.skipped[i].name, "off-srv") &&
                   strstr(set.skipped[i].reason, "\"off-ext\" is disabled here");
    CHECK(skipped);
    c = config_set_find(&set, "linked");
    CHECK(c && c->type == TRANSPORT_HTTP && streq(c->source.path, manifest));
    config_set_deinit(&set);
}

/* Claude Code's headersHelper is kept, to be run as Claude Code runs it. */
static void test_claude_headers_helper(void)
{
    ConfigSet set;

    write_home(".claude.json",
               "{\"numStartups\": 12, \"mcpServers\": {\"internal\": {\"type\": \"http\",\n"
               " \"url\": \"https://mcp.internal.example/mcp\",\n"
               " \"headersHelper\": \"/opt/bin/get-mcp-headers.sh\"}}}\n");
    discover_user(&set);
    /* Claude Code runs it at each connect, and so does mcpd (config/resolve.c): kept, no warning.
     */
    const ServerConfig *c = config_set_find(&set, "internal");
    CHECK(c && streq(c->headers_helper, "/opt/bin/get-mcp-headers.sh"));
    CHECK_INTEQ(count_problems(&set, "internal"), 0);
    config_set_deinit(&set);
}

/* A settings.json from before Gemini CLI's nested format: its server lists still select. */
static void test_gemini_v1_lists(void)
{
    ConfigSet set;

    write_home(
        ".gemini/settings.json",
        "{\"theme\": \"Default\", \"excludeMCPServers\": [\"noisy\"],\n"
        " \"mcpServers\": {\"noisy\": {\"command\": \"n\"}, \"quiet\": {\"command\": \"q\"}}}\n");
    discover_user(&set);
    CHECK(config_set_find(&set, "noisy") == NULL);
    CHECK(config_set_find(&set, "quiet") != NULL);
    bool skipped = false;
    for (size_t i = 0; i < set.n_skipped; i++)
        skipped |= streq(set.skipped[i].name, "noisy") &&
                   strstr(set.skipped[i].reason, "excludeMCPServers");
    CHECK(skipped);
    config_set_deinit(&set);
}

/*
 * Claude Code plugins: an enabled user-scope plugin's .mcp.json (bare servers) and plugin.json
 * servers are read with ${CLAUDE_PLUGIN_ROOT} filled in; a disabled one's and one not in
 * enabledPlugins are skipped with the reason; a project-scope install is not read; the user's
 * own server of the same name wins over the plugin's.
 */
static void test_claude_plugins(void)
{
    _cleanup_free_ char *c7 = paths_join(home, ".claude/plugins/cache/claude-plugins-official/"
                                               "context7/1.0.0");
    _cleanup_free_ char *db = paths_join(home, ".claude/plugins/cache/acme/db-tools/2.1.0");
    _cleanup_free_ char *off = paths_join(home, ".claude/plugins/cache/acme/off-plugin/0.1.0");
    _cleanup_free_ char *proj = paths_join(home, ".claude/plugins/cache/acme/proj-only/1.0.0");
    _cleanup_free_ char *want_cmd = paths_join(db, "servers/db-server");
    _cleanup_free_ char *want_mcp = paths_join(c7, ".mcp.json");
    _cleanup_free_ char *installed = xasprintf(
        "{\n"
        "  \"version\": 2,\n"
        "  \"plugins\": {\n"
        "    \"context7@claude-plugins-official\": [{\"scope\": \"user\", \"installPath\": "
        "\"%s\",\n"
        "      \"version\": \"1.0.0\", \"installedAt\": \"2026-10-01T09:12:44.120Z\",\n"
        "      \"lastUpdated\": \"2026-10-01T09:12:44.120Z\", \"gitCommitSha\": \"9f2c1e0\"}],\n"
        "    \"db-tools@acme\": [{\"scope\": \"user\", \"installPath\": \"%s\", \"version\": "
        "\"2.1.0\"}],\n"
        "    \"off-plugin@acme\": [{\"scope\": \"user\", \"installPath\": \"%s\"}],\n"
        "    \"proj-only@acme\": [{\"scope\": \"project\", \"projectPath\": \"/srv/app\",\n"
        "      \"installPath\": \"%s\"}]\n"
        "  }\n"
        "}\n",
        c7, db, off, proj);
    ConfigSet set;
    const ServerConfig *c;

    write_home(".claude/plugins/installed_plugins.json", installed);
    write_home(".claude/settings.json",
               "{\"model\": \"opus\", \"enabledPlugins\": {\n"
               "  \"context7@claude-plugins-official\": true, \"db-tools@acme\": true,\n"
               "  \"off-plugin@acme\": false, \"proj-only@acme\": true}}\n");
    write_home(".claude/plugins/cache/claude-plugins-official/context7/1.0.0/.mcp.json",
               "{\"context7\": {\"command\": \"npx\", \"args\": [\"-y\", "
               "\"@upstash/context7-mcp\"]}}\n");
    write_home(".claude/plugins/cache/acme/db-tools/2.1.0/.claude-plugin/plugin.json",
               "{\"name\": \"db-tools\", \"version\": \"2.1.0\",\n"
               " \"mcpServers\": {\"plugin-db\": {\n"
               "   \"command\": \"${CLAUDE_PLUGIN_ROOT}/servers/db-server\",\n"
               "   \"args\": [\"--config\", \"${CLAUDE_PLUGIN_ROOT}/config.json\"]}}}\n");
    write_home(".claude/plugins/cache/acme/db-tools/2.1.0/.mcp.json",
               "{\"mcpServers\": {\"db-remote\": {\"type\": \"http\", "
               "\"url\": \"https://db.example/mcp\"}}}\n");
    write_home(".claude/plugins/cache/acme/off-plugin/0.1.0/.mcp.json",
               "{\"off-srv\": {\"command\": \"off\"}}\n");
    write_home(".claude/plugins/cache/acme/proj-only/1.0.0/.mcp.json",
               "{\"proj-srv\": {\"command\": \"p\"}}\n");
    write_home(".claude.json", "{\"mcpServers\": {\"db-remote\": {\"command\": \"mine\"}}}\n");
    discover_user(&set);
    c = config_set_find(&set, "context7");
    CHECK(c && streq(c->command, "npx") && streq(c->source.path, want_mcp));
    CHECK_INTEQ(count_problems(&set, "context7"), 0);
    c = config_set_find(&set, "plugin-db");
    CHECK(c && streq(c->command, want_cmd) && c->n_args == 2 &&
          strstr(c->args[1], "/db-tools/2.1.0/config.json"));
    c = config_set_find(&set, "db-remote");
    CHECK(c && c->command && streq(c->command, "mine"));
    CHECK(config_set_find(&set, "off-srv") == NULL);
    CHECK(config_set_find(&set, "proj-srv") == NULL);
    bool skipped = false;
    for (size_t i = 0; i < set.n_skipped; i++)
        skipped |= streq(set.skipped[i].name, "off-srv") &&
                   strstr(set.skipped[i].reason, "\"off-plugin@acme\" is disabled");
    CHECK(skipped);
    config_set_deinit(&set);

    /* Not in enabledPlugins: not loaded, as in Claude Code; a path out of the plugin is refused. */
    write_home(".claude/settings.json", "{\"enabledPlugins\": {\"db-tools@acme\": true}}\n");
    write_home(".claude/plugins/cache/acme/db-tools/2.1.0/.claude-plugin/plugin.json",
               "{\"name\": \"db-tools\", \"mcpServers\": [\"./.mcp.json\", \"../../x.json\"]}\n");
    discover_user(&set);
    CHECK(config_set_find(&set, "context7") == NULL);
    CHECK(config_set_find(&set, "plugin-db") == NULL);
    c = config_set_find(&set, "db-remote");
    CHECK(c && c->command && streq(c->command, "mine"));
    bool outside = false;
    for (size_t i = 0; i < set.n_problems; i++)
        outside |= strstr(set.problems[i].message, "\"../../x.json\", outside the plugin") != NULL;
    CHECK(outside);
    config_set_deinit(&set);
}

/* The skip of server whose reason holds want, or NULL. */
static const ConfigSkip *find_skip(const ConfigSet *set, const char *server, const char *want)
{
    for (size_t i = 0; i < set->n_skipped; i++)
        if (streq(set->skipped[i].name, server) && strstr(set->skipped[i].reason, want))
            return &set->skipped[i];
    return NULL;
}

/* A plugin install directory under the plugin cache, with its .mcp.json (newly allocated). */
static char *plugin_dir(const char *rel, const char *mcp_json)
{
    _cleanup_free_ char *file = xasprintf(".claude/plugins/cache/%s/.mcp.json", rel);
    _cleanup_free_ char *cache = paths_join(home, ".claude/plugins/cache");

    write_home(file, mcp_json);
    return paths_join(cache, rel);
}

/* A project with its .claude/settings.json and settings.local.json; its realpath (to free). */
static char *plugin_project(const char *settings, const char *local)
{
    _cleanup_free_ char *dir = paths_join(tmp, "proj");
    _cleanup_free_ char *s = paths_join(dir, ".claude/settings.json");
    _cleanup_free_ char *l = paths_join(dir, ".claude/settings.local.json");
    _cleanup_free_ char *cmd = xasprintf("mkdir -p '%s/.claude'", dir);

    if (system(cmd) != 0)
        abort();
    test_write_file(s, settings);
    test_write_file(l, local);
    return realpath(dir, NULL);
}

/*
 * Claude Code plugins in a project: a project-scope install serves its own project only, and
 * like a local-scope one (enabled in settings.local.json) it is held back by the trust gate
 * until approved, since only the project's files turn it on; settings.local.json switches a
 * user plugin off for the project; a user plugin the project's settings.json also names stays
 * the user's (no gate); a plugin with a user and a project install uses the project's there.
 */
static void test_claude_plugins_project_scope(void)
{
    _cleanup_free_ char *state = paths_join(tmp, "state");
    _cleanup_free_ char *team =
        plugin_dir("acme/team/1.0.0", "{\"team-srv\": {\"command\": \"team-server\"}}\n");
    _cleanup_free_ char *mine =
        plugin_dir("acme/mine/0.3.0", "{\"mine-srv\": {\"command\": \"mine-server\"}}\n");
    _cleanup_free_ char *two_user =
        plugin_dir("acme/two/1.0.0", "{\"two-srv\": {\"command\": \"two-user\"}}\n");
    _cleanup_free_ char *two_proj =
        plugin_dir("acme/two/2.0.0", "{\"two-srv\": {\"command\": \"two-project\"}}\n");
    _cleanup_free_ char *quiet =
        plugin_dir("acme/quiet/1.0.0", "{\"quiet-srv\": {\"command\": \"quiet-server\"}}\n");
    _cleanup_free_ char *other =
        plugin_dir("acme/other/1.0.0", "{\"other-srv\": {\"command\": \"other-server\"}}\n");
    _cleanup_free_ char *root =
        plugin_project("{\"enabledPlugins\": {\"team@acme\": true, \"mine@acme\": true}}\n",
                       "{\"enabledPlugins\": {\"quiet@acme\": false, \"solo@acme\": true}}\n");
    _cleanup_free_ char *solo =
        plugin_dir("acme/solo/1.0.0", "{\"solo-srv\": {\"command\": \"solo-server\"}}\n");
    _cleanup_free_ char *installed = xasprintf(
        "{\"version\": 2, \"plugins\": {\n"
        "  \"team@acme\": [{\"scope\": \"project\", \"projectPath\": \"%s\", \"installPath\": "
        "\"%s\"}],\n"
        "  \"solo@acme\": [{\"scope\": \"local\", \"projectPath\": \"%s\", \"installPath\": "
        "\"%s\"}],\n"
        "  \"mine@acme\": [{\"scope\": \"user\", \"installPath\": \"%s\"}],\n"
        "  \"two@acme\": [{\"scope\": \"user\", \"installPath\": \"%s\"},\n"
        "                {\"scope\": \"project\", \"projectPath\": \"%s\", \"installPath\": "
        "\"%s\"}],\n"
        "  \"quiet@acme\": [{\"scope\": \"user\", \"installPath\": \"%s\"}],\n"
        "  \"other@acme\": [{\"scope\": \"project\", \"projectPath\": \"/srv/elsewhere\", "
        "\"installPath\": \"%s\"}]\n"
        "}}\n",
        root, team, root, solo, mine, two_user, root, two_proj, quiet, other);
    _cleanup_free_ char *proj_settings = paths_join(root, ".claude/settings.json");
    _cleanup_free_ char *local_settings = paths_join(root, ".claude/settings.local.json");
    _cleanup_free_ char *two_proj_mcp = paths_join(two_proj, ".mcp.json");
    DiscoverOptions opt = {NULL, root};
    ConfigSet set;
    Settings s;
    const ServerConfig *c;

    setenv("XDG_STATE_HOME", state, 1);
    write_home(".claude/plugins/installed_plugins.json", installed);
    write_home(".claude/settings.json",
               "{\"enabledPlugins\": {\"mine@acme\": true, \"two@acme\": true, "
               "\"quiet@acme\": true, \"other@acme\": true}}\n");

    /* The user workspace: user installs only, as the user's settings say. */
    discover_user(&set);
    CHECK(config_set_find(&set, "mine-srv") && config_set_find(&set, "quiet-srv"));
    c = config_set_find(&set, "two-srv");
    CHECK(c && streq(c->command, "two-user") && c->source.level == CONFIG_LEVEL_USER);
    CHECK(!config_set_find(&set, "team-srv") && !find_skip(&set, "team-srv", ""));
    CHECK(!config_set_find(&set, "solo-srv") && !config_set_find(&set, "other-srv"));
    config_set_deinit(&set);

    /* The project: its own installs held back by the gate, named against the project file. */
    settings_init(&s);
    Trust trust;
    _cleanup_free_ char *why = NULL;
    trust_init(&trust, root, &why);
    CHECK(why == NULL);
    CHECK_INTEQ(config_discover_trust(&set, &opt, &s, &trust), 0);
    CHECK(!config_set_find(&set, "team-srv") && !config_set_find(&set, "solo-srv"));
    const ConfigSkip *k = find_skip(&set, "team-srv", "untrusted");
    CHECK(k && streq(k->source.path, proj_settings) && strstr(k->reason, "team-server"));
    k = find_skip(&set, "solo-srv", "untrusted");
    CHECK(k && streq(k->source.path, local_settings));
    /* The user's own plugin stays the user's; the project's install of "two" wins here. */
    c = config_set_find(&set, "mine-srv");
    CHECK(c && c->source.level == CONFIG_LEVEL_USER);
    c = config_set_find(&set, "two-srv");
    CHECK(c && streq(c->command, "two-project") && streq(c->source.path, two_proj_mcp) &&
          c->source.level == CONFIG_LEVEL_PROJECT);
    CHECK(!config_set_find(&set, "quiet-srv"));
    k = find_skip(&set, "quiet-srv", "\"quiet@acme\" is disabled");
    CHECK(k && strstr(k->reason, local_settings));
    CHECK(!config_set_find(&set, "other-srv") && !find_skip(&set, "other-srv", ""));
    config_set_deinit(&set);

    /* Approved: both run, until the project's plugin changes what it would run. */
    size_t n = 0;
    CHECK_INTEQ(trust_approve(&trust, NULL, &n, &why), 0);
    CHECK_INTEQ(n, 2);
    trust_deinit(&trust);
    CHECK_INTEQ(config_discover(&set, &opt, &s), 0);
    c = config_set_find(&set, "team-srv");
    CHECK(c && streq(c->command, "team-server") && c->source.level == CONFIG_LEVEL_PROJECT);
    CHECK(config_set_find(&set, "solo-srv") != NULL);
    config_set_deinit(&set);
    write_home(".claude/plugins/cache/acme/team/1.0.0/.mcp.json",
               "{\"team-srv\": {\"command\": \"team-server\", \"args\": [\"--more\"]}}\n");
    CHECK_INTEQ(config_discover(&set, &opt, &s), 0);
    CHECK(!config_set_find(&set, "team-srv") && find_skip(&set, "team-srv", "untrusted"));
    CHECK(config_set_find(&set, "solo-srv") != NULL);
    config_set_deinit(&set);
}

/*
 * ${CLAUDE_PLUGIN_DATA}: <claude dir>/plugins/data/<id with every character but [A-Za-z0-9_-]
 * made '-'>, created for an enabled plugin that names it; a disabled one creates nothing.
 */
static void test_claude_plugin_data(void)
{
    _cleanup_free_ char *notes = plugin_dir(
        "acme/notes/1.2.0", "{\"notes\": {\"command\": \"${CLAUDE_PLUGIN_ROOT}/bin/notes\",\n"
                            "  \"args\": [\"--db\", \"${CLAUDE_PLUGIN_DATA}/notes.db\"],\n"
                            "  \"env\": {\"CACHE\": \"${CLAUDE_PLUGIN_DATA}\"}}}\n");
    _cleanup_free_ char *off =
        plugin_dir("acme/off/1.0.0",
                   "{\"off\": {\"command\": \"x\", \"args\": [\"${CLAUDE_PLUGIN_DATA}\"]}}\n");
    _cleanup_free_ char *installed =
        xasprintf("{\"version\": 2, \"plugins\": {\n"
                  "  \"notes.v2@acme\": [{\"scope\": \"user\", \"installPath\": \"%s\"}],\n"
                  "  \"off@acme\": [{\"scope\": \"user\", \"installPath\": \"%s\"}]}}\n",
                  notes, off);
    _cleanup_free_ char *data = paths_join(home, ".claude/plugins/data/notes-v2-acme");
    _cleanup_free_ char *off_data = paths_join(home, ".claude/plugins/data/off-acme");
    _cleanup_free_ char *want_db = paths_join(data, "notes.db");
    ConfigSet set;
    struct stat st;

    write_home(".claude/plugins/installed_plugins.json", installed);
    write_home(".claude/settings.json", "{\"enabledPlugins\": {\"notes.v2@acme\": true}}\n");
    discover_user(&set);
    const ServerConfig *c = config_set_find(&set, "notes");
    CHECK(c && c->n_args == 2 && streq(c->args[1], want_db));
    CHECK(c && strstr(c->command, "/acme/notes/1.2.0/bin/notes"));
    CHECK_INTEQ(count_problems(&set, "notes"), 0);
    CHECK(stat(data, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
    CHECK(stat(off_data, &st) < 0);
    config_set_deinit(&set);
}

/*
 * Continue's connectionTimeout (milliseconds, connecting and the first listings) becomes mcpd's
 * "timeout", in YAML block files and config.yaml alike and from config.json's "timeout"; one
 * Continue would refuse is a warning naming the server and the field, and the default stays.
 */
static void test_continue_connection_timeout(void)
{
    _cleanup_free_ char *dir = paths_join(tmp, "ws");
    _cleanup_free_ char *block = paths_join(dir, ".continue/mcpServers/db.yaml");
    _cleanup_free_ char *cmd = xasprintf("mkdir -p '%s/.continue/mcpServers'", dir);
    ConfigSet set;
    const ServerConfig *c;

    if (system(cmd) != 0)
        abort();
    _cleanup_free_ char *json_block = paths_join(dir, ".continue/mcpServers/copied.json");
    test_write_file(json_block, "{\"mcpServers\": {\"copied\": {\"command\": \"copied\", "
                                "\"connectionTimeout\": 9000}}}\n");
    test_write_file(block, "name: DB\nversion: 0.0.1\nschema: v1\nmcpServers:\n"
                           "  - name: sqlite\n    command: uvx\n    args: [mcp-server-sqlite]\n"
                           "    connectionTimeout: 45000\n");
    write_home(".continue/config.yaml",
               "name: Local\nversion: 1.0.0\nschema: v1\nmcpServers:\n"
               "  - name: slow\n    type: streamable-http\n    url: https://slow.example/mcp\n"
               "    connectionTimeout: 2500.5\n"
               "  - name: never\n    command: never\n    connectionTimeout: 0\n"
               "  - name: words\n    command: words\n    connectionTimeout: soon\n");
    _cleanup_free_ char *root = realpath(dir, NULL);
    DiscoverOptions opt = {NULL, root};
    Settings s;

    settings_init(&s);
    /* The block file is a project file: its entry is approved through the store first. */
    Trust trust;
    _cleanup_free_ char *why = NULL, *state = paths_join(tmp, "state");
    setenv("XDG_STATE_HOME", state, 1);
    trust_init(&trust, root, &why);
    CHECK_INTEQ(config_discover_trust(&set, &opt, &s, &trust), 0);
    config_set_deinit(&set);
    size_t n = 0;
    CHECK_INTEQ(trust_approve(&trust, NULL, &n, &why), 0);
    trust_deinit(&trust);
    CHECK_INTEQ(config_discover(&set, &opt, &s), 0);
    c = config_set_find(&set, "sqlite");
    CHECK(c && c->timeout_ms == 45000);
    CHECK_INTEQ(count_problems(&set, "sqlite"), 0);
    c = config_set_find(&set, "slow");
    CHECK(c && c->timeout_ms == 2501 && c->type == TRANSPORT_HTTP);
    c = config_set_find(&set, "never");
    CHECK(c && c->timeout_ms == s.timeout_ms);
    expect_problem(&set, "never", "\"connectionTimeout\" must be above 0", true);
    c = config_set_find(&set, "words");
    CHECK(c && c->timeout_ms == s.timeout_ms);
    expect_problem(&set, "words", "\"connectionTimeout\" must be a number of milliseconds", true);
    CHECK(!find_problem(&set, "sqlite", "unknown field"));
    /* Continue drops it from a JSON block file (Claude Desktop's shape): so does mcpd, saying so.
     */
    c = config_set_find(&set, "copied");
    CHECK(c && c->timeout_ms == s.timeout_ms);
    expect_problem(&set, "copied", "\"connectionTimeout\" is ignored", true);
    config_set_deinit(&set);

    /* config.json (no config.yaml): the entry's "timeout" is the same milliseconds. */
    _cleanup_free_ char *yaml = paths_join(home, ".continue/config.yaml");
    unlink(yaml);
    write_home(".continue/config.json",
               "{\"experimental\": {\"modelContextProtocolServers\": [\n"
               "  {\"name\": \"legacy\", \"timeout\": 7000, \"transport\": {\"type\": \"stdio\", "
               "\"command\": \"legacy\"}}]}}\n");
    discover_user(&set);
    c = config_set_find(&set, "legacy");
    CHECK(c && c->timeout_ms == 7000);
    config_set_deinit(&set);
}

/*
 * VS Code: the default profile's mcp.json wins over the servers an older settings.json still
 * holds under "mcp", then each other profile's mcp.json is read (comments allowed).
 */
static void test_vscode_profiles_and_settings(void)
{
    _cleanup_free_ char *prof = paths_join(home, ".config/Code/User/profiles/-5d2c1e9a/mcp.json");
    ConfigSet set;
    const ServerConfig *c;

    write_home(".config/Code/User/mcp.json",
               "{\n  // my servers\n  \"servers\": {\"github\": {\"type\": \"http\",\n"
               "    \"url\": \"https://api.githubcopilot.com/mcp/\"}},\n  \"inputs\": []\n}\n");
    write_home(".config/Code/User/settings.json",
               "{\n  \"editor.fontSize\": 14,\n  \"mcp\": {\n    \"servers\": {\n"
               "      \"github\": {\"command\": \"old-github\"},\n"
               "      \"fetch\": {\"type\": \"stdio\", \"command\": \"uvx\", \"args\": "
               "[\"mcp-server-fetch\"]},\n    },\n  },\n}\n");
    write_home(".config/Code/User/profiles/-5d2c1e9a/mcp.json",
               "{\"servers\": {\"playwright\": {\"command\": \"npx\", \"args\": "
               "[\"@playwright/mcp@latest\"]},\n \"fetch\": {\"command\": \"profile-fetch\"}}}\n");
    discover_user(&set);
    c = config_set_find(&set, "github");
    CHECK(c && c->type == TRANSPORT_HTTP);
    c = config_set_find(&set, "fetch");
    CHECK(c && streq(c->command, "uvx") && strstr(c->source.path, "Code/User/settings.json"));
    c = config_set_find(&set, "playwright");
    CHECK(c && streq(c->source.path, prof));
    config_set_deinit(&set);
}

/*
 * Continue's older config.json (no config.yaml): experimental.modelContextProtocolServers
 * entries with their "transport" are read; one without a name gets one, with a warning; a
 * WebSocket one is reported, not used. Once config.yaml exists, config.json is not read.
 */
static void test_continue_legacy_json(void)
{
    ConfigSet set;
    const ServerConfig *c;

    write_home(".continue/config.json",
               "{\n  \"models\": [{\"title\": \"GPT-4o\", \"provider\": \"openai\", \"model\": "
               "\"gpt-4o\"}],\n"
               "  // MCP\n"
               "  \"experimental\": {\n    \"modelContextProtocolServers\": [\n"
               "      {\"transport\": {\"type\": \"stdio\", \"command\": \"uvx\",\n"
               "        \"args\": [\"mcp-server-sqlite\", \"--db-path\", \"/tmp/test.db\"]}},\n"
               "      {\"name\": \"remote\", \"transport\": {\"type\": \"sse\", \"url\": "
               "\"http://localhost:8931/sse\"}},\n"
               "      {\"name\": \"ws\", \"transport\": {\"type\": \"websocket\", \"url\": "
               "\"ws://localhost:9000\"}},\n"
               "    ],\n  },\n}\n");
    discover_user(&set);
    c = config_set_find(&set, "mcp-1");
    CHECK(c && streq(c->command, "uvx") && c->n_args == 3);
    expect_problem(&set, "mcp-1", "has no \"name\"", true);
    c = config_set_find(&set, "remote");
    CHECK(c && c->type == TRANSPORT_SSE && streq(c->url, "http://localhost:8931/sse"));
    CHECK(config_set_find(&set, "ws") == NULL);
    expect_problem(&set, "ws", "WebSocket transport", false);
    config_set_deinit(&set);

    write_home(".continue/config.yaml", "name: Local\nversion: 1.0.0\nschema: v1\n");
    discover_user(&set);
    CHECK(config_set_find(&set, "remote") == NULL);
    CHECK(config_set_find(&set, "mcp-1") == NULL);
    config_set_deinit(&set);
}

/*
 * OpenCode: "oauth": false is what mcpd does anyway (no warning); the top-level "tools" and
 * "permission" switches become the server's disabledTools where they name it as
 * "<server>_<glob>" or "<server>*"; a glob that cuts across servers is a warning.
 */
static void test_opencode_tool_switches(void)
{
    ConfigSet set;
    const ServerConfig *c;

    write_home(
        ".config/opencode/opencode.json",
        "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n"
        "  \"mcp\": {\n"
        "    \"jira\": {\"type\": \"remote\", \"url\": \"https://jira.example.com/mcp\",\n"
        "      \"oauth\": false, \"headers\": {\"Authorization\": \"Bearer {env:JIRA_KEY}\"}},\n"
        "    \"my-mcp-foo\": {\"type\": \"local\", \"command\": [\"bun\", \"x\", "
        "\"my-mcp-command\"]},\n"
        "    \"github\": {\"type\": \"local\", \"command\": [\"gh-mcp\"]}\n"
        "  },\n"
        "  \"tools\": {\"my-mcp*\": false, \"jira_delete_*\": false, \"*_write\": false,\n"
        "            \"github_search\": true},\n"
        "  \"permission\": {\"github_create_*\": \"deny\", \"edit\": \"ask\"}\n"
        "}\n");
    discover_user(&set);
    c = config_set_find(&set, "jira");
    CHECK(c && !config_tool_allowed(c, "delete_issue") && config_tool_allowed(c, "get_issue"));
    CHECK(!find_problem(&set, "jira", "\"oauth\""));
    c = config_set_find(&set, "my-mcp-foo");
    CHECK(c && !config_tool_allowed(c, "anything"));
    c = config_set_find(&set, "github");
    CHECK(c && !config_tool_allowed(c, "create_issue") && config_tool_allowed(c, "search"));
    expect_problem(&set, "github", "\"*_write\" is not honoured", true);
    config_set_deinit(&set);
}

/* Each test starts from an empty home. */
static void run_fresh(const char *name, void (*fn)(void))
{
    home_setup();
    test_run(name, fn);
    test_rm_rf(tmp);
    free(tmp);
    free(home);
}

#define RUN_FRESH(fn) run_fresh(#fn, fn)

/*
 * Where each agent keeps its user-level servers is one fact, in common/agents.c's table, read by
 * discovery and mcpctl setup alike: a CLAUDE_CONFIG_DIR or CODEX_HOME that is not an absolute
 * path names no directory mcpd could mean (its working directory is not the user's), so both
 * read the file in home, as setup always did.
 */
static void test_user_files_from_the_agents_table(void)
{
    ConfigSet set;

    write_home(".claude.json", "{\"mcpServers\": {\"claude-one\": {\"command\": \"true\"}}}\n");
    write_home(".codex/config.toml", "[mcp_servers.codex-one]\ncommand = \"true\"\n");
    setenv("CLAUDE_CONFIG_DIR", "relative-claude", 1);
    setenv("CODEX_HOME", "relative-codex", 1);
    discover_user(&set);
    CHECK(config_set_find(&set, "claude-one") != NULL);
    CHECK(config_set_find(&set, "codex-one") != NULL);
    config_set_deinit(&set);
    unsetenv("CLAUDE_CONFIG_DIR");
    unsetenv("CODEX_HOME");
}

/* The agents whose user-level files are plain {"mcpServers": {...}} JSON (Claude Code's aside). */
static bool plain_agent(const AgentInfo *a)
{
    return a->format == AGENT_FORMAT_JSON && streq(a->servers_key, "mcpServers") &&
           !streq(a->id, "claude");
}

/* The m-th user-level file the table lists for a: its own, then the others (newly allocated). */
static char *table_file(const AgentInfo *a, size_t m)
{
    return m == 0 ? agents_user_file(a) : agents_more_file(a, m - 1);
}

/*
 * Every user-level file the agents' table lists, its own and the others discovery reads (Cline
 * and Roo Code in each VS Code build's storage, the Antigravity CLI's, Windsurf's plugin), is
 * read and named as the entry's source: the table is the one list, for setup and discovery.
 */
static void test_every_file_of_the_table_is_read(void)
{
    size_t n, k = 0;
    const AgentInfo *all = agents_all(&n);
    ConfigSet set;

    for (size_t i = 0; i < n; i++) {
        char *path;
        for (size_t m = 0; plain_agent(&all[i]) && (path = table_file(&all[i], m)); m++) {
            _cleanup_free_ char *text =
                xasprintf("{\"mcpServers\": {\"f%zu\": {\"command\": \"true\"}}}\n", k++);
            CHECK(strncmp(path, home, strlen(home)) == 0 && path[strlen(home)] == '/');
            if (strncmp(path, home, strlen(home)) == 0 && path[strlen(home)] == '/')
                write_home(path + strlen(home) + 1, text);
            free(path);
        }
    }
    CHECK(k >= 14); /* Cline 4, Roo Code 3, Windsurf 2, and the other plain agents' own */
    discover_user(&set);
    k = 0;
    for (size_t i = 0; i < n; i++) {
        char *path;
        for (size_t m = 0; plain_agent(&all[i]) && (path = table_file(&all[i], m)); m++) {
            _cleanup_free_ char *name = xasprintf("f%zu", k++);
            const ServerConfig *c = config_set_find(&set, name);
            if (!c || !streq(c->source.path, path) || !streq(c->source.provider, all[i].id))
                fprintf(stderr, "%s (%s) not read from %s: %s\n", name, all[i].id, path,
                        c ? c->source.path : "absent");
            CHECK(c && streq(c->source.path, path) && streq(c->source.provider, all[i].id));
            free(path);
        }
    }
    config_set_deinit(&set);
}

int main(void)
{
    log_set_level(LOG_ERR);
    RUN_FRESH(test_codex_fields);
    RUN_FRESH(test_cursor_static_oauth);
    RUN_FRESH(test_predefined_variables);
    RUN_FRESH(test_zed_timeout_seconds);
    RUN_FRESH(test_opencode_global_files);
    RUN_FRESH(test_goose_env_keys);
    RUN_FRESH(test_unfilled_placeholders);
    RUN_FRESH(test_agent_expansion_forms);
    RUN_FRESH(test_agent_expansion_forms_more);
    RUN_FRESH(test_windsurf_jetbrains_and_roo_timeout);
    RUN_FRESH(test_gemini_extensions);
    RUN_FRESH(test_claude_headers_helper);
    RUN_FRESH(test_gemini_v1_lists);
    RUN_FRESH(test_claude_plugins);
    RUN_FRESH(test_claude_plugins_project_scope);
    RUN_FRESH(test_claude_plugin_data);
    RUN_FRESH(test_continue_connection_timeout);
    RUN_FRESH(test_vscode_profiles_and_settings);
    RUN_FRESH(test_continue_legacy_json);
    RUN_FRESH(test_opencode_tool_switches);
    RUN_FRESH(test_user_files_from_the_agents_table);
    RUN_FRESH(test_every_file_of_the_table_is_read);
    return test_main_result();
}
