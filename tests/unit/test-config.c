// SPDX-License-Identifier: MIT
// test-config: unit tests for server entries, native config files, discovery and settings.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config-read.h"
#include "daemon/config/config.h"
#include "daemon/config/configset-json.h"
#include "daemon/config/server-entry.h"
#include "daemon/config/server-identity.h"
#include "daemon/config/trust.h"
#include "daemon/config/source.h"
#include "tests/unit/test.h"

static const SourceMeta test_src = {"mcpd", "mcpd (user)", "/cfg/mcp.json", CONFIG_LEVEL_USER, 0};

/* Build one entry from JSON text; NULL when invalid (the reason is in set). */
static ServerConfig *from_text(const char *name, const char *text, const Settings *settings,
                               ConfigSet *set)
{
    _cleanup_json_ yajl_val obj = json_parse(text, NULL);
    Settings defaults;

    if (!obj) {
        fprintf(stderr, "  bad test JSON: %s\n", text);
        abort();
    }
    if (!settings) {
        settings_init(&defaults);
        settings = &defaults;
    }
    return server_config_from_json(name, obj, &test_src, settings, set);
}

/* Expect name/text to be rejected with exactly one problem whose message is want. */
static void expect_problem_exact(const char *name, const char *text, const char *want)
{
    ConfigSet set = {0};
    ServerConfig *c = from_text(name, text, NULL, &set);

    CHECK(c == NULL);
    CHECK_INTEQ(set.n_problems, 1);
    if (set.n_problems == 1) {
        CHECK_STREQ(set.problems[0].message, want);
        CHECK_STREQ(set.problems[0].path, test_src.path);
        CHECK_STREQ(set.problems[0].server, name);
    }
    CHECK_INTEQ(set.n_servers, 0);
    server_config_free(c);
    config_set_deinit(&set);
}

/* Expect a rejection whose message names the server and contains each of the fragments. */
static void expect_problem_naming(const char *text, const char *frag1, const char *frag2)
{
    ConfigSet set = {0};
    ServerConfig *c = from_text("srv", text, NULL, &set);

    CHECK(c == NULL);
    CHECK_INTEQ(set.n_problems, 1);
    if (set.n_problems == 1) {
        const char *msg = set.problems[0].message;
        bool ok =
            strstr(msg, "Server \"srv\"") && strstr(msg, frag1) && (!frag2 || strstr(msg, frag2));
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  %s\n  -> %s\n", text, msg);
        CHECK_STREQ(set.problems[0].server, "srv");
    }
    server_config_free(c);
    config_set_deinit(&set);
}

static void test_full_stdio_entry(void)
{
    ConfigSet set = {0};
    ServerConfig *c = from_text(
        "fs",
        "{\"type\":\"stdio\",\"command\":\"node\",\"args\":[\"a\",\"b c\"],\"env\":{\"K\":\"V\"},"
        "\"cwd\":\"/work\",\"enabled\":false,\"timeout\":5,\"callTimeout\":7,"
        "\"reconnect\":false,\"idleTimeoutMs\":9,\"pingIntervalMs\":11}",
        NULL, &set);

    CHECK(c != NULL);
    CHECK_INTEQ(set.n_problems, 0);
    if (!c)
        return;
    CHECK_STREQ(c->name, "fs");
    CHECK_INTEQ(c->type, TRANSPORT_STDIO);
    CHECK_STREQ(c->command, "node");
    CHECK_INTEQ(c->n_args, 2);
    if (c->n_args == 2) {
        CHECK_STREQ(c->args[0], "a");
        CHECK_STREQ(c->args[1], "b c");
    }
    CHECK_STREQ(json_get_string(c->env, "K"), "V");
    CHECK_STREQ(c->cwd, "/work");
    CHECK(c->url == NULL);
    CHECK(c->headers == NULL);
    CHECK(c->enabled == false);
    CHECK(c->reconnect == false);
    CHECK_INTEQ(c->timeout_ms, 5);
    CHECK_INTEQ(c->call_timeout_ms, 7);
    CHECK_INTEQ(c->idle_timeout_ms, 9);
    CHECK_INTEQ(c->ping_interval_ms, 11);
    CHECK_INTEQ(strlen(c->hash), 64);
    /* Source strings are copied, not borrowed. */
    CHECK_STREQ(c->source.provider, "mcpd");
    CHECK_STREQ(c->source.provider_name, "mcpd (user)");
    CHECK_STREQ(c->source.path, "/cfg/mcp.json");
    CHECK(c->source.path != test_src.path);
    CHECK_INTEQ(c->source.level, CONFIG_LEVEL_USER);
    CHECK(c->raw != NULL && YAJL_IS_OBJECT(c->raw));

    /* A deep copy is the same server. */
    ServerConfig *d = server_config_copy(c);
    CHECK(server_config_same(c, d));
    CHECK(d->command != c->command && d->args != c->args && d->env != c->env);
    CHECK_STREQ(d->args[1], "b c");
    CHECK_STREQ(d->source.path, c->source.path);
    CHECK(json_equal(d->raw, c->raw));
    server_config_free(d);
    CHECK(server_config_free(c) == NULL);
    config_set_deinit(&set);
}

static void test_defaults_from_settings(void)
{
    ConfigSet set = {0};
    Settings s;

    settings_init(&s);
    CHECK(s.enable_project_config == true);
    CHECK_INTEQ(s.startup_timeout_ms, CONFIG_DEFAULT_STARTUP_MS);
    CHECK_INTEQ(s.max_message_bytes, JSONRPC_MAX_LINE_DEFAULT);
    CHECK_INTEQ(s.cache_ttl_days, 30);
    CHECK_INTEQ(s.timeout_ms, CONFIG_DEFAULT_TIMEOUT_MS);
    CHECK_INTEQ(s.call_timeout_ms, CONFIG_DEFAULT_CALL_TIMEOUT_MS);
    CHECK_INTEQ(s.max_call_timeout_ms, CONFIG_MAX_CALL_TIMEOUT_MS);
    CHECK_INTEQ(s.idle_timeout_ms, CONFIG_DEFAULT_IDLE_TIMEOUT_MS);
    CHECK_INTEQ(s.start, CONFIG_START_LAZY);
    CHECK(s.reconnect == true);

    ServerConfig *c = from_text("d", "{\"command\":\"x\"}", &s, &set);
    CHECK(c != NULL);
    if (c) {
        CHECK_INTEQ(c->type, TRANSPORT_STDIO);
        CHECK(c->enabled == true);
        CHECK(c->reconnect == true);
        CHECK_INTEQ(c->timeout_ms, CONFIG_DEFAULT_TIMEOUT_MS);
        CHECK_INTEQ(c->call_timeout_ms, CONFIG_DEFAULT_CALL_TIMEOUT_MS);
        CHECK_INTEQ(c->idle_timeout_ms, CONFIG_DEFAULT_IDLE_TIMEOUT_MS);
        CHECK(!c->idle_timeout_set);
        CHECK_INTEQ(c->start, CONFIG_START_LAZY);
        CHECK_INTEQ(c->ping_interval_ms, 0);
        CHECK_INTEQ(c->n_args, 0);
        CHECK(c->args == NULL && c->env == NULL && c->cwd == NULL && c->url == NULL);
    }
    server_config_free(c);

    /* The per-server defaults follow the settings. */
    s.timeout_ms = 1234;
    s.call_timeout_ms = 4321;
    s.idle_timeout_ms = 99;
    s.reconnect = false;
    c = from_text("d", "{\"command\":\"x\"}", &s, &set);
    CHECK(c != NULL);
    if (c) {
        CHECK_INTEQ(c->timeout_ms, 1234);
        CHECK_INTEQ(c->call_timeout_ms, 4321);
        CHECK_INTEQ(c->idle_timeout_ms, 99);
        CHECK(c->reconnect == false);
    }
    server_config_free(c);

    /* callTimeout is capped at maxCallTimeout. */
    settings_init(&s);
    c = from_text("d", "{\"command\":\"x\",\"callTimeout\":2000000000}", &s, &set);
    CHECK(c && c->call_timeout_ms == CONFIG_MAX_CALL_TIMEOUT_MS);
    server_config_free(c);

    /* null fields mean "not set". */
    c = from_text("d",
                  "{\"command\":\"x\",\"args\":null,\"env\":null,\"timeout\":null,"
                  "\"url\":null,\"type\":null}",
                  &s, &set);
    CHECK(c && c->type == TRANSPORT_STDIO && c->timeout_ms == CONFIG_DEFAULT_TIMEOUT_MS);
    server_config_free(c);
    CHECK_INTEQ(set.n_problems, 0);
    config_set_deinit(&set);
}

static void test_transport_types(void)
{
    static const struct {
        const char *text;
        TransportType type;
    } cases[] = {
        {"{\"command\":\"x\"}", TRANSPORT_STDIO},
        {"{\"type\":\"stdio\",\"command\":\"x\"}", TRANSPORT_STDIO},
        {"{\"url\":\"https://h/mcp\"}", TRANSPORT_AUTO},
        {"{\"type\":\"auto\",\"url\":\"https://h/mcp\"}", TRANSPORT_AUTO},
        {"{\"type\":\"http\",\"url\":\"https://h/mcp\"}", TRANSPORT_HTTP},
        {"{\"type\":\"streamable-http\",\"url\":\"https://h/mcp\"}", TRANSPORT_HTTP},
        {"{\"type\":\"streamableHttp\",\"url\":\"https://h/mcp\"}", TRANSPORT_HTTP},
        {"{\"type\":\"sse\",\"url\":\"https://h/sse\",\"headers\":{\"A\":\"b\"}}", TRANSPORT_SSE},
    };

    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        ConfigSet set = {0};
        ServerConfig *c = from_text("t", cases[i].text, NULL, &set);
        CHECK(c != NULL);
        if (c && c->type != cases[i].type) {
            CHECK(!"wrong transport type");
            fprintf(stderr, "  %s -> %s\n", cases[i].text, transport_type_name(c->type));
        }
        CHECK_INTEQ(set.n_problems, 0);
        server_config_free(c);
        config_set_deinit(&set);
    }
    CHECK_STREQ(transport_type_name(TRANSPORT_STDIO), "stdio");
    CHECK_STREQ(transport_type_name(TRANSPORT_HTTP), "http");
    CHECK_STREQ(transport_type_name(TRANSPORT_SSE), "sse");
    CHECK_STREQ(transport_type_name(TRANSPORT_AUTO), "auto");
}

static void test_seed_validation_messages(void)
{
    expect_problem_exact("both", "{\"command\":\"x\",\"url\":\"https://h\"}",
                         "Server \"both\": both \"command\" and \"url\" are set - server should be "
                         "either stdio (command) OR http/sse (url), not both");
    expect_problem_exact("both", "{\"type\":\"http\",\"command\":\"x\",\"url\":\"https://h\"}",
                         "Server \"both\": both \"command\" and \"url\" are set - server should be "
                         "either stdio (command) OR http/sse (url), not both");
    expect_problem_exact("nocmd", "{\"type\":\"stdio\"}",
                         "Server \"nocmd\": stdio server requires \"command\" field");
    expect_problem_exact("nocmd", "{}",
                         "Server \"nocmd\": stdio server requires \"command\" field");
    expect_problem_exact("nocmd", "{\"args\":[\"x\"],\"command\":\"\"}",
                         "Server \"nocmd\": stdio server requires \"command\" field");
    expect_problem_exact("stdiourl", "{\"type\":\"stdio\",\"url\":\"https://h\"}",
                         "Server \"stdiourl\": stdio server requires \"command\" field");
    expect_problem_exact("nourl", "{\"type\":\"http\"}",
                         "Server \"nourl\": http server requires \"url\" field");
    expect_problem_exact("nourl", "{\"type\":\"sse\",\"url\":\"\"}",
                         "Server \"nourl\": sse server requires \"url\" field");
    expect_problem_exact("ws", "{\"type\":\"websocket\",\"url\":\"wss://h\"}",
                         "Server \"ws\": unknown server type \"websocket\"");
}

/* Expect text accepted with exactly one warning naming the server and each fragment. */
static void expect_warning_naming(const char *text, const char *frag1, const char *frag2)
{
    ConfigSet set = {0};
    ServerConfig *c = from_text("srv", text, NULL, &set);

    CHECK(c != NULL);
    CHECK_INTEQ(set.n_problems, 1);
    if (set.n_problems == 1) {
        const char *msg = set.problems[0].message;
        bool ok = set.problems[0].warning && strstr(msg, "Server \"srv\"") && strstr(msg, frag1) &&
                  (!frag2 || strstr(msg, frag2));
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  %s\n  -> %s\n", text, msg);
    }
    if (c)
        CHECK_INTEQ(c->timeout_ms, CONFIG_DEFAULT_TIMEOUT_MS);
    server_config_free(c);
    config_set_deinit(&set);
}

static void test_bad_field_types(void)
{
    expect_problem_naming("{\"command\":\"x\",\"args\":\"-v\"}", "\"args\"", "array");
    expect_problem_naming("{\"command\":\"x\",\"args\":{\"a\":1}}", "\"args\"", NULL);
    expect_problem_naming("{\"command\":\"x\",\"args\":[\"ok\",3]}", "\"args[1]\"", "string");
    expect_problem_naming("{\"command\":\"x\",\"env\":{\"TOKEN\":1}}", "\"env.TOKEN\"", "string");
    expect_problem_naming("{\"command\":\"x\",\"env\":[\"A=b\"]}", "\"env\"", "object");
    expect_problem_naming("{\"url\":\"https://h\",\"headers\":{\"X\":true}}", "\"headers.X\"",
                          NULL);
    /* A tuning knob written wrong is a warning naming it; the server stays, with the default. */
    expect_warning_naming("{\"command\":\"x\",\"timeout\":-1}", "\"timeout\"", "non-negative");
    expect_warning_naming("{\"command\":\"x\",\"timeout\":\"5s\"}", "\"timeout\"", "string");
    expect_warning_naming("{\"command\":\"x\",\"timeout\":1.5}", "\"timeout\"", NULL);
    expect_warning_naming("{\"command\":\"x\",\"callTimeout\":-5}", "\"callTimeout\"", NULL);
    expect_warning_naming("{\"command\":\"x\",\"idleTimeoutMs\":true}", "\"idleTimeoutMs\"", NULL);
    expect_warning_naming("{\"command\":\"x\",\"pingIntervalMs\":-1}", "\"pingIntervalMs\"", NULL);
    /* Unknown fields: ignored with a warning, and the near miss named. */
    expect_warning_naming("{\"command\":\"x\",\"comand\":\"y\"}", "unknown field \"comand\"",
                          "did you mean \"command\"");
    expect_warning_naming("{\"command\":\"x\",\"zzz\":1}", "unknown field \"zzz\"", NULL);
    expect_problem_naming("{\"command\":\"x\",\"enabled\":\"yes\"}", "\"enabled\"", NULL);
    expect_problem_naming("{\"command\":\"x\",\"reconnect\":0}", "\"reconnect\"", NULL);
    expect_problem_naming("{\"command\":[\"x\"]}", "\"command\"", "string");
    expect_problem_naming("{\"url\":5}", "\"url\"", "string");
    expect_problem_naming("{\"command\":\"x\",\"cwd\":false}", "\"cwd\"", NULL);
    expect_problem_naming("{\"command\":\"x\",\"type\":1}", "\"type\"", NULL);
    expect_problem_naming("[\"command\"]", "must be an object", "array");
    expect_problem_naming("\"node server.js\"", "must be an object", "string");
}

/* A name outside mcpd's plain set is served under its plain form, said in one warning. */
static void expect_served_as(const char *name, const char *plain)
{
    ConfigSet set = {0};
    ServerConfig *c = from_text(name, "{\"command\":\"x\"}", NULL, &set);

    CHECK(c && streq(c->name, plain));
    CHECK_INTEQ(set.n_problems, 1);
    if (set.n_problems == 1) {
        const char *msg = set.problems[0].message;
        CHECK(set.problems[0].warning);
        CHECK_STREQ(set.problems[0].server, plain);
        CHECK_MSG(strstr(msg, name) && strstr(msg, plain), "%s", msg);
    }
    server_config_free(c);
    config_set_deinit(&set);
}

static void test_server_names(void)
{
    char long_name[CONFIG_MAX_SERVER_NAME + 2];
    char *plain;

    CHECK(config_check_name("ok-name_1.2") == NULL);
    CHECK(config_check_name("") != NULL);
    /* Agents accept these: VS Code's gallery writes "github/github-mcp-server". */
    CHECK(config_check_name("has space") == NULL);
    CHECK(config_check_name("slash/name") == NULL);
    CHECK(config_check_name("tab\there") != NULL);
    CHECK(config_plain_name("ok-name_1.2") == NULL);
    CHECK((plain = config_plain_name("github/github-mcp-server")) &&
          streq(plain, "github_github-mcp-server"));
    free(plain);
    CHECK((plain = config_plain_name("caf\xc3\xa9 x")) && streq(plain, "caf___x"));
    free(plain);
    /* Plain: a name is only ever the start of a file name ("..-<hash>.json"), never a path. */
    CHECK(config_plain_name("..") == NULL);
    memset(long_name, 'n', sizeof(long_name));
    long_name[CONFIG_MAX_SERVER_NAME] = '\0';
    CHECK(config_check_name(long_name) == NULL);
    long_name[CONFIG_MAX_SERVER_NAME] = 'n';
    long_name[CONFIG_MAX_SERVER_NAME + 1] = '\0';
    CHECK(config_check_name(long_name) != NULL);

    expect_problem_exact("", "{\"command\":\"x\"}", "Server name cannot be empty");
    expect_problem_exact("a\nb", "{\"command\":\"x\"}",
                         "Server name cannot contain control characters");
    expect_problem_exact(long_name, "{\"command\":\"x\"}",
                         "Server name is too long (max 100 characters)");
    expect_served_as("github/github-mcp-server", "github_github-mcp-server");
    expect_served_as("my server", "my_server");
    expect_served_as("../../etc", ".._.._etc");
}

static void test_hash(void)
{
    ConfigSet set = {0};
    ServerConfig *a = from_text("h",
                                "{\"command\":\"x\",\"args\":[\"1\",\"2\"],"
                                "\"env\":{\"A\":\"1\",\"B\":\"2\"}}",
                                NULL, &set);
    ServerConfig *b = from_text("h",
                                "{\"env\":{\"B\":\"2\",\"A\":\"1\"},"
                                "\"args\":[\"1\",\"2\"],\"command\":\"x\"}",
                                NULL, &set);
    ServerConfig *c = from_text("h",
                                "{\"command\":\"x\",\"args\":[\"1\",\"2\"],"
                                "\"env\":{\"A\":\"1\",\"B\":\"3\"}}",
                                NULL, &set);
    ServerConfig *d = from_text("h",
                                "{\"command\":\"x\",\"args\":[\"2\",\"1\"],"
                                "\"env\":{\"A\":\"1\",\"B\":\"2\"}}",
                                NULL, &set);
    ServerConfig *e = from_text("other",
                                "{\"command\":\"x\",\"args\":[\"1\",\"2\"],"
                                "\"env\":{\"A\":\"1\",\"B\":\"2\"}}",
                                NULL, &set);

    CHECK(a && b && c && d && e);
    CHECK_INTEQ(set.n_problems, 0);
    if (a && b && c && d && e) {
        /* Key order, at any depth, does not change the hash; any value change does. */
        CHECK_STREQ(a->hash, b->hash);
        CHECK(strcmp(a->hash, c->hash) != 0);
        CHECK(strcmp(a->hash, d->hash) != 0);
        CHECK(server_config_same(a, b));
        CHECK(!server_config_same(a, c));
        /* Same config, other name: same hash, not the same server. */
        CHECK_STREQ(a->hash, e->hash);
        CHECK(!server_config_same(a, e));
    }
    /* Forms that change nothing the server gets are the same server (issue 38 item 5). */
    static const char *const same_forms[] = {
        "{\"type\":\"stdio\",\"command\":\"x\",\"args\":[\"1\",\"2\"],\"env\":{\"A\":\"1\",\"B\":"
        "\"2\"}}",
        "{\"command\":\"x\",\"args\":[\"1\",\"2\"],\"env\":{\"A\":\"1\",\"B\":\"2\"},"
        "\"headers\":{},\"enabled\":true,\"timeout\":30000,\"disabledTools\":null}",
        "{\"command\":\"x\",\"args\":[\"1\",\"2\"],\"env\":{\"B\":\"2\",\"A\":\"1\"},"
        "\"description\":\"a note for people\",\"autoApprove\":[]}",
    };
    for (size_t i = 0; a && i < N_ELEMENTS(same_forms); i++) {
        ServerConfig *f = from_text("h", same_forms[i], NULL, &set);
        CHECK_MSG(f && streq(f->hash, a->hash), "%s", same_forms[i]);
        server_config_free(f);
    }
    ServerConfig *noenv = from_text("n", "{\"command\":\"x\"}", NULL, &set);
    ServerConfig *emptyenv =
        from_text("n", "{\"command\":\"x\",\"env\":{},\"args\":[]}", NULL, &set);
    ServerConfig *sse = from_text("n", "{\"url\":\"http://h/\",\"type\":\"sse\"}", NULL, &set);
    ServerConfig *http = from_text("n", "{\"url\":\"http://h/\",\"type\":\"http\"}", NULL, &set);
    ServerConfig *slow = from_text("n", "{\"command\":\"x\",\"timeout\":5}", NULL, &set);
    CHECK(noenv && emptyenv && streq(noenv->hash, emptyenv->hash));
    /* What the server gets or how it is reached does change it. */
    CHECK(sse && http && !streq(sse->hash, http->hash));
    CHECK(slow && noenv && !streq(slow->hash, noenv->hash));
    server_config_free(noenv);
    server_config_free(emptyenv);
    server_config_free(sse);
    server_config_free(http);
    server_config_free(slow);
    server_config_free(a);
    server_config_free(b);
    server_config_free(c);
    server_config_free(d);
    server_config_free(e);

    /* Settings do not enter the hash: it covers the unresolved entry only. */
    Settings s;
    settings_init(&s);
    s.timeout_ms = 1;
    ServerConfig *f = from_text("h", "{\"command\":\"x\"}", NULL, &set);
    ServerConfig *g = from_text("h", "{\"command\":\"x\"}", &s, &set);
    CHECK(f && g && streq(f->hash, g->hash));
    server_config_free(f);
    server_config_free(g);
    config_set_deinit(&set);
}

/* A temp dir with two native config files and helpers to load them. */
typedef struct Fixture {
    char *dir;
    char *first;
    char *second;
} Fixture;

static void fixture_init(Fixture *fx, const char *first, const char *second)
{
    fx->dir = test_tmpdir();
    fx->first = paths_join(fx->dir, "first.json");
    fx->second = paths_join(fx->dir, "second.json");
    if (first)
        test_write_file(fx->first, first);
    if (second)
        test_write_file(fx->second, second);
}

static void fixture_deinit(Fixture *fx)
{
    test_rm_rf(fx->dir);
    free(fx->dir);
    free(fx->first);
    free(fx->second);
}

static void load_both(const Fixture *fx, ConfigSet *set)
{
    Settings s;

    settings_init(&s);
    config_load_native_file(set, fx->first, "mcpd", "mcpd (project)", CONFIG_LEVEL_PROJECT, &s);
    config_load_native_file(set, fx->second, "mcpd", "mcpd (user)", CONFIG_LEVEL_USER, &s);
}

static void test_native_first_wins(void)
{
    Fixture fx;
    ConfigSet set = {0};

    fixture_init(&fx,
                 "{\"mcpServers\":{\"one\":{\"command\":\"a1\"},\"dup\":{\"command\":\"fromA\"},"
                 "\"off\":{\"command\":\"a\",\"enabled\":false}}}",
                 "{\"mcpServers\":{\"dup\":{\"command\":\"fromB\"},\"two\":{\"url\":\"http://h\"},"
                 "\"off\":{\"command\":\"b\"}}}");
    load_both(&fx, &set);
    CHECK_INTEQ(set.n_problems, 0);
    CHECK_INTEQ(set.n_servers, 4);
    if (set.n_servers == 4) {
        /* Priority order: the first file's entries, then the second's new ones. */
        CHECK_STREQ(set.servers[0]->name, "one");
        CHECK_STREQ(set.servers[1]->name, "dup");
        CHECK_STREQ(set.servers[2]->name, "off");
        CHECK_STREQ(set.servers[3]->name, "two");
    }
    ServerConfig *dup = config_set_find(&set, "dup");
    CHECK(dup && streq(dup->command, "fromA"));
    CHECK(dup && streq(dup->source.path, fx.first));
    CHECK(dup && dup->source.level == CONFIG_LEVEL_PROJECT);
    CHECK(dup && streq(dup->source.provider_name, "mcpd (project)"));
    ServerConfig *two = config_set_find(&set, "two");
    CHECK(two && streq(two->source.path, fx.second) && two->source.level == CONFIG_LEVEL_USER);
    /* A disabled entry still masks a lower one of the same name, on purpose. */
    ServerConfig *off = config_set_find(&set, "off");
    CHECK(off && !off->enabled && streq(off->command, "a"));
    CHECK(config_set_find(&set, "nope") == NULL);
    config_set_deinit(&set);
    fixture_deinit(&fx);
}

static void test_native_invalid_does_not_mask(void)
{
    Fixture fx;
    ConfigSet set = {0};

    fixture_init(&fx, "{\"mcpServers\":{\"bad\":{\"type\":\"stdio\"},\"ok\":{\"command\":\"a\"}}}",
                 "{\"mcpServers\":{\"bad\":{\"command\":\"fromB\"}}}");
    load_both(&fx, &set);
    ServerConfig *bad = config_set_find(&set, "bad");
    CHECK(bad != NULL);
    CHECK(bad && streq(bad->command, "fromB"));
    CHECK(bad && streq(bad->source.path, fx.second));
    CHECK(config_set_find(&set, "ok") != NULL);
    CHECK_INTEQ(set.n_servers, 2);
    /* The invalid entry is reported with its file and server. */
    CHECK_INTEQ(set.n_problems, 1);
    if (set.n_problems == 1) {
        CHECK_STREQ(set.problems[0].path, fx.first);
        CHECK_STREQ(set.problems[0].server, "bad");
        CHECK_STREQ(set.problems[0].message,
                    "Server \"bad\": stdio server requires \"command\" field");
    }
    config_set_deinit(&set);
    fixture_deinit(&fx);
}

static void test_native_missing_and_broken_files(void)
{
    Fixture fx;
    ConfigSet set = {0};

    /* Neither file exists: nothing, silently. */
    fixture_init(&fx, NULL, NULL);
    load_both(&fx, &set);
    CHECK_INTEQ(set.n_servers, 0);
    CHECK_INTEQ(set.n_problems, 0);
    config_set_deinit(&set);

    /* A missing file under a path component that is a file is just as silent. */
    Settings s;
    settings_init(&s);
    test_write_file(fx.first, "{}");
    _cleanup_free_ char *under = paths_join(fx.first, "mcp.json");
    config_load_native_file(&set, under, "mcpd", "x", CONFIG_LEVEL_USER, &s);
    CHECK_INTEQ(set.n_problems, 0);
    /* A file with no mcpServers has no servers and no problem. */
    config_load_native_file(&set, fx.first, "mcpd", "x", CONFIG_LEVEL_USER, &s);
    CHECK_INTEQ(set.n_problems, 0);
    CHECK_INTEQ(set.n_servers, 0);
    config_set_deinit(&set);

    /* Invalid JSON in the first file: a problem naming the path; the second still loads. */
    test_write_file(fx.first, "{\"mcpServers\": {\"a\": {\"command\": \"x\",}}\n");
    test_write_file(fx.second, "{\"mcpServers\":{\"a\":{\"command\":\"y\"}}}");
    load_both(&fx, &set);
    CHECK_INTEQ(set.n_problems, 1);
    if (set.n_problems == 1) {
        CHECK_STREQ(set.problems[0].path, fx.first);
        CHECK(set.problems[0].server == NULL);
        CHECK(startswith(set.problems[0].message, "invalid JSON"));
        CHECK(strchr(set.problems[0].message, '\n') == NULL);
    }
    CHECK(set.n_servers == 1 && streq(set.servers[0]->command, "y"));
    config_set_deinit(&set);

    /* Safe reload: a file that parsed once keeps its last good version through a typo. */
    test_write_file(fx.first, "{\"mcpServers\": {\"a\": {\"command\": \"good\"}}}\n");
    set.keep_last_good = true; /* as discovery sets it */
    load_both(&fx, &set);
    CHECK(set.n_servers == 1 && streq(set.servers[0]->command, "good"));
    config_set_deinit(&set);
    test_write_file(fx.first, "{\"mcpServers\": {\n  \"a\": {\"command\": \"new\"},\n}}\n");
    set.keep_last_good = true;
    load_both(&fx, &set);
    CHECK(set.n_servers == 1 && streq(set.servers[0]->command, "good"));
    CHECK_INTEQ(set.n_problems, 1);
    if (set.n_problems == 1) {
        _cleanup_free_ char *where = xasprintf("%s:3:1", fx.first);
        bool ok = strstr(set.problems[0].message, where) &&
                  strstr(set.problems[0].message, "kept its servers");
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  -> %s\n", set.problems[0].message);
    }
    config_set_deinit(&set);
    config_forget_good();

    /* Wrong shapes: each is a problem naming the path. */
    static const char *const shapes[] = {"[]", "\"x\"", "{\"mcpServers\":[]}",
                                         "{\"mcpServers\":\"a\"}"};
    for (size_t i = 0; i < N_ELEMENTS(shapes); i++) {
        test_write_file(fx.first, shapes[i]);
        config_load_native_file(&set, fx.first, "mcpd", "x", CONFIG_LEVEL_USER, &s);
        CHECK_INTEQ(set.n_problems, i + 1);
        CHECK(set.n_problems == i + 1 && streq(set.problems[i].path, fx.first));
    }
    CHECK_INTEQ(set.n_servers, 0);
    config_set_deinit(&set);

    /* A directory where the file should be. */
    CHECK(remove(fx.second) == 0);
    CHECK(mkdir(fx.second, 0700) == 0);
    config_load_native_file(&set, fx.second, "mcpd", "x", CONFIG_LEVEL_USER, &s);
    CHECK_INTEQ(set.n_problems, 1);
    CHECK(set.n_problems == 1 && streq(set.problems[0].path, fx.second));
    config_set_deinit(&set);

    /* Larger than any config file: refused with a reason rather than read. */
    FILE *f = fopen(fx.first, "w");
    CHECK(f != NULL);
    if (f) {
        CHECK(fseek(f, 4L * 1024 * 1024, SEEK_SET) == 0);
        CHECK(fputs("{}", f) >= 0);
        fclose(f);
    }
    config_load_native_file(&set, fx.first, "mcpd", "x", CONFIG_LEVEL_USER, &s);
    CHECK_INTEQ(set.n_problems, 1);
    CHECK(set.n_problems == 1 && strstr(set.problems[0].message, "larger than"));
    config_set_deinit(&set);
    config_set_deinit(&set); /* safe twice */
    fixture_deinit(&fx);
}

static void test_discover(void)
{
    _cleanup_free_ char *tmp = test_tmpdir();
    _cleanup_free_ char *conf = paths_join(tmp, "config");
    _cleanup_free_ char *user_dir = paths_join(conf, "mcpd");
    _cleanup_free_ char *user = paths_join(user_dir, "mcp.json");
    _cleanup_free_ char *root = paths_join(tmp, "proj");
    _cleanup_free_ char *proj_dir = paths_join(root, ".mcpd");
    _cleanup_free_ char *proj = paths_join(proj_dir, "mcp.json");
    _cleanup_free_ char *explicit = paths_join(tmp, "explicit.json");
    Settings s;
    ConfigSet set;

    CHECK_INTEQ(paths_mkdir_p(user_dir, 0700), 0);
    CHECK_INTEQ(paths_mkdir_p(proj_dir, 0700), 0);
    test_write_file(user, "{\"mcpServers\":{\"u\":{\"command\":\"user\"},"
                          "\"both\":{\"command\":\"user\"}}}");
    test_write_file(proj, "{\"mcpServers\":{\"both\":{\"command\":\"project\"}}}");
    test_write_file(explicit, "{\"mcpServers\":{\"e\":{\"command\":\"explicit\"}}}");
    _cleanup_free_ char *state = paths_join(tmp, "state");
    _cleanup_free_ char *why = NULL;
    setenv("XDG_CONFIG_HOME", conf, 1);
    setenv("XDG_STATE_HOME", state, 1);
    settings_init(&s);
    /* The user approves the project (mcpctl trust); the gate itself is tested in test-trust. */
    CHECK_INTEQ(trust_approve_root(root, &s, NULL, NULL, NULL, &why), 0);

    /* The project file comes first and wins. */
    DiscoverOptions opt = {NULL, root};
    CHECK_INTEQ(config_discover(&set, &opt, &s), 0);
    ServerConfig *both = config_set_find(&set, "both");
    CHECK(both && streq(both->command, "project") && both->source.level == CONFIG_LEVEL_PROJECT);
    CHECK(config_set_find(&set, "u") != NULL);
    CHECK_INTEQ(set.n_servers, 2);
    config_set_deinit(&set);

    /* Project config switched off, or no project: user servers only. */
    s.enable_project_config = false;
    CHECK_INTEQ(config_discover(&set, &opt, &s), 0);
    both = config_set_find(&set, "both");
    CHECK(both && streq(both->command, "user"));
    config_set_deinit(&set);
    s.enable_project_config = true;
    DiscoverOptions user_only = {NULL, NULL};
    CHECK_INTEQ(config_discover(&set, &user_only, &s), 0);
    CHECK_INTEQ(set.n_servers, 2);
    both = config_set_find(&set, "both");
    CHECK(both && streq(both->command, "user"));
    config_set_deinit(&set);

    /* --config: that file only. */
    DiscoverOptions only = {explicit, root};
    CHECK_INTEQ(config_discover(&set, &only, &s), 0);
    CHECK_INTEQ(set.n_servers, 1);
    CHECK(set.n_servers == 1 && streq(set.servers[0]->name, "e"));
    config_set_deinit(&set);

    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_STATE_HOME");
    test_rm_rf(tmp);
}

static bool settings_equal(const Settings *a, const Settings *b)
{
    return a->enable_project_config == b->enable_project_config &&
           a->startup_timeout_ms == b->startup_timeout_ms &&
           a->max_message_bytes == b->max_message_bytes && a->cache_ttl_days == b->cache_ttl_days &&
           a->timeout_ms == b->timeout_ms && a->call_timeout_ms == b->call_timeout_ms &&
           a->max_call_timeout_ms == b->max_call_timeout_ms &&
           a->idle_timeout_ms == b->idle_timeout_ms && a->reconnect == b->reconnect &&
           a->filter_exa == b->filter_exa && a->workspace_linger_ms == b->workspace_linger_ms &&
           a->disabled_providers == b->disabled_providers;
}

/* "start" per server and in the settings: lazy or eager, anything else refused by name. */
static void test_start(void)
{
    ConfigSet set = {0};
    Settings s;

    settings_init(&s);
    ServerConfig *c = from_text("e", "{\"command\":\"x\",\"start\":\"eager\"}", &s, &set);
    CHECK(c && c->start == CONFIG_START_EAGER && !c->idle_timeout_set);
    server_config_free(c);
    s.start = CONFIG_START_EAGER;
    c = from_text("l", "{\"command\":\"x\",\"start\":\"lazy\",\"idleTimeoutMs\":5}", &s, &set);
    CHECK(c && c->start == CONFIG_START_LAZY && c->idle_timeout_set && c->idle_timeout_ms == 5);
    server_config_free(c);
    c = from_text("d", "{\"command\":\"x\"}", &s, &set);
    CHECK(c && c->start == CONFIG_START_EAGER); /* the settings' default */
    server_config_free(c);
    CHECK_INTEQ(set.n_problems, 0);
    config_set_deinit(&set);
    expect_problem_exact("bad", "{\"command\":\"x\",\"start\":\"later\"}",
                         "Server \"bad\": \"start\" must be \"lazy\" or \"eager\"");
    expect_problem_exact("bad", "{\"command\":\"x\",\"start\":true}",
                         "Server \"bad\": \"start\" must be \"lazy\" or \"eager\"");
}

static void test_settings_load(void)
{
    _cleanup_free_ char *tmp = test_tmpdir();
    _cleanup_free_ char *path = paths_join(tmp, "mcpd.json");
    ConfigSet problems = {0};
    Settings s, defaults;

    settings_init(&defaults);

    /* Missing: defaults, no problem. */
    settings_init(&s);
    CHECK_INTEQ(settings_load(&s, path, &problems), 0);
    CHECK_INTEQ(problems.n_problems, 0);
    CHECK(settings_equal(&s, &defaults));

    /* Every key, valid. */
    test_write_file(path, "{\"enableProjectConfig\":false,\"reconnect\":false,"
                          "\"startupTimeoutMs\":1000,\"maxMessageBytes\":65536,"
                          "\"cacheTtlDays\":7,\"timeout\":1500,\"callTimeout\":2500,"
                          "\"maxCallTimeout\":3500,\"idleTimeoutMs\":4500,\"unknownKey\":1,"
                          "\"start\":\"eager\","
                          "\"filterExa\":false,\"workspaceLingerMs\":1000,"
                          "\"disabledProviders\":[\"cursor\",\"codex\"],\"$schema\":\"x\"}");
    settings_init(&s);
    CHECK_INTEQ(settings_load(&s, path, &problems), 0);
    /* A typo would silently do nothing: unknown keys are reported ("$schema" is not). */
    CHECK_INTEQ(problems.n_problems, 1);
    CHECK(problems.n_problems == 1 &&
          streq(problems.problems[0].message, "unknown setting \"unknownKey\" (ignored)"));
    config_set_deinit(&problems);
    CHECK(s.filter_exa == false);
    CHECK_INTEQ(s.workspace_linger_ms, 1000);
    CHECK_INTEQ(s.disabled_providers,
                (1u << config_source_index("cursor")) | (1u << config_source_index("codex")));
    CHECK(s.enable_project_config == false);
    CHECK(s.reconnect == false);
    CHECK_INTEQ(s.startup_timeout_ms, 1000);
    CHECK_INTEQ(s.max_message_bytes, 65536);
    CHECK_INTEQ(s.cache_ttl_days, 7);
    CHECK_INTEQ(s.timeout_ms, 1500);
    CHECK_INTEQ(s.call_timeout_ms, 2500);
    CHECK_INTEQ(s.max_call_timeout_ms, 3500);
    CHECK_INTEQ(s.idle_timeout_ms, 4500);
    CHECK_INTEQ(s.start, CONFIG_START_EAGER);

    /* Invalid values: each one a problem naming its key; the default stays; valid keys apply. */
    static const char *const keys[] = {
        "enableProjectConfig", "reconnect", "startupTimeoutMs",  "maxMessageBytes",
        "cacheTtlDays",        "timeout",   "callTimeout",       "maxCallTimeout",
        "idleTimeoutMs",       "filterExa", "workspaceLingerMs", "disabledProviders"};
    test_write_file(path, "{\"enableProjectConfig\":\"no\",\"reconnect\":1,"
                          "\"startupTimeoutMs\":-1,\"maxMessageBytes\":100,"
                          "\"cacheTtlDays\":4000,\"timeout\":\"30s\",\"callTimeout\":1.5,"
                          "\"maxCallTimeout\":[],\"idleTimeoutMs\":3000000000,"
                          "\"filterExa\":\"yes\",\"workspaceLingerMs\":-1,"
                          "\"disabledProviders\":\"claude\"}");
    settings_init(&s);
    CHECK_INTEQ(settings_load(&s, path, &problems), 0);
    CHECK_INTEQ(problems.n_problems, N_ELEMENTS(keys));
    for (size_t i = 0; i < N_ELEMENTS(keys); i++) {
        _cleanup_free_ char *quoted = xasprintf("\"%s\"", keys[i]);
        bool found = false;
        for (size_t j = 0; j < problems.n_problems; j++)
            if (strstr(problems.problems[j].message, quoted) &&
                streq(problems.problems[j].path, path))
                found = true;
        CHECK(found);
        if (!found)
            fprintf(stderr, "  no problem names %s\n", quoted);
    }
    CHECK(settings_equal(&s, &defaults));
    config_set_deinit(&problems);

    /* disabledProviders: an unknown id is named with the known ones; the others apply. */
    test_write_file(path, "{\"disabledProviders\":[\"claude\",\"claude-code\",3]}");
    settings_init(&s);
    CHECK_INTEQ(settings_load(&s, path, &problems), 0);
    CHECK_INTEQ(problems.n_problems, 2);
    if (problems.n_problems == 2) {
        CHECK_STREQ(problems.problems[0].message,
                    "\"disabledProviders[1]\": unknown provider \"claude-code\" (known: \"mcpd\", "
                    "\"imported\", \"claude\", \"codex\", \"gemini\", \"cursor\", \"windsurf\", "
                    "\"vscode\", \"mcp-json\", \"copilot\", \"claude-desktop\", \"opencode\", "
                    "\"zed\", \"cline\", \"roo\", \"kiro\", \"antigravity\", \"antigravity-cli\", "
                    "\"goose\", "
                    "\"continue\")");
        CHECK(strstr(problems.problems[1].message, "\"disabledProviders[2]\": unknown provider 3"));
    }
    CHECK_INTEQ(s.disabled_providers, 1u << config_source_index("claude"));
    config_set_deinit(&problems);

    test_write_file(path, "{\"timeout\":-5,\"callTimeout\":100}");
    settings_init(&s);
    CHECK_INTEQ(settings_load(&s, path, &problems), 0);
    CHECK_INTEQ(problems.n_problems, 1);
    CHECK(problems.n_problems == 1 &&
          streq(problems.problems[0].message, "\"timeout\" must be an integer from 0 to "
                                              "2147483647"));
    CHECK_INTEQ(s.timeout_ms, CONFIG_DEFAULT_TIMEOUT_MS);
    CHECK_INTEQ(s.call_timeout_ms, 100);
    config_set_deinit(&problems);

    /* Not JSON, or not an object: an error and a problem naming the path. */
    test_write_file(path, "{timeout: 5}");
    config_forget_good(); /* as on a first start: no good version to fall back on */
    settings_init(&s);
    CHECK(settings_load(&s, path, &problems) < 0);
    CHECK(problems.n_problems == 1 && streq(problems.problems[0].path, path));
    CHECK(settings_equal(&s, &defaults));
    config_set_deinit(&problems);
    test_write_file(path, "[1]");
    CHECK_INTEQ(settings_load(&s, path, &problems), -EINVAL);
    CHECK(problems.n_problems == 1 && streq(problems.problems[0].path, path));
    config_set_deinit(&problems);
    test_rm_rf(tmp);
}

/* The field a refused or noted entry is about, as config_problems_json gives it. */
static void expect_field(const char *text, const char *want_field, bool warning)
{
    ConfigSet set = {0};
    ServerConfig *c = from_text("srv", text, NULL, &set);
    _cleanup_json_ yajl_val arr = config_problems_json(&set);
    yajl_val p = json_array_at(arr, 0);

    CHECK_INTEQ(json_array_len(arr), 1);
    CHECK_STREQ(json_get_string(p, "server"), "srv");
    CHECK_STREQ(json_get_string(p, "path"), test_src.path);
    if (want_field)
        CHECK_STREQ(json_get_string(p, "field"), want_field);
    else
        CHECK(json_get(p, "field") == NULL);
    CHECK(streq(json_get_string(p, "severity") ?: "", "warning") == warning);
    server_config_free(c);
    config_set_deinit(&set);
}

/*
 * Every problem about an entry names the file, the server and the field (mcpctl status prints
 * them); Claude Code's "ws" transport is refused saying what to do instead.
 */
static void test_problem_fields(void)
{
    ConfigSet set = {0};

    expect_field("{\"command\": 7}", "command", false);
    expect_field("{\"command\": \"x\", \"args\": [\"a\", 2]}", "args[1]", false);
    expect_field("{\"command\": \"x\", \"env\": {\"K\": 1}}", "env.K", false);
    expect_field("{\"type\": \"stdio\"}", "command", false);
    expect_field("{\"type\": \"http\"}", "url", false);
    expect_field("{\"type\": \"websocket\", \"url\": \"wss://h\"}", "type", false);
    expect_field("{\"command\": \"x\", \"comand\": \"y\"}", "comand", true);
    expect_field("{\"command\": \"x\", \"timeout\": \"soon\"}", "timeout", true);
    expect_field("{\"command\": \"x\", \"headersHelper\": \"h.sh\"}", "headersHelper", true);
    expect_field("{\"command\": \"x\", \"url\": \"https://h\"}", NULL, false);
    /* Claude Code's OAuth discovery override is not honoured: said, with what to write. */
    expect_field("{\"type\": \"http\", \"url\": \"https://h/mcp\", \"oauth\": {\"clientId\": "
                 "\"abc\", \"callbackPort\": 8080, \"authServerMetadataUrl\": "
                 "\"https://auth.example.com/.well-known/openid-configuration\"}}",
                 "oauth.authServerMetadataUrl", true);

    CHECK(from_text("claude-ws", "{\"type\": \"ws\", \"url\": \"wss://mcp.example.com/ws\"}", NULL,
                    &set) == NULL);
    CHECK_INTEQ(set.n_problems, 1);
    CHECK(strstr(set.problems[0].message, "WebSocket") != NULL);
    CHECK(strstr(set.problems[0].message, "\"type\": \"http\"") != NULL);
    CHECK_STREQ(set.problems[0].field, "type");
    config_set_deinit(&set);
}

int main(void)
{
    /* Problems are logged as warnings too; the tests check them through the set instead. */
    log_set_level(LOG_ERR);
    RUN(test_full_stdio_entry);
    RUN(test_defaults_from_settings);
    RUN(test_start);
    RUN(test_transport_types);
    RUN(test_seed_validation_messages);
    RUN(test_bad_field_types);
    RUN(test_problem_fields);
    RUN(test_server_names);
    RUN(test_hash);
    RUN(test_native_first_wins);
    RUN(test_native_invalid_does_not_mask);
    RUN(test_native_missing_and_broken_files);
    RUN(test_discover);
    RUN(test_settings_load);
    return test_main_result();
}
