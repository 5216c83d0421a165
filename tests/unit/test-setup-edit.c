// SPDX-License-Identifier: MIT
// test-setup-edit: locating JSON members in commented text, TOML server tables, edits.

#include <stdlib.h>
#include <string.h>

#include "client/setup-edit.h"
#include "common/json.h"
#include "common/util.h"
#include "tests/unit/test.h"

static char *member_text(const char *s, const SetupMember *m)
{
    return xstrndup(s + m->val_start, m->val_end - m->val_start);
}

/* Comments, and strings holding braces, quotes and comment markers, do not mislead the scan. */
static void test_json_members(void)
{
    const char *s = "// leading comment\n"
                    "{\n"
                    "  /* a } in a comment */ \"a\": \"x}y\\\"//z\",\n"
                    "  \"mcpServers\": {\"s\": {\"args\": [\"[\", \"{\"]}}, // trailing\n"
                    "  \"n\": -1.5e3,\n"
                    "  \"esc\\u0041\": [1, {\"k\": null}]\n"
                    "}\n";
    SetupMember *ms = NULL;
    size_t n = 0;
    _cleanup_json_ yajl_val parsed = json_parse(s, NULL);

    CHECK(parsed != NULL);
    CHECK_INTEQ(setup_json_members(s, strlen(s), setup_json_start(s, strlen(s)), &ms, &n), 0);
    CHECK_INTEQ(n, 4);
    if (n == 4) {
        _cleanup_free_ char *a = member_text(s, &ms[0]), *b = member_text(s, &ms[1]),
                            *c = member_text(s, &ms[2]), *d = member_text(s, &ms[3]),
                            *key = setup_json_key(s, &ms[3]), *indent = NULL;
        CHECK_STREQ(a, "\"x}y\\\"//z\"");
        CHECK_STREQ(b, "{\"s\": {\"args\": [\"[\", \"{\"]}}");
        CHECK_STREQ(c, "-1.5e3");
        CHECK_STREQ(d, "[1, {\"k\": null}]");
        CHECK(setup_json_key_is(s, &ms[1], "mcpServers"));
        CHECK(!setup_json_key_is(s, &ms[3], "escA"));
        CHECK_STREQ(key, "escA");
        indent = setup_json_line_indent(s, ms[1].key_start - 1);
        CHECK_STREQ(indent, "  ");
        CHECK(setup_json_line_indent(s, ms[0].key_start - 1) == NULL);
    }
    free(ms);
    CHECK(setup_json_members("[1]", 3, 0, &ms, &n) < 0);
}

/* Edits apply in position order, whatever order they were added in. */
static void test_edits(void)
{
    const char *s = "0123456789";
    SetupEdits e = {0};
    size_t len = 0;

    setup_edits_add(&e, 8, 9, xstrdup("EIGHT"));
    setup_edits_add(&e, 0, 0, xstrdup("<"));
    setup_edits_add(&e, 2, 5, xstrdup(""));
    _cleanup_free_ char *out = setup_edits_apply(s, strlen(s), &e, &len);
    CHECK_STREQ(out, "<01567EIGHT9");
    CHECK_INTEQ(len, strlen(out));
    setup_edits_deinit(&e);
    CHECK_INTEQ(e.n, 0);
}

static void test_json_format(void)
{
    _cleanup_json_ yajl_val v =
        json_parse("{\"mcpd\": {\"command\": \"/a \\\"b\\\"\", \"args\": [\"bridge\"]}}", NULL);
    _cleanup_free_ char *pretty = setup_json_format(v, "\t", "\t"),
                        *compact = setup_json_format(v, NULL, NULL);

    CHECK_STREQ(pretty, "{\n\t\t\"mcpd\": {\n\t\t\t\"command\": \"/a \\\"b\\\"\",\n"
                        "\t\t\t\"args\": [\"bridge\"]\n\t\t}\n\t}");
    CHECK_STREQ(compact, "{\"mcpd\":{\"command\":\"/a \\\"b\\\"\",\"args\":[\"bridge\"]}}");
}

/* Every [mcp_servers...] table, to the next other header; the rest is not touched. */
static void test_toml_blocks(void)
{
    const char *s = "model = \"x\"\n"
                    "[tui]\n"
                    "a = 1\n"
                    "[mcp_servers.one]\n"
                    "command = \"c\"\n"
                    "[ mcp_servers.one.env ]\n"
                    "K = \"v\"\n"
                    "[other]\n"
                    "b = [\"[mcp_servers.fake]\"]\n"
                    "[\"mcp_servers\".\"two\"]\n"
                    "url = \"u\"\n";
    SetupTomlBlock *b = NULL;
    size_t n = 0;
    char *why = NULL;

    CHECK_INTEQ(setup_toml_blocks(s, strlen(s), &b, &n, &why), 0);
    CHECK_INTEQ(n, 2);
    if (n == 2) {
        _cleanup_free_ char *one = xstrndup(s + b[0].start, b[0].end - b[0].start),
                            *two = xstrndup(s + b[1].start, b[1].end - b[1].start);
        CHECK_STREQ(one,
                    "[mcp_servers.one]\ncommand = \"c\"\n[ mcp_servers.one.env ]\nK = \"v\"\n");
        CHECK_STREQ(two, "[\"mcp_servers\".\"two\"]\nurl = \"u\"\n");
    }
    free(b);

    /* Forms these line edits cannot carry are refused with a reason. */
    CHECK(setup_toml_blocks("mcp_servers.x.command = \"c\"\n", 27, &b, &n, &why) < 0 && why);
    free(why);
    why = NULL;
    CHECK(setup_toml_blocks("[[mcp_servers]]\nx = 1\n", 22, &b, &n, &why) < 0 && why);
    free(why);
    _cleanup_free_ char *q = setup_toml_string("/p\"\\");
    CHECK_STREQ(q, "\"/p\\\"\\\\\"");
}

int main(void)
{
    RUN(test_json_members);
    RUN(test_edits);
    RUN(test_json_format);
    RUN(test_toml_blocks);
    return test_main_result();
}
