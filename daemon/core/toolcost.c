// SPDX-License-Identifier: MIT
// toolcost: what tool definitions cost an agent's model, per server and per workspace view.

#include <stdint.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/core/naming.h"
#include "daemon/core/toolcost.h"
#include "daemon/core/toolset.h"

void toolcost_server(const Server *s, TokenCost *c)
{
    ToolSet *ts = s->tools;

    *c = (TokenCost){0};
    if (!ts)
        return;
    /* A set is never changed once made (a new list is a new set): its cost is counted once. */
    if (!ts->cost_known) {
        for (size_t j = 0; j < toolset_len(ts); j++) {
            if (!toolset_name(ts, j))
                continue; /* a tool without a name is never shown */
            _cleanup_free_ char *name = naming_tool_name(s->cfg->name, toolset_name(ts, j));
            _cleanup_json_ yajl_val t = toolset_parse(ts, j);
            tokens_cost_add(&ts->cost, name, t);
        }
        ts->cost_known = true;
    }
    *c = ts->cost;
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

const TokenCost *toolcost_view(Workspace *ws)
{
    _cleanup_free_ ByTool *by = NULL;

    ws_view_ensure(ws);
    if (ws->view_cost_build == ws->n_view_builds + 1)
        return &ws->view_cost;
    ws->view_cost = (TokenCost){0};
    by = xcalloc(ws->n_view + 1, sizeof(*by));
    for (size_t i = 0; i < ws->n_view; i++)
        by[i] = (ByTool){(uintptr_t)ws->view[i].tool, ws->view[i].name};
    qsort(by, ws->n_view, sizeof(*by), cmp_by_tool);
    for (size_t k = 0; k < ws->n_servers; k++) {
        const ToolSet *ts = ws->servers[k]->tools;
        for (size_t j = 0; j < toolset_len(ts); j++) {
            ByTool key = {(uintptr_t)toolset_name(ts, j), NULL}, *hit;
            hit = ws->n_view ? bsearch(&key, by, ws->n_view, sizeof(*by), cmp_by_tool) : NULL;
            if (!hit)
                continue; /* a tool without a name is not in the view */
            _cleanup_json_ yajl_val t = toolset_parse(ts, j);
            tokens_cost_add(&ws->view_cost, hit->name, t);
        }
    }
    ws->view_cost_build = ws->n_view_builds + 1;
    return &ws->view_cost;
}

void toolcost_status(yajl_val o, const TokenCost *c)
{
    json_object_set(o, "toolBytes", json_int_new((int64_t)c->bytes));
    json_object_set(o, "toolTokens", json_int_new((int64_t)c->tokens));
}
