// SPDX-License-Identifier: MIT
// setup-edit: byte-exact text edits of agents' config files (JSON with comments, and TOML).

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/setup-edit.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"

void setup_edits_add(SetupEdits *e, size_t start, size_t end, char *text)
{
    e->v = xrealloc(e->v, (e->n + 1) * sizeof(*e->v));
    e->v[e->n++] = (SetupEdit){start, end, text};
}

static int cmp_edit(const void *a, const void *b)
{
    const SetupEdit *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

char *setup_edits_apply(const char *s, size_t n, const SetupEdits *e, size_t *lenp)
{
    SetupEdit *sorted = xmalloc((e->n ? e->n : 1) * sizeof(*sorted));
    StrBuf sb = STRBUF_INIT;
    size_t at = 0;

    if (e->n)
        memcpy(sorted, e->v, e->n * sizeof(*sorted));
    qsort(sorted, e->n, sizeof(*sorted), cmp_edit);
    for (size_t i = 0; i < e->n; i++) {
        strbuf_append(&sb, s + at, sorted[i].start - at);
        strbuf_append(&sb, sorted[i].text, strlen(sorted[i].text));
        at = sorted[i].end;
    }
    strbuf_append(&sb, s + at, n - at);
    free(sorted);
    return strbuf_detach(&sb, lenp);
}

void setup_edits_deinit(SetupEdits *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i].text);
    free(e->v);
    e->v = NULL;
    e->n = 0;
}

/* ---- JSON (as yajl reads it: comments allowed) ---- */

static size_t skip_ws(const char *s, size_t n, size_t i)
{
    while (i < n) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
            i++;
        } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                i++;
        } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *end = memmem(s + i + 2, n - i - 2, "*/", 2);
            i = end ? (size_t)(end - s) + 2 : n;
        } else {
            break;
        }
    }
    return i;
}

/* Index just past the string whose opening quote is at s[i]. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
    for (i++; i < n && s[i] != '"'; i++)
        if (s[i] == '\\')
            i++;
    return i < n ? i + 1 : n;
}

/* Index just past the value starting at s[i] (the text has parsed: brackets balance). */
static size_t skip_value(const char *s, size_t n, size_t i)
{
    size_t depth = 0;

    if (s[i] != '{' && s[i] != '[' && s[i] != '"') {
        while (i < n && !strchr(",}] \t\r\n/", s[i]))
            i++;
        return i;
    }
    while (i < n) {
        if (s[i] == '"') {
            i = skip_string(s, n, i);
            if (depth == 0)
                return i;
            continue;
        }
        if (s[i] == '/' && i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '*')) {
            i = skip_ws(s, n, i);
            continue;
        }
        if (s[i] == '{' || s[i] == '[')
            depth++;
        else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
            return i + 1;
        i++;
    }
    return n;
}

size_t setup_json_start(const char *s, size_t n)
{
    return skip_ws(s, n, 0);
}

int setup_json_members(const char *s, size_t n, size_t obj, SetupMember **outp, size_t *np)
{
    SetupMember *v = NULL;
    size_t count = 0, i;

    if (obj >= n || s[obj] != '{')
        return -EINVAL;
    i = skip_ws(s, n, obj + 1);
    while (i < n && s[i] == '"') {
        SetupMember m = {.key_start = i + 1};
        i = skip_string(s, n, i);
        m.key_end = i - 1;
        i = skip_ws(s, n, i);
        if (i >= n || s[i] != ':')
            break;
        m.val_start = skip_ws(s, n, i + 1);
        m.val_end = skip_value(s, n, m.val_start);
        v = xrealloc(v, (count + 1) * sizeof(*v));
        v[count++] = m;
        i = skip_ws(s, n, m.val_end);
        if (i < n && s[i] == ',')
            i = skip_ws(s, n, i + 1);
    }
    *outp = v;
    *np = count;
    return 0;
}

bool setup_json_key_is(const char *s, const SetupMember *m, const char *key)
{
    size_t len = strlen(key);

    return m->key_end - m->key_start == len && memcmp(s + m->key_start, key, len) == 0;
}

char *setup_json_key(const char *s, const SetupMember *m)
{
    _cleanup_free_ char *quoted =
        xasprintf("\"%.*s\"", (int)(m->key_end - m->key_start), s + m->key_start);
    _cleanup_json_ yajl_val v = json_parse(quoted, NULL);

    return xstrdup(YAJL_IS_STRING(v) ? v->u.string : "");
}

char *setup_json_line_indent(const char *s, size_t pos)
{
    size_t start = pos;

    while (start > 0 && s[start - 1] != '\n')
        start--;
    for (size_t i = start; i < pos; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return NULL;
    return xstrndup(s + start, pos - start);
}

static void format_value(StrBuf *sb, yajl_val v, const char *indent, const char *unit, int depth)
{
    bool obj = YAJL_IS_OBJECT(v);
    size_t len = obj ? v->u.object.len : YAJL_IS_ARRAY(v) ? v->u.array.len : 0;

    /* Arrays of scalars stay on one line, as people write args. */
    if (!indent || len == 0 || (!obj && !YAJL_IS_OBJECT(v->u.array.values[0]))) {
        json_write(sb, v);
        return;
    }
    strbuf_append(sb, obj ? "{" : "[", 1);
    for (size_t i = 0; i < len; i++) {
        strbuf_printf(sb, "%s\n%s", i ? "," : "", indent);
        for (int d = 0; d <= depth; d++)
            strbuf_printf(sb, "%s", unit);
        if (obj) {
            json_write_string(sb, v->u.object.keys[i], strlen(v->u.object.keys[i]));
            strbuf_append(sb, ": ", 2);
        }
        format_value(sb, obj ? v->u.object.values[i] : v->u.array.values[i], indent, unit,
                     depth + 1);
    }
    strbuf_printf(sb, "\n%s", indent);
    for (int d = 0; d < depth; d++)
        strbuf_printf(sb, "%s", unit);
    strbuf_append(sb, obj ? "}" : "]", 1);
}

void setup_json_remove_member(const SetupMember *m, size_t n, size_t a, SetupEdits *e)
{
    /* From its key's quote to the next key's (the next keeps the layout), or the comma before. */
    if (a + 1 < n)
        setup_edits_add(e, m[a].key_start - 1, m[a + 1].key_start - 1, xstrdup(""));
    else if (a > 0)
        setup_edits_add(e, m[a - 1].val_end, m[a].val_end, xstrdup(""));
    else
        setup_edits_add(e, m[a].key_start - 1, m[a].val_end, xstrdup(""));
}

char *setup_json_format(yajl_val v, const char *indent, const char *unit)
{
    StrBuf sb = STRBUF_INIT;

    format_value(&sb, v, indent, unit, 0);
    return strbuf_detach(&sb, NULL);
}

/* ---- TOML: whole lines only ---- */

/* The key path of a header line's first segment is mcp_servers (bare or quoted). */
static bool names_mcp_servers(const char *p, const char *end)
{
    static const char *const forms[] = {"mcp_servers", "\"mcp_servers\"", "'mcp_servers'", NULL};

    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    for (const char *const *f = forms; *f; f++) {
        size_t len = strlen(*f);
        if ((size_t)(end - p) >= len && memcmp(p, *f, len) == 0) {
            const char *q = p + len;
            while (q < end && (*q == ' ' || *q == '\t'))
                q++;
            if (q < end && (*q == '.' || *q == ']' || *q == '='))
                return true;
        }
    }
    return false;
}

int setup_toml_blocks(const char *s, size_t n, SetupTomlBlock **outp, size_t *np, char **whyp)
{
    SetupTomlBlock *v = NULL;
    size_t count = 0, line = 0;
    bool in_block = false, seen_header = false;

    *outp = NULL;
    *np = 0;
    while (line < n) {
        const char *nl = memchr(s + line, '\n', n - line);
        size_t next = nl ? (size_t)(nl - s) + 1 : n;
        const char *p = s + line, *end = s + next;

        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p < end && *p == '[') {
            bool array = p + 1 < end && p[1] == '[';
            bool ours = names_mcp_servers(p + (array ? 2 : 1), end);
            if (ours && array) {
                free(v);
                *whyp = xstrdup("[[mcp_servers]] is an array of tables, which Codex does not "
                                "read as servers");
                return -EINVAL;
            }
            if (in_block && !ours)
                v[count - 1].end = line;
            if (ours && !in_block) {
                v = xrealloc(v, (count + 1) * sizeof(*v));
                v[count++] = (SetupTomlBlock){line, n};
            }
            in_block = ours;
            seen_header = true;
        } else if (!seen_header && names_mcp_servers(p, end)) {
            free(v);
            *whyp = xstrdup("mcp_servers is written as a top-level key, not as "
                            "[mcp_servers.NAME] tables; rewrite it as tables");
            return -EINVAL;
        }
        line = next;
    }
    *outp = v;
    *np = count;
    return 0;
}

char *setup_toml_string(const char *s)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_append(&sb, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            strbuf_printf(&sb, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            strbuf_printf(&sb, "\\u%04x", (unsigned char)*s);
        else
            strbuf_append(&sb, s, 1);
    }
    strbuf_append(&sb, "\"", 1);
    return strbuf_detach(&sb, NULL);
}
