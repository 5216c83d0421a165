// SPDX-License-Identifier: MIT
// search-bench: the benchmark that decides mcpd's tool search (issue 33): quality against plain
// BM25, tokens at start in all and search mode, latency and index memory at 10,000 tools.

/*
 * Usage: mcpd-search-bench [--corpus DIR] [--queries FILE] [--heldout FILE] [--short]
 *                          [--tokenizer CMD]
 *
 * The corpus is DIR/<server>.json: {"server","package","version","license","tools":[...]}, the
 * tools/list of a real public MCP server (corpus/capture/capture.mjs made them). The queries are
 * a JSON array of {"q": "...", "want": ["server/tool", ...]}. --tokenizer names a command that
 * reads JSON lines of strings on stdin and prints one token count a line (tokens/count.mjs, a
 * real BPE tokenizer from npm): the estimate of common/tokens.c is compared with it.
 * Exits 1 when a target is missed (not with --short): recall@5 >= 0.90, MRR >= 0.75, recall@5 >=
 * BM25's + 0.05, search-mode tokens <= 5% of all-mode tokens, p50 < 1 ms at 10,000 tools, an index
 * smaller than the tools' own text.
 */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/tokens.h"
#include "common/util.h"
#include "daemon/core/naming.h"
#include "daemon/core/toolsearch.h"
#include "tests/integration/harness.h"

#define LATENCY_TOOLS 10000
#define TOP_K         5
/* Ranks past this count as not found for MRR (a search returns a few tools, not all). */
#define MRR_DEPTH 50

typedef struct Tool {
    char *id;        /* server/tool, as queries name it */
    char *host;      /* {"name","description","inputSchema"} as a host sends it to a model */
    yajl_val def;    /* borrowed from its server's file */
    const char *srv; /* borrowed */
} Tool;

typedef struct Corpus {
    yajl_val files[64];
    size_t n_files;
    Tool *tools;
    size_t n_tools;
    size_t raw_bytes; /* the tools' own text, as their servers list them */
} Corpus;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What a host sends its model for one tool, under the name mcpd exposes. */
static char *host_text(const char *server, yajl_val t)
{
    StrBuf sb = STRBUF_INIT;
    _cleanup_free_ char *name = naming_tool_name(server, json_get_string(t, "name"));

    tokens_tool_text(&sb, name, t);
    return strbuf_detach(&sb, NULL);
}

static void corpus_load(Corpus *c, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char *names[64];
    size_t n = 0;

    if (!d) {
        fprintf(stderr, "search-bench: %s: cannot open the corpus directory\n", dir);
        exit(2);
    }
    while ((e = readdir(d)) && n < N_ELEMENTS(names))
        if (strlen(e->d_name) > 5 && streq(e->d_name + strlen(e->d_name) - 5, ".json"))
            names[n++] = xstrdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, names[i]);
        _cleanup_free_ char *text = h_read_file(path);
        yajl_val f = text ? json_parse(text, NULL) : NULL;
        yajl_val tools = json_get_array(f, "tools");
        const char *srv = json_get_string(f, "server");
        free(names[i]);
        if (!tools || !srv) {
            fprintf(stderr, "search-bench: %s: no server or tools\n", path);
            json_free(f);
            continue;
        }
        c->files[c->n_files++] = f;
        c->tools = xrealloc(c->tools, (c->n_tools + json_array_len(tools)) * sizeof(*c->tools));
        for (size_t j = 0; j < json_array_len(tools); j++) {
            yajl_val t = json_array_at(tools, j);
            StrBuf raw = STRBUF_INIT;
            json_write(&raw, t);
            c->raw_bytes += raw.len;
            strbuf_deinit(&raw);
            c->tools[c->n_tools++] = (Tool){
                .id = xasprintf("%s/%s", srv, json_get_string(t, "name")),
                .host = host_text(srv, t),
                .def = t,
                .srv = srv,
            };
        }
    }
}

static ToolIndex *index_build(const Corpus *c, const ToolSearchOptions *o, size_t copies_to)
{
    ToolIndex *ix = toolindex_new(o);

    for (size_t k = 0; k < copies_to; k++) {
        const Tool *t = &c->tools[k % c->n_tools];
        if (k < c->n_tools) {
            toolindex_add(ix, t->srv, t->def);
        } else {
            /* Copies stand for other servers' tools: another server name each round. */
            _cleanup_free_ char *srv = xasprintf("%s-%zu", t->srv, k / c->n_tools);
            toolindex_add(ix, srv, t->def);
        }
    }
    toolindex_finish(ix);
    return ix;
}

typedef struct Quality {
    double r1, r5, mrr;
    size_t n;
} Quality;

static bool wanted(yajl_val want, const char *id)
{
    for (size_t i = 0; i < json_array_len(want); i++) {
        yajl_val w = json_array_at(want, i);
        if (YAJL_IS_STRING(w) && streq(w->u.string, id))
            return true;
    }
    return false;
}

static Quality quality(const Corpus *c, const ToolIndex *ix, yajl_val queries, bool show_misses)
{
    Quality qy = {0};
    ToolHit hits[MRR_DEPTH];

    for (size_t i = 0; i < json_array_len(queries); i++) {
        yajl_val q = json_array_at(queries, i), want = json_get_array(q, "want");
        const char *text = json_get_string(q, "q");
        size_t n;
        if (!text || !want)
            continue;
        n = toolindex_search(ix, text, strlen(text), MRR_DEPTH, hits);
        qy.n++;
        size_t rank = 0; /* of the first right tool, from 1; 0: not in the first MRR_DEPTH */
        for (size_t r = 0; r < n && !rank; r++)
            if (wanted(want, c->tools[hits[r].doc].id))
                rank = r + 1;
        qy.r1 += rank == 1;
        qy.r5 += rank && rank <= TOP_K;
        qy.mrr += rank ? 1.0 / (double)rank : 0;
        if (show_misses && rank != 1)
            printf("  rank %2zu: %-50s -> %s\n", rank, text, n ? c->tools[hits[0].doc].id : "-");
    }
    if (qy.n) {
        qy.r1 /= (double)qy.n;
        qy.r5 /= (double)qy.n;
        qy.mrr /= (double)qy.n;
    }
    return qy;
}

/*
 * Quality on queries written before the ranking was tuned and never looked at while tuning
 * (search/heldout.json): how the ranking does on words it was not fitted to. Printed, not a
 * target: the targets are on the repository's set and a second, unseen one.
 */
static void heldout_quality(const Corpus *c, const ToolIndex *ranked, const ToolIndex *bm25,
                            const char *path)
{
    _cleanup_free_ char *text = path ? h_read_file(path) : NULL;
    yajl_val q = text ? json_parse(text, NULL) : NULL;

    if (!path)
        return;
    if (!YAJL_IS_ARRAY(q)) {
        printf("held out: %s: no queries\n", path);
        json_free(q);
        return;
    }
    Quality qr = quality(c, ranked, q, false), qb = quality(c, bm25, q, false);
    printf("held out (%zu queries, %s)\n", qr.n, path);
    printf("  mcpd ranking   %8.3f  %8.3f  %5.3f\n", qr.r1, qr.r5, qr.mrr);
    printf("  plain BM25     %8.3f  %8.3f  %5.3f\n", qb.r1, qb.r5, qb.mrr);
    json_free(q);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each query searched `rounds` times over the 10,000-tool index: p50 and p99 in us. */
static void latency(const ToolIndex *ix, yajl_val queries, int rounds, double *p50, double *p99)
{
    size_t nq = json_array_len(queries), n = 0;
    double *t = xcalloc(nq * (size_t)rounds + 1, sizeof(*t));
    ToolHit hits[TOP_K];

    for (int r = 0; r < rounds; r++)
        for (size_t i = 0; i < nq; i++) {
            const char *q = json_get_string(json_array_at(queries, i), "q");
            double t0;
            if (!q)
                continue;
            t0 = now_ns();
            toolindex_search(ix, q, strlen(q), TOP_K, hits);
            t[n++] = (now_ns() - t0) / 1000.0;
        }
    qsort(t, n, sizeof(*t), cmp_double);
    *p50 = n ? t[n / 2] : 0;
    *p99 = n ? t[(n * 99) / 100] : 0;
    free(t);
}

/* The real tokenizer's count of each tool's host text and of the search tools, or false. */
static bool real_tokens(const char *cmd, const Corpus *c, size_t *all, size_t *search, double *err)
{
    char path[] = "/tmp/mcpd-search-bench-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    StrBuf line = STRBUF_INIT;
    double sum_abs = 0;
    bool ok = true;

    if (!f)
        return false;
    for (size_t i = 0; i <= c->n_tools; i++) {
        const char *s = i < c->n_tools ? c->tools[i].host : toolsearch_tools_json;
        strbuf_reset(&line);
        json_write_string(&line, s, strlen(s));
        fprintf(f, "%s\n", line.data);
    }
    fclose(f);
    _cleanup_free_ char *sh = xasprintf("%s < %s", cmd, path);
    FILE *p = popen(sh, "r");
    *all = *search = 0;
    for (size_t i = 0; p && i <= c->n_tools; i++) {
        long v;
        if (fscanf(p, "%ld", &v) != 1) {
            ok = false;
            break;
        }
        if (i < c->n_tools) {
            size_t est = tokens_estimate(c->tools[i].host, strlen(c->tools[i].host));
            *all += (size_t)v;
            sum_abs += v ? (double)(est > (size_t)v ? est - (size_t)v : (size_t)v - est) / v : 0;
        } else {
            *search = (size_t)v;
        }
    }
    ok = p && pclose(p) == 0 && ok;
    unlink(path);
    strbuf_deinit(&line);
    *err = c->n_tools ? sum_abs / (double)c->n_tools : 0;
    return ok;
}

static int target(bool ok, const char *what)
{
    printf("  %-58s %s\n", what, ok ? "met" : "MISSED");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *dir = "corpus", *qpath = "queries.json", *tokenizer = NULL, *heldout = NULL;
    bool short_run = false, misses = false;
    Corpus c = {0};
    int failed = 0;

    for (int i = 1; i < argc; i++) {
        if (streq(argv[i], "--corpus") && i + 1 < argc)
            dir = argv[++i];
        else if (streq(argv[i], "--queries") && i + 1 < argc)
            qpath = argv[++i];
        else if (streq(argv[i], "--heldout") && i + 1 < argc)
            heldout = argv[++i];
        else if (streq(argv[i], "--tokenizer") && i + 1 < argc)
            tokenizer = argv[++i];
        else if (streq(argv[i], "--short"))
            short_run = true;
        else if (streq(argv[i], "--misses"))
            misses = true;
        else {
            fprintf(stderr,
                    "usage: %s [--corpus DIR] [--queries FILE] [--heldout FILE] "
                    "[--tokenizer CMD] [--short] [--misses]\n",
                    argv[0]);
            return 2;
        }
    }
    corpus_load(&c, dir);
    _cleanup_free_ char *qtext = h_read_file(qpath);
    yajl_val queries = qtext ? json_parse(qtext, NULL) : NULL;
    if (!YAJL_IS_ARRAY(queries) || c.n_tools == 0) {
        fprintf(stderr, "search-bench: %s: no queries, or %s: no tools\n", qpath, dir);
        return 2;
    }
    printf("corpus: %zu servers, %zu tools; %zu queries (%s)\n", c.n_files, c.n_tools,
           json_array_len(queries), qpath);

    ToolIndex *ranked = index_build(&c, &toolsearch_ranked, c.n_tools);
    ToolIndex *bm25 = index_build(&c, &toolsearch_bm25, c.n_tools);
    Quality qr = quality(&c, ranked, queries, misses), qb = quality(&c, bm25, queries, false);
    printf("quality          recall@1  recall@5  MRR\n");
    printf("  mcpd ranking   %8.3f  %8.3f  %5.3f\n", qr.r1, qr.r5, qr.mrr);
    printf("  plain BM25     %8.3f  %8.3f  %5.3f\n", qb.r1, qb.r5, qb.mrr);
    heldout_quality(&c, ranked, bm25, heldout);

    size_t est_all = 0,
           est_search = tokens_estimate(toolsearch_tools_json, strlen(toolsearch_tools_json));
    size_t host_bytes = 0;
    for (size_t i = 0; i < c.n_tools; i++) {
        host_bytes += strlen(c.tools[i].host);
        est_all += tokens_estimate(c.tools[i].host, strlen(c.tools[i].host));
    }
    printf("tokens at start (estimate): all %zu (%zu bytes), search %zu (%.1f%%)\n", est_all,
           host_bytes, est_search, 100.0 * (double)est_search / (double)est_all);
    size_t real_all, real_search;
    double err;
    if (tokenizer && real_tokens(tokenizer, &c, &real_all, &real_search, &err))
        printf("tokens at start (real BPE): all %zu, search %zu (%.1f%%); estimate/real %.3f, "
               "mean error per tool %.1f%%\n",
               real_all, real_search, 100.0 * (double)real_search / (double)real_all,
               (double)est_all / (double)real_all, 100 * err);
    else
        printf("tokens at start (real BPE): skipped (%s)\n",
               tokenizer ? "the tokenizer command failed" : "no --tokenizer");

    ToolIndex *big = index_build(&c, &toolsearch_ranked, LATENCY_TOOLS);
    double p50, p99;
    size_t raw_big = 0;
    for (size_t k = 0; k < LATENCY_TOOLS; k++) {
        StrBuf raw = STRBUF_INIT;
        json_write(&raw, c.tools[k % c.n_tools].def);
        raw_big += raw.len;
        strbuf_deinit(&raw);
    }
    latency(big, queries, short_run ? 1 : 20, &p50, &p99);
    printf("search at %d tools: p50 %.1f us, p99 %.1f us\n", LATENCY_TOOLS, p50, p99);
    printf("index at %d tools: %zu bytes; the tools' own text %zu bytes (%.0f%%)\n", LATENCY_TOOLS,
           toolindex_bytes(big), raw_big, 100.0 * (double)toolindex_bytes(big) / (double)raw_big);

    printf("targets:\n");
    failed |= target(c.n_tools >= 150 && c.n_files >= 8, "corpus: >= 8 servers, >= 150 tools");
    failed |= target(qr.r5 >= 0.90, "recall@5 >= 0.90");
    failed |= target(qr.mrr >= 0.75, "MRR >= 0.75");
    failed |= target(qr.r5 >= qb.r5 + 0.05, "recall@5 >= plain BM25 + 0.05");
    failed |= target(est_search * 20 <= est_all, "search mode <= 5% of all mode's tokens");
    /* Latency is a figure of a real run, not of a short one under sanitizers. */
    if (!short_run)
        failed |= target(p50 < 1000, "search p50 < 1 ms at 10,000 tools");
    failed |= target(toolindex_bytes(big) < raw_big, "index smaller than the tools' text");

    toolindex_free(big);
    toolindex_free(ranked);
    toolindex_free(bm25);
    json_free(queries);
    for (size_t i = 0; i < c.n_tools; i++) {
        free(c.tools[i].id);
        free(c.tools[i].host);
    }
    free(c.tools);
    for (size_t i = 0; i < c.n_files; i++)
        json_free(c.files[i]);
    /* The short run proves the benchmark runs (under sanitizers too); the full one decides. */
    return short_run ? 0 : failed;
}
