// SPDX-License-Identifier: MIT
// test-toolset: tools kept as text give back what the trees held; big read buffers are freed.

#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/util.h"
#include "daemon/core/toolset.h"
#include "tests/unit/test.h"

static const char TOOLS[] =
    "[{\"name\":\"echo\",\"description\":\"say \\u00e9 \\\"it\\\"\",\"inputSchema\":"
    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}},"
    "{\"description\":\"no name\"},"
    "{\"name\":\"add\",\"inputSchema\":{\"type\":\"object\"},\"_meta\":{\"k\":[1,2.5,null,true]}}]";

static void test_round_trip(void)
{
    yajl_val tree = json_parse(TOOLS, NULL);
    StrBuf want = STRBUF_INIT;

    json_write(&want, tree);
    ToolSet *ts = toolset_new_take(tree); /* consumed */
    CHECK_INTEQ(toolset_len(ts), 3);
    CHECK_STREQ(toolset_name(ts, 0), "echo");
    CHECK_STREQ(toolset_name(ts, 1), NULL);
    CHECK_STREQ(toolset_name(ts, 2), "add");
    /* The text is the writer's own form of the whole array, sized exactly. */
    CHECK_INTEQ(ts->len, want.len);
    CHECK(memcmp(ts->text, want.data, want.len) == 0 && ts->text[ts->len] == '\0');
    for (size_t i = 0; i < toolset_len(ts); i++) {
        _cleanup_json_ yajl_val t = toolset_parse(ts, i);
        _cleanup_json_ yajl_val all = json_parse(want.data, NULL);
        StrBuf a = STRBUF_INIT, b = STRBUF_INIT;
        json_write(&a, t);
        json_write(&b, json_array_at(all, i));
        CHECK_STREQ(strbuf_str(&a), strbuf_str(&b));
        strbuf_deinit(&a);
        strbuf_deinit(&b);
    }
    CHECK(toolset_has(ts, "add"));
    CHECK(!toolset_has(ts, "ad"));
    CHECK(!toolset_has(ts, NULL));
    CHECK(toolset_free(ts) == NULL);
    strbuf_deinit(&want);
}

static void test_empty_and_not_an_array(void)
{
    ToolSet *ts = toolset_new_take(json_array_new());

    CHECK_INTEQ(toolset_len(ts), 0);
    CHECK_STREQ(ts->text, "[]");
    toolset_free(ts);
    ts = toolset_new_take(json_parse("{\"tools\":1}", NULL));
    CHECK_INTEQ(toolset_len(ts), 0);
    CHECK_STREQ(ts->text, "[]");
    toolset_free(ts);
    CHECK_INTEQ(toolset_len(NULL), 0);
    CHECK(!toolset_has(NULL, "x"));
    CHECK(toolset_free(NULL) == NULL);
}

/* A line longer than two read chunks grows the buffer; once drained, the buffer goes. */
static void test_framer_release_big(void)
{
    size_t big = 3 * FRAMER_READ_CHUNK;
    char *line = xmalloc(big + 1);
    Framer f;
    char *got;
    size_t len;

    framer_init(&f, 0);
    memset(line, 'x', big);
    line[big] = '\n';
    framer_feed(&f, "small\n", 6);
    CHECK_INTEQ(framer_next(&f, &got, &len), 0);
    framer_release_big(&f);
    CHECK(f.buf != NULL); /* a small buffer is kept */
    framer_feed(&f, line, big + 1);
    framer_feed(&f, "{\"pending", 9);
    CHECK(f.cap > FRAMER_KEEP_BYTES);
    CHECK_INTEQ(framer_next(&f, &got, &len), 0);
    CHECK_INTEQ(len, big);
    framer_release_big(&f);
    CHECK(f.buf != NULL); /* bytes of the next line are still pending */
    framer_feed(&f, "\":1}\n", 5);
    CHECK_INTEQ(framer_next(&f, &got, &len), 0);
    CHECK_STREQ(got, "{\"pending\":1}");
    framer_release_big(&f);
    CHECK(f.buf == NULL && f.cap == 0);
    /* And it works on after the release. */
    framer_feed(&f, "again\n", 6);
    CHECK_INTEQ(framer_next(&f, &got, &len), 0);
    CHECK_STREQ(got, "again");
    CHECK_INTEQ(framer_next(&f, &got, &len), FRAMER_E_AGAIN);
    framer_deinit(&f);
    free(line);
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_empty_and_not_an_array);
    RUN(test_framer_release_big);
    return test_main_result();
}
