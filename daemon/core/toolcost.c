// SPDX-License-Identifier: MIT
// toolcost: what tool definitions cost an agent's model, per server and per workspace view.

#include <stdint.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/core/naming.h"
#include "daemon/core/toolcost.h"
#include "daemon/core/toolset.h"
#include "daemon/core/view.h"

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

static void add_view_tool(void *ud, size_t server, size_t tool, const char *name)
{
    Workspace *ws = ud;
    _cleanup_json_ yajl_val t = toolset_parse(ws->servers[server]->tools, tool);

    tokens_cost_add(&ws->view_cost, name, t);
}

const TokenCost *toolcost_view(Workspace *ws)
{
    ws_view_ensure(ws);
    if (ws->view_cost_build == ws->n_view_builds + 1)
        return &ws->view_cost;
    ws->view_cost = (TokenCost){0};
    ws_view_each(ws, add_view_tool, ws);
    ws->view_cost_build = ws->n_view_builds + 1;
    return &ws->view_cost;
}

void toolcost_status(yajl_val o, const TokenCost *c)
{
    json_object_set(o, "toolBytes", json_int_new((int64_t)c->bytes));
    json_object_set(o, "toolTokens", json_int_new((int64_t)c->tokens));
}
