// SPDX-License-Identifier: MIT
// toolsearch: ranks the tools an agent may use for a query written the way a person asks.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

/* The parts of a tool a query is matched against, each with its own weight. */
typedef enum ToolSearchField {
    TS_FIELD_NAME,       /* the tool's own name, split at _ - . and camelCase */
    TS_FIELD_TITLE,      /* title, or annotations.title */
    TS_FIELD_DESC,       /* description */
    TS_FIELD_PARAM,      /* the names of inputSchema's properties */
    TS_FIELD_PARAM_DESC, /* their descriptions */
    TS_FIELD_SERVER,     /* the server's name */
    TS_N_FIELDS
} ToolSearchField;

typedef struct ToolSearchOptions {
    float weight[TS_N_FIELDS]; /* 0 leaves a field out */
    float b;                   /* BM25 length normalisation */
    float k1;                  /* BM25 saturation */
    float coordination;        /* a score times (query words matched / words)^this; 0 is off */
    bool split_camel;          /* "readFile" is read + file */
    bool stem;                 /* light suffix stripping: "branches" finds "branch" */
    bool synonyms;             /* a query's "delete" also finds "remove", at a lower weight */
} ToolSearchOptions;

/* mcpd's ranking. */
extern const ToolSearchOptions toolsearch_ranked;
/* The baseline the benchmark compares with: plain BM25 over name and description. */
extern const ToolSearchOptions toolsearch_bm25;

/*
 * Bounds on what a query may make the engine do, whatever its size: a query is cut to
 * TS_QUERY_BYTES_MAX bytes (a sentence or two is what a model writes; 4 KiB is ten times that)
 * and uses its first TS_QUERY_TERMS_MAX distinct terms; a word longer than TS_TERM_MAX bytes is
 * cut (no tool's word is that long; a run of binary bytes must not make one huge term).
 */
#define TS_QUERY_BYTES_MAX 4096
#define TS_QUERY_TERMS_MAX 64
#define TS_TERM_MAX        32

typedef struct ToolHit {
    uint32_t doc; /* the tool's number: the order it was added in, from 0 */
    float score;
} ToolHit;

typedef struct ToolIndex ToolIndex;

/** A new, empty index ranking with o (copied). */
ToolIndex *toolindex_new(const ToolSearchOptions *o);
/** Free the index; returns NULL. */
ToolIndex *toolindex_free(ToolIndex *ix);
/** Add one tool (a tools/list entry) of server; its number is the count added before it. */
void toolindex_add(ToolIndex *ix, const char *server, yajl_val tool);
/** Done adding: compute the postings. Searching before this finds nothing. */
void toolindex_finish(ToolIndex *ix);
/** Tools added. */
size_t toolindex_len(const ToolIndex *ix);
/** Bytes the finished index holds (dictionary, postings, tables). */
size_t toolindex_bytes(const ToolIndex *ix);
/**
 * The best min(limit, matches) tools for query (len bytes, any bytes), best first, into hits
 * (room for limit). Returns how many; 0 when no word of the query is in any tool.
 */
size_t toolindex_search(const ToolIndex *ix, const char *query, size_t len, size_t limit,
                        ToolHit *hits);
/* Whether a search may return the tool numbered doc (an agent's profile allows it). */
typedef bool (*ToolAcceptFn)(void *ud, uint32_t doc);
/** toolindex_search() over the tools accept() takes only (accept NULL: every tool). */
size_t toolindex_search_where(const ToolIndex *ix, const char *query, size_t len, size_t limit,
                              ToolHit *hits, ToolAcceptFn accept, void *ud);

/** Split text into index terms; calls fn for each (term, its length). Exposed for the tests. */
void toolsearch_terms(const ToolSearchOptions *o, const char *text, size_t len,
                      void (*fn)(void *ud, const char *term, size_t n), void *ud);

/*
 * The tools an agent in search mode starts with (docs/search.md): their definitions as a host
 * sends them to its model, a JSON array. The benchmark counts their tokens against all tools.
 */
extern const char toolsearch_tools_json[];
