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

SharedText *shared_text_new_take(char *data, size_t len)
{
    SharedText *st = xcalloc(1, sizeof(*st));

    st->refs = 1;
    st->len = len;
    st->data = xrealloc(data, len + 1); /* sized exactly: it is kept */
    st->data[len] = '\0';
    return st;
}

SharedText *shared_text_unref(SharedText *st)
{
    if (st && --st->refs == 0) {
        free(st->data);
        free(st);
    }
    return NULL;
}

/* The members copied to agents as they are, in the order they are written. */
static const char *const copied_members[] = {"title", "outputSchema", "annotations", "icons",
                                             "execution"};

/* The body of tool t (see ToolSpan): its inputSchema is completed in place (the tree is ours). */
static void write_body(StrBuf *sb, yajl_val t, bool *has_description)
{
    const char *desc = json_get_string(t, "description");
    yajl_val schema = json_get_object(t, "inputSchema");

    for (size_t i = 0; i < N_ELEMENTS(copied_members); i++) {
        yajl_val v = json_get(t, copied_members[i]);
        if (!v)
            continue;
        json_write_string(sb, copied_members[i], strlen(copied_members[i]));
        strbuf_putc(sb, ':');
        json_write(sb, v);
        strbuf_putc(sb, ',');
    }
    *has_description = desc != NULL;
    if (desc) {
        strbuf_puts(sb, "\"description\":");
        json_write_string(sb, desc, strlen(desc));
        strbuf_putc(sb, ',');
    }
    strbuf_puts(sb, "\"inputSchema\":");
    if (!schema) {
        strbuf_puts(sb, "{\"type\":\"object\",\"properties\":{}}");
        return;
    }
    if (!json_get(schema, "type"))
        json_object_set(schema, "type", json_string_new("object"));
    if (streq(json_get_string(schema, "type"), "object") && !json_get(schema, "properties"))
        json_object_set(schema, "properties", json_object_new());
    json_write(sb, schema);
}

/* Whether name, body and _meta give tool t back as listed (before its schema is completed). */
static bool tool_is_plain(yajl_val t)
{
    yajl_val schema = json_get_object(t, "inputSchema");

    if (!YAJL_IS_OBJECT(t) || !schema || !YAJL_IS_STRING(json_get(schema, "type")))
        return false;
    if (streq(json_get_string(schema, "type"), "object") && !json_get(schema, "properties"))
        return false;
    for (size_t i = 0; i < t->u.object.len; i++) {
        const char *k = t->u.object.keys[i];
        yajl_val v = t->u.object.values[i];
        bool copied = false;
        for (size_t j = 0; j < N_ELEMENTS(copied_members); j++)
            copied = copied || streq(k, copied_members[j]);
        if (copied || streq(k, "inputSchema"))
            continue;
        if ((streq(k, "name") || streq(k, "description")) && YAJL_IS_STRING(v))
            continue;
        if (streq(k, "_meta") && YAJL_IS_OBJECT(v))
            continue;
        return false;
    }
    return true;
}

ToolSet *toolset_new_take(yajl_val tools)
{
    ToolSet *ts = xcalloc(1, sizeof(*ts));
    StrBuf text = STRBUF_INIT, names = STRBUF_INIT, metas = STRBUF_INIT, origs = STRBUF_INIT;
    size_t n = YAJL_IS_ARRAY(tools) ? tools->u.array.len : 0;
    size_t *name_at = xcalloc(n ? n : 1, sizeof(*name_at));
    size_t len;
    char *data;

    ts->spans = xcalloc(n ? n : 1, sizeof(*ts->spans));
    for (size_t i = 0; i < n; i++) {
        yajl_val t = tools->u.array.values[i], meta = json_get_object(t, "_meta");
        const char *name = json_get_string(t, "name");
        ToolSpan *sp = &ts->spans[i];

        if (!tool_is_plain(t)) {
            sp->orig_off = origs.len;
            json_write(&origs, t);
            sp->orig_len = origs.len - sp->orig_off;
        }
        sp->off = text.len;
        write_body(&text, t, &sp->has_description);
        sp->len = text.len - sp->off;
        if (meta) {
            sp->meta_off = metas.len;
            json_write(&metas, meta);
            sp->meta_len = metas.len - sp->meta_off;
        }
        name_at[i] = SIZE_MAX;
        if (name) {
            name_at[i] = names.len;
            strbuf_append(&names, name, strlen(name) + 1);
        }
    }
    ts->n = n;
    data = strbuf_detach(&text, &len);
    ts->text = shared_text_new_take(data, len);
    if (names.len) {
        data = strbuf_detach(&names, &len);
        ts->names = xrealloc(data, len);
    }
    if (metas.len) {
        data = strbuf_detach(&metas, &len);
        ts->metas = xrealloc(data, len);
    }
    if (origs.len) {
        data = strbuf_detach(&origs, &len);
        ts->origs = xrealloc(data, len);
    }
    for (size_t i = 0; i < n; i++)
        ts->spans[i].name = name_at[i] == SIZE_MAX ? NULL : ts->names + name_at[i];
    free(name_at);
    strbuf_deinit(&names);
    strbuf_deinit(&metas);
    strbuf_deinit(&origs);
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
        shared_text_unref(ts->text);
        free(ts->spans);
        free(ts->names);
        free(ts->metas);
        free(ts->origs);
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

const char *toolset_body(const ToolSet *ts, size_t i, size_t *len)
{
    *len = ts->spans[i].len;
    return ts->text->data + ts->spans[i].off;
}

const char *toolset_meta(const ToolSet *ts, size_t i, size_t *len)
{
    *len = ts->spans[i].meta_len;
    return *len ? ts->metas + ts->spans[i].meta_off : NULL;
}

void toolset_rebase(ToolSet *ts, SharedText *text, const size_t *offs)
{
    if (!ts || ts->text == text)
        return;
    for (size_t i = 0; i < ts->n; i++)
        ts->spans[i].off = offs[i];
    text->refs++;
    shared_text_unref(ts->text);
    ts->text = text;
}

/* Tool i as listed: kept whole, or its name, body and _meta. */
static void write_tool(StrBuf *sb, const ToolSet *ts, size_t i)
{
    const ToolSpan *sp = &ts->spans[i];
    const char *body, *meta;
    size_t len, meta_len;

    if (sp->orig_len) {
        strbuf_append(sb, ts->origs + sp->orig_off, sp->orig_len);
        return;
    }
    strbuf_putc(sb, '{');
    if (sp->name) {
        strbuf_puts(sb, "\"name\":");
        json_write_string(sb, sp->name, strlen(sp->name));
        strbuf_putc(sb, ',');
    }
    body = toolset_body(ts, i, &len);
    strbuf_append(sb, body, len);
    if ((meta = toolset_meta(ts, i, &meta_len))) {
        strbuf_puts(sb, ",\"_meta\":");
        strbuf_append(sb, meta, meta_len);
    }
    strbuf_putc(sb, '}');
}

char *toolset_json(const ToolSet *ts, size_t *len)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_putc(&sb, '[');
    for (size_t i = 0; i < toolset_len(ts); i++) {
        if (i)
            strbuf_putc(&sb, ',');
        write_tool(&sb, ts, i);
    }
    strbuf_putc(&sb, ']');
    return strbuf_detach(&sb, len);
}

yajl_val toolset_parse(const ToolSet *ts, size_t i)
{
    StrBuf sb = STRBUF_INIT;
    yajl_val v = NULL;

    write_tool(&sb, ts, i);
    /* Our own writer made the text: it parses; failing would only mean out of memory. */
    if (json_parse_full(&v, sb.data, sb.len, JSON_UTF8_REPAIR, NULL) != 0)
        v = json_object_new();
    strbuf_deinit(&sb);
    return v;
}

bool toolset_has(const ToolSet *ts, const char *name)
{
    for (size_t i = 0; name && i < toolset_len(ts); i++)
        if (ts->spans[i].name && streq(ts->spans[i].name, name))
            return true;
    return false;
}
