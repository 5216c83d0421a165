// SPDX-License-Identifier: MIT
// view: a workspace's tool view, built once per change, shared: the names agents call, the
// tools/list bytes queued by reference, and the hash that says whether it changed.

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/core/naming.h"
#include "daemon/core/toolset.h"
#include "daemon/core/view.h"
#include "daemon/core/workspace.h"

/*
 * The name index has at least this many slots per tool: with linear probing at most half full,
 * a call's lookup is one hash of the name and about one string compare, for 4 bytes a slot.
 */
#define VIEW_INDEX_SLOTS_PER_TOOL 2

static void view_clear(Workspace *ws)
{
    for (size_t i = 0; i < ws->n_view; i++)
        free(ws->view[i].name);
    free(ws->view);
    ws->view = NULL;
    ws->n_view = 0;
    free(ws->view_index);
    ws->view_index = NULL;
    ws->view_index_mask = 0;
}

/* Index the view's names (they are unique: naming.c assigned them). */
static void view_index_build(Workspace *ws)
{
    size_t cap = 8;

    while (cap < ws->n_view * VIEW_INDEX_SLOTS_PER_TOOL)
        cap *= 2;
    ws->view_index = xcalloc(cap, sizeof(*ws->view_index));
    ws->view_index_mask = cap - 1;
    for (size_t i = 0; i < ws->n_view; i++) {
        const char *name = ws->view[i].name;
        size_t k = (size_t)hash_fnv1a(name, strlen(name)) & ws->view_index_mask;
        while (ws->view_index[k])
            k = (k + 1) & ws->view_index_mask;
        ws->view_index[k] = (uint32_t)(i + 1);
    }
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

/* The keys mcpd adds to each tool's _meta. */
static const char *const mcpd_meta_keys[] = {MCPD_META_SERVER, MCPD_META_TOOL, MCPD_META_LABEL,
                                             MCPD_META_PATH, MCPD_META_DEFERRED};

static void put_string_member(StrBuf *sb, const char *key, const char *value)
{
    json_write_string(sb, key, strlen(key));
    strbuf_putc(sb, ':');
    json_write_string(sb, value, strlen(value));
    strbuf_putc(sb, ',');
}

/* The tool's _meta as agents see it: its own members (UI URIs exposed), then mcpd's. */
static void write_meta(StrBuf *sb, Workspace *ws, Server *s, const char *tool, const char *own,
                       size_t own_len)
{
    const char *prov = s->cfg->source.provider_name;
    _cleanup_free_ char *label = xasprintf("%s/%s", s->cfg->name, tool);
    _cleanup_free_ char *path =
        prov ? xasprintf("mcp:%s via %s", s->cfg->name, prov) : xasprintf("mcp:%s", s->cfg->name);
    yajl_val meta = NULL;

    strbuf_putc(sb, '{');
    /* Our own writer made the text: it parses (it is skipped only when out of memory). */
    if (own && json_parse_full(&meta, own, own_len, JSON_UTF8_REPAIR, NULL) == 0) {
        expose_ui_meta(ws, s, meta);
        for (size_t i = 0; i < N_ELEMENTS(mcpd_meta_keys); i++)
            json_free(json_object_take(meta, mcpd_meta_keys[i]));
        for (size_t i = 0; i < meta->u.object.len; i++) {
            const char *k = meta->u.object.keys[i];
            json_write_string(sb, k, strlen(k));
            strbuf_putc(sb, ':');
            json_write(sb, meta->u.object.values[i]);
            strbuf_putc(sb, ',');
        }
        json_free(meta);
    }
    put_string_member(sb, MCPD_META_SERVER, s->cfg->name);
    put_string_member(sb, MCPD_META_TOOL, tool);
    put_string_member(sb, MCPD_META_LABEL, label);
    put_string_member(sb, MCPD_META_PATH, path);
    strbuf_puts(sb, s->tools_deferred ? "\"mcpd/deferred\":true}" : "\"mcpd/deferred\":false}");
}

/*
 * The tool as agents see it (DESIGN section 3): {"name":<assigned>, the body as the set keeps
 * it, "_meta":{...}}. Returns where the body starts in sb, for the set's rebase.
 */
static size_t write_exposed_tool(StrBuf *sb, Workspace *ws, const char *name, Server *s, size_t i)
{
    const char *tool = toolset_name(s->tools, i), *body, *meta;
    size_t body_len, meta_len, at;

    strbuf_puts(sb, "{\"name\":");
    json_write_string(sb, name, strlen(name));
    strbuf_putc(sb, ',');
    if (!s->tools->spans[i].has_description) {
        _cleanup_free_ char *d = xasprintf("MCP tool from %s", s->cfg->name);
        put_string_member(sb, "description", d);
    }
    body = toolset_body(s->tools, i, &body_len);
    at = sb->len;
    strbuf_append(sb, body, body_len);
    strbuf_puts(sb, ",\"_meta\":");
    meta = toolset_meta(s->tools, i, &meta_len);
    write_meta(sb, ws, s, tool ? tool : "", meta, meta_len);
    strbuf_putc(sb, '}');
    return at;
}

/* The built view, sized exactly: a 10 000-tool view is 6 MB, and agents may hold it a while. */
static ViewText *view_text_new(StrBuf *sb)
{
    size_t len;
    char *data = strbuf_detach(sb, &len);

    return shared_text_new_take(data, len);
}

ViewText *view_text_unref(ViewText *vt)
{
    return shared_text_unref(vt);
}

typedef struct Named {
    Server *s;
    size_t index;    /* in the server's tool set */
    size_t body_off; /* where its body was written in the new view */
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
        if (i)
            strbuf_putc(&sb, ',');
        nm->body_off = write_exposed_tool(&sb, ws, entries[i].name, nm->s, nm->index);
        ws->view[i].name = entries[i].name;
        ws->view[i].server_id = nm->s->id;
        ws->view[i].tool = entries[i].tool;
        ws->view[i].tool_len = strlen(entries[i].tool);
        ws->view[i].tool_plain = jsonrpc_text_plain(entries[i].tool, ws->view[i].tool_len);
        ws->n_collisions += entries[i].collided != 0;
    }
    ws->n_view = n;
    view_index_build(ws);
    strbuf_puts(&sb, "]}");
    view_text_unref(ws->view_text);
    ws->view_text = view_text_new(&sb);
    /* Each server's bodies now live in the view: its own copy goes (all[] is in server order). */
    for (size_t i = 0, k0 = 0; i < ws->n_servers; i++) {
        ToolSet *ts = ws->servers[i]->tools;
        size_t m = toolset_len(ts);
        _cleanup_free_ size_t *offs = xcalloc(m ? m : 1, sizeof(*offs));
        for (size_t j = 0; j < m; j++)
            offs[j] = all[k0 + j].body_off;
        toolset_rebase(ts, ws->view_text, offs);
        k0 += m;
    }
    ws->view_hash[0] = '\0';
    ws->n_view_builds++;
    toolset_trim_after(n); /* the set texts freed above */
    ws->dirty = false;
}

void ws_view_ensure(Workspace *ws)
{
    if (ws->dirty || !ws->view_text)
        view_rebuild(ws);
}

const char *ws_view_hash(Workspace *ws)
{
    ws_view_ensure(ws);
    if (!ws->view_hash[0])
        sha256_hex(ws->view_hash, ws->view_text->data, ws->view_text->len);
    return ws->view_hash;
}

const ViewTool *ws_view_find(Workspace *ws, const char *name)
{
    size_t k;

    if (__builtin_expect(ws->discovering != NULL, 0))
        ws_wait_discovered(ws);
    ws_view_ensure(ws);
    if (!name || !ws->n_view)
        return NULL;
    k = (size_t)hash_fnv1a(name, strlen(name)) & ws->view_index_mask;
    for (; ws->view_index[k]; k = (k + 1) & ws->view_index_mask) {
        const ViewTool *vt = &ws->view[ws->view_index[k] - 1];
        if (streq(vt->name, name))
            return vt;
    }
    return NULL;
}

/* A view entry by the address of its server's tool name (the view borrows that string). */
typedef struct ByTool {
    uintptr_t tool;
    const char *name;
} ByTool;

static int cmp_by_tool(const void *a, const void *b)
{
    const ByTool *x = a, *y = b;
    return (x->tool > y->tool) - (x->tool < y->tool);
}

void ws_view_each(Workspace *ws, ViewEachFn fn, void *ud)
{
    _cleanup_free_ ByTool *by = NULL;

    ws_view_ensure(ws);
    by = xcalloc(ws->n_view + 1, sizeof(*by));
    for (size_t i = 0; i < ws->n_view; i++)
        by[i] = (ByTool){(uintptr_t)ws->view[i].tool, ws->view[i].name};
    qsort(by, ws->n_view, sizeof(*by), cmp_by_tool);
    for (size_t k = 0; k < ws->n_servers; k++) {
        Server *s = ws->servers[k];
        for (size_t j = 0; j < toolset_len(s->tools); j++) {
            ByTool key = {(uintptr_t)toolset_name(s->tools, j), NULL}, *hit;
            hit = ws->n_view ? bsearch(&key, by, ws->n_view, sizeof(*by), cmp_by_tool) : NULL;
            if (hit) /* a tool without a name is not in the view */
                fn(ud, k, j, hit->name);
        }
    }
}

/* One tool of the view an agent is shown (ws_view_where). */
typedef struct Kept {
    const char *name;
    Server *s;
    size_t j;
} Kept;

typedef struct KeepCtx {
    Workspace *ws;
    ViewKeepFn keep;
    void *ud;
    Kept *v;
    size_t n;
} KeepCtx;

static void keep_one(void *ud, size_t server, size_t tool, const char *name)
{
    KeepCtx *k = ud;
    Server *s = k->ws->servers[server];

    if (k->keep(k->ud, s, tool))
        k->v[k->n++] = (Kept){name, s, tool};
}

static int cmp_kept(const void *a, const void *b)
{
    return strcmp(((const Kept *)a)->name, ((const Kept *)b)->name);
}

char *ws_view_where(Workspace *ws, ViewKeepFn keep, void *ud, size_t *lenp)
{
    KeepCtx k = {ws, keep, ud, NULL, 0};
    StrBuf sb = STRBUF_INIT;

    ws_view_ensure(ws);
    k.v = xcalloc(ws->n_view + 1, sizeof(*k.v));
    ws_view_each(ws, keep_one, &k);
    qsort(k.v, k.n, sizeof(*k.v), cmp_kept); /* the view's order: by name, as naming sorts */
    strbuf_puts(&sb, "{\"tools\":[");
    for (size_t i = 0; i < k.n; i++) {
        if (i)
            strbuf_putc(&sb, ',');
        write_exposed_tool(&sb, ws, k.v[i].name, k.v[i].s, k.v[i].j);
    }
    strbuf_puts(&sb, "]}");
    free(k.v);
    return strbuf_detach(&sb, lenp);
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
    ViewText *vt;

    ws_view_ensure(ws);
    vt = ws->view_text;
    vt->refs++;
    agent_reply_ref(p, id, vt->data, vt->len, view_text_sent, vt);
    ws->n_view_sends++;
    Agent *a = agent_get(ws->reg->agents, p->id);
    if (a)
        memcpy(a->tools_hash, ws_view_hash(ws), sizeof(a->tools_hash));
}
