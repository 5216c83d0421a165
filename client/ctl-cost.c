// SPDX-License-Identifier: MIT
// ctl-cost: what tool definitions cost a model, per server, in total and per agent (issue 33).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ctl-cost.h"
#include "client/ctl-table.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/tokens.h"
#include "common/util.h"

/* The widest server name the table lays out before cutting (longer ones end in "…"). */
#define COST_NAME_MAX 40

typedef struct CostRow {
    const char *name;
    TokenCost c;
} CostRow;

static void print_rows(const char *head, const CostRow *rows, size_t n, const TokenCost *total)
{
    const char **names = xcalloc(n + 1, sizeof(*names));
    size_t w;

    for (size_t i = 0; i < n; i++)
        names[i] = rows[i].name;
    w = ctl_col_width(head, names, n, 20, COST_NAME_MAX);
    free(names);
    for (size_t i = 0; i <= n + 1; i++) {
        StrBuf row = STRBUF_INIT;
        const CostRow *r = i == 0 ? NULL : i <= n ? &rows[i - 1] : NULL;
        const TokenCost *c = r ? &r->c : total;
        ctl_cell(&row, i == 0 ? head : r ? r->name : "total", w, false);
        if (i == 0)
            strbuf_printf(&row, " %6s %9s %8s", "TOOLS", "BYTES", "~TOKENS");
        else
            strbuf_printf(&row, " %6zu %9zu %8zu", c->tools, c->bytes, c->tokens);
        printf("%s\n", strbuf_str(&row));
        strbuf_deinit(&row);
    }
}

static size_t get_size(yajl_val o, const char *key)
{
    int64_t v = 0;

    json_get_int(o, key, &v);
    return v > 0 ? (size_t)v : 0;
}

/* What each agent is shown: its workspace's list (names cut and made safe like the agents table).
 */
static void print_agents(yajl_val agents)
{
    size_t n = json_array_len(agents), w;
    const char **names = xcalloc(n + 1, sizeof(*names));

    for (size_t i = 0; i < n; i++)
        names[i] = json_get_string(json_array_at(agents, i), "name");
    w = ctl_col_width("SHOWN TO AGENT", names, n, 20, COST_NAME_MAX);
    free(names);
    for (size_t i = 0; i <= n; i++) {
        yajl_val a = i ? json_array_at(agents, i - 1) : NULL;
        StrBuf row = STRBUF_INIT;
        int64_t id = 0;
        if (a && !json_get(a, "toolTokens"))
            continue; /* not initialized: no workspace yet */
        json_get_int(a, "id", &id);
        ctl_cell(&row, a ? json_get_string(a, "name") : "SHOWN TO AGENT", w, false);
        if (a)
            strbuf_printf(&row, " %6lld %9zu %8zu", (long long)id, get_size(a, "toolBytes"),
                          get_size(a, "toolTokens"));
        else
            strbuf_printf(&row, " %6s %9s %8s", "ID", "BYTES", "~TOKENS");
        printf("%s\n", strbuf_str(&row));
        strbuf_deinit(&row);
    }
}

void ctl_cost_status(yajl_val st)
{
    yajl_val servers = json_get_array(st, "servers"), agents = json_get_array(st, "agents");
    size_t n = json_array_len(servers);
    CostRow *rows = xcalloc(n + 1, sizeof(*rows));
    TokenCost total = {get_size(st, "tools"), get_size(st, "toolBytes"),
                       get_size(st, "toolTokens")};

    if (!json_get(st, "toolTokens") && !n) { /* an mcpd from before issue 33, or no servers */
        free(rows);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        yajl_val s = json_array_at(servers, i);
        rows[i] =
            (CostRow){json_get_string(s, "name"),
                      {get_size(s, "tools"), get_size(s, "toolBytes"), get_size(s, "toolTokens")}};
    }
    printf("\n");
    print_rows("TOOL DEFINITIONS", rows, n, &total);
    free(rows);
    print_agents(agents);
    printf("(the total is the user workspace's list; ~TOKENS: an estimate of what a model's "
           "tokenizer makes of name, description and inputSchema, see docs/search.md)\n");
}

void ctl_cost_tools(yajl_val tools)
{
    size_t n = json_array_len(tools), n_rows = 0;
    CostRow *rows = xcalloc(n + 1, sizeof(*rows));
    TokenCost total = {0};

    for (size_t i = 0; i < n; i++) {
        yajl_val t = json_array_at(tools, i);
        const char *srv = json_get_string(json_get_object(t, "_meta"), MCPD_META_SERVER);
        size_t k = 0;
        if (!srv)
            srv = "(unknown)";
        while (k < n_rows && !streq(rows[k].name, srv))
            k++;
        if (k == n_rows)
            rows[n_rows++].name = srv;
        tokens_cost_add(&rows[k].c, NULL, t);
        tokens_cost_add(&total, NULL, t);
    }
    printf("\n");
    print_rows("SERVER", rows, n_rows, &total);
    printf("(as a host sends them to a model: name, description, inputSchema; ~TOKENS is an "
           "estimate, see docs/search.md)\n");
    free(rows);
}
