// SPDX-License-Identifier: MIT
// yaml-tree: a YAML document (through libyaml) as a JSON tree, for agents that write YAML.

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "common/json.h"
#include "common/jsonc.h"
#include "common/util.h"
#include "daemon/config/yaml-tree.h"

/*
 * Aliases let a few bytes of YAML name the same node many times over ("billion laughs"):
 * the tree built is bounded in nodes and depth. Goose's config.yaml has tens of nodes per
 * extension and a few levels; 100000 nodes and 64 levels are far beyond any real file.
 */
#define YAML_TREE_MAX_NODES 100000
#define YAML_TREE_MAX_DEPTH 64
/*
 * An alias of a long scalar copies it again each time, so nodes alone do not bound memory
 * (100000 aliases of a 1 MiB string would be 100 GB). Without aliases a tree's text is at
 * most its file's (config files stop at 4 MiB): four times that is far beyond any real file.
 */
#define YAML_TREE_MAX_BYTES (16u * 1024u * 1024u)

/*
 * A document is measured by its tokens before libyaml loads it, on two counts.
 * Depth: libyaml's scanner walks a saved key per open [ or { on every token, so its time grows
 * with the square of their depth (200 KB of nested '[' took 35 s of CPU under ASan, a 4 MiB
 * file would take hours). The tree keeps YAML_TREE_MAX_DEPTH levels anyway, so the same bound
 * loses nothing, and within it the scan is linear.
 * Size: the load builds every node before the tree can count them, and a 4 MiB file of short
 * list items ("- 1") is a million nodes: about a minute and hundreds of MiB under ASan. A node
 * is at most a few tokens (a key, an entry or value indicator, the scalar), so four times the
 * tree's node bound loses nothing readable either.
 * A cloned repository's .continue/mcpServers/ files are read as soon as an agent works in it.
 */
#define YAML_SCAN_MAX_TOKENS (4u * YAML_TREE_MAX_NODES)

static bool too_big_to_load(const char *text, size_t len, char **whyp)
{
    yaml_parser_t parser;
    yaml_token_t t;
    size_t depth = 0, n_tokens = 0;
    bool end = false;

    if (!yaml_parser_initialize(&parser))
        return false; /* the load says it */
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    /* A scan error stops the walk: the load meets it too and names it. */
    while (!end && !*whyp && yaml_parser_scan(&parser, &t)) {
        size_t line = (size_t)t.start_mark.line + 1, col = (size_t)t.start_mark.column + 1;
        if (t.type == YAML_FLOW_SEQUENCE_START_TOKEN || t.type == YAML_FLOW_MAPPING_START_TOKEN) {
            if (++depth > YAML_TREE_MAX_DEPTH)
                *whyp = xasprintf("line %zu, column %zu: [ ] and { } nested more than %d levels "
                                  "deep; no agent writes such a file",
                                  line, col, YAML_TREE_MAX_DEPTH);
        } else if (t.type == YAML_FLOW_SEQUENCE_END_TOKEN ||
                   t.type == YAML_FLOW_MAPPING_END_TOKEN) {
            depth -= depth > 0;
        } else if (t.type == YAML_STREAM_END_TOKEN) {
            end = true;
        }
        if (!*whyp && ++n_tokens > YAML_SCAN_MAX_TOKENS)
            *whyp = xasprintf("line %zu, column %zu: more than %u tokens (about %d values); no "
                              "agent writes such a file",
                              line, col, YAML_SCAN_MAX_TOKENS, YAML_TREE_MAX_NODES);
        yaml_token_delete(&t);
    }
    yaml_parser_delete(&parser);
    return *whyp != NULL;
}

typedef struct Build {
    yaml_document_t *doc;
    size_t n_nodes, n_bytes;
    char *why;
} Build;

static void build_fail(Build *b, const yaml_node_t *n, const char *what)
{
    if (!b->why)
        b->why = xasprintf("line %zu, column %zu: %s", (size_t)n->start_mark.line + 1,
                           (size_t)n->start_mark.column + 1, what);
}

/* JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_json_number(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return false;
    if (*s == '.') {
        if (!(*++s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

static bool is_one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (streq(s, *words))
            return true;
    return false;
}

/* YAML 1.2's core schema, as serde_yaml (Goose) resolves plain scalars. */
static yajl_val scalar(const yaml_node_t *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    const char *s = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;

    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strlen(s) == len) {
        if (is_one_of(s, nulls))
            return json_null_new();
        if (is_one_of(s, trues) || is_one_of(s, falses))
            return json_bool_new(is_one_of(s, trues));
        if (is_json_number(s))
            return json_number_new_raw(s);
    }
    return json_string_new_lossy(s, len);
}

/* Count a scalar's text (a value's or a key's) before it is copied; false past the bound. */
static bool count_text(Build *b, const yaml_node_t *n)
{
    b->n_bytes += n->data.scalar.length;
    if (b->n_bytes <= YAML_TREE_MAX_BYTES)
        return true;
    build_fail(b, n, "more than 16 MiB of text (a long value aliased too often?)");
    return false;
}

static yajl_val node_to_json(Build *b, yaml_node_t *n, size_t depth);

static yajl_val mapping(Build *b, yaml_node_t *n, size_t depth)
{
    yajl_val obj = json_object_new();

    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(b->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(b->doc, p->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE) {
            build_fail(b, k ? k : n, "a mapping key must be a string");
            break;
        }
        if (!count_text(b, k))
            break;
        yajl_val val = node_to_json(b, v, depth + 1);
        if (!val)
            break;
        _cleanup_free_ char *key =
            xstrndup((const char *)k->data.scalar.value, k->data.scalar.length);
        json_object_append(obj, key, val);
    }
    if (b->why)
        return json_free(obj);
    /* A later duplicate wins: one sort, where a search per key was quadratic. */
    json_object_dedupe(obj, JSON_DUP_KEEP_LAST);
    return obj;
}

static yajl_val node_to_json(Build *b, yaml_node_t *n, size_t depth)
{
    yajl_val arr;

    if (++b->n_nodes > YAML_TREE_MAX_NODES) {
        build_fail(b, n, "more than 100000 values (aliases repeated too often?)");
        return NULL;
    }
    if (depth > YAML_TREE_MAX_DEPTH) {
        build_fail(b, n, "nested more than 64 levels deep (an alias inside itself?)");
        return NULL;
    }
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return count_text(b, n) ? scalar(n) : NULL;
    case YAML_MAPPING_NODE:
        return mapping(b, n, depth);
    case YAML_SEQUENCE_NODE:
        arr = json_array_new();
        for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top;
             i++) {
            yaml_node_t *item = yaml_document_get_node(b->doc, *i);
            yajl_val v = item ? node_to_json(b, item, depth + 1) : NULL;
            if (!v)
                return json_free(arr);
            json_array_push(arr, v);
        }
        return arr;
    default:
        build_fail(b, n, "an empty node");
        return NULL;
    }
}

yajl_val yaml_tree_parse(const char *text, size_t len, char **whyp)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    Build b = {&doc, 0, 0, NULL};
    yajl_val v = NULL;
    yaml_node_t *root;

    if (memchr(text, '\0', len)) {
        size_t line, col;
        jsonc_position(text, (size_t)((const char *)memchr(text, '\0', len) - text), &line, &col);
        *whyp = xasprintf("line %zu, column %zu: a NUL byte; a config file is text", line, col);
        return NULL;
    }
    *whyp = NULL;
    if (too_big_to_load(text, len, whyp))
        return NULL;
    if (!yaml_parser_initialize(&parser)) {
        *whyp = xstrdup("out of memory starting the YAML parser");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        *whyp = xasprintf(
            "line %zu, column %zu: invalid YAML: %s%s%s", (size_t)parser.problem_mark.line + 1,
            (size_t)parser.problem_mark.column + 1, parser.problem ? parser.problem : "?",
            parser.context ? " " : "", parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        return NULL;
    }
    root = yaml_document_get_root_node(&doc);
    v = root ? node_to_json(&b, root, 0) : json_null_new();
    if (!v)
        *whyp = b.why ? b.why : xstrdup("invalid YAML");
    else
        free(b.why);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return v;
}
