// SPDX-License-Identifier: MIT
// test-toml: unit tests for the TOML-subset parser (values, tables, errors with positions).

#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/toml.h"
#include "common/util.h"
#include "tests/unit/test.h"

/* Parse text and compare the tree, keys sorted, with want (compact JSON). */
static void expect_tree(const char *text, const char *want)
{
    char *err = NULL;
    yajl_val v = toml_parse(text, strlen(text), &err);
    StrBuf sb = STRBUF_INIT;

    CHECK(v != NULL);
    if (!v) {
        fprintf(stderr, "  input:\n%s\n  error: %s\n", text, err);
        free(err);
        return;
    }
    json_write_sorted(&sb, v);
    if (strcmp(strbuf_str(&sb), want) != 0) {
        CHECK(!"unexpected tree");
        fprintf(stderr, "  input:\n%s\n  got:  %s\n  want: %s\n", text, strbuf_str(&sb), want);
    }
    strbuf_deinit(&sb);
    json_free(v);
}

/* Expect a parse error whose message is exactly want ("line L, column C: ..."). */
static void expect_error(const char *text, const char *want)
{
    char *err = NULL;
    yajl_val v = toml_parse(text, strlen(text), &err);

    CHECK(v == NULL);
    json_free(v);
    if (!err || strcmp(err, want) != 0) {
        CHECK(!"unexpected error message");
        fprintf(stderr, "  input:\n%s\n  got:  %s\n  want: %s\n", text, err ? err : "(none)", want);
    }
    free(err);
}

static void test_keys_and_tables(void)
{
    expect_tree("", "{}");
    expect_tree("# only a comment\n\n   \n", "{}");
    expect_tree("a = 1\nb-c_D9 = 2", "{\"a\":1,\"b-c_D9\":2}");
    expect_tree("\"quoted key\" = 1\n'lit.key' = 2\n\"\" = 3",
                "{\"\":3,\"lit.key\":2,\"quoted key\":1}");
    expect_tree("a.b.c = 1\na . \"d e\" = 2", "{\"a\":{\"b\":{\"c\":1},\"d e\":2}}");
    expect_tree("[t]\nx = 1\n[u.v]\ny = 2\n[t.w]\nz = 3",
                "{\"t\":{\"w\":{\"z\":3},\"x\":1},\"u\":{\"v\":{\"y\":2}}}");
    /* The Codex shape: quoted names, sub-tables for env. */
    expect_tree(
        "[mcp_servers.\"my.server\"]\ncommand = \"npx\"\n"
        "[mcp_servers.\"my.server\".env]\nTOKEN = \"x\"\n",
        "{\"mcp_servers\":{\"my.server\":{\"command\":\"npx\",\"env\":{\"TOKEN\":\"x\"}}}}");
    /* An implicitly created table may be defined once later. */
    expect_tree("[a.b]\nx = 1\n[a]\ny = 2", "{\"a\":{\"b\":{\"x\":1},\"y\":2}}");
    expect_tree("[[srv]]\nname = \"a\"\n[[srv]]\nname = \"b\"\n[srv.sub]\nk = 1",
                "{\"srv\":[{\"name\":\"a\"},{\"name\":\"b\",\"sub\":{\"k\":1}}]}");
    expect_tree("  [ spaced . header ]  # c\n k = 1 # trailing\r\n",
                "{\"spaced\":{\"header\":{\"k\":1}}}");
}

static void test_strings(void)
{
    expect_tree("s = \"tab\\there \\\"q\\\" back\\\\slash \\u00e9 \\U0001F600 \\b\\f\\r\\n\"",
                "{\"s\":\"tab\\there \\\"q\\\" back\\\\slash \xc3\xa9 \xf0\x9f\x98\x80 "
                "\\u0008\\u000c\\r\\n\"}");
    expect_tree("s = 'C:\\path\\no \"escapes\"'", "{\"s\":\"C:\\\\path\\\\no \\\"escapes\\\"\"}");
    expect_tree("s = \"\"\"\nline one\nline two\"\"\"", "{\"s\":\"line one\\nline two\"}");
    expect_tree("s = \"\"\"a \\\n     b \\\n\n  c\"\"\"", "{\"s\":\"a b c\"}");
    expect_tree("s = \"\"\"ends with quotes\"\"\"\"\"", "{\"s\":\"ends with quotes\\\"\\\"\"}");
    expect_tree("s = '''\nraw \\n ''kept'' '''", "{\"s\":\"raw \\\\n ''kept'' \"}");
    expect_tree("s = \"\"\"crlf\r\nline\"\"\"", "{\"s\":\"crlf\\nline\"}");
    expect_tree("s = \"caf\xc3\xa9\"", "{\"s\":\"caf\xc3\xa9\"}");
    expect_tree("s = \"\"", "{\"s\":\"\"}");
}

static void test_numbers_and_booleans(void)
{
    expect_tree("a = 0\nb = +17\nc = -42\nd = 1_000_000\ne = 0xdead_BEEF\nf = 0o755\ng = 0b1010",
                "{\"a\":0,\"b\":17,\"c\":-42,\"d\":1000000,\"e\":3735928559,\"f\":493,"
                "\"g\":10}");
    expect_tree("x = 9223372036854775807\ny = -9223372036854775808",
                "{\"x\":9223372036854775807,\"y\":-9223372036854775808}");
    expect_tree("t = true\nf = false", "{\"f\":false,\"t\":true}");

    char *err = NULL;
    const char *text = "a = 1.5\nb = -2e3\nc = 6.25E-2\nd = 1_0.5";
    yajl_val v = toml_parse(text, strlen(text), &err);
    CHECK(v != NULL);
    if (v) {
        yajl_val a = json_get(v, "a"), b = json_get(v, "b"), c = json_get(v, "c"),
                 d = json_get(v, "d");
        CHECK(YAJL_IS_DOUBLE(a) && a->u.number.d == 1.5);
        CHECK(YAJL_IS_DOUBLE(b) && b->u.number.d == -2000.0);
        CHECK(YAJL_IS_DOUBLE(c) && c->u.number.d == 0.0625);
        CHECK(YAJL_IS_DOUBLE(d) && d->u.number.d == 10.5);
    }
    json_free(v);
    free(err);
}

static void test_arrays_and_inline_tables(void)
{
    expect_tree("a = [1, 2, 3]\nb = []\nc = [ \"x\", 'y', ]\nd = [[1, 2], [\"m\"], []]",
                "{\"a\":[1,2,3],\"b\":[],\"c\":[\"x\",\"y\"],\"d\":[[1,2],[\"m\"],[]]}");
    expect_tree("args = [\n  \"-y\",   # the package\n  # a whole comment line\n"
                "  \"@scope/pkg\",\n]\n",
                "{\"args\":[\"-y\",\"@scope/pkg\"]}");
    expect_tree("env = { A = \"1\", \"B C\" = \"2\", d.e = 3 }\nempty = {}",
                "{\"empty\":{},\"env\":{\"A\":\"1\",\"B C\":\"2\",\"d\":{\"e\":3}}}");
    expect_tree("m = [{ a = 1 }, { b = [true] }]", "{\"m\":[{\"a\":1},{\"b\":[true]}]}");
}

/* TOML 1.1 as Codex parses it: inline tables over lines, dates and times kept as text. */
static void test_toml_1_1(void)
{
    expect_tree("[mcp_servers.x]\nenv = {\n  A = \"1\", # the first\n  B = \"2\",\n}\n",
                "{\"mcp_servers\":{\"x\":{\"env\":{\"A\":\"1\",\"B\":\"2\"}}}}");
    expect_tree("a = {}\nb = {\n}\n", "{\"a\":{},\"b\":{}}");
    expect_tree("d = 1979-05-27\nt = 07:32\nu = 07:32:00.999\n"
                "o = 1979-05-27T07:32:00Z\np = 1979-05-27 07:32:00-08:00\n",
                "{\"d\":\"1979-05-27\",\"o\":\"1979-05-27T07:32:00Z\","
                "\"p\":\"1979-05-27 07:32:00-08:00\",\"t\":\"07:32\",\"u\":\"07:32:00.999\"}");
    expect_tree(
        "[projects.\"/p\"]\ntrust_level = \"trusted\"\nlast = 2026-12-03T06:00:00Z\n",
        "{\"projects\":{\"/p\":{\"last\":\"2026-12-03T06:00:00Z\",\"trust_level\":\"trusted\"}}}");
}

static void test_errors_with_positions(void)
{
    expect_error("a = 1\na = 2", "line 2, column 1: duplicate key \"a\"");
    expect_error("[t]\n[t]", "line 2, column 2: table [t] is defined twice");
    expect_error("a = 1\n[a]",
                 "line 2, column 2: \"a\" is already defined as a value, not a table");
    expect_error("a = 1\na.b = 2", "line 2, column 1: \"a\" is already defined and cannot be "
                                   "extended here");
    expect_error("t = {x = 1}\nt.y = 2", "line 2, column 1: \"t\" is already defined and cannot "
                                         "be extended here");
    expect_error("a = \"open", "line 1, column 10: unterminated string");
    /* Found by fuzz-toml: a line-ending backslash as the last bytes read past the end. */
    expect_error("a = \"\"\"x\\\n", "line 2, column 1: unterminated string");
    expect_error("a = \"\"\"x\\\n  \n", "line 3, column 1: unterminated string");
    expect_error("a = \"line\nbreak\"", "line 1, column 10: newline in a single-line string");
    expect_error("a = \"\\q\"", "line 1, column 6: unknown escape \\q");
    expect_error("a = \"\\u12\"", "line 1, column 6: \\u escape needs 4 hex digits");
    expect_error("a = \"\\uD800\"", "line 1, column 6: \\u escape names no Unicode scalar value");
    expect_error("a = \"\\u0000\"", "line 1, column 6: NUL characters are not allowed in strings");
    expect_error("a = 1979-13-27x", "line 1, column 5: invalid date or time \"1979-13-27x\"");
    expect_error("a = 07:3", "line 1, column 5: invalid date or time \"07:3\"");
    expect_error("a = inf", "line 1, column 5: inf and nan are not supported");
    expect_error("a = -nan", "line 1, column 5: inf and nan are not supported");
    expect_error("a = 012", "line 1, column 5: leading zeros are not allowed in \"012\"");
    expect_error("a = 1__0", "line 1, column 5: misplaced '_' in a number");
    expect_error("a = _1", "line 1, column 5: invalid value \"_1\"");
    expect_error("a = 9223372036854775808",
                 "line 1, column 5: integer \"9223372036854775808\" is out of range");
    expect_error("a = 0xFFFFFFFFFFFFFFFF",
                 "line 1, column 5: integer \"0xFFFFFFFFFFFFFFFF\" is out of range");
    expect_error("a = 1e999", "line 1, column 5: float \"1e999\" is out of range");
    expect_error("a = 1.", "line 1, column 5: expected digits");
    expect_error("a = tru", "line 1, column 5: invalid value \"tru\"");
    expect_error("a =", "line 1, column 4: expected a value");
    expect_error("a = 1 b = 2", "line 1, column 7: expected the end of the line, found 'b'");
    expect_error("= 1", "line 1, column 1: unexpected '=' where a key should be");
    expect_error("a 1", "line 1, column 3: expected '=' after the key \"a\"");
    expect_error("[t", "line 1, column 3: expected ']' to close the table header");
    expect_error("[[t]\n", "line 1, column 4: expected ']]' to close the table header");
    expect_error("t = []\n[[t]]", "line 2, column 3: \"t\" is not an array of tables");
    expect_error("a = [1 2]", "line 1, column 8: expected ',' or ']' in an array");
    expect_error("a = {x = 1 y = 2}", "line 1, column 12: expected ',' or '}' in an inline table");
    expect_error("a = {x = 1,,}", "line 1, column 12: unexpected ',' where a key should be");
    expect_error("a = \"\xff\"", "line 1, column 6: invalid UTF-8 in a string");
    expect_error("# \x01\n", "line 1, column 3: control character 0x01 in a comment");
    expect_error("a = 1\r", "line 1, column 6: expected the end of the line, found '\r'");
    expect_error("\"\"\"k\"\"\" = 1", "line 1, column 1: a key cannot be a multi-line string");
}

static void test_nul_and_length(void)
{
    static const char text[] = "a = 1\nb = \"x\0y\"";
    char *err = NULL;
    yajl_val v = toml_parse(text, sizeof(text) - 1, &err);

    CHECK(v == NULL);
    CHECK_STREQ(err, "line 2, column 7: NUL byte in the input");
    free(err);
    /* Only len bytes are read: the rest of the buffer is never looked at. */
    v = toml_parse("a = 12345", 6, &err);
    CHECK(v && json_get(v, "a") && json_get(v, "a")->u.number.i == 12);
    json_free(v);
    /* No errp: still no leak, still NULL. */
    CHECK(toml_parse("a = ", 4, NULL) == NULL);
}

static void test_depth_limit(void)
{
    StrBuf sb = STRBUF_INIT;
    char *err = NULL;
    yajl_val v;

    strbuf_puts(&sb, "a = ");
    for (int i = 0; i < TOML_MAX_DEPTH; i++)
        strbuf_putc(&sb, '[');
    for (int i = 0; i < TOML_MAX_DEPTH; i++)
        strbuf_putc(&sb, ']');
    v = toml_parse(sb.data, sb.len, &err);
    CHECK(v != NULL);
    json_free(v);
    strbuf_reset(&sb);
    strbuf_puts(&sb, "a = ");
    for (int i = 0; i <= TOML_MAX_DEPTH; i++)
        strbuf_putc(&sb, '[');
    v = toml_parse(sb.data, sb.len, &err);
    CHECK(v == NULL);
    CHECK(err && strstr(err, "nested deeper than 64 levels"));
    free(err);
    strbuf_deinit(&sb);
}

/* A real Codex config.toml, as users write them. */
static void test_codex_config(void)
{
    expect_tree("model = \"o3\"\n"
                "approval_policy = \"on-request\"\n\n"
                "[mcp_servers.github]\n"
                "command = \"npx\"\n"
                "args = [\"-y\", \"@modelcontextprotocol/server-github\"]\n"
                "env_vars = [\"GITHUB_TOKEN\"]\n"
                "startup_timeout_sec = 20\n"
                "tool_timeout_sec = 120.5\n\n"
                "[mcp_servers.github.env]\n"
                "LOG_LEVEL = \"debug\"\n\n"
                "[mcp_servers.figma]\n"
                "url = \"https://mcp.figma.com/mcp\"\n"
                "bearer_token_env_var = \"FIGMA_TOKEN\"\n"
                "http_headers = { \"X-Team\" = \"core\" }\n"
                "enabled = false\n",
                "{\"approval_policy\":\"on-request\",\"mcp_servers\":{\"figma\":{"
                "\"bearer_token_env_var\":\"FIGMA_TOKEN\",\"enabled\":false,"
                "\"http_headers\":{\"X-Team\":\"core\"},\"url\":\"https://mcp.figma.com/mcp\"},"
                "\"github\":{\"args\":[\"-y\",\"@modelcontextprotocol/server-github\"],"
                "\"command\":\"npx\",\"env\":{\"LOG_LEVEL\":\"debug\"},"
                "\"env_vars\":[\"GITHUB_TOKEN\"],\"startup_timeout_sec\":20,"
                "\"tool_timeout_sec\":120.5}},\"model\":\"o3\"}");
}

int main(void)
{
    RUN(test_keys_and_tables);
    RUN(test_strings);
    RUN(test_numbers_and_booleans);
    RUN(test_arrays_and_inline_tables);
    RUN(test_toml_1_1);
    RUN(test_errors_with_positions);
    RUN(test_nul_and_length);
    RUN(test_depth_limit);
    RUN(test_codex_config);
    return test_main_result();
}
