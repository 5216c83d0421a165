// SPDX-License-Identifier: MIT
// test-sources: every provider against fixture files, precedence and masking tables, expansion,
// Exa.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config-expand.h"
#include "daemon/config/config-read.h"
#include "daemon/config/config.h"
#include "daemon/config/server-entry.h"
#include "daemon/config/source.h"
#include "daemon/config/trust.h"
#include "tests/unit/test.h"

static const char *fixtures; /* argv[1]: tests/fixtures/config */
static char *tmp, *home, *root;

/* Copy the fixture tree and write ~/.claude.json with the project's real path in it. */
static void fixture_setup(void)
{
    _cleanup_free_ char *cmd = NULL, *in = NULL, *out = NULL;
    StrBuf sb = STRBUF_INIT;
    FILE *f;
    char buf[4096];
    size_t n;

    tmp = test_tmpdir();
    cmd = xasprintf("cp -a '%s'/. '%s'/", fixtures, tmp);
    if (system(cmd) != 0)
        abort();
    home = paths_join(tmp, "home");
    root = paths_join(tmp, "project");
    in = paths_join(home, ".claude.json.in");
    out = paths_join(home, ".claude.json");
    f = fopen(in, "r");
    if (!f)
        abort();
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(&sb, buf, n);
    fclose(f);
    /* Replace every @ROOT@. */
    StrBuf o = STRBUF_INIT;
    for (const char *p = strbuf_str(&sb);;) {
        const char *hit = strstr(p, "@ROOT@");
        if (!hit) {
            strbuf_puts(&o, p);
            break;
        }
        strbuf_append(&o, p, (size_t)(hit - p));
        strbuf_puts(&o, root);
        p = hit + 6;
    }
    test_write_file(out, strbuf_str(&o));
    strbuf_deinit(&o);
    strbuf_deinit(&sb);
    setenv("HOME", home, 1);
    _cleanup_free_ char *conf = paths_join(home, ".config");
    setenv("XDG_CONFIG_HOME", conf, 1);
    unsetenv("CODEX_HOME");
    unsetenv("CLAUDE_CONFIG_DIR");
    _cleanup_free_ char *no_system = paths_join(tmp, "no-gemini-system.json");
    setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", no_system, 1); /* not the machine's own */
    setenv("MCPD_CLAUDE_MANAGED_MCP", no_system, 1);
    _cleanup_free_ char *state = paths_join(home, ".local/state");
    setenv("XDG_STATE_HOME", state, 1);
    setenv("MCPD_FIXTURE_TOKEN", "tok-123", 1);
    unsetenv("MCPD_FIXTURE_UNSET");
}

/* The user approves the fixture project once, as mcpctl trust does (the gate is test-trust's). */
static void trust_fixture_project(void)
{
    _cleanup_free_ char *why = NULL;
    Settings s;

    settings_init(&s);
    CHECK_INTEQ(trust_approve_root(root, &s, NULL, NULL, NULL, &why), 0);
}

static void fixture_teardown(void)
{
    test_rm_rf(tmp);
    free(tmp);
    free(home);
    free(root);
}

typedef struct Winner {
    const char *name, *provider, *file; /* file: relative to the fixture copy */
    ConfigLevel level;
    TransportType type;
    bool enabled;
} Winner;

/* With the project root and default settings: who wins each name. */
static const Winner all_winners[] = {
    {"shared", "mcpd", "project/.mcpd/mcp.json", CONFIG_LEVEL_PROJECT, TRANSPORT_STDIO, true},
    {"user-native", "mcpd", "home/.config/mcpd/mcp.json", CONFIG_LEVEL_USER, TRANSPORT_STDIO, true},
    {"disabled-native", "mcpd", "home/.config/mcpd/mcp.json", CONFIG_LEVEL_USER, TRANSPORT_STDIO,
     false},
    {"broken", "claude", "home/.claude.json", CONFIG_LEVEL_USER, TRANSPORT_STDIO, true},
    {"claude-top", "claude", "home/.claude.json", CONFIG_LEVEL_USER, TRANSPORT_STDIO, true},
    {"sentry", "claude", "home/.claude.json", CONFIG_LEVEL_USER, TRANSPORT_HTTP, true},
    {"claude-local", "claude", "home/.claude.json", CONFIG_LEVEL_PROJECT, TRANSPORT_STDIO, true},
    {"claude-user-cwd", "claude", "home/.claude.json", CONFIG_LEVEL_USER, TRANSPORT_STDIO, true},
    {"codex-gh", "codex", "home/.codex/config.toml", CONFIG_LEVEL_USER, TRANSPORT_STDIO, true},
    {"codex-remote", "codex", "home/.codex/config.toml", CONFIG_LEVEL_USER, TRANSPORT_HTTP, true},
    {"codex-off", "codex", "home/.codex/config.toml", CONFIG_LEVEL_USER, TRANSPORT_STDIO, false},
    {"gemini-stdio", "codex", "home/.codex/config.toml", CONFIG_LEVEL_USER, TRANSPORT_STDIO, true},
    {"codex-proj", "codex", "project/.codex/config.toml", CONFIG_LEVEL_PROJECT, TRANSPORT_STDIO,
     true},
    {"gemini-http", "gemini", "home/.gemini/settings.json", CONFIG_LEVEL_USER, TRANSPORT_HTTP,
     true},
    {"gemini-sse", "gemini", "home/.gemini/settings.json", CONFIG_LEVEL_USER, TRANSPORT_SSE, true},
    /* A bare url: Streamable HTTP with an SSE fallback, as Gemini CLI does. */
    {"gemini-auto", "gemini", "home/.gemini/settings.json", CONFIG_LEVEL_USER, TRANSPORT_AUTO,
     true},
    {"gemini-proj", "gemini", "project/.gemini/settings.json", CONFIG_LEVEL_PROJECT,
     TRANSPORT_STDIO, true},
    {"cursor-remote", "cursor", "home/.cursor/mcp.json", CONFIG_LEVEL_USER, TRANSPORT_AUTO, true},
    {"cursor-proj", "cursor", "project/.cursor/mcp.json", CONFIG_LEVEL_PROJECT, TRANSPORT_STDIO,
     true},
    {"windsurf-remote", "windsurf", "home/.codeium/windsurf/mcp_config.json", CONFIG_LEVEL_USER,
     TRANSPORT_AUTO, true},
    {"windsurf-off", "windsurf", "home/.codeium/windsurf/mcp_config.json", CONFIG_LEVEL_USER,
     TRANSPORT_STDIO, false},
    {"windsurf-proj", "windsurf", "project/.windsurf/mcp_config.json", CONFIG_LEVEL_PROJECT,
     TRANSPORT_STDIO, true},
    {"vscode-stdio", "vscode", "project/.vscode/mcp.json", CONFIG_LEVEL_PROJECT, TRANSPORT_STDIO,
     true},
    {"vscode-http", "vscode", "project/.vscode/mcp.json", CONFIG_LEVEL_PROJECT, TRANSPORT_HTTP,
     true},
    {"plain-a", "mcp-json", "project/mcp.json", CONFIG_LEVEL_PROJECT, TRANSPORT_STDIO, true},
    /* <root>/.mcp.json is Claude Code's project scope: provider 2, over the plain mcp.json. */
    {"plain-both", "claude", "project/.mcp.json", CONFIG_LEVEL_PROJECT, TRANSPORT_STDIO, true},
    {"plain-b", "claude", "project/.mcp.json", CONFIG_LEVEL_PROJECT, TRANSPORT_STDIO, true},
};

static bool check_winner(const ConfigSet *set, const Winner *w)
{
    const ServerConfig *c = config_set_find(set, w->name);
    _cleanup_free_ char *path = paths_join(tmp, w->file);
    bool ok = c && streq(c->source.provider, w->provider) && streq(c->source.path, path) &&
              c->source.level == w->level && c->type == w->type && c->enabled == w->enabled;

    if (!ok)
        fprintf(stderr, "  %s: want %s %s %s %s%s; got %s %s %s %s%s\n", w->name, w->provider,
                w->file, config_level_name(w->level), transport_type_name(w->type),
                w->enabled ? "" : " disabled", c ? c->source.provider : "(none)",
                c ? c->source.path : "", c ? config_level_name(c->source.level) : "",
                c ? transport_type_name(c->type) : "", c && !c->enabled ? " disabled" : "");
    return ok;
}

static const ConfigSkip *find_skip(const ConfigSet *set, const char *name, const char *file)
{
    _cleanup_free_ char *path = file ? paths_join(tmp, file) : NULL;

    for (size_t i = 0; i < set->n_skipped; i++)
        if (streq(set->skipped[i].name, name) &&
            (!path || streq(set->skipped[i].source.path, path)))
            return &set->skipped[i];
    return NULL;
}

/* A skipped entry of name from file whose reason contains want. */
static void expect_skip(const ConfigSet *set, const char *name, const char *file, const char *want)
{
    const ConfigSkip *k = find_skip(set, name, file);
    bool ok = k && strstr(k->reason, want);

    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  skip %s from %s: want \"%s\", got \"%s\"\n", name, file ? file : "?",
                want, k ? k->reason : "(not skipped)");
}

static void discover(ConfigSet *set, const char *r, const Settings *s)
{
    DiscoverOptions opt = {NULL, r};

    CHECK_INTEQ(config_discover(set, &opt, s), 0);
}

static void test_every_provider_winner(void)
{
    ConfigSet set;
    Settings s;

    settings_init(&s);
    discover(&set, root, &s);
    for (size_t i = 0; i < N_ELEMENTS(all_winners); i++)
        CHECK(check_winner(&set, &all_winners[i]));
    CHECK_INTEQ(set.n_servers, N_ELEMENTS(all_winners));
    CHECK(config_set_find(&set, "elsewhere") == NULL); /* another project's servers */
    CHECK(config_set_find(&set, "exa") == NULL);

    /* Why each loser lost. */
    expect_skip(&set, "shared", "home/.config/mcpd/mcp.json", "shadowed by ");
    expect_skip(&set, "shared", "home/.claude.json", "(mcpd (project))");
    expect_skip(&set, "shared", "project/.mcp.json", "shadowed by ");
    /* Claude Code reads neither ~/.claude/mcp.json nor <root>/.claude/mcp.json: nor does mcpd. */
    CHECK(config_set_find(&set, "claude-user-file") == NULL);
    CHECK(config_set_find(&set, "claude-proj-file") == NULL);
    CHECK(find_skip(&set, "claude-top", "home/.claude/mcp.json") == NULL);
    expect_skip(&set, "claude-top", "home/.cursor/mcp.json", "shadowed by ");
    expect_skip(&set, "gemini-stdio", "home/.gemini/settings.json", "(OpenAI Codex)");
    expect_skip(&set, "plain-both", "project/mcp.json", "shadowed by ");
    expect_skip(&set, "broken", "home/.config/mcpd/mcp.json",
                "invalid: Server \"broken\": stdio server requires \"command\" field");
    expect_skip(&set, "disabled-native", "home/.gemini/settings.json",
                "masked by the disabled entry in ");
    expect_skip(&set, "windsurf-off", "project/.vscode/mcp.json", "masked by the disabled entry");
    expect_skip(&set, "exa", "home/.cursor/mcp.json",
                "Exa server, filtered (filterExa); its API key was taken");
    CHECK_INTEQ(set.n_exa_api_keys, 1);
    CHECK(set.n_exa_api_keys == 1 && streq(set.exa_api_keys[0], "fixture-exa-key"));

    /* The invalid entry is a problem with file, server and reason; nothing else is. */
    /*
     * Besides, one warning: VS Code's ${input:...} prompt in vscode-http cannot be answered by
     * mcpd and reaches the server as written, so it is reported with the field it is in.
     */
    CHECK_INTEQ(set.n_problems, 2);
    CHECK(set.n_problems == 2 && set.problems[1].warning &&
          streq(set.problems[1].server, "vscode-http") &&
          strstr(set.problems[1].message, "\"headers.Authorization\" uses ${input:...}"));
    if (set.n_problems >= 1) {
        _cleanup_free_ char *p = paths_join(tmp, "home/.config/mcpd/mcp.json");
        CHECK_STREQ(set.problems[0].path, p);
        CHECK_STREQ(set.problems[0].server, "broken");
    }
    ServerConfig *b = config_set_find(&set, "broken");
    CHECK(b && streq(b->command, "claude-fixed-broken"));
    config_set_deinit(&set);
}

static void test_field_mapping(void)
{
    ConfigSet set;
    Settings s;
    ServerConfig *c;

    settings_init(&s);
    discover(&set, root, &s);

    /* ${workspaceFolder} expands in the values used; the entry as written keeps it. */
    c = config_set_find(&set, "shared");
    CHECK(c && c->n_args == 2 && streq(c->args[1], root));
    CHECK(c && json_array_len(json_get(c->raw, "args")) == 2 &&
          streq(json_array_at(json_get(c->raw, "args"), 1)->u.string, "${workspaceFolder}"));
    c = config_set_find(&set, "user-native");
    CHECK(c && streq(c->cwd, "/srv/memory") && c->timeout_ms == 15000);

    /* Codex: env + env_vars (set ones only, shown as ${NAME}), cwd and both timeouts (B13). */
    c = config_set_find(&set, "codex-gh");
    CHECK(c && streq(json_get_string(c->env, "LOG_LEVEL"), "info"));
    CHECK(c && streq(json_get_string(c->env, "MCPD_FIXTURE_TOKEN"), "tok-123"));
    CHECK(c && json_get(c->env, "MCPD_FIXTURE_UNSET") == NULL);
    CHECK(c && streq(json_get_string(json_get(c->raw, "env"), "MCPD_FIXTURE_TOKEN"),
                     "${mcpd:env:MCPD_FIXTURE_TOKEN}"));
    CHECK(c && streq(c->cwd, "/tmp") && c->timeout_ms == 20000 && c->call_timeout_ms == 90500);
    CHECK(c && c->n_args == 2 && streq(c->args[1], "@modelcontextprotocol/server-github"));
    c = config_set_find(&set, "codex-remote");
    CHECK(c && streq(c->url, "https://mcp.example.com/mcp"));
    CHECK(c && streq(json_get_string(c->headers, "Authorization"), "Bearer tok-123"));
    CHECK(c && streq(json_get_string(c->headers, "X-Org"), "acme"));
    CHECK(c && streq(json_get_string(c->headers, "X-Api-Key"), "tok-123"));
    _cleanup_free_ char *raw = c ? json_to_string(c->raw) : NULL;
    CHECK(raw && !strstr(raw, "tok-123")); /* the entry as shown holds no secret */
    c = config_set_find(&set, "codex-proj");
    CHECK(c && c->timeout_ms == 5000 && c->n_args == 1 && streq(c->command, "codex-proj"));

    /*
     * Gemini: httpUrl is Streamable HTTP, url is SSE; timeout and cwd carried. Gemini's timeout
     * bounds each tool call too (its default is 10 minutes, mcpd's one).
     */
    c = config_set_find(&set, "gemini-http");
    CHECK(c && streq(c->url, "https://api.githubcopilot.com/mcp/") && c->timeout_ms == 5000);
    CHECK(c && c->call_timeout_ms == 5000);
    CHECK(c && streq(json_get_string(c->headers, "Authorization"), "Bearer tok-123"));
    c = config_set_find(&set, "gemini-sse");
    CHECK(c && streq(c->url, "http://localhost:8080/sse"));
    c = config_set_find(&set, "gemini-stdio");
    CHECK(c && streq(c->command, "codex-wins-gemini-stdio"));
    /* A relative cwd starts from the project root (project level) or home (user level). */
    _cleanup_free_ char *tools_dir = paths_join(root, "tools");
    _cleanup_free_ char *home_dir = paths_join(home, "srv");
    c = config_set_find(&set, "gemini-proj");
    CHECK(c && streq(c->cwd, tools_dir));
    c = config_set_find(&set, "claude-user-cwd");
    CHECK(c && streq(c->cwd, home_dir));

    /* Windsurf serverUrl; VS Code ${workspaceFolder}; ${input:...} stays as written. */
    c = config_set_find(&set, "windsurf-remote");
    CHECK(c && streq(c->url, "https://mcp.deepwiki.com/mcp"));
    c = config_set_find(&set, "vscode-stdio");
    _cleanup_free_ char *js = xasprintf("%s/server.js", root);
    CHECK(c && c->n_args == 1 && streq(c->args[0], js));
    /* Its envFile (${workspaceFolder}/.env) is read, as VS Code does. */
    CHECK(c && streq(json_get_string(c->env, "FROM_ENV_FILE"), "yes") &&
          streq(json_get_string(c->env, "QUOTED"), "a b"));
    c = config_set_find(&set, "vscode-http");
    CHECK(c && streq(json_get_string(c->headers, "Authorization"), "Bearer ${input:gh-token}"));

    /* Values are never run at discovery: !commands wait for connect. */
    c = config_set_find(&set, "cursor-proj");
    CHECK(c && streq(json_get_string(c->env, "API_KEY"), "!echo not-run-at-discovery"));
    config_set_deinit(&set);
}

static const char *const project_names[] = {
    "claude-local", "codex-proj",  "gemini-proj", "cursor-proj", "windsurf-proj",
    "vscode-stdio", "vscode-http", "plain-a",     "plain-both",  "plain-b",
};

static void test_project_filter_before_dedup(void)
{
    ConfigSet set;
    Settings s;

    settings_init(&s);
    s.enable_project_config = false;
    discover(&set, root, &s);
    /* B7: the project entry is dropped first, so the user's own "shared" wins. */
    ServerConfig *c = config_set_find(&set, "shared");
    CHECK(c && streq(c->command, "native-user-shared") && c->source.level == CONFIG_LEVEL_USER);
    for (size_t i = 0; i < N_ELEMENTS(project_names); i++) {
        CHECK(config_set_find(&set, project_names[i]) == NULL);
        expect_skip(&set, project_names[i], NULL, "project-level config is off");
    }
    CHECK_INTEQ(set.n_servers, N_ELEMENTS(all_winners) - N_ELEMENTS(project_names));
    config_set_deinit(&set);

    /* The user workspace: no project files at all, so nothing about them either. */
    settings_init(&s);
    discover(&set, NULL, &s);
    CHECK_INTEQ(set.n_servers, N_ELEMENTS(all_winners) - N_ELEMENTS(project_names));
    c = config_set_find(&set, "shared");
    CHECK(c && streq(c->command, "native-user-shared"));
    for (size_t i = 0; i < set.n_skipped; i++)
        CHECK(set.skipped[i].source.level == CONFIG_LEVEL_USER);
    config_set_deinit(&set);
}

static void test_disabled_providers_and_exa_setting(void)
{
    ConfigSet set;
    Settings s;
    ServerConfig *c;

    settings_init(&s);
    s.disabled_providers = 1u << config_source_index("claude");
    discover(&set, root, &s);
    c = config_set_find(&set, "claude-top");
    CHECK(c && streq(c->source.provider, "cursor") && streq(c->command, "cursor-loses"));
    CHECK(config_set_find(&set, "sentry") == NULL);
    CHECK(config_set_find(&set, "broken") == NULL);
    expect_skip(&set, "sentry", "home/.claude.json", "provider \"claude\" is in disabledProviders");
    expect_skip(&set, "claude-local", "home/.claude.json", "disabledProviders");
    c = config_set_find(&set, "shared");
    CHECK(c && streq(c->source.provider, "mcpd"));
    config_set_deinit(&set);

    settings_init(&s);
    s.filter_exa = false;
    discover(&set, root, &s);
    c = config_set_find(&set, "exa");
    CHECK(c && streq(c->source.provider, "cursor"));
    CHECK_INTEQ(set.n_exa_api_keys, 0);
    config_set_deinit(&set);
}

/* One broken file of each kind: reported with its path, and every other file still loads. */
static void test_broken_files_hide_nothing(void)
{
    _cleanup_free_ char *toml = paths_join(root, ".codex/config.toml");
    _cleanup_free_ char *gem = paths_join(home, ".gemini/settings.json");
    _cleanup_free_ char *vsc = paths_join(root, ".vscode/mcp.json");
    ConfigSet set;
    Settings s;
    bool saw_toml = false, saw_json = false, saw_vsc = false;

    test_write_file(toml, "[mcp_servers.x]\ncommand = \"x\"\nargs = [\"a\" \"b\"]\n");
    test_write_file(gem, "{\"mcpServers\": {\"gemini-http\": {\"httpUrl\": 5}},,}");
    config_forget_good(); /* as on a first start: no good version to fall back on */
    test_write_file(vsc, "{\"servers\": [\"not\", \"an\", \"object\"]}");
    settings_init(&s);
    discover(&set, root, &s);
    for (size_t i = 0; i < set.n_problems; i++) {
        const ConfigProblem *p = &set.problems[i];
        if (streq(p->path, toml))
            saw_toml = strstr(p->message, "invalid TOML: line 3, column 13: expected ',' or ']'");
        if (streq(p->path, gem))
            saw_json = strstr(p->message, "invalid JSON") != NULL;
        if (streq(p->path, vsc))
            saw_vsc = strstr(p->message, "\"servers\" must be an object, not array") != NULL;
    }
    CHECK(saw_toml && saw_json && saw_vsc);
    for (size_t i = 0; !(saw_toml && saw_json && saw_vsc) && i < set.n_problems; i++)
        fprintf(stderr, "  problem: %s: %s\n", set.problems[i].path, set.problems[i].message);
    CHECK(config_set_find(&set, "codex-gh") != NULL);
    CHECK(config_set_find(&set, "plain-a") != NULL);
    CHECK(config_set_find(&set, "gemini-stdio") != NULL);
    CHECK(config_set_find(&set, "gemini-http") == NULL);
    config_set_deinit(&set);

    /* Entries a provider cannot map are invalid, named, and mask nothing. */
    test_write_file(toml, "[mcp_servers.plain-a]\ncommand = \"x\"\nstartup_timeout_sec = \"soon\"\n"
                          "[mcp_servers.bad-env]\ncommand = \"y\"\nenv_vars = \"TOKEN\"\n");
    test_write_file(gem, "{\"mcpServers\": {\"g\": {\"httpUrl\": 5}}}");
    discover(&set, root, &s);
    ServerConfig *c = config_set_find(&set, "plain-a");
    CHECK(c && streq(c->source.provider, "mcp-json"));
    expect_skip(&set, "plain-a", "project/.codex/config.toml",
                "invalid: Server \"plain-a\": \"startup_timeout_sec\" must be a non-negative "
                "number of seconds");
    expect_skip(&set, "bad-env", "project/.codex/config.toml",
                "\"env_vars\" must be an array of variable names");
    expect_skip(&set, "g", "home/.gemini/settings.json", "\"httpUrl\" must be a string");
    config_set_deinit(&set);
}

static void test_shapes_in_isolation(void)
{
    _cleanup_free_ char *vsc = paths_join(root, ".vscode/mcp.json");
    _cleanup_free_ char *cj = paths_join(home, ".claude.json");
    _cleanup_free_ char *codex_home = paths_join(tmp, "codex-home");
    _cleanup_free_ char *codex_cfg = paths_join(codex_home, "config.toml");
    ConfigSet set;
    Settings s;
    ServerConfig *c;

    /* The settings.json shape of VS Code: {"mcp": {"servers": ...}}. */
    test_write_file(vsc, "{\"mcp\": {\"servers\": {\"nested\": {\"type\": \"sse\", \"url\": "
                         "\"http://h/sse\"}}}}");
    trust_fixture_project(); /* a changed project file is approved again */
    /* Claude: projects of the wrong type is named; top-level servers still load (below). */
    /* Claude's project key may go through a symlink to the root. */
    _cleanup_free_ char *link = paths_join(tmp, "link-to-project");
    CHECK_INTEQ(symlink(root, link), 0);
    _cleanup_free_ char *cj_text =
        xasprintf("{\"mcpServers\": {\"top\": {\"command\": \"t\"}}, \"projects\": {\"%s\": "
                  "{\"mcpServers\": {\"via-link\": {\"command\": \"l\"}}}}}",
                  link);
    test_write_file(cj, cj_text);
    settings_init(&s);
    discover(&set, root, &s);
    c = config_set_find(&set, "via-link");
    CHECK(c && c->source.level == CONFIG_LEVEL_PROJECT);
    config_set_deinit(&set);
    test_write_file(cj, "{\"mcpServers\": {\"top\": {\"command\": \"t\"}}, \"projects\": []}");
    /* $CODEX_HOME replaces ~/.codex. */
    CHECK_INTEQ(paths_mkdir_p(codex_home, 0700), 0);
    test_write_file(codex_cfg, "[mcp_servers.from-codex-home]\ncommand = \"c\"\n");
    setenv("CODEX_HOME", codex_home, 1);
    settings_init(&s);
    discover(&set, root, &s);
    unsetenv("CODEX_HOME");
    c = config_set_find(&set, "nested");
    CHECK(c && c->type == TRANSPORT_SSE && streq(c->source.provider, "vscode"));
    CHECK(config_set_find(&set, "top") != NULL);
    CHECK(config_set_find(&set, "from-codex-home") != NULL);
    CHECK(config_set_find(&set, "codex-gh") == NULL);
    bool named = false;
    for (size_t i = 0; i < set.n_problems; i++)
        named = named || (streq(set.problems[i].path, cj) &&
                          strstr(set.problems[i].message, "\"projects\" must be an object"));
    CHECK(named);
    config_set_deinit(&set);
}

/*
 * Within one agent, that agent's order: Gemini system > workspace > user; Codex project >
 * user; Codex's startup_timeout_sec over startup_timeout_ms; env_vars as names or tables.
 * A fresh home and project, so the fixture tree is untouched.
 */
static void test_agent_precedence(void)
{
    _cleanup_free_ char *h = paths_join(tmp, "prec-home"), *r = paths_join(tmp, "prec-root");
    _cleanup_free_ char *sys = paths_join(tmp, "prec-system.json");
    _cleanup_free_ char *gu = paths_join(h, ".gemini/settings.json");
    _cleanup_free_ char *gw = paths_join(r, ".gemini/settings.json");
    _cleanup_free_ char *cu = paths_join(h, ".codex/config.toml");
    _cleanup_free_ char *cw = paths_join(r, ".codex/config.toml");
    _cleanup_free_ char *gu_dir = paths_dirname(gu), *gw_dir = paths_dirname(gw);
    _cleanup_free_ char *cu_dir = paths_dirname(cu), *cw_dir = paths_dirname(cw);
    _cleanup_free_ char *why = NULL;
    ConfigSet set;
    Settings s;
    ServerConfig *c;

    CHECK(paths_mkdir_p(gu_dir, 0700) == 0 && paths_mkdir_p(gw_dir, 0700) == 0);
    CHECK(paths_mkdir_p(cu_dir, 0700) == 0 && paths_mkdir_p(cw_dir, 0700) == 0);
    test_write_file(sys, "{\"mcpServers\": {\"g1\": {\"command\": \"system\"}}}");
    test_write_file(gw, "{\"mcpServers\": {\"g1\": {\"command\": \"workspace\"},"
                        " \"g2\": {\"command\": \"workspace\"}}}");
    test_write_file(gu,
                    "{\"mcpServers\": {\"g1\": {\"command\": \"user\"},"
                    " \"g2\": {\"command\": \"user\"}, \"g3\": {\"command\": \"user\", \"env\": "
                    "{\"A\": \"$MCPD_FIXTURE_TOKEN-x\", \"B\": \"${MCPD_FIXTURE_TOKEN}\","
                    " \"C\": \"cost $5\"}}, \"g4\": {\"command\": \"user\"}},"
                    " \"mcp\": {\"excluded\": [\"g4\"]}}");
    test_write_file(cw, "[mcp_servers.k1]\ncommand = \"project\"\n");
    test_write_file(
        cu, "[mcp_servers.k1]\ncommand = \"user\"\n[mcp_servers.k2]\ncommand = "
            "\"user\"\nstartup_timeout_sec = 7\nstartup_timeout_ms = 900\n"
            "env_vars = [\"MCPD_FIXTURE_TOKEN\", { name = \"HOME\", source = \"local\" }]\n");
    setenv("HOME", h, 1);
    setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", sys, 1);
    settings_init(&s);
    CHECK_INTEQ(trust_approve_root(r, &s, NULL, NULL, NULL, &why), 0);
    discover(&set, r, &s);
    CHECK((c = config_set_find(&set, "g1")) && streq(c->command, "system"));
    CHECK((c = config_set_find(&set, "g2")) && streq(c->command, "workspace"));
    /* Gemini's mcp.excluded (here from the user file) drops the name everywhere in Gemini. */
    CHECK(config_set_find(&set, "g4") == NULL);
    bool excluded = false;
    for (size_t i = 0; i < set.n_skipped; i++)
        excluded = excluded || (streq(set.skipped[i].name, "g4") &&
                                strstr(set.skipped[i].reason, "in Gemini CLI's mcp.excluded"));
    CHECK(excluded);
    CHECK((c = config_set_find(&set, "g3")) && streq(c->command, "user"));
    /* Gemini expands $NAME as well as ${NAME}; "$5" is not a name. */
    CHECK(c && streq(json_get_string(c->env, "A"), "tok-123-x") &&
          streq(json_get_string(c->env, "B"), "tok-123") &&
          streq(json_get_string(c->env, "C"), "cost $5"));
    CHECK((c = config_set_find(&set, "k1")) && streq(c->command, "project"));
    c = config_set_find(&set, "k2");
    CHECK(c && c->timeout_ms == 7000);
    CHECK(c && streq(json_get_string(c->env, "MCPD_FIXTURE_TOKEN"), "tok-123") &&
          streq(json_get_string(c->env, "HOME"), h));
    config_set_deinit(&set);
    setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "/nonexistent/gemini-system.json", 1);
    setenv("HOME", home, 1);
}

/* A root that cannot be read: no servers at all (not a partial set), one named problem. */
static void test_critical_failure(void)
{
    ConfigSet set;
    Settings s;
    DiscoverOptions opt = {NULL, "/nonexistent/mcpd-project"};
    _cleanup_free_ char *file = paths_join(root, "mcp.json");

    settings_init(&s);
    CHECK_INTEQ(config_discover(&set, &opt, &s), -ENOENT);
    CHECK_INTEQ(set.n_servers, 0);
    CHECK_INTEQ(set.n_problems, 1);
    CHECK(set.n_problems == 1 &&
          streq(set.problems[0].path, "/nonexistent/mcpd-project/.mcp.json") &&
          strstr(set.problems[0].message, "discovery failed for /nonexistent/mcpd-project"));
    config_set_deinit(&set);
    opt.root = file;
    CHECK_INTEQ(config_discover(&set, &opt, &s), -ENOTDIR);
    CHECK_INTEQ(set.n_servers, 0);
    config_set_deinit(&set);
}

static void test_expand(void)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"${MCPD_T_A}", "alpha"},
        {"x-${MCPD_T_A}-${MCPD_T_A}-y", "x-alpha-alpha-y"},
        {"${MCPD_T_UNSET}", "${MCPD_T_UNSET}"},
        {"${MCPD_T_UNSET:-fallback}", "fallback"},
        {"${MCPD_T_UNSET:-}", ""},
        {"${MCPD_T_A:-fallback}", "alpha"},
        /* Set to "": set (Claude Code's envExpansion.ts: !== undefined), default unused. */
        {"${MCPD_T_EMPTY:-unused}", ""},
        {"a${MCPD_T_EMPTY}b", "ab"},
        {"${env:MCPD_T_A}", "alpha"},
        {"${workspaceFolder}/x", "/the/root/x"},
        {"${userHome}", NULL}, /* checked below */
        {"$MCPD_T_A and ${} and ${unclosed", "$MCPD_T_A and ${} and ${unclosed"},
        {"!cmd ${MCPD_T_A}", "!cmd alpha"},
    };

    setenv("MCPD_T_A", "alpha", 1);
    setenv("MCPD_T_EMPTY", "", 1);
    unsetenv("MCPD_T_UNSET");
    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        yajl_val in = json_string_new(cases[i].in), out = config_expand(in, "/the/root");
        const char *want = cases[i].want ? cases[i].want : home;
        if (!streq(out->u.string, want)) {
            CHECK(!"wrong expansion");
            fprintf(stderr, "  %s -> %s, want %s\n", cases[i].in, out->u.string, want);
        }
        json_free(in);
        json_free(out);
    }
    /* Deep: objects and arrays, keys untouched, other types copied; no root: left as is. */
    yajl_val in = json_parse("{\"${MCPD_T_A}\":[\"${MCPD_T_A}\",1,true,null,{\"k\":"
                             "\"${workspaceFolder}\"}]}",
                             NULL);
    yajl_val out = config_expand(in, NULL);
    _cleanup_free_ char *text = json_to_string(out);
    CHECK_STREQ(text, "{\"${MCPD_T_A}\":[\"alpha\",1,true,null,{\"k\":\"${workspaceFolder}\"}]}");
    json_free(in);
    json_free(out);
}

static ServerConfig *entry(const char *name, const char *text)
{
    _cleanup_json_ yajl_val obj = json_parse(text, NULL);
    SourceMeta src = {"mcpd", "mcpd (user)", "/x/mcp.json", CONFIG_LEVEL_USER, 0};
    ConfigSet set = {.quiet = true};
    Settings s;
    ServerConfig *c;

    settings_init(&s);
    c = server_config_from_json(name, obj, &src, &s, &set);
    config_set_deinit(&set);
    return c;
}

static void test_exa_detection(void)
{
    static const struct {
        const char *name, *text, *key;
        bool exa;
    } cases[] = {
        {"EXA", "{\"command\":\"x\"}", NULL, true},
        {"search", "{\"url\":\"https://MCP.EXA.AI/mcp?exaApiKey=k1&tools=web\"}", "k1", true},
        {"search",
         "{\"command\":\"npx\",\"args\":[\"mcp-remote\",\"https://mcp.exa.ai/mcp\"],"
         "\"env\":{\"EXA_API_KEY\":\"k2\"}}",
         "k2", true},
        {"search", "{\"command\":\"npx\",\"args\":[\"https://mcp.exa.ai/?exaapikey=k3\"]}", "k3",
         true},
        {"search", "{\"command\":\"exa-lookalike\",\"args\":[\"mcp.example.ai\"]}", NULL, false},
        {"search", "{\"type\":\"sse\",\"url\":\"https://other.ai/sse\"}", NULL, false},
    };

    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        ServerConfig *c = entry(cases[i].name, cases[i].text);
        char *key = NULL;
        CHECK(c != NULL);
        if (!c)
            continue;
        bool exa = config_is_exa(c, &key);
        if (exa != cases[i].exa || !streq(key, cases[i].key)) {
            CHECK(!"wrong Exa detection");
            fprintf(stderr, "  %s %s -> %d %s\n", cases[i].name, cases[i].text, exa,
                    key ? key : "(no key)");
        }
        free(key);
        server_config_free(c);
    }
}

static void test_auth_field(void)
{
    ServerConfig *c = entry("a", "{\"url\":\"https://h/mcp\",\"auth\":{\"type\":\"oauth\","
                                 "\"credentialId\":\"cred-1\"}}");

    CHECK(c && streq(c->auth_type, "oauth") && streq(c->credential_id, "cred-1"));
    ServerConfig *d = c ? server_config_copy(c) : NULL;
    CHECK(d && streq(d->credential_id, "cred-1") && d->credential_id != c->credential_id);
    server_config_free(c);
    server_config_free(d);
    CHECK(entry("a", "{\"command\":\"x\",\"auth\":\"oauth\"}") == NULL);
    CHECK(entry("a", "{\"command\":\"x\",\"auth\":{\"type\":\"basic\"}}") == NULL);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    fixtures = argv[1];
    log_set_level(LOG_ERR);
    fixture_setup();
    trust_fixture_project();
    RUN(test_every_provider_winner);
    RUN(test_field_mapping);
    RUN(test_project_filter_before_dedup);
    RUN(test_disabled_providers_and_exa_setting);
    RUN(test_critical_failure);
    RUN(test_expand);
    RUN(test_exa_detection);
    RUN(test_auth_field);
    RUN(test_agent_precedence);
    RUN(test_broken_files_hide_nothing); /* rewrites fixture files: last but one */
    RUN(test_shapes_in_isolation);
    fixture_teardown();
    return test_main_result();
}
