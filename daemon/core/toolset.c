// SPDX-License-Identifier: MIT
// toolset: one server's tools, kept as compact JSON text with an index, not as trees.

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/core/toolset.h"

/*
 * Freeing the tree of a list this long leaves megabytes of small free chunks that malloc keeps
 * for itself; past it, they are handed back to the system at once. A thousand tools is about
 * 5 MB of tree; a trim costs about a millisecond per 10 MB of heap.
 */
#define TOOLSET_TRIM_TOOLS 1000

ToolSet *toolset_new_take(yajl_val tools)
{
    ToolSet *ts = xcalloc(1, sizeof(*ts));
    StrBuf text = STRBUF_INIT, names = STRBUF_INIT;
    size_t n = YAJL_IS_ARRAY(tools) ? tools->u.array.len : 0;
    size_t *name_at = xcalloc(n ? n : 1, sizeof(*name_at));

    ts->spans = xcalloc(n ? n : 1, sizeof(*ts->spans));
    strbuf_putc(&text, '[');
    for (size_t i = 0; i < n; i++) {
        yajl_val t = tools->u.array.values[i];
        const char *name = json_get_string(t, "name");
        if (i)
            strbuf_putc(&text, ',');
        ts->spans[i].off = text.len;
        json_write(&text, t);
        ts->spans[i].len = text.len - ts->spans[i].off;
        name_at[i] = SIZE_MAX;
        if (name) {
            name_at[i] = names.len;
            strbuf_append(&names, name, strlen(name) + 1);
        }
    }
    strbuf_putc(&text, ']');
    ts->n = n;
    ts->text = strbuf_detach(&text, &ts->len);
    ts->text = xrealloc(ts->text, ts->len + 1); /* sized exactly: it is kept */
    if (names.len) {
        size_t names_len;
        char *blob = strbuf_detach(&names, &names_len);
        ts->names = xrealloc(blob, names_len);
    }
    for (size_t i = 0; i < n; i++)
        ts->spans[i].name = name_at[i] == SIZE_MAX ? NULL : ts->names + name_at[i];
    free(name_at);
    json_free(tools);
    toolset_trim_after(n);
    return ts;
}

void toolset_trim_after(size_t n)
{
    if (n >= TOOLSET_TRIM_TOOLS)
        malloc_trim(0);
}

ToolSet *toolset_free(ToolSet *ts)
{
    if (ts) {
        free(ts->text);
        free(ts->spans);
        free(ts->names);
        free(ts);
    }
    return NULL;
}

size_t toolset_len(const ToolSet *ts)
{
    return ts ? ts->n : 0;
}

const char *toolset_name(const ToolSet *ts, size_t i)
{
    return ts->spans[i].name;
}

yajl_val toolset_parse(const ToolSet *ts, size_t i)
{
    yajl_val v = NULL;

    /* Our own writer made the text: it parses; NULL would only mean out of memory. */
    if (json_parse_full(&v, ts->text + ts->spans[i].off, ts->spans[i].len, JSON_UTF8_REPAIR,
                        NULL) != 0)
        return json_object_new();
    return v;
}

bool toolset_has(const ToolSet *ts, const char *name)
{
    for (size_t i = 0; name && i < toolset_len(ts); i++)
        if (ts->spans[i].name && streq(ts->spans[i].name, name))
            return true;
    return false;
}
