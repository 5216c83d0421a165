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
    _cleanup_json_ yajl_val want = json_parse(TOOLS, NULL);
    size_t len, body_len;

    ToolSet *ts = toolset_new_take(tree); /* consumed */
    CHECK_INTEQ(toolset_len(ts), 3);
    CHECK_STREQ(toolset_name(ts, 0), "echo");
    CHECK_STREQ(toolset_name(ts, 1), NULL);
    CHECK_STREQ(toolset_name(ts, 2), "add");
    /* The tools come back as listed, whole, whether kept plain or kept whole. */
    _cleanup_free_ char *text = toolset_json(ts, &len);
    _cleanup_json_ yajl_val back = json_parse(text, NULL);
    CHECK_INTEQ(len, strlen(text));
    CHECK(json_equal(back, want));
    for (size_t i = 0; i < toolset_len(ts); i++) {
        _cleanup_json_ yajl_val t = toolset_parse(ts, i);
        CHECK(json_equal(t, json_array_at(want, i)));
    }
    /* The first is plain; the others are kept whole (no name; a schema to complete). */
    CHECK_INTEQ(ts->spans[0].orig_len, 0);
    CHECK(ts->spans[1].orig_len > 0 && ts->spans[2].orig_len > 0);
    /* Bodies are in their exposed form: the schema completed, the description kept. */
    const char *body = toolset_body(ts, 2, &body_len);
    _cleanup_free_ char *b = xstrndup(body, body_len);
    CHECK(strstr(b, "\"inputSchema\":{\"type\":\"object\",\"properties\":{}}") != NULL);
    CHECK(!ts->spans[2].has_description && ts->spans[0].has_description);
    body = toolset_body(ts, 1, &body_len);
    CHECK(memmem(body, body_len, "{\"type\":\"object\",\"properties\":{}}", 33) != NULL);
    CHECK(toolset_has(ts, "add"));
    CHECK(!toolset_has(ts, "ad"));
    CHECK(!toolset_has(ts, NULL));
    CHECK(toolset_free(ts) == NULL);
}

/* After a rebase the bodies are read from the new text, and the old one is let go. */
static void test_rebase(void)
{
    ToolSet *ts = toolset_new_take(json_parse(TOOLS, NULL));
    StrBuf sb = STRBUF_INIT;
    size_t offs[3], len, body_len;
    _cleanup_free_ char *before = toolset_json(ts, &len);

    strbuf_puts(&sb, "padding ");
    for (size_t i = 0; i < 3; i++) {
        const char *body = toolset_body(ts, i, &body_len);
        offs[i] = sb.len;
        strbuf_append(&sb, body, body_len);
        strbuf_puts(&sb, " | ");
    }
    char *data = strbuf_detach(&sb, &len);
    SharedText *st = shared_text_new_take(data, len);
    toolset_rebase(ts, st, offs);
    CHECK_INTEQ(st->refs, 2);
    CHECK(ts->text == st);
    _cleanup_free_ char *after = toolset_json(ts, NULL);
    CHECK_STREQ(after, before);
    shared_text_unref(st);
    CHECK(toolset_free(ts) == NULL); /* frees st, its last reference (ASan checks) */
}

static void test_empty_and_not_an_array(void)
{
    ToolSet *ts = toolset_new_take(json_array_new());

    _cleanup_free_ char *a = toolset_json(ts, NULL), *b = NULL, *c = toolset_json(NULL, NULL);

    CHECK_INTEQ(toolset_len(ts), 0);
    CHECK_STREQ(a, "[]");
    toolset_free(ts);
    ts = toolset_new_take(json_parse("{\"tools\":1}", NULL));
    CHECK_INTEQ(toolset_len(ts), 0);
    b = toolset_json(ts, NULL);
    CHECK_STREQ(b, "[]");
    CHECK_STREQ(c, "[]");
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
    RUN(test_rebase);
    RUN(test_empty_and_not_an_array);
    RUN(test_framer_release_big);
    return test_main_result();
}
