// SPDX-License-Identifier: MIT
// jsonc: JSON with comments and trailing commas (VS Code, Zed, OpenCode, Gemini CLI) to strict
// JSON.

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "common/json.h"
#include "common/jsonc.h"
#include "common/util.h"

/*
 * Nesting is bounded by JSON_MAX_DEPTH (json.h), like every JSON text mcpd reads; checked
 * here too, so a JSONC file too deep is named with its line and column.
 */

void jsonc_position(const char *text, size_t offset, size_t *linep, size_t *colp)
{
    size_t line = 1, col = 1;

    for (size_t i = 0; i < offset; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    *linep = line;
    *colp = col;
}

static char *error_at(const char *text, size_t offset, const char *what)
{
    size_t line, col;

    jsonc_position(text, offset, &line, &col);
    return xasprintf("line %zu, column %zu: %s", line, col, what);
}

typedef struct Scan {
    const char *in;
    char *out;
    size_t len, i;
    bool comments; /* JSONC: comments and trailing commas are allowed */
    size_t depth;
    ssize_t pending_comma; /* a comma that a closing bracket would make trailing */
} Scan;

/* Skip a string starting at s->i (the quote); false when it never ends. */
static bool scan_string(Scan *s)
{
    for (s->i++; s->i < s->len; s->i++) {
        if (s->in[s->i] == '\\')
            s->i++;
        else if (s->in[s->i] == '"')
            return true;
    }
    return false;
}

/* A comment at s->i, blanked out (newlines kept); false when a block comment never ends. */
static bool scan_comment(Scan *s)
{
    if (s->in[s->i + 1] == '/') {
        while (s->i < s->len && s->in[s->i] != '\n')
            s->out[s->i++] = ' ';
        s->i--;
        return true;
    }
    s->out[s->i] = s->out[s->i + 1] = ' ';
    for (s->i += 2; s->i < s->len; s->i++) {
        if (s->in[s->i] == '*' && s->i + 1 < s->len && s->in[s->i + 1] == '/') {
            s->out[s->i] = s->out[s->i + 1] = ' ';
            s->i++;
            return true;
        }
        if (s->in[s->i] != '\n')
            s->out[s->i] = ' ';
    }
    return false;
}

/* One byte outside strings and comments: track depth and trailing commas. */
static const char *scan_structural(Scan *s)
{
    char c = s->in[s->i];

    switch (c) {
    case '{':
    case '[':
        if (++s->depth > JSON_MAX_DEPTH)
            return "nested more than 128 levels deep; no agent writes such a file";
        s->pending_comma = -1;
        break;
    case '}':
    case ']':
        if (s->depth > 0)
            s->depth--;
        if (s->pending_comma >= 0 && s->comments)
            s->out[s->pending_comma] = ' ';
        s->pending_comma = -1;
        break;
    case ',':
        s->pending_comma = (ssize_t)s->i;
        break;
    case ' ':
    case '\t':
    case '\r':
    case '\n':
        break;
    default:
        s->pending_comma = -1;
    }
    return NULL;
}

static char *scan(const char *text, size_t len, bool comments, char **whyp)
{
    Scan s = {text, xmalloc(len + 1), len, 0, comments, 0, -1};
    const char *bad;

    memcpy(s.out, text, len);
    s.out[len] = '\0';
    for (; s.i < len; s.i++) {
        size_t start = s.i;
        char c = text[s.i];

        if (c == '\0') {
            *whyp = error_at(text, s.i, "a NUL byte; a config file is text");
            goto fail;
        }
        if (c == '"') {
            if (!scan_string(&s)) {
                *whyp = error_at(text, start, "a string that never ends");
                goto fail;
            }
            if (memchr(text + start, '\0', s.i - start)) {
                *whyp = error_at(text, start, "a NUL byte inside a string");
                goto fail;
            }
            s.pending_comma = -1;
            continue;
        }
        if (comments && c == '/' && s.i + 1 < len &&
            (text[s.i + 1] == '/' || text[s.i + 1] == '*')) {
            if (!scan_comment(&s)) {
                *whyp = error_at(text, start, "a /* comment that never ends");
                goto fail;
            }
            continue;
        }
        if ((bad = scan_structural(&s))) {
            *whyp = error_at(text, s.i, bad);
            goto fail;
        }
    }
    return s.out;
fail:
    free(s.out);
    return NULL;
}

char *jsonc_to_json(const char *text, size_t len, char **whyp)
{
    return scan(text, len, true, whyp);
}

/* Where yajl stops on text, and its one-line message, for an error naming line and column. */
static char *parse_error(const char *text, size_t len)
{
    yajl_handle h = yajl_alloc(NULL, NULL, NULL);
    yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
    size_t at = len; /* the text ended too soon: the end is the place */
    char *why;

    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    else if ((at = yajl_get_bytes_consumed(h)) > 0)
        at--; /* yajl has consumed the offending byte */
    if (st == yajl_status_ok) {
        yajl_free(h);
        return error_at(text, len, "invalid JSON");
    }
    unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
    _cleanup_free_ char *line = xstrdup((const char *)msg);
    char *nl = strchr(line, '\n');
    if (nl)
        *nl = '\0';
    yajl_free_error(h, msg);
    yajl_free(h);
    why = error_at(text, at, startswith(line, "parse error: ") ? line + 13 : line);
    return why;
}

static yajl_val parse(const char *text, size_t len, bool comments, char **whyp)
{
    _cleanup_free_ char *strict = scan(text, len, comments, whyp);
    _cleanup_free_ char *err = NULL;
    yajl_val v = NULL;
    int r;

    if (!strict)
        return NULL;
    /* json_parse_full's limits (values, UTF-8 repair) hold for config files too. */
    r = json_parse_full(&v, strict, len, JSON_UTF8_REPAIR, &err);
    if (r == JSON_E_SYNTAX) {
        *whyp = parse_error(strict, len);
        return NULL;
    }
    if (r != 0) {
        *whyp = xstrdup(err ? err : "invalid JSON");
        return NULL;
    }
    jsonc_dedupe(v);
    return v;
}

yajl_val jsonc_parse(const char *text, size_t len, char **whyp)
{
    return parse(text, len, true, whyp);
}

yajl_val jsonc_parse_strict(const char *text, size_t len, char **whyp)
{
    return parse(text, len, false, whyp);
}

void jsonc_dedupe(yajl_val v)
{
    if (YAJL_IS_OBJECT(v)) {
        json_object_dedupe(v, JSON_DUP_KEEP_LAST);
        for (size_t i = 0; i < v->u.object.len; i++)
            jsonc_dedupe(v->u.object.values[i]);
    } else if (YAJL_IS_ARRAY(v)) {
        for (size_t i = 0; i < v->u.array.len; i++)
            jsonc_dedupe(v->u.array.values[i]);
    }
}
