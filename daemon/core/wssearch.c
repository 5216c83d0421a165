// SPDX-License-Identifier: MIT
// wssearch: search a workspace's tools (live and cached) for a query (mcpd/searchTools).

#include <stdlib.h>

#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/core/toolsearch.h"
#include "daemon/core/toolset.h"
#include "daemon/core/wssearch.h"

/* One workspace's index and where each of its tools is. */
typedef struct WsSearch {
    ToolIndex *ix;
    uint64_t build;                /* the view build it was made from, + 1 */
    uint32_t *server_at, *tool_at; /* doc -> index in ws->servers and in that server's set */
    const char **names;            /* doc -> its exposed name (the view's, valid for its build) */
} WsSearch;

void wssearch_deinit(Workspace *ws)
{
    WsSearch *w = ws->search;

    if (!w)
        return;
    toolindex_free(w->ix);
    free(w->server_at);
    free(w->tool_at);
    free(w->names);
    free(w);
    ws->search = NULL;
}

static void add_tool(void *ud, size_t server, size_t tool, const char *name)
{
    Workspace *ws = ud;
    WsSearch *w = ws->search;
    Server *s = ws->servers[server];
    size_t n = toolindex_len(w->ix);
    _cleanup_json_ yajl_val t = toolset_parse(s->tools, tool);

    toolindex_add(w->ix, s->cfg->name, t);
    w->server_at[n] = (uint32_t)server;
    w->tool_at[n] = (uint32_t)tool;
    w->names[n] = name;
}

static void index_build(Workspace *ws)
{
    WsSearch *w = xcalloc(1, sizeof(*w));

    ws_view_ensure(ws);
    w->ix = toolindex_new(&toolsearch_ranked);
    w->server_at = xcalloc(ws->n_view + 1, sizeof(*w->server_at));
    w->tool_at = xcalloc(ws->n_view + 1, sizeof(*w->tool_at));
    w->names = xcalloc(ws->n_view + 1, sizeof(*w->names));
    ws->search = w;
    ws_view_each(ws, add_tool, ws);
    toolindex_finish(w->ix);
    w->build = ws->n_view_builds + 1;
}

/* A hit as the agent would list it, without what only mcpd needs. */
static yajl_val hit_json(Workspace *ws, const WsSearch *w, const ToolHit *h)
{
    Server *s = ws->servers[w->server_at[h->doc]];
    yajl_val t = toolset_parse(s->tools, w->tool_at[h->doc]), o = json_object_new(), meta;
    const char *keep[] = {"title", "description", "inputSchema"};

    json_object_set(o, "name", json_string_new(w->names[h->doc]));
    for (size_t i = 0; i < N_ELEMENTS(keep); i++) {
        yajl_val v = json_object_take(t, keep[i]);
        if (v)
            json_object_set(o, keep[i], v);
    }
    meta = json_object_new();
    json_object_set(meta, MCPD_META_SERVER, json_string_new(s->cfg->name));
    json_object_set(meta, "mcpd/tool", json_string_new(toolset_name(s->tools, w->tool_at[h->doc])));
    json_object_set(meta, MCPD_META_DEFERRED, json_bool_new(s->tools_deferred));
    json_object_set(meta, "mcpd/score", json_double_new(h->score));
    json_object_set(o, "_meta", meta);
    json_free(t);
    return o;
}

yajl_val wssearch_tools(Workspace *ws, const char *query, size_t len, size_t limit)
{
    yajl_val r = json_object_new(), tools = json_array_new();
    _cleanup_free_ ToolHit *hits = NULL;
    WsSearch *w;
    size_t n;

    ws_view_ensure(ws);
    if (ws->search && ((WsSearch *)ws->search)->build != ws->n_view_builds + 1)
        wssearch_deinit(ws);
    if (!ws->search)
        index_build(ws);
    w = ws->search;
    limit = MIN(MAX(limit, (size_t)1), (size_t)WSSEARCH_LIMIT_MAX);
    hits = xcalloc(limit, sizeof(*hits));
    n = toolindex_search(w->ix, query, len, limit, hits);
    for (size_t i = 0; i < n; i++)
        json_array_push(tools, hit_json(ws, w, &hits[i]));
    json_object_set(r, "tools", tools);
    json_object_set(r, "searched", json_int_new((int64_t)toolindex_len(w->ix)));
    return r;
}
