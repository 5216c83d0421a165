// SPDX-License-Identifier: MIT
// test-jsonc: comments, trailing commas, line:column errors, last-wins duplicates, depth.

#include <string.h>

#include "common/json.h"
#include "common/jsonc.h"
#include "common/util.h"
#include "tests/unit/test.h"

static yajl_val parse(const char *text, char **whyp)
{
    return jsonc_parse(text, strlen(text), whyp);
}

static void test_comments_and_commas(void)
{
    _cleanup_free_ char *why = NULL;
    yajl_val v =
        parse("// VS Code writes this\n{\n  \"servers\": { /* inline */\n"
              "    \"a\": {\"command\": \"x // not a comment\", \"args\": [\"1\", \"2\",],},\n"
              "  },\n}\n",
              &why);

    CHECK(v != NULL);
    CHECK_STREQ(why, NULL);
    yajl_val a = json_get(json_get(v, "servers"), "a");
    CHECK_STREQ(json_get_string(a, "command"), "x // not a comment");
    CHECK_INTEQ(json_array_len(json_get(a, "args")), 2);
    json_free(v);
}

static void test_positions_kept(void)
{
    const char *text = "{\"a\": 1, /* x\ny */ \"b\": 2,}";
    _cleanup_free_ char *why = NULL, *out = jsonc_to_json(text, strlen(text), &why);

    CHECK(out != NULL);
    CHECK_INTEQ(strlen(out), strlen(text));
    CHECK(strchr(out, '\n') == out + (strchr(text, '\n') - text));
    CHECK(strstr(out, "2 }") != NULL);
}

static void test_errors_name_line_and_column(void)
{
    char *why = NULL;

    CHECK(parse("{\n  \"a\": 1,\n  \"b\" 2\n}", &why) == NULL);
    CHECK_MSG(why && startswith(why, "line 3, column "), "%s", why);
    free(why), why = NULL;
    CHECK(parse("{\"a\": 1 /* never closed", &why) == NULL);
    CHECK_STREQ(why, "line 1, column 9: a /* comment that never ends");
    free(why), why = NULL;
    CHECK(parse("{\"a\": \"open", &why) == NULL);
    CHECK_STREQ(why, "line 1, column 7: a string that never ends");
    free(why), why = NULL;
    CHECK(parse("{\"a\": 1,,}", &why) == NULL);
    CHECK(why != NULL);
    free(why), why = NULL;
    /* Strict JSON refuses what JSONC allows. */
    CHECK(jsonc_parse_strict("{\"a\": 1,}", 9, &why) == NULL);
    CHECK_MSG(why && startswith(why, "line 1, column "), "%s", why);
    free(why);
}

static void test_nul_refused(void)
{
    char *why = NULL;

    CHECK(jsonc_parse("{\"a\":\0 1}", 9, &why) == NULL);
    CHECK_STREQ(why, "line 1, column 6: a NUL byte; a config file is text");
    free(why);
}

static void test_duplicates_last_wins(void)
{
    _cleanup_free_ char *why = NULL;
    yajl_val v = parse(
        "{\"s\": {\"x\": 1, \"y\": 2, \"x\": 3}, \"s2\": 0, \"s\": {\"x\": 4, \"x\": 5}}", &why);
    int64_t x = 0;

    CHECK(v != NULL);
    CHECK_INTEQ(v->u.object.len, 2);
    CHECK(json_get_int(json_get(v, "s"), "x", &x) == 0);
    CHECK_INTEQ(x, 5);
    CHECK_INTEQ(json_get(v, "s")->u.object.len, 1);
    json_free(v);
}

static void test_depth_bounded(void)
{
    char text[2000];
    char *why = NULL;

    memset(text, '[', 1000);
    memset(text + 1000, ']', 1000);
    CHECK(jsonc_parse(text, sizeof(text), &why) == NULL);
    CHECK_MSG(why && strstr(why, "nested more than 128 levels"), "%s", why);
    free(why);
}

int main(void)
{
    RUN(test_comments_and_commas);
    RUN(test_positions_kept);
    RUN(test_errors_name_line_and_column);
    RUN(test_nul_refused);
    RUN(test_duplicates_last_wins);
    RUN(test_depth_bounded);
    return test_main_result();
}
