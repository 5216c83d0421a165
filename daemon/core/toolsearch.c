// SPDX-License-Identifier: MIT
// toolsearch: ranks the tools an agent may use for a query written the way a person asks.

/*
 * BM25F: each field of a tool (name, title, description, parameter names and descriptions,
 * server) counts a term with its own weight, normalised by the field's length against the
 * field's average, and the weighted count is saturated once per term (k1). The weighted count
 * of each (tool, term) is computed when the index is finished, so a search only walks the
 * postings of its terms and adds one stored float per tool: well under a millisecond for 10,000
 * tools (tests/bench/search-bench.c).
 *
 * Terms: ASCII letters and digits lowercased, split at every other byte and at camelCase
 * ("getFileInfo" is get, file, info); bytes >= 0x80 are kept inside words, so a word in another
 * script is a term too. With stemming a light suffix stripper maps "branches", "branch",
 * "creating", "created" and "create" together. A small map of synonyms a person uses for the
 * verbs and nouns of tools (delete/remove, folder/directory, picture/screenshot) expands a
 * query's terms at a lower weight; the map is generic, not made for any query set (the
 * benchmark checks it on a second one).
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/util.h"
#include "daemon/core/toolsearch.h"

/* Weights chosen on the repository's query set, checked on a second, unseen one. */
const ToolSearchOptions toolsearch_ranked = {
    .weight = {[TS_FIELD_NAME] = 3.0f,
               [TS_FIELD_TITLE] = 2.0f,
               [TS_FIELD_DESC] = 1.0f,
               [TS_FIELD_PARAM] = 0.4f,
               [TS_FIELD_PARAM_DESC] = 0.15f,
               [TS_FIELD_SERVER] = 1.0f},
    .b = 0.75f,
    .k1 = 1.2f,
    .coordination = 1.0f,
    .split_camel = true,
    .stem = true,
    .synonyms = true,
};

/* Plain BM25 (k1 1.2, b 0.75) over one field, the name and the description. */
const ToolSearchOptions toolsearch_bm25 = {
    .weight = {[TS_FIELD_NAME] = 1.0f, [TS_FIELD_DESC] = 1.0f},
    .b = 0.75f,
    .k1 = 1.2f,
};

/* Words in one synonym group, at most. */
#define SYNONYM_GROUP_MAX 8
/* A synonym's share of the query term it stands for. */
#define SYNONYM_WEIGHT 0.5f
/* A term's count in one field is capped here: a description repeating a word 10^4 times. */
#define FIELD_TF_MAX 255

/* ---- terms ---- */

static bool is_word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

static bool is_upper(unsigned char c)
{
    return c >= 'A' && c <= 'Z';
}

static bool is_lower(unsigned char c)
{
    return c >= 'a' && c <= 'z';
}

static bool is_vowel(char c)
{
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

/* Words that carry no capability ("how do I ..."): left out of queries and tools alike. */
static const char *const stopwords[] = {
    "a",      "an",     "the",   "of",    "to",        "in",       "on",   "for",   "with",
    "and",    "or",     "is",    "are",   "be",        "by",       "from", "this",  "that",
    "it",     "as",     "at",    "me",    "my",        "i",        "you",  "your",  "we",
    "our",    "please", "can",   "could", "would",     "should",   "will", "how",   "what",
    "which",  "do",     "does",  "did",   "some",      "its",      "into", "there", "these",
    "those",  "was",    "were",  "been",  "if",        "then",     "so",   "about", "all",
    "any",    "use",    "using", "want",  "need",      "let",      "us",   "them",  "they",
    "their",  "he",     "she",   "him",   "her",       "am",       "who",  "where", "when",
    "why",    "here",   "now",   "just",  "something", "anything", "also", "too",   "very",
    "really", "again",  "up",    "out",   "right"};

static bool is_stopword(const char *w, size_t n)
{
    for (size_t i = 0; i < N_ELEMENTS(stopwords); i++)
        if (strlen(stopwords[i]) == n && memcmp(stopwords[i], w, n) == 0)
            return true;
    return false;
}

static bool ends(const char *w, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n > k && memcmp(w + n - k, suf, k) == 0;
}

/*
 * Light stemming in place (ASCII words only); returns the new length. Not Porter: the few
 * inflections tool texts and questions differ by (plurals, -ing, -ed, a final e or y).
 */
static size_t stem(char *w, size_t n)
{
    if (n <= 3)
        return n;
    for (size_t i = 0; i < n; i++)
        if (!is_lower((unsigned char)w[i]))
            return n;
    if (ends(w, n, "ies") && n > 4)
        n -= 2; /* directories -> directori (directory -> directori below) */
    else if (ends(w, n, "sses") || ends(w, n, "xes") || ends(w, n, "ches") || ends(w, n, "shes"))
        n -= 2;
    else if (w[n - 1] == 's' && w[n - 2] != 's' && w[n - 2] != 'u' && w[n - 2] != 'i')
        n -= 1;
    if (n > 5 && ends(w, n, "ing"))
        n -= 3;
    else if (n > 4 && ends(w, n, "ed"))
        n -= 2;
    /* running -> runn -> run; but keep "ll", "ss", "zz" (install, access) */
    if (n > 3 && w[n - 1] == w[n - 2] && !is_vowel(w[n - 1]) && w[n - 1] != 'l' &&
        w[n - 1] != 's' && w[n - 1] != 'z')
        n -= 1;
    if (n > 3 && w[n - 1] == 'e')
        n -= 1;
    if (n > 3 && w[n - 1] == 'y')
        w[n - 1] = 'i';
    return n;
}

/* Lowercase, stem (if asked) and pass on one word of n bytes, unless it is a stopword. */
static void emit(const ToolSearchOptions *o, const unsigned char *p, size_t n,
                 void (*fn)(void *ud, const char *term, size_t n), void *ud)
{
    char w[TS_TERM_MAX + 1];

    n = MIN(n, (size_t)TS_TERM_MAX);
    for (size_t i = 0; i < n; i++)
        w[i] = (char)(is_upper(p[i]) ? p[i] - 'A' + 'a' : p[i]);
    if (is_stopword(w, n))
        return;
    if (o->stem)
        n = stem(w, n);
    w[n] = '\0';
    fn(ud, w, n);
}

/* Whether a camelCase part ends before p[0] (start: where the word began). */
static bool camel_break(const unsigned char *start, const unsigned char *p,
                        const unsigned char *end)
{
    if (p <= start)
        return false;
    return (is_lower(p[-1]) && is_upper(*p)) ||
           (is_upper(p[-1]) && is_upper(*p) && p + 1 < end && is_lower(p[1]));
}

void toolsearch_terms(const ToolSearchOptions *o, const char *text, size_t len,
                      void (*fn)(void *ud, const char *term, size_t n), void *ud)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;

    while (p < end) {
        while (p < end && !is_word_byte(*p))
            p++;
        if (p >= end)
            break;
        const unsigned char *start = p, *part = p;
        bool split = false;
        while (p < end && is_word_byte(*p))
            p++;
        /*
         * With split_camel each camelCase part is a term ("getFileInfo": get, file, info), and
         * the whole word too, so "JavaScript" is found by "javascript" and "GitHub" by "github".
         */
        for (const unsigned char *q = start; o->split_camel && q < p; q++)
            if (camel_break(start, q, p)) {
                emit(o, part, (size_t)(q - part), fn, ud);
                part = q;
                split = true;
            }
        emit(o, part, (size_t)(p - part), fn, ud);
        if (split)
            emit(o, start, (size_t)(p - start), fn, ud);
    }
}

/* ---- synonyms ---- */

/*
 * Groups of words a person and a tool use for one thing. Each is written as a word and
 * stemmed when the map is built, so "directories" in a query finds "folder".
 */
static const char *const synonym_groups[][SYNONYM_GROUP_MAX] = {
    /* verbs of tools */
    {"delete", "remove", "erase", "destroy", "drop", "forget", "discard", "purge"},
    {"create", "make", "new", "add", "generate"},
    {"search", "find", "lookup", "locate", "query", "discover"},
    {"list", "enumerate", "show", "display"},
    {"get", "fetch", "retrieve", "read", "obtain", "view", "load", "inspect"},
    {"update", "edit", "modify", "change", "patch", "alter", "tweak", "set"},
    {"move", "rename", "relocate"},
    {"copy", "duplicate", "clone"},
    {"run", "execute", "exec", "invoke", "launch"},
    {"click", "press", "tap"},
    {"type", "fill", "enter", "input"},
    {"navigate", "go", "open", "visit", "browse"},
    {"close", "quit", "exit", "shut"},
    {"wait", "sleep", "pause", "delay"},
    {"think", "reason", "reflect", "plan", "step"},
    {"write", "save", "store", "persist"},
    {"compress", "zip", "gzip", "archive", "shrink"},
    {"upload", "attach"},
    {"select", "choose", "pick", "dropdown"},
    {"hover", "mouseover"},
    {"echo", "repeat"},
    {"clean", "cleanup", "tidy"},
    {"scale", "replica", "resize"},
    {"deploy", "deployment", "rollout", "release"},
    {"install", "setup"},
    {"remember", "memorize", "recall", "note"},
    {"react", "reaction", "emoji"},
    {"review", "approve", "reject"},
    {"explain", "documentation", "docs", "schema", "describe"},
    {"ping", "alive", "reachable", "health", "responsive"},
    /* nouns of tools */
    {"image", "picture", "screenshot", "photo", "snapshot", "png", "jpg", "capture"},
    {"page", "website", "site", "webpage", "url", "link"},
    {"web", "internet", "online"},
    {"folder", "directory", "dir"},
    {"repo", "repository", "project", "codebase"},
    {"pr", "pull", "merge"},
    {"issue", "ticket", "bug", "problem", "tracker"},
    {"message", "msg", "chat", "post", "send"},
    {"file", "document", "doc"},
    {"user", "person", "member", "people", "profile", "account", "colleague", "teammate"},
    {"memory", "knowledge", "graph", "fact", "observation"},
    {"relation", "relationship", "connection", "link"},
    {"location", "place", "address", "venue", "business", "restaurant", "shop"},
    {"direction", "route", "drive", "travel", "trip"},
    {"distance", "far", "duration"},
    {"coordinate", "latitude", "longitude", "geocode", "gps"},
    {"elevation", "altitude", "height", "high"},
    {"database", "db", "sql", "table", "row", "postgres"},
    {"log", "logs", "output", "stdout", "stderr"},
    {"commit", "history", "changes"},
    {"size", "big", "large", "biggest", "space"},
    {"info", "metadata", "detail", "stat", "attribute", "properties"},
    {"container", "pod"},
    {"cluster", "kubernetes", "k8s", "kubectl"},
    {"comment", "reply", "remark", "feedback"},
    {"channel", "room", "conversation"},
    {"tab", "window"},
    {"dialog", "alert", "popup", "modal", "confirm"},
    {"javascript", "js", "script", "code"},
    {"console", "devtools"},
    {"network", "request", "http", "traffic"},
    {"key", "keyboard", "keystroke", "shortcut"},
    {"drag", "drop"},
    {"form", "field"},
    {"sum", "total", "plus", "calculate"},
    {"env", "environment", "variable"},
    {"shell", "terminal", "command", "bash"},
    {"port", "forward", "tunnel"},
    {"block", "paragraph", "content"},
};

typedef struct Synonym {
    char word[TS_TERM_MAX + 1];
    unsigned group;
} Synonym;

static Synonym synonyms[N_ELEMENTS(synonym_groups) * SYNONYM_GROUP_MAX];
static size_t n_synonyms;

static void add_synonym(void *ud, const char *term, size_t n)
{
    unsigned g = *(unsigned *)ud;

    if (n_synonyms < N_ELEMENTS(synonyms)) {
        memcpy(synonyms[n_synonyms].word, term, n + 1);
        synonyms[n_synonyms++].group = g;
    }
}

/* The map, stemmed with the ranked options (the daemon is single-threaded). */
static void synonyms_init(void)
{
    if (n_synonyms)
        return;
    for (unsigned g = 0; g < N_ELEMENTS(synonym_groups); g++)
        for (size_t i = 0; i < SYNONYM_GROUP_MAX && synonym_groups[g][i]; i++) {
            const char *w = synonym_groups[g][i];
            toolsearch_terms(&toolsearch_ranked, w, strlen(w), add_synonym, &g);
        }
}

/* ---- the dictionary: terms interned in one arena, found through an open-addressed table ---- */

typedef struct Posting {
    uint32_t doc;
    float wtf; /* the field-weighted, length-normalised term count */
} Posting;

/* A term's count in one field of the tool being added. */
typedef struct Occ {
    uint32_t term;
    uint8_t field;
    uint8_t tf;
} Occ;

struct ToolIndex {
    ToolSearchOptions o;
    char *arena; /* the terms, each NUL-terminated */
    size_t arena_len, arena_cap;
    uint32_t *term_off; /* term -> its offset in arena */
    uint32_t *slots;    /* hash table: term + 1, 0 empty */
    size_t n_terms, terms_cap, slots_mask;
    /* while adding */
    Occ *occ; /* every tool's (term, field, count), in tool order */
    size_t n_occ, occ_cap;
    uint32_t *doc_occ;                  /* tool -> its first entry in occ; n_docs + 1 entries */
    uint16_t (*field_len)[TS_N_FIELDS]; /* terms per field per tool */
    size_t n_docs, docs_cap;
    /* finished */
    uint32_t *post_off; /* term -> its first posting; n_terms + 1 entries */
    Posting *post;
    float *idf;
    size_t n_post;
    bool finished;
};

ToolIndex *toolindex_new(const ToolSearchOptions *o)
{
    ToolIndex *ix = xcalloc(1, sizeof(*ix));

    ix->o = *o;
    ix->slots_mask = 255;
    ix->slots = xcalloc(ix->slots_mask + 1, sizeof(*ix->slots));
    ix->doc_occ = xcalloc(1, sizeof(*ix->doc_occ));
    if (o->synonyms)
        synonyms_init();
    return ix;
}

ToolIndex *toolindex_free(ToolIndex *ix)
{
    if (!ix)
        return NULL;
    free(ix->arena);
    free(ix->term_off);
    free(ix->slots);
    free(ix->occ);
    free(ix->doc_occ);
    free(ix->field_len);
    free(ix->post_off);
    free(ix->post);
    free(ix->idf);
    free(ix);
    return NULL;
}

static const char *term_at(const ToolIndex *ix, uint32_t t)
{
    return ix->arena + ix->term_off[t];
}

/* The term's number, or -1 when it is in no tool. */
static long term_find(const ToolIndex *ix, const char *w, size_t n)
{
    size_t k = (size_t)hash_fnv1a(w, n) & ix->slots_mask;

    for (; ix->slots[k]; k = (k + 1) & ix->slots_mask) {
        const char *t = term_at(ix, ix->slots[k] - 1);
        if (strncmp(t, w, n) == 0 && t[n] == '\0')
            return (long)ix->slots[k] - 1;
    }
    return -1;
}

static void slots_grow(ToolIndex *ix)
{
    size_t cap = (ix->slots_mask + 1) * 2;

    free(ix->slots);
    ix->slots = xcalloc(cap, sizeof(*ix->slots));
    ix->slots_mask = cap - 1;
    for (uint32_t t = 0; t < ix->n_terms; t++) {
        const char *w = term_at(ix, t);
        size_t k = (size_t)hash_fnv1a(w, strlen(w)) & ix->slots_mask;
        while (ix->slots[k])
            k = (k + 1) & ix->slots_mask;
        ix->slots[k] = t + 1;
    }
}

static uint32_t term_intern(ToolIndex *ix, const char *w, size_t n)
{
    long found = term_find(ix, w, n);
    size_t k;

    if (found >= 0)
        return (uint32_t)found;
    if ((ix->n_terms + 1) * 2 > ix->slots_mask + 1)
        slots_grow(ix);
    if (ix->arena_len + n + 1 > ix->arena_cap) {
        ix->arena_cap = MAX(ix->arena_cap * 2, ix->arena_len + n + 1 + 4096);
        ix->arena = xrealloc(ix->arena, ix->arena_cap);
    }
    if (ix->n_terms == ix->terms_cap) {
        ix->terms_cap = ix->terms_cap ? ix->terms_cap * 2 : 1024;
        ix->term_off = xrealloc(ix->term_off, ix->terms_cap * sizeof(*ix->term_off));
    }
    memcpy(ix->arena + ix->arena_len, w, n);
    ix->arena[ix->arena_len + n] = '\0';
    ix->term_off[ix->n_terms] = (uint32_t)ix->arena_len;
    ix->arena_len += n + 1;
    k = (size_t)hash_fnv1a(w, n) & ix->slots_mask;
    while (ix->slots[k])
        k = (k + 1) & ix->slots_mask;
    ix->slots[k] = (uint32_t)ix->n_terms + 1;
    return (uint32_t)ix->n_terms++;
}

/* ---- adding tools ---- */

typedef struct AddCtx {
    ToolIndex *ix;
    ToolSearchField field;
} AddCtx;

static void add_term(void *ud, const char *w, size_t n)
{
    AddCtx *a = ud;
    ToolIndex *ix = a->ix;
    uint32_t t = term_intern(ix, w, n);
    uint16_t *len = &ix->field_len[ix->n_docs][a->field];

    if (*len < UINT16_MAX)
        (*len)++;
    /* This tool's entries are few: a linear look for the same term and field. */
    for (size_t i = ix->doc_occ[ix->n_docs]; i < ix->n_occ; i++)
        if (ix->occ[i].term == t && ix->occ[i].field == a->field) {
            if (ix->occ[i].tf < FIELD_TF_MAX)
                ix->occ[i].tf++;
            return;
        }
    if (ix->n_occ == ix->occ_cap) {
        ix->occ_cap = ix->occ_cap ? ix->occ_cap * 2 : 4096;
        ix->occ = xrealloc(ix->occ, ix->occ_cap * sizeof(*ix->occ));
    }
    ix->occ[ix->n_occ++] = (Occ){.term = t, .field = (uint8_t)a->field, .tf = 1};
}

static void add_field(ToolIndex *ix, ToolSearchField f, const char *text)
{
    AddCtx a = {ix, f};

    if (text && ix->o.weight[f] > 0)
        toolsearch_terms(&ix->o, text, strlen(text), add_term, &a);
}

/* Parameter names and descriptions of a schema's top-level properties. */
static void add_params(ToolIndex *ix, yajl_val schema)
{
    yajl_val props = json_get_object(schema, "properties");

    if (!props || !YAJL_IS_OBJECT(props))
        return;
    for (size_t i = 0; i < props->u.object.len; i++) {
        add_field(ix, TS_FIELD_PARAM, props->u.object.keys[i]);
        add_field(ix, TS_FIELD_PARAM_DESC,
                  json_get_string(props->u.object.values[i], "description"));
    }
}

void toolindex_add(ToolIndex *ix, const char *server, yajl_val tool)
{
    const char *title = json_get_string(tool, "title");

    if (ix->finished)
        return;
    if (ix->n_docs + 1 >= ix->docs_cap) {
        ix->docs_cap = ix->docs_cap ? ix->docs_cap * 2 : 256;
        ix->doc_occ = xrealloc(ix->doc_occ, (ix->docs_cap + 1) * sizeof(*ix->doc_occ));
        ix->field_len = xrealloc(ix->field_len, ix->docs_cap * sizeof(*ix->field_len));
    }
    memset(ix->field_len[ix->n_docs], 0, sizeof(*ix->field_len));
    ix->doc_occ[ix->n_docs] = (uint32_t)ix->n_occ;
    if (!title)
        title = json_get_string(json_get_object(tool, "annotations"), "title");
    add_field(ix, TS_FIELD_NAME, json_get_string(tool, "name"));
    add_field(ix, TS_FIELD_TITLE, title);
    add_field(ix, TS_FIELD_DESC, json_get_string(tool, "description"));
    add_params(ix, json_get_object(tool, "inputSchema"));
    add_field(ix, TS_FIELD_SERVER, server);
    /* BM25 over name and description as one field: the baseline's single text. */
    if (ix->o.weight[TS_FIELD_TITLE] == 0 && ix->o.weight[TS_FIELD_PARAM] == 0 &&
        ix->o.weight[TS_FIELD_SERVER] == 0) {
        for (size_t i = ix->doc_occ[ix->n_docs]; i < ix->n_occ; i++)
            ix->occ[i].field = TS_FIELD_DESC;
        ix->field_len[ix->n_docs][TS_FIELD_DESC] += ix->field_len[ix->n_docs][TS_FIELD_NAME];
        ix->field_len[ix->n_docs][TS_FIELD_NAME] = 0;
    }
    ix->n_docs++;
    ix->doc_occ[ix->n_docs] = (uint32_t)ix->n_occ;
}

static int cmp_occ_term(const void *a, const void *b)
{
    const Occ *x = a, *y = b;
    return (x->term > y->term) - (x->term < y->term);
}

/* Fold one tool's entries into one posting per term. */
static void doc_postings(ToolIndex *ix, uint32_t d, const double avg[TS_N_FIELDS], size_t *fill)
{
    Occ *o = ix->occ + ix->doc_occ[d];
    size_t n = ix->doc_occ[d + 1] - ix->doc_occ[d];

    for (size_t i = 0; i < n;) { /* sorted by term in toolindex_finish */
        uint32_t t = o[i].term;
        double w = 0;
        for (; i < n && o[i].term == t; i++) {
            ToolSearchField f = o[i].field;
            double norm = 1 - ix->o.b + ix->o.b * ix->field_len[d][f] / (avg[f] > 0 ? avg[f] : 1);
            w += ix->o.weight[f] * o[i].tf / norm;
        }
        ix->post[fill[t]++] = (Posting){d, (float)w};
    }
}

void toolindex_finish(ToolIndex *ix)
{
    double avg[TS_N_FIELDS] = {0};
    _cleanup_free_ size_t *fill = NULL;

    if (ix->finished)
        return;
    for (size_t d = 0; d < ix->n_docs; d++)
        for (int f = 0; f < TS_N_FIELDS; f++)
            avg[f] += ix->field_len[d][f];
    for (int f = 0; f < TS_N_FIELDS; f++)
        avg[f] = ix->n_docs ? avg[f] / (double)ix->n_docs : 0;
    /* Count each term's tools (occ is sorted per tool by term below; count distinct first). */
    ix->post_off = xcalloc(ix->n_terms + 1, sizeof(*ix->post_off));
    fill = xcalloc(ix->n_terms + 1, sizeof(*fill));
    for (size_t d = 0; d < ix->n_docs; d++) {
        Occ *o = ix->occ + ix->doc_occ[d];
        size_t n = ix->doc_occ[d + 1] - ix->doc_occ[d];
        qsort(o, n, sizeof(*o), cmp_occ_term);
        for (size_t i = 0; i < n; i++)
            if (i == 0 || o[i].term != o[i - 1].term)
                fill[o[i].term + 1]++;
    }
    for (size_t t = 0; t < ix->n_terms; t++)
        fill[t + 1] += fill[t];
    ix->n_post = fill[ix->n_terms];
    for (size_t t = 0; t <= ix->n_terms; t++)
        ix->post_off[t] = (uint32_t)fill[t];
    ix->post = xcalloc(ix->n_post ? ix->n_post : 1, sizeof(*ix->post));
    for (size_t d = 0; d < ix->n_docs; d++)
        doc_postings(ix, (uint32_t)d, avg, fill);
    ix->idf = xcalloc(ix->n_terms ? ix->n_terms : 1, sizeof(*ix->idf));
    for (size_t t = 0; t < ix->n_terms; t++) {
        double df = ix->post_off[t + 1] - ix->post_off[t];
        ix->idf[t] = (float)log(1 + ((double)ix->n_docs - df + 0.5) / (df + 0.5));
    }
    /* What only adding needed. */
    free(ix->occ);
    free(ix->doc_occ);
    free(ix->field_len);
    ix->occ = NULL;
    ix->doc_occ = NULL;
    ix->field_len = NULL;
    ix->n_occ = ix->occ_cap = 0;
    ix->arena = xrealloc(ix->arena, ix->arena_len ? ix->arena_len : 1);
    ix->arena_cap = ix->arena_len;
    ix->finished = true;
}

size_t toolindex_len(const ToolIndex *ix)
{
    return ix->n_docs;
}

size_t toolindex_bytes(const ToolIndex *ix)
{
    return sizeof(*ix) + ix->arena_cap + ix->terms_cap * sizeof(*ix->term_off) +
           (ix->slots_mask + 1) * sizeof(*ix->slots) +
           (ix->finished ? (ix->n_terms + 1) * sizeof(*ix->post_off) +
                               ix->n_post * sizeof(*ix->post) + ix->n_terms * sizeof(*ix->idf)
                         : 0);
}

/* ---- searching ---- */

typedef struct QueryTerm {
    uint32_t term;
    float weight;
    uint64_t words; /* the query's words it stands for (itself, or those it is a synonym of) */
} QueryTerm;

typedef struct Query {
    const ToolIndex *ix;
    QueryTerm t[TS_QUERY_TERMS_MAX];
    size_t n;
    unsigned n_words; /* the query's words, known to the index or not (at most 64 counted) */
} Query;

static void query_put(Query *q, uint32_t term, float w)
{
    uint64_t word = 1ull << (q->n_words % 64);

    for (size_t i = 0; i < q->n; i++)
        if (q->t[i].term == term) {
            if (w > q->t[i].weight)
                q->t[i].weight = w;
            q->t[i].words |= word;
            return;
        }
    if (q->n < TS_QUERY_TERMS_MAX)
        q->t[q->n++] = (QueryTerm){term, w, word};
}

static void query_term(void *ud, const char *w, size_t n)
{
    Query *q = ud;
    long t = term_find(q->ix, w, n);

    if (t >= 0)
        query_put(q, (uint32_t)t, 1.0f);
    if (!q->ix->o.synonyms) {
        q->n_words++;
        return;
    }
    for (size_t i = 0; i < n_synonyms; i++) {
        if (strlen(synonyms[i].word) != n || memcmp(synonyms[i].word, w, n) != 0)
            continue;
        for (size_t j = 0; j < n_synonyms; j++) {
            long s;
            if (j == i || synonyms[j].group != synonyms[i].group)
                continue;
            s = term_find(q->ix, synonyms[j].word, strlen(synonyms[j].word));
            if (s >= 0)
                query_put(q, (uint32_t)s, SYNONYM_WEIGHT);
        }
    }
    q->n_words++;
}

static bool hit_better(const ToolHit *a, const ToolHit *b)
{
    return a->score > b->score || (a->score == b->score && a->doc < b->doc);
}

/* Keep the best `limit` in a min-heap at hits[0..*n): the worst kept is hits[0]. */
static void heap_offer(ToolHit *h, size_t *n, size_t limit, ToolHit x)
{
    size_t i;

    if (*n < limit) {
        i = (*n)++;
        while (i > 0 && hit_better(&h[(i - 1) / 2], &x)) {
            h[i] = h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h[i] = x;
        return;
    }
    if (!hit_better(&x, &h[0]))
        return;
    i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && hit_better(&h[c], &h[c + 1]))
            c++;
        if (!hit_better(&x, &h[c]))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static int cmp_hits(const void *a, const void *b)
{
    return hit_better(a, b) ? -1 : hit_better(b, a) ? 1 : 0;
}

size_t toolindex_search(const ToolIndex *ix, const char *query, size_t len, size_t limit,
                        ToolHit *hits)
{
    return toolindex_search_where(ix, query, len, limit, hits, NULL, NULL);
}

size_t toolindex_search_where(const ToolIndex *ix, const char *query, size_t len, size_t limit,
                              ToolHit *hits, ToolAcceptFn accept, void *ud)
{
    Query q = {.ix = ix};
    _cleanup_free_ float *acc = NULL;
    _cleanup_free_ uint32_t *touched = NULL;
    _cleanup_free_ uint64_t *words = NULL;
    size_t n_touched = 0, n = 0;
    unsigned n_words;

    if (!ix->finished || limit == 0 || !query || ix->n_docs == 0)
        return 0;
    toolsearch_terms(&ix->o, query, MIN(len, (size_t)TS_QUERY_BYTES_MAX), query_term, &q);
    if (q.n == 0)
        return 0;
    n_words = MIN(q.n_words, 64u);
    acc = xcalloc(ix->n_docs, sizeof(*acc));
    words = xcalloc(ix->n_docs, sizeof(*words));
    touched = xmalloc(ix->n_docs * sizeof(*touched));
    for (size_t i = 0; i < q.n; i++) {
        uint32_t t = q.t[i].term;
        float idf = ix->idf[t] * q.t[i].weight, k1 = ix->o.k1;
        for (uint32_t p = ix->post_off[t]; p < ix->post_off[t + 1]; p++) {
            const Posting *ps = &ix->post[p];
            if (acc[ps->doc] == 0)
                touched[n_touched++] = ps->doc;
            acc[ps->doc] += idf * ps->wtf * (k1 + 1) / (ps->wtf + k1);
            words[ps->doc] |= q.t[i].words;
        }
    }
    limit = MIN(limit, n_touched);
    for (size_t i = 0; i < n_touched; i++) {
        uint32_t d = touched[i];
        float score = acc[d];
        if (accept && !accept(ud, d))
            continue;
        /* A tool that answers more of the query's words ranks above one that answers a few. */
        if (ix->o.coordination > 0)
            score *=
                powf((float)__builtin_popcountll(words[d]) / (float)n_words, ix->o.coordination);
        heap_offer(hits, &n, limit, (ToolHit){d, score});
    }
    qsort(hits, n, sizeof(*hits), cmp_hits);
    return n;
}

const char toolsearch_tools_json[] =
    "[{\"name\":\"mcpd_search_tools\",\"description\":\"Find tools for a task among every tool "
    "of this agent's MCP servers (also servers not running). Describe the capability in a few "
    "words; returns the best matches with name, description and input schema. Found tools are "
    "added to your tool list; call them directly, or through mcpd_call_tool.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\","
    "\"description\":\"What the tool should do, e.g. rename a git branch\"},\"limit\":{\"type\":"
    "\"integer\",\"minimum\":1,\"maximum\":50,\"description\":\"Most tools to return (default "
    "5)\"}},\"required\":[\"query\"]}},"
    "{\"name\":\"mcpd_call_tool\",\"description\":\"Call a tool that mcpd_search_tools found, "
    "by its name, with its arguments.\",\"inputSchema\":{\"type\":\"object\",\"properties\":"
    "{\"name\":{\"type\":\"string\"},\"arguments\":{\"type\":\"object\"}},\"required\":"
    "[\"name\"]}}]";
