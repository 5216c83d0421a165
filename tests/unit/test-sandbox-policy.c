// SPDX-License-Identifier: MIT
// test-sandbox-policy: an entry's "sandbox" value and mcpd.json's profiles read into one policy
// (daemon/config/sandbox-policy.c): every form, every refusal, the bounds, a cycle of bases.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/sandbox-policy.h"
#include "tests/unit/test.h"

/* Read text as a "sandbox" value against profiles (JSON text or NULL); the policy or NULL. */
static yajl_val read_value(const char *text, yajl_val profiles, int *rp, char **errp, char **warnp)
{
    _cleanup_json_ yajl_val v = json_parse(text, NULL);
    StrBuf err = STRBUF_INIT, warn = STRBUF_INIT;
    yajl_val out = NULL;

    *rp = sandbox_policy_from_json(&out, v, profiles, "s", &err, &warn);
    *errp = strbuf_detach(&err, NULL);
    *warnp = strbuf_detach(&warn, NULL);
    return out;
}

static void test_forms(void)
{
    static const char *const off[] = {"false", "null"};
    _cleanup_free_ char *e = NULL, *w = NULL;
    int r;

    for (size_t i = 0; i < N_ELEMENTS(off); i++) {
        yajl_val p = read_value(off[i], NULL, &r, &e, &w);
        CHECK(r == 0 && !p);
        free(e), free(w), e = w = NULL;
    }
    _cleanup_json_ yajl_val t = read_value("true", NULL, &r, &e, &w);
    CHECK(r == 0 && streq(json_get_string(t, "profile"), "read-only"));
    CHECK(YAJL_IS_FALSE(json_get(t, "network")) && YAJL_IS_FALSE(json_get(t, "projectWrite")));
    free(e), free(w), e = w = NULL;
    for (const char *const *b = sandbox_builtin_profiles(); *b; b++) {
        _cleanup_free_ char *text = xasprintf("\"%s\"", *b);
        _cleanup_json_ yajl_val p = read_value(text, NULL, &r, &e, &w);
        CHECK_MSG(r == 0 && streq(json_get_string(p, "profile"), *b), "%s", *b);
        CHECK(YAJL_IS_TRUE(json_get(p, "network")) == (strstr(*b, "network") != NULL));
        CHECK(YAJL_IS_TRUE(json_get(p, "projectWrite")) == (strstr(*b, "project") != NULL));
        free(e), free(w), e = w = NULL;
    }
    /* An object on a base: its flags and lists, "~/" made absolute; unknown fields warned. */
    setenv("HOME", "/home/u", 1);
    _cleanup_json_ yajl_val o = read_value(
        "{\"profile\": \"network\", \"projectWrite\": true, \"allowWrite\": [\"~/out\", \"/x\"], "
        "\"denyRead\": [\"~\"], \"color\": 1}",
        NULL, &r, &e, &w);
    CHECK(r == 0 && streq(json_get_string(o, "profile"), "network"));
    CHECK(YAJL_IS_TRUE(json_get(o, "network")) && YAJL_IS_TRUE(json_get(o, "projectWrite")));
    yajl_val aw = json_get_array(o, "allowWrite");
    CHECK(json_array_len(aw) == 2 && streq(json_array_at(aw, 0)->u.string, "/home/u/out"));
    CHECK(streq(json_array_at(json_get_array(o, "denyRead"), 0)->u.string, "/home/u"));
    CHECK_MSG(strstr(w, "unknown field \"color\""), "warn: %s", w);
    free(e), free(w), e = w = NULL;
}

static void test_refused(void)
{
    static const char *const bad[][2] = {
        {"\"nope\"", "no sandbox profile \"nope\""},
        {"1", "must be true, false, a profile's name or an object"},
        {"{\"network\": \"yes\"}", "\"network\" must be true or false"},
        {"{\"allowWrite\": \"/x\"}", "\"allowWrite\" must be an array"},
        {"{\"denyRead\": [\"relative/x\"]}", "\"denyRead[0]\" must be an absolute path"},
        {"{\"denyWrite\": [3]}", "\"denyWrite[0]\" must be an absolute path"},
        {"{\"profile\": 3}", "\"profile\" must be a profile's name"},
    };
    int r;

    for (size_t i = 0; i < N_ELEMENTS(bad); i++) {
        char *e = NULL, *w = NULL;
        yajl_val p = read_value(bad[i][0], NULL, &r, &e, &w);
        CHECK_MSG(r == -EINVAL && !p && strstr(e, bad[i][1]) && strstr(e, "Server \"s\""),
                  "%s: %d %s", bad[i][0], r, e);
        free(e), free(w), e = w = NULL;
    }
    /* 64 paths is the bound of one list, the base profile's counted. */
    StrBuf many = STRBUF_INIT;
    strbuf_puts(&many, "{\"allowWrite\": [");
    for (int i = 0; i < 65; i++)
        strbuf_printf(&many, "%s\"/p%d\"", i ? "," : "", i);
    strbuf_puts(&many, "]}");
    char *e = NULL, *w = NULL;
    yajl_val p = read_value(strbuf_str(&many), NULL, &r, &e, &w);
    CHECK_MSG(r == -EINVAL && !p && strstr(e, "more than 64"), "%s", e);
    free(e), free(w), e = w = NULL;
    strbuf_deinit(&many);
}

static void test_profiles(void)
{
    _cleanup_json_ yajl_val v = json_parse(
        "{\"docs\": {\"denyRead\": [\"/d\"]}, \"web\": {\"profile\": \"docs\", \"network\": true, "
        "\"allowWrite\": [\"/w\"]}, \"read-only\": {\"network\": true}, \"loop-a\": {\"profile\": "
        "\"loop-b\"}, \"loop-b\": {\"profile\": \"loop-a\"}, \"broken\": {\"denyRead\": 1}, "
        "\"notobj\": 3}",
        NULL);
    yajl_val kept = NULL;
    StrBuf problems = STRBUF_INIT;
    int r;

    sandbox_profiles_load(&kept, v, &problems);
    CHECK(json_get(kept, "docs") && json_get(kept, "web"));
    /* A built-in name, a cycle, a bad list and a non-object are each a problem, left out. */
    CHECK(!json_get(kept, "read-only") && !json_get(kept, "loop-a") && !json_get(kept, "broken") &&
          !json_get(kept, "notobj"));
    size_t lines = 0;
    for (const char *l = strbuf_str(&problems); (l = strchr(l, '\n')); l++)
        lines++;
    CHECK_MSG(lines == 5, "problems:\n%s", strbuf_str(&problems));
    CHECK(strstr(strbuf_str(&problems), "based on itself") &&
          strstr(strbuf_str(&problems), "cannot be redefined"));
    strbuf_deinit(&problems);

    /* A profile on a profile: lists added up, the name kept, its own flag over the base's. */
    char *e = NULL, *w = NULL;
    _cleanup_json_ yajl_val p =
        read_value("{\"profile\": \"web\", \"denyRead\": [\"/e\"]}", kept, &r, &e, &w);
    CHECK_MSG(r == 0, "%s", e);
    CHECK(streq(json_get_string(p, "profile"), "web") && YAJL_IS_TRUE(json_get(p, "network")));
    CHECK(json_array_len(json_get_array(p, "denyRead")) == 2);
    CHECK(json_array_len(json_get_array(p, "allowWrite")) == 1);
    free(e), free(w), e = w = NULL;
    _cleanup_json_ yajl_val named = read_value("\"docs\"", kept, &r, &e, &w);
    CHECK(r == 0 && streq(json_get_string(named, "profile"), "docs"));
    free(e), free(w), e = w = NULL;
    /* No profiles at all, and an empty object: nothing kept, nothing reported. */
    StrBuf none = STRBUF_INIT;
    _cleanup_json_ yajl_val empty = json_parse("{}", NULL);
    yajl_val k2 = NULL;
    sandbox_profiles_load(&k2, empty, &none);
    CHECK(!k2 && none.len == 0);
    sandbox_profiles_load(&k2, NULL, &none);
    CHECK(!k2 && none.len == 0);
    strbuf_deinit(&none);
    /* The same profiles again (a reload) give the same set; all released at exit. */
    StrBuf again = STRBUF_INIT;
    yajl_val kept2 = NULL;
    sandbox_profiles_load(&kept2, v, &again);
    CHECK(kept2 == kept);
    strbuf_deinit(&again);
    sandbox_profiles_free_all();
}

int main(void)
{
    RUN(test_forms);
    RUN(test_refused);
    RUN(test_profiles);
    return test_main_result();
}
