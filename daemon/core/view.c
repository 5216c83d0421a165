// SPDX-License-Identifier: MIT
// view: a workspace's tool view (declared in workspace.h), built once per change, shared.

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/util.h"
#include "daemon/core/naming.h"
#include "daemon/core/toolset.h"
#include "daemon/core/workspace.h"

static void view_clear(Workspace *ws)
{
    for (size_t i = 0; i < ws->n_view; i++)
        free(ws->view[i].name);
    free(ws->view);
    ws->view = NULL;
    ws->n_view = 0;
}

/* The tool as agents see it (DESIGN section 3). */
/*
 * MCP Apps: the tool names its UI resource in _meta.ui.resourceUri (and the older flat key
 * _meta["ui/resourceUri"]); agents must read it back through mcpd, so it is the exposed URI.
 */
static void expose_ui_meta(Workspace *ws, Server *s, yajl_val meta)
{
    yajl_val ui = json_get_object(meta, "ui");
    const char *uri = json_get_string(ui, "resourceUri"), *flat;

    if (uri)
        json_object_set(ui, "resourceUri",
                        json_string_new_take(ws->reg->ext->expose_uri(ws, s, uri)));
    flat = json_get_string(meta, "ui/resourceUri");
    if (flat)
        json_object_set(meta, "ui/resourceUri",
                        json_string_new_take(ws->reg->ext->expose_uri(ws, s, flat)));
}

static yajl_val exposed_tool(Workspace *ws, const char *name, Server *s, yajl_val t)
{
    static const char *const copied[] = {"title", "outputSchema", "annotations", "icons"};
    const char *tool = json_get_string(t, "name"), *desc = json_get_string(t, "description");
    yajl_val o = json_object_new(), schema = json_get_object(t, "inputSchema"), meta;
    const char *prov = s->cfg->source.provider_name;

    json_object_set(o, "name", json_string_new(name));
    for (size_t i = 0; i < N_ELEMENTS(copied); i++)
        if (json_get(t, copied[i]))
            json_object_set(o, copied[i], json_copy(json_get(t, copied[i])));
    if (desc)
        json_object_set(o, "description", json_string_new(desc));
    else {
        _cleanup_free_ char *d = xasprintf("MCP tool from %s", s->cfg->name);
        json_object_set(o, "description", json_string_new(d));
    }
    schema = schema ? json_copy(schema) : json_object_new();
    if (!json_get(schema, "type"))
        json_object_set(schema, "type", json_string_new("object"));
    if (streq(json_get_string(schema, "type"), "object") && !json_get(schema, "properties"))
        json_object_set(schema, "properties", json_object_new());
    json_object_set(o, "inputSchema", schema);
    meta = json_copy(json_get_object(t, "_meta"));
    if (!meta)
        meta = json_object_new();
    expose_ui_meta(ws, s, meta);
    _cleanup_free_ char *label = xasprintf("%s/%s", s->cfg->name, tool);
    _cleanup_free_ char *path =
        prov ? xasprintf("mcp:%s via %s", s->cfg->name, prov) : xasprintf("mcp:%s", s->cfg->name);
    json_object_set(meta, "mcpd/server", json_string_new(s->cfg->name));
    json_object_set(meta, "mcpd/tool", json_string_new(tool));
    json_object_set(meta, "mcpd/label", json_string_new(label));
    json_object_set(meta, "mcpd/path", json_string_new(path));
    json_object_set(meta, "mcpd/deferred", json_bool_new(s->tools_deferred));
    json_object_set(o, "_meta", meta);
    return o;
}

/* The built view, sized exactly: a 10 000-tool view is 4 MB, and agents may hold it a while. */
static ViewText *view_text_new(StrBuf *sb)
{
    ViewText *vt = xcalloc(1, sizeof(*vt));

    vt->refs = 1;
    vt->data = strbuf_detach(sb, &vt->len);
    vt->data = xrealloc(vt->data, vt->len + 1);
    return vt;
}

ViewText *view_text_unref(ViewText *vt)
{
    if (vt && --vt->refs == 0) {
        free(vt->data);
        free(vt);
    }
    return NULL;
}

typedef struct Named {
    Server *s;
    size_t index; /* in the server's tool set */
} Named;

static void view_rebuild(Workspace *ws)
{
    size_t n = 0, k = 0;
    StrBuf sb = STRBUF_INIT;
    _cleanup_free_ Named *all = NULL;
    _cleanup_free_ NamingEntry *entries = NULL;

    view_clear(ws);
    for (size_t i = 0; i < ws->n_servers; i++)
        n += toolset_len(ws->servers[i]->tools);
    all = xcalloc(n ? n : 1, sizeof(*all));
    entries = xcalloc(n ? n : 1, sizeof(*entries));
    for (size_t i = 0; i < ws->n_servers; i++) {
        Server *s = ws->servers[i];
        for (size_t j = 0; j < toolset_len(s->tools); j++, k++) {
            all[k].s = s;
            all[k].index = j;
            entries[k].server = s->cfg->name;
            entries[k].tool = toolset_name(s->tools, j);
            entries[k].data = &all[k];
        }
    }
    naming_assign(entries, n); /* sorted by name on return */
    ws->n_collisions = 0;
    ws->view = xcalloc(n ? n : 1, sizeof(*ws->view));
    strbuf_puts(&sb, "{\"tools\":[");
    for (size_t i = 0; i < n; i++) {
        Named *nm = entries[i].data;
        yajl_val def = toolset_parse(nm->s->tools, nm->index);
        yajl_val o = exposed_tool(ws, entries[i].name, nm->s, def);
        if (i)
            strbuf_putc(&sb, ',');
        json_write(&sb, o);
        json_free(o);
        json_free(def);
        ws->view[i].name = entries[i].name;
        ws->view[i].server_id = nm->s->id;
        ws->view[i].tool = entries[i].tool;
        ws->n_collisions += entries[i].collided != 0;
    }
    ws->n_view = n;
    strbuf_puts(&sb, "]}");
    view_text_unref(ws->view_text);
    ws->view_text = view_text_new(&sb);
    ws->n_view_builds++;
    toolset_trim_after(n); /* the trees made and freed above, one per tool */
    ws->dirty = false;
}

void ws_view_ensure(Workspace *ws)
{
    if (ws->dirty || !ws->view_text)
        view_rebuild(ws);
}

static int cmp_view_name(const void *key, const void *elem)
{
    return strcmp(key, ((const ViewTool *)elem)->name);
}

const ViewTool *ws_view_find(Workspace *ws, const char *name)
{
    ws_view_ensure(ws);
    if (!name || !ws->n_view)
        return NULL;
    return bsearch(name, ws->view, ws->n_view, sizeof(ViewTool), cmp_view_name);
}

void ws_view_deinit(Workspace *ws)
{
    view_clear(ws);
    ws->view_text = view_text_unref(ws->view_text);
}

/* An evbuffer is done with the view's bytes: drop the reference it held. */
static void view_text_sent(const void *data, size_t n, void *arg)
{
    (void)data, (void)n;
    view_text_unref(arg);
}

void ws_view_send(Workspace *ws, Peer *p, yajl_val id)
{
    StrBuf head = STRBUF_INIT;
    ViewText *vt;

    ws_view_ensure(ws);
    vt = ws->view_text;
    /* The envelope around an empty result, then the shared view in its place: no copy. */
    jsonrpc_write_result_raw(&head, id, "", 0);
    assert(head.len >= 2 && head.data[head.len - 2] == '}');
    peer_send(p, head.data, head.len - 2);
    vt->refs++;
    peer_send_ref(p, vt->data, vt->len, view_text_sent, vt);
    peer_send(p, "}\n", 2);
    ws->n_view_sends++;
    strbuf_deinit(&head);
}
