// SPDX-License-Identifier: MIT
// wssearch: search a workspace's tools (live and cached) for a query (mcpd/searchTools).

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/toolsearch.h"
#include "daemon/core/toolset.h"
#include "daemon/core/wsprofile.h"
#include "daemon/core/view.h"
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

/*
 * A tool as a search returns it and a search-mode list shows it: its exposed name, title,
 * description and inputSchema, and _meta naming its server and tool (score < 0: none).
 */
static yajl_val tool_json(Server *s, size_t j, const char *name, double score)
{
    yajl_val t = toolset_parse(s->tools, j), o = json_object_new(), meta;
    const char *keep[] = {"title", "description", "inputSchema"};

    json_object_set(o, "name", json_string_new(name));
    for (size_t i = 0; i < N_ELEMENTS(keep); i++) {
        yajl_val v = json_object_take(t, keep[i]);
        if (v)
            json_object_set(o, keep[i], v);
    }
    meta = json_object_new();
    json_object_set(meta, MCPD_META_SERVER, json_string_new(s->cfg->name));
    json_object_set(meta, MCPD_META_TOOL, json_string_new(toolset_name(s->tools, j)));
    json_object_set(meta, MCPD_META_DEFERRED, json_bool_new(s->tools_deferred));
    if (score >= 0)
        json_object_set(meta, MCPD_META_SCORE, json_double_new(score));
    json_object_set(o, "_meta", meta);
    json_free(t);
    return o;
}

static yajl_val hit_json(Workspace *ws, const WsSearch *w, const ToolHit *h)
{
    return tool_json(ws->servers[w->server_at[h->doc]], w->tool_at[h->doc], w->names[h->doc],
                     h->score);
}

typedef struct Accept {
    Workspace *ws;
    const WsSearch *w;
    uint64_t peer_id;
} Accept;

static bool accept_allowed(void *ud, uint32_t doc)
{
    Accept *a = ud;
    return wsprofile_allows(a->ws->reg, a->peer_id, a->ws->servers[a->w->server_at[doc]],
                            a->w->tool_at[doc]);
}

yajl_val wssearch_tools(Workspace *ws, uint64_t peer_id, const char *query, size_t len,
                        size_t limit)
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
    Accept acc = {ws, w, peer_id};
    n = toolindex_search_where(w->ix, query, len, limit, hits,
                               wsprofile_of(ws->reg, peer_id) ? accept_allowed : NULL, &acc);
    for (size_t i = 0; i < n; i++)
        json_array_push(tools, hit_json(ws, w, &hits[i]));
    json_object_set(r, "tools", tools);
    json_object_set(r, "searched", json_int_new((int64_t)toolindex_len(w->ix)));
    return r;
}

/* ---- search mode ---- */

/* What one agent in search mode was given by its searches, oldest first. */
typedef struct SearchAgent {
    char *found[WSSEARCH_FOUND_MAX];
    size_t n_found;
} SearchAgent;

static void search_agent_free(SearchAgent *sa)
{
    for (size_t i = 0; sa && i < sa->n_found; i++)
        free(sa->found[i]);
    free(sa);
}

static SearchAgent *search_agent(WorkspaceRegistry *wr, uint64_t peer_id)
{
    return wr->search_agents.n ? idmap_get(&wr->search_agents, peer_id) : NULL;
}

bool wssearch_mode_known(const char *mode)
{
    return mode && (streq(mode, "search") || streq(mode, "all"));
}

int wssearch_set_mode(WorkspaceRegistry *wr, Peer *p, const char *mode, bool notify)
{
    bool search = mode && streq(mode, "search"), was;

    if (!wssearch_mode_known(mode))
        return -EINVAL;
    was = search_agent(wr, p->id) != NULL;
    if (search && !was)
        idmap_put(&wr->search_agents, p->id, xcalloc(1, sizeof(SearchAgent)));
    else if (!search && was)
        wssearch_forget(wr, p->id);
    if (search != was && notify)
        agent_notify(wr->peers, p->id, "notifications/tools/list_changed", NULL);
    return 0;
}

void wssearch_forget(WorkspaceRegistry *wr, uint64_t peer_id)
{
    search_agent_free(idmap_remove(&wr->search_agents, peer_id));
}

void wssearch_registry_deinit(WorkspaceRegistry *wr)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&wr->search_agents, &pos, NULL, &v))
        search_agent_free(v);
    idmap_deinit(&wr->search_agents);
}

/* The server and index in its set of the view's tool called name, or false. */
static bool view_locate(Workspace *ws, const char *name, Server **sp, size_t *jp)
{
    const ViewTool *vt = ws_view_find(ws, name);

    for (size_t k = 0; vt && k < ws->n_servers; k++) {
        Server *s = ws->servers[k];
        if (s->id != vt->server_id)
            continue;
        for (size_t j = 0; j < toolset_len(s->tools); j++)
            if (toolset_name(s->tools, j) == vt->tool) {
                *sp = s;
                *jp = j;
                return true;
            }
    }
    return false;
}

typedef struct Pinned {
    Workspace *ws;
    uint64_t peer_id;
    yajl_val tools;
} Pinned;

static void add_pinned(void *ud, size_t server, size_t tool, const char *name)
{
    Pinned *pn = ud;
    Server *s = pn->ws->servers[server];

    if (wsprofile_pinned(pn->ws->reg, pn->peer_id, s, tool))
        json_array_push(pn->tools, tool_json(s, tool, name, -1));
}

/*
 * An agent's list in search mode: mcpd's tools, the tools its profile pins, then what its
 * searches found (oldest first).
 */
static yajl_val search_list(Workspace *ws, uint64_t peer_id, const SearchAgent *sa)
{
    _cleanup_json_ yajl_val own = json_parse(toolsearch_tools_json, NULL);
    yajl_val r = json_object_new(), tools = json_array_new();

    for (size_t i = 0; i < json_array_len(own); i++) {
        json_array_push(tools, own->u.array.values[i]);
        own->u.array.values[i] = NULL;
    }
    Pinned pn = {ws, peer_id, tools};
    if (wsprofile_of(ws->reg, peer_id))
        ws_view_each(ws, add_pinned, &pn);
    /* What its searches found, as long as the view still has it (a server may have gone). */
    for (size_t i = 0; i < sa->n_found; i++) {
        Server *s;
        size_t j;
        if (view_locate(ws, sa->found[i], &s, &j) && !wsprofile_pinned(ws->reg, peer_id, s, j))
            json_array_push(tools, tool_json(s, j, sa->found[i], -1));
    }
    json_object_set(r, "tools", tools);
    return r;
}

int wssearch_choose_profile(WorkspaceRegistry *wr, Peer *p, const char *asked, char **whyp)
{
    int r = wsprofile_choose(wr, p, asked, whyp);
    const Profile *prof = r == 0 ? wsprofile_of(wr, p->id) : NULL;

    if (prof && prof->mode == PROFILE_MODE_SEARCH)
        wssearch_set_mode(wr, p, "search", false);
    return r;
}

bool wssearch_send_list(Workspace *ws, Peer *p, yajl_val id)
{
    SearchAgent *sa;
    _cleanup_json_ yajl_val r = NULL;

    if (wsprofile_decide(ws, p)) /* auto, past the budget */
        wssearch_set_mode(ws->reg, p, "search", false);
    sa = search_agent(ws->reg, p->id);

    if (!sa)
        return false;
    r = search_list(ws, p->id, sa);
    agent_reply(ws->reg->peers, p->id, id, r);
    return true;
}

bool wssearch_agent_cost(Workspace *ws, uint64_t peer_id, TokenCost *c)
{
    SearchAgent *sa = search_agent(ws->reg, peer_id);
    _cleanup_json_ yajl_val r = NULL;
    yajl_val tools;

    if (!sa)
        return false;
    r = search_list(ws, peer_id, sa);
    tools = json_get_array(r, "tools");
    *c = (TokenCost){0};
    for (size_t i = 0; i < json_array_len(tools); i++)
        tokens_cost_add(c, NULL, json_array_at(tools, i));
    return true;
}

/* Add name to what the agent found; whether it is new there. */
static bool found_add(SearchAgent *sa, const char *name)
{
    for (size_t i = 0; i < sa->n_found; i++)
        if (streq(sa->found[i], name))
            return false;
    if (sa->n_found == WSSEARCH_FOUND_MAX) {
        free(sa->found[0]);
        memmove(sa->found, sa->found + 1, (WSSEARCH_FOUND_MAX - 1) * sizeof(*sa->found));
        sa->n_found--;
    }
    sa->found[sa->n_found++] = xstrdup(name);
    return true;
}

/* A tool result holding text: an error's (isError) or the hits' JSON (also structured). */
static char *call_result(const char *text, yajl_val structured)
{
    _cleanup_json_ yajl_val r = json_object_new();
    yajl_val content = json_array_new(), item = json_object_new();

    json_object_set(item, "type", json_string_new("text"));
    json_object_set(item, "text", json_string_new(text));
    json_array_push(content, item);
    json_object_set(r, "content", content);
    if (structured)
        json_object_set(r, "structuredContent", structured);
    else
        json_object_set(r, "isError", json_bool_new(true));
    return json_to_string(r);
}

char *wssearch_call(Workspace *ws, Peer *p, const char *args, size_t len)
{
    _cleanup_free_ char *copy = args ? xstrndup(args, len) : NULL;
    _cleanup_json_ yajl_val a = copy ? json_parse(copy, NULL) : NULL;
    yajl_val q = json_get(a, "query"), lim = json_get(a, "limit"), r, tools;
    int64_t limit = WSSEARCH_LIMIT_DEFAULT;
    size_t qlen = q && YAJL_IS_STRING(q) ? strlen(q->u.string) : 0;
    SearchAgent *sa;
    bool changed = false;

    if (!qlen)
        return call_result("query must be a non-empty string: the capability wanted, in a few "
                           "words",
                           NULL);
    if (qlen > TS_QUERY_BYTES_MAX)
        return call_result("query is longer than 4096 bytes: say in a few words what the tool "
                           "should do",
                           NULL);
    if (lim && (json_get_int(a, "limit", &limit) != 0 || limit < 1))
        return call_result("limit must be an integer of 1 or more (at most 50 tools are returned)",
                           NULL);
    r = wssearch_tools(ws, p->id, q->u.string, qlen,
                       (size_t)MIN(limit, (int64_t)WSSEARCH_LIMIT_MAX));
    tools = json_get_array(r, "tools");
    sa = search_agent(ws->reg, p->id);
    for (size_t i = 0; sa && i < json_array_len(tools); i++)
        changed |= found_add(sa, json_get_string(json_array_at(tools, i), "name"));
    if (changed)
        agent_notify(ws->reg->peers, p->id, "notifications/tools/list_changed", NULL);
    _cleanup_free_ char *text = json_to_string(r);
    return call_result(json_array_len(tools) ? text : "no tool matches; try other words", r);
}

/*
 * A tools/list: an agent in search mode gets its own list, one whose profile narrows what it
 * sees the view narrowed, every other one the view.
 */
static void send_tools(Workspace *ws, Peer *p, yajl_val id)
{
    if (!wssearch_send_list(ws, p, id) && !wsprofile_send_list(ws, p, id))
        ws_view_send(ws, p, id);
}

/* The index is built on the view: it goes first. */
static void views_deinit(Workspace *ws)
{
    wssearch_deinit(ws);
    ws_view_deinit(ws);
}

const WorkspaceViews wssearch_views = {send_tools, ws_view_hash, views_deinit};
