// SPDX-License-Identifier: MIT
// test-toolsearch: unit tests for the tool search: terms, ranking, and the bounds of a query.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/core/toolsearch.h"
#include "tests/unit/test.h"

static void join_term(void *ud, const char *t, size_t n)
{
    StrBuf *sb = ud;

    if (sb->len)
        strbuf_putc(sb, ' ');
    strbuf_append(sb, t, n);
}

static void check_terms(const ToolSearchOptions *o, const char *text, const char *want)
{
    StrBuf sb = STRBUF_INIT;

    toolsearch_terms(o, text, strlen(text), join_term, &sb);
    CHECK_STREQ(sb.data ? sb.data : "", want);
    strbuf_deinit(&sb);
}

static void test_terms(void)
{
    const ToolSearchOptions *r = &toolsearch_ranked;

    /* camelCase parts and the whole word; stems: file and files are one */
    check_terms(r, "getFileInfo", "get fil info getfileinfo");
    check_terms(r, "browser_take_screenshot", "browser tak screenshot");
    check_terms(r, "HTTPServer list-pods", "http server httpserver list pod");
    check_terms(r, "JavaScript on GitHub", "java script javascript git hub github");
    check_terms(r, "Create the branches of a repository", "creat branch repositori");
    check_terms(r, "creating created creates", "creat creat creat");
    check_terms(r, "directories directory", "directori directori");
    check_terms(r, "running installs access", "run install access");
    check_terms(r, "how do I", "");
    check_terms(r, "", "");
    check_terms(r, "  ,,;; ", "");
    /* The baseline neither splits camelCase nor stems. */
    check_terms(&toolsearch_bm25, "getFileInfo branches", "getfileinfo branches");
    /* A long run is cut to TS_TERM_MAX bytes, one term. */
    char longw[200];
    for (size_t i = 0; i + 1 < sizeof(longw); i++)
        longw[i] = i % 2 ? 'y' : 'x';
    longw[sizeof(longw) - 1] = '\0';
    StrBuf sb = STRBUF_INIT;
    toolsearch_terms(r, longw, strlen(longw), join_term, &sb);
    CHECK_INTEQ(sb.len, TS_TERM_MAX);
    strbuf_deinit(&sb);
}

static const char *const tools_json[] = {
    "{\"name\":\"create_branch\",\"description\":\"Create a new branch in a GitHub repository\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"branch\":{\"type\":\"string\","
    "\"description\":\"Name for the new branch\"}}}}",
    "{\"name\":\"delete_file\",\"description\":\"Delete a file from the repository\"}",
    "{\"name\":\"browser_take_screenshot\",\"description\":\"Take a screenshot of the current "
    "page\"}",
    "{\"name\":\"list_directory\",\"title\":\"List directory\",\"description\":\"Get a detailed "
    "listing of all files and directories in a specified path\"}",
    "{\"name\":\"search_nodes\",\"description\":\"Search for nodes in the knowledge graph\"}",
};
#define N_TOOLS N_ELEMENTS(tools_json)

static ToolIndex *small_index(const ToolSearchOptions *o)
{
    ToolIndex *ix = toolindex_new(o);

    for (size_t i = 0; i < N_TOOLS; i++) {
        yajl_val t = json_parse(tools_json[i], NULL);
        CHECK(t != NULL);
        toolindex_add(ix, i < 2 ? "github" : "other", t);
        json_free(t);
    }
    toolindex_finish(ix);
    return ix;
}

static long top(const ToolIndex *ix, const char *q)
{
    ToolHit h[N_TOOLS];
    size_t n = toolindex_search(ix, q, strlen(q), N_TOOLS, h);

    return n ? (long)h[0].doc : -1;
}

static void test_ranking(void)
{
    ToolIndex *ix = small_index(&toolsearch_ranked);

    CHECK_INTEQ(toolindex_len(ix), N_TOOLS);
    CHECK_INTEQ(top(ix, "make a new branch"), 0);
    CHECK_INTEQ(top(ix, "remove a file"), 1); /* synonym: remove -> delete */
    CHECK_INTEQ(top(ix, "capture a picture of the web page"), 2);
    CHECK_INTEQ(top(ix, "show what is in this folder"), 3);
    CHECK_INTEQ(top(ix, "look something up in memory"), 4);
    CHECK_INTEQ(top(ix, "zzzz qqqq"), -1);
    /* Hits are best first, scores falling, no tool twice. */
    ToolHit h[N_TOOLS];
    size_t n = toolindex_search(ix, "file branch repository", 21, N_TOOLS, h);
    CHECK(n >= 2);
    for (size_t i = 1; i < n; i++) {
        CHECK(h[i - 1].score >= h[i].score);
        CHECK(h[i - 1].doc != h[i].doc);
    }
    toolindex_free(ix);
}

static void test_bounds(void)
{
    ToolIndex *ix = small_index(&toolsearch_ranked), *empty = toolindex_new(&toolsearch_ranked);
    ToolHit h[N_TOOLS];
    size_t big = 1 << 20;
    char *huge = malloc(big), *bin = malloc(4096);

    /* empty query, limit 0, a huge limit (the caller's array holds what can come: N_TOOLS) */
    CHECK_INTEQ(toolindex_search(ix, "", 0, N_TOOLS, h), 0);
    CHECK_INTEQ(toolindex_search(ix, "branch", 6, 0, h), 0);
    CHECK_INTEQ(toolindex_search(ix, "branch", 6, 1000000000, h), 1);
    CHECK_INTEQ(toolindex_search(ix, NULL, 0, N_TOOLS, h), 0);
    /* 1 MiB of words: only the first TS_QUERY_BYTES_MAX bytes count */
    for (size_t i = 0; i < big; i++)
        huge[i] = "branch file "[i % 12];
    CHECK(toolindex_search(ix, huge, big, N_TOOLS, h) >= 1);
    /* binary, NULs included */
    for (size_t i = 0; i < 4096; i++)
        bin[i] = (char)(i * 131 + 7);
    (void)toolindex_search(ix, bin, 4096, N_TOOLS, h);
    /* an index with nothing in it, finished or not */
    CHECK_INTEQ(toolindex_search(empty, "branch", 6, N_TOOLS, h), 0);
    toolindex_finish(empty);
    CHECK_INTEQ(toolindex_search(empty, "branch", 6, N_TOOLS, h), 0);
    CHECK(toolindex_bytes(ix) > 0);
    free(huge);
    free(bin);
    toolindex_free(empty);
    toolindex_free(ix);
}

/* A tool with no name, no description, odd types: indexed without a crash, found by server. */
static void test_odd_tools(void)
{
    ToolIndex *ix = toolindex_new(&toolsearch_ranked);
    const char *odd[] = {"{}", "{\"name\":5,\"description\":[1]}",
                         "{\"name\":\"x\",\"inputSchema\":{\"properties\":[1,2]}}"};
    ToolHit h[4];

    for (size_t i = 0; i < N_ELEMENTS(odd); i++) {
        yajl_val t = json_parse(odd[i], NULL);
        toolindex_add(ix, "weird", t);
        json_free(t);
    }
    toolindex_finish(ix);
    CHECK_INTEQ(toolindex_search(ix, "weird", 5, 4, h), 3);
    toolindex_free(ix);
}

int main(void)
{
    RUN(test_terms);
    RUN(test_ranking);
    RUN(test_bounds);
    RUN(test_odd_tools);
    return test_main_result();
}
