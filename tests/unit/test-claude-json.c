// SPDX-License-Identifier: MIT
// test-claude-json: the streaming ~/.claude.json reader keeps servers and approvals only.

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/claude-json.h"
#include "tests/unit/test.h"

static const char *sample =
    "{\"numStartups\": 41, \"tipsHistory\": {\"a\": 1}, \"history\": [{\"display\": \"x\"}],\n"
    " \"mcpServers\": {\"top\": {\"command\": \"a\", \"args\": [\"-y\", 1.5e3, null, true]}},\n"
    " \"projects\": {\n"
    "   \"/p\": {\"history\": [1, 2, {\"mcpServers\": \"not this one\"}],\n"
    "          \"mcpServers\": {\"local\": {\"type\": \"sse\", \"url\": \"http://x\"}},\n"
    "          \"enableAllProjectMcpServers\": false,\n"
    "          \"enabledMcpjsonServers\": [\"a\"], \"disabledMcpjsonServers\": [],\n"
    "          \"disabledMcpServers\": [\"b\"], \"allowedTools\": [\"Bash\"]},\n"
    "   \"/q\": {\"mcpServers\": {}}, \"/r\": 7\n"
    " },\n"
    " \"mcpServers\": {\"top\": {\"command\": \"last-wins\"}}\n"
    "}";

static void test_keeps_only_what_discovery_needs(void)
{
    _cleanup_free_ char *why = NULL, *text = NULL;
    yajl_val v = NULL;

    CHECK_INTEQ(claude_json_parse(sample, strlen(sample), &v, &why), 0);
    text = json_to_string(v);
    CHECK_STREQ(text, "{\"mcpServers\":{\"top\":{\"command\":\"last-wins\"}},\"projects\":{\"/p\":"
                      "{\"mcpServers\":{\"local\":{\"type\":\"sse\",\"url\":\"http://x\"}},"
                      "\"enableAllProjectMcpServers\":false,\"enabledMcpjsonServers\":[\"a\"],"
                      "\"disabledMcpjsonServers\":[],\"disabledMcpServers\":[\"b\"]},\"/q\":"
                      "{\"mcpServers\":{}}}}");
    json_free(v);
}

static void test_errors_name_line_and_column(void)
{
    char *why = NULL;
    yajl_val v = NULL;
    const char *bad = "{\n\"mcpServers\": {\n  \"a\": {\"command\" \"x\"}}}";

    CHECK_INTEQ(claude_json_parse(bad, strlen(bad), &v, &why), -EINVAL);
    CHECK_MSG(why && startswith(why, "line 3, column ") && strstr(why, "invalid JSON"), "%s", why);
    free(why), why = NULL;
    CHECK_INTEQ(claude_json_parse("[1]", 3, &v, &why), -EINVAL);
    CHECK_MSG(why && strstr(why, "the top level must be an object"), "%s", why);
    free(why), why = NULL;
    CHECK_INTEQ(claude_json_parse("{\"a\": 1", 7, &v, &why), -EINVAL);
    CHECK(why != NULL);
    free(why);
}

/* A file far above any cap a whole-file reader could afford, read in constant memory. */
static void test_large_file_streams(void)
{
    _cleanup_free_ char *tmp = test_tmpdir(), *path = paths_join(tmp, "claude.json");
    _cleanup_free_ char *why = NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    StrBuf chunk = STRBUF_INIT;
    yajl_val v = NULL;

    CHECK(fd >= 0);
    CHECK(fd_write_all(fd, "{\"projects\": {\"/big\": {\"history\": [", 35) == 0);
    for (int i = 0; i < 1000; i++)
        strbuf_printf(&chunk, "%s{\"display\": \"a chat message of some length %d\"}", i ? "," : "",
                      i);
    /* 40 MB of history: ten times the whole-file cap other config files have. */
    for (int i = 0; i < 800; i++) {
        CHECK(fd_write_all(fd, chunk.data, chunk.len) == 0);
        if (i < 799)
            CHECK(fd_write_all(fd, ",", 1) == 0);
    }
    const char *tail = "], \"mcpServers\": {\"kept\": {\"command\": \"k\"}}}}}";
    CHECK(fd_write_all(fd, tail, strlen(tail)) == 0);
    close(fd);
    CHECK_INTEQ(claude_json_read(path, true, &v, &why), 0);
    CHECK_MSG(why == NULL, "%s", why);
    CHECK_STREQ(
        json_get_string(
            json_get(json_get(json_get(json_get(v, "projects"), "/big"), "mcpServers"), "kept"),
            "command"),
        "k");
    json_free(v);
    strbuf_deinit(&chunk);
    test_rm_rf(tmp);
}

static void test_not_regular_refused(void)
{
    _cleanup_free_ char *tmp = test_tmpdir(), *fifo = paths_join(tmp, "fifo");
    char *why = NULL;
    yajl_val v = NULL;

    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_INTEQ(claude_json_read(fifo, true, &v, &why), -EINVAL);
    CHECK_MSG(why && strstr(why, "FIFO"), "%s", why);
    free(why), why = NULL;
    CHECK_INTEQ(claude_json_read("/nonexistent/claude.json", true, &v, &why), -ENOENT);
    CHECK(why == NULL);
    test_rm_rf(tmp);
}

/* Invalid UTF-8: skipped history is not checked; what is kept comes out repaired. */
static void test_invalid_utf8(void)
{
    const char *text = "{\"history\": [\"\xff\xfe\"], \"mcpServers\": {\"a\xff\": "
                       "{\"command\": \"x\xc3\"}}}";
    _cleanup_free_ char *why = NULL, *out = NULL;
    yajl_val v = NULL;

    CHECK_INTEQ(claude_json_parse(text, strlen(text), &v, &why), 0);
    out = v ? json_to_string(v) : NULL;
    CHECK_STREQ(out, "{\"mcpServers\":{\"a\xef\xbf\xbd\":{\"command\":\"x\xef\xbf\xbd\"}}}");
    json_free(v);
}

/* A second read of an unchanged file gives the same; a changed file is read again. */
static void test_unchanged_file_read_once(void)
{
    _cleanup_free_ char *tmp = test_tmpdir(), *path = paths_join(tmp, "claude.json");
    _cleanup_free_ char *why = NULL;
    yajl_val a = NULL, b = NULL, c = NULL;

    test_write_file(path, "{\"mcpServers\": {\"one\": {\"command\": \"1\"}}}");
    CHECK_INTEQ(claude_json_read(path, true, &a, &why), 0);
    CHECK_INTEQ(claude_json_read(path, true, &b, &why), 0);
    CHECK(a && b && a != b && json_equal(a, b));
    test_write_file(path, "{\"mcpServers\": {\"two\": {\"command\": \"22\"}}}");
    CHECK_INTEQ(claude_json_read(path, true, &c, &why), 0);
    CHECK(json_get(json_get(c, "mcpServers"), "two") != NULL);
    CHECK(json_get(json_get(c, "mcpServers"), "one") == NULL);
    json_free(a);
    json_free(b);
    json_free(c);
    test_rm_rf(tmp);
}

int main(void)
{
    RUN(test_keeps_only_what_discovery_needs);
    RUN(test_errors_name_line_and_column);
    RUN(test_large_file_streams);
    RUN(test_not_regular_refused);
    RUN(test_unchanged_file_read_once);
    RUN(test_invalid_utf8);
    return test_main_result();
}
