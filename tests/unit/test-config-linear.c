// SPDX-License-Identifier: MIT
// test-config-linear: reading a config file costs work linear in its size (issue 39 item 7),
// proved by counting key comparisons, not by timing.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/claude-json.h"
#include "daemon/config/config-expand.h"
#include "daemon/config/config.h"
#include "tests/unit/test.h"

/*
 * Sizes compared: N and 8N members. Linear work grows 8 times from one to the other, quadratic
 * work 64 times; the bound below (10 times, plus a constant for the fixed lookups every entry
 * costs) passes the first with room and fails the second by far. N is small enough that the
 * quadratic code, run by mistake, still ends in a second or two.
 */
#define N_SMALL 500
#define N_LARGE (8 * N_SMALL)
#define GROWTH  10
#define FIXED   5000

static char *tmp, *home, *project;

static void setup_home(void)
{
    _cleanup_free_ char *conf = NULL, *state = NULL, *no_system = NULL;

    tmp = test_tmpdir();
    home = paths_join(tmp, "home");
    project = paths_join(tmp, "project");
    conf = paths_join(home, ".config");
    state = paths_join(home, ".local/state");
    no_system = paths_join(tmp, "none.json");
    paths_mkdir_p(conf, 0700);
    paths_mkdir_p(project, 0700);
    setenv("HOME", home, 1);
    setenv("XDG_CONFIG_HOME", conf, 1);
    setenv("XDG_STATE_HOME", state, 1);
    unsetenv("CODEX_HOME");
    unsetenv("CLAUDE_CONFIG_DIR");
    setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", no_system, 1);
    setenv("MCPD_CLAUDE_MANAGED_MCP", no_system, 1);
}

/* {"K0":"v0",...} with n members. */
static void write_members(StrBuf *sb, size_t n, const char *value_prefix)
{
    strbuf_putc(sb, '{');
    for (size_t i = 0; i < n; i++)
        strbuf_printf(sb, "%s\"K%zu\":\"%s%zu\"", i ? "," : "", i, value_prefix, i);
    strbuf_putc(sb, '}');
}

/* One server with n env keys, under key (mcpServers, servers, ...). */
static char *one_server_env(const char *key, size_t n)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_printf(&sb, "{\"%s\":{\"big\":{\"command\":\"/bin/true\",\"env\":", key);
    write_members(&sb, n, "v");
    strbuf_puts(&sb, "}}}");
    return strbuf_detach(&sb, NULL);
}

/* n/8 servers, each with 8 nested objects of 8 members: n * 8 values in all. */
static char *many_servers(size_t n)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\":{");
    for (size_t s = 0; s < n / 8; s++) {
        strbuf_printf(&sb, "%s\"s%zu\":{\"command\":\"/bin/true\",\"metadata\":{", s ? "," : "", s);
        for (size_t k = 0; k < 8; k++) {
            strbuf_printf(&sb, "%s\"m%zu\":", k ? "," : "", k);
            write_members(&sb, 8, "x");
        }
        strbuf_puts(&sb, "}}");
    }
    strbuf_puts(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

/* Key comparisons made by discovering root (or config_file) after writing text to path. */
static uint64_t discover_compares(const char *path, const char *text, const char *root,
                                  const char *config_file)
{
    DiscoverOptions opt = {config_file, root};
    ConfigSet set;
    Settings s;
    uint64_t before;

    _cleanup_free_ char *dir = paths_dirname(path);
    paths_mkdir_p(dir, 0700);
    test_write_file(path, text);
    settings_init(&s);
    before = json_n_key_compares;
    config_discover_quiet(&set, &opt, &s);
    uint64_t n = json_n_key_compares - before;
    config_set_deinit(&set);
    unlink(path);
    return n;
}

/* Compares for N_SMALL and N_LARGE of one shape must grow linearly. */
#define CHECK_LINEAR(what, small, large)                                                           \
    do {                                                                                           \
        uint64_t s_ = (small), l_ = (large);                                                       \
        printf("  %s: %" PRIu64 " key comparisons at %d, %" PRIu64 " at %d\n", what, s_, N_SMALL,  \
               l_, N_LARGE);                                                                       \
        CHECK_MSG(l_ <= GROWTH * s_ + FIXED, "%s: %" PRIu64 " then %" PRIu64, what, s_, l_);       \
    } while (0)

static void test_tree_building_searches_nothing(void)
{
    StrBuf sb = STRBUF_INIT;
    write_members(&sb, N_LARGE, "v");
    _cleanup_json_ yajl_val v = json_parse(strbuf_str(&sb), NULL);
    uint64_t before = json_n_key_compares;
    _cleanup_json_ yajl_val c = json_copy(v);
    _cleanup_json_ yajl_val e = config_expand(v, project);
    StrBuf text = STRBUF_INIT;

    json_write_sorted(&text, v);
    CHECK(json_equal(v, c));
    CHECK(json_equal(v, e));
    json_object_dedupe(c, JSON_DUP_KEEP_FIRST);
    CHECK_INTEQ(c->u.object.len, N_LARGE);
    /* A copy, an expansion, a sorted text, a comparison and a dedupe: no lookup at all. */
    CHECK_INTEQ(json_n_key_compares - before, 0);
    strbuf_deinit(&text);
    strbuf_deinit(&sb);
}

static void test_dedupe_rules(void)
{
    _cleanup_json_ yajl_val first = json_parse("{\"a\":1,\"b\":2,\"a\":3,\"c\":4,\"a\":5}", NULL);
    _cleanup_json_ yajl_val last = json_copy(first);
    _cleanup_free_ char *f = NULL, *l = NULL;

    json_object_dedupe(first, JSON_DUP_KEEP_FIRST);
    json_object_dedupe(last, JSON_DUP_KEEP_LAST);
    f = json_to_string(first);
    l = json_to_string(last);
    CHECK_STREQ(f, "{\"a\":1,\"b\":2,\"c\":4}");
    CHECK_STREQ(l, "{\"a\":5,\"b\":2,\"c\":4}"); /* JSON.parse: the first place, the last value */
}

static void test_discovery_is_linear(void)
{
    _cleanup_free_ char *mcp = paths_join(project, ".mcp.json");
    _cleanup_free_ char *native = paths_join(tmp, "native.json");
    _cleanup_free_ char *claude = paths_join(home, ".claude.json");
    _cleanup_free_ char *zed = paths_join(project, ".zed/settings.json");
    _cleanup_free_ char *vscode = paths_join(project, ".vscode/mcp.json");
    _cleanup_free_ char *s1 = one_server_env("mcpServers", N_SMALL);
    _cleanup_free_ char *s8 = one_server_env("mcpServers", N_LARGE);
    _cleanup_free_ char *z1 = one_server_env("context_servers", N_SMALL);
    _cleanup_free_ char *z8 = one_server_env("context_servers", N_LARGE);
    _cleanup_free_ char *v1 = one_server_env("servers", N_SMALL);
    _cleanup_free_ char *v8 = one_server_env("servers", N_LARGE);
    _cleanup_free_ char *m1 = many_servers(N_SMALL);
    _cleanup_free_ char *m8 = many_servers(N_LARGE);

    /* A project's .mcp.json (held by the trust gate after it is built), and mcpd's own file. */
    CHECK_LINEAR(".mcp.json env", discover_compares(mcp, s1, project, NULL),
                 discover_compares(mcp, s8, project, NULL));
    CHECK_LINEAR("--config env", discover_compares(native, s1, NULL, native),
                 discover_compares(native, s8, NULL, native));
    CHECK_LINEAR(".mcp.json servers", discover_compares(mcp, m1, project, NULL),
                 discover_compares(mcp, m8, project, NULL));
    /* The streaming reader of ~/.claude.json, Zed (a copy before the cap) and VS Code. */
    CHECK_LINEAR("~/.claude.json env", discover_compares(claude, s1, NULL, NULL),
                 discover_compares(claude, s8, NULL, NULL));
    CHECK_LINEAR("zed env", discover_compares(zed, z1, project, NULL),
                 discover_compares(zed, z8, project, NULL));
    CHECK_LINEAR("vscode env", discover_compares(vscode, v1, project, NULL),
                 discover_compares(vscode, v8, project, NULL));
}

/* An envFile of many lines joins env without a lookup per line. */
static void test_env_file_is_linear(void)
{
    _cleanup_free_ char *native = paths_join(tmp, "envfile.json");
    _cleanup_free_ char *dotenv = paths_join(tmp, "big.env");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\":{\"e\":{\"command\":\"/bin/true\",\"envFile\":\"%s\",\"env\":"
        "{\"K1\":\"own\"}}}}",
        dotenv);
    uint64_t n[2];

    for (int k = 0; k < 2; k++) {
        StrBuf sb = STRBUF_INIT;
        size_t lines = k ? N_LARGE : N_SMALL;
        for (size_t i = 0; i < lines; i++)
            strbuf_printf(&sb, "K%zu=file%zu\n", i, i);
        strbuf_puts(&sb, "K2=again\n");
        test_write_file(dotenv, strbuf_str(&sb));
        strbuf_deinit(&sb);
        n[k] = discover_compares(native, cfg, NULL, native);
    }
    CHECK_LINEAR("envFile", n[0], n[1]);

    /* The rule kept: the entry's own env over the file, the file's first line of a name. */
    DiscoverOptions opt = {native, NULL};
    ConfigSet set;
    Settings s;
    test_write_file(native, cfg);
    settings_init(&s);
    config_discover_quiet(&set, &opt, &s);
    CHECK_INTEQ(set.n_servers, 1);
    if (set.n_servers == 1) {
        CHECK_STREQ(json_get_string(set.servers[0]->env, "K1"), "own");
        CHECK_STREQ(json_get_string(set.servers[0]->env, "K2"), "file2");
        CHECK_INTEQ(set.servers[0]->env->u.object.len, N_LARGE);
    }
    config_set_deinit(&set);
}

/* The streaming reader keeps the last of a repeated key, as JSON.parse, in its first place. */
static void test_claude_json_duplicates(void)
{
    const char *text = "{\"mcpServers\":{\"a\":{\"command\":\"one\"},\"b\":{\"command\":\"b\"},"
                       "\"a\":{\"command\":\"two\"}},\"projects\":{\"/p\":{\"mcpServers\":{}}},"
                       "\"projects\":{\"/q\":{\"mcpServers\":{}}}}";
    _cleanup_json_ yajl_val v = NULL;
    _cleanup_free_ char *why = NULL, *s = NULL;

    CHECK_INTEQ(claude_json_parse(text, strlen(text), &v, &why), 0);
    s = json_to_string(v);
    CHECK_STREQ(s, "{\"mcpServers\":{\"a\":{\"command\":\"two\"},\"b\":{\"command\":\"b\"}},"
                   "\"projects\":{\"/q\":{\"mcpServers\":{}}}}");
}

int main(void)
{
    log_set_level(LOG_ERR);
    setup_home();
    RUN(test_tree_building_searches_nothing);
    RUN(test_dedupe_rules);
    RUN(test_discovery_is_linear);
    RUN(test_env_file_is_linear);
    RUN(test_claude_json_duplicates);
    test_rm_rf(tmp);
    free(tmp);
    free(home);
    free(project);
    return test_main_result();
}
