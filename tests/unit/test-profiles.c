// SPDX-License-Identifier: MIT
// test-profiles: unit tests for mcpd.json's profiles: reading them with their problems named,
// globs over servers and tools, pins, budgets, a project's choice.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/config/configset-json.h"
#include "daemon/config/profiles.h"
#include "tests/unit/test.h"

/* Whether one of set's problems holds needle. */
static bool has_problem(const ConfigSet *set, const char *needle)
{
    _cleanup_json_ yajl_val v = config_problems_json(set);
    _cleanup_free_ char *text = json_to_string(v);

    return strstr(text, needle) != NULL;
}

static void load(Profiles *ps, ConfigSet *set, const char *json)
{
    _cleanup_free_ char *dir = test_tmpdir(), *path = xasprintf("%s/mcpd.json", dir);

    test_write_file(path, json);
    profiles_load(ps, path, set);
    test_rm_rf(dir);
}

static void test_globs(void)
{
    Profiles ps = {0};
    ConfigSet set = {0};

    load(&ps, &set,
         "{\"profiles\":{\"web\":{\"servers\":[\"git*\",\"playwright\"],\"tools\":"
         "[\"github/*issue*\",\"playwright/*\"],\"pinned\":[\"memory/read_graph\"],"
         "\"mode\":\"auto\",\"tokenBudget\":500},\"plain\":{}},"
         "\"clientProfiles\":{\"claude-code\":\"web\"},\"toolTokenBudget\":7000}");
    CHECK_INTEQ(set.n_problems, 0);
    const Profile *web = profiles_find(&ps, "web"), *plain = profiles_find(&ps, "plain");
    CHECK(web && plain && !profiles_find(&ps, "nope"));
    CHECK(web->mode == PROFILE_MODE_AUTO && plain->mode == PROFILE_MODE_ALL);
    CHECK(profile_allows(web, "github", "create_issue"));
    CHECK(!profile_allows(web, "github", "create_branch")); /* not in tools */
    CHECK(profile_allows(web, "playwright", "browser_click"));
    CHECK(!profile_allows(web, "slack", "post_message")); /* not in servers */
    CHECK(profile_allows(web, "memory", "read_graph"));   /* pinned, whatever else */
    CHECK(profile_pinned(web, "memory", "read_graph") && !profile_pinned(web, "github", "x"));
    CHECK(profile_allows(plain, "anything", "at_all"));
    CHECK_INTEQ(profile_token_budget(&ps, web), 500);
    CHECK_INTEQ(profile_token_budget(&ps, plain), 7000);
    CHECK_STREQ(profiles_for_client(&ps, "claude-code"), "web");
    CHECK(!profiles_for_client(&ps, "cursor"));
    profiles_deinit(&ps);
    config_set_deinit(&set);
    CHECK_INTEQ(ps.token_budget, PROFILES_DEFAULT_TOKEN_BUDGET);
}

static void test_problems(void)
{
    Profiles ps = {0};
    ConfigSet set = {0};

    load(&ps, &set,
         "{\"profiles\":{\"a b\":{},\"x\":{\"mode\":\"some\",\"servers\":\"git\",\"tools\":[7],"
         "\"colour\":1,\"tokenBudget\":-1}},\"clientProfiles\":{\"cc\":\"missing\"},"
         "\"toolTokenBudget\":\"lots\"}");
    CHECK(has_problem(&set, "profiles.a b: a profile is an object named by"));
    CHECK(has_problem(&set, "profiles.x.mode must be"));
    CHECK(has_problem(&set, "profiles.x.servers must be an array"));
    CHECK(has_problem(&set, "profiles.x.tools[0] must be a non-empty string"));
    CHECK(has_problem(&set, "profiles.x: unknown field \\\"colour\\\""));
    CHECK(has_problem(&set, "profiles.x.tokenBudget must be"));
    CHECK(has_problem(&set, "clientProfiles.cc must name a profile"));
    CHECK(has_problem(&set, "\\\"toolTokenBudget\\\" must be"));
    /* What was right is kept: x exists, in all mode, every server, the default budget. */
    const Profile *x = profiles_find(&ps, "x");
    CHECK(x && x->mode == PROFILE_MODE_ALL && profile_allows(x, "any", "tool"));
    CHECK(!profiles_find(&ps, "a b") && !profiles_for_client(&ps, "cc"));
    CHECK_INTEQ(profile_token_budget(&ps, x), PROFILES_DEFAULT_TOKEN_BUDGET);
    profiles_deinit(&ps);
    config_set_deinit(&set);

    /* Not an object, or no file: no profiles, no crash. */
    load(&ps, &set, "[1,2]");
    CHECK_INTEQ(ps.n, 0);
    profiles_load(&ps, "/nonexistent/mcpd.json", &set);
    CHECK_INTEQ(ps.n, 0);
    profiles_deinit(&ps);
    config_set_deinit(&set);
}

static void test_project_choice(void)
{
    _cleanup_free_ char *dir = test_tmpdir(), *sub = xasprintf("%s/.mcpd", dir);
    _cleanup_free_ char *path = xasprintf("%s/mcpd.json", sub);

    CHECK(!profiles_project_choice(dir));
    CHECK(mkdir(sub, 0700) == 0);
    test_write_file(path, "{\"profile\":\"web\",\"profiles\":{\"evil\":{}}}");
    _cleanup_free_ char *name = profiles_project_choice(dir);
    CHECK_STREQ(name, "web");
    test_write_file(path, "{\"profile\":7}");
    CHECK(!profiles_project_choice(dir));
    CHECK(!profiles_project_choice(NULL));
    test_rm_rf(dir);
}

int main(void)
{
    RUN(test_globs);
    RUN(test_problems);
    RUN(test_project_choice);
    return test_main_result();
}
