// SPDX-License-Identifier: MIT
// logging: an upstream's log messages reach the agents that see its server, each at the level it
// asked for, and the upstream's own level follows the most verbose of them (logging/setLevel).

#include "common/json.h"
#include "common/mcp.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/logging.h"

/* An agent that never sent logging/setLevel hears messages from this level up. */
#define LOG_LEVEL_DEFAULT MCP_LEVEL_INFO

/* Which agents get one server's log message: those that see the server, at their own level. */
typedef struct LogAudience {
    CallRegistry *cr;
    Server *s;
    int level;
} LogAudience;

static bool log_wanted(const Agent *a, void *ctx)
{
    LogAudience *la = ctx;
    int want = a->log_level >= 0 ? a->log_level : LOG_LEVEL_DEFAULT;

    /* 2026-07-28: no notifications/message to an agent that never sent a _meta logLevel (its
     * own stream would carry them: a listen's, untagged, or a call's that did not ask). */
    if (a->log_level < 0 && a->era == AGENT_ERA_MODERN)
        return false;
    return la->level >= want && ws_has_server(ws_of_agent(la->cr->workspaces, a), la->s);
}

/* Log messages go to every agent that sees the server, filtered by its own level. */
void logging_message(CallRegistry *cr, Server *s, yajl_val params)
{
    LogAudience la = {cr, s, mcp_level_from_name(json_get_string(params, "level"))};
    yajl_val out;

    if (la.level < 0)
        return;
    out = json_copy(params);
    if (!json_get(out, "logger"))
        json_object_set(out, "logger", json_string_new(s->cfg->name));
    agent_broadcast(cr->peers, cr->agents, "notifications/message", out, log_wanted, &la);
    json_free(out);
}

static void on_set_level(Upstream *u, void *ctx, const UpstreamReply *r)
{
    (void)ctx;
    if (r->outcome == UPSTREAM_ERROR || r->outcome == UPSTREAM_TIMEOUT)
        log_full(LOG_INFO, u->name, "logging", "logging/setLevel failed: %s", r->message);
}

void logging_update(CallRegistry *cr, Server *s)
{
    int want = -1;

    for (Peer *p = cr->peers->first; p; p = p->next) {
        Agent *a = agent_get(cr->agents, p->id);
        if (a && a->initialized && a->log_level >= 0 && (want < 0 || a->log_level < want) &&
            ws_has_server(ws_of_peer(cr->workspaces, p), s))
            want = a->log_level;
    }
    if (want < 0 || want == s->log_level || s->state != SERVER_CONNECTED || !s->up ||
        !json_get(s->up->capabilities, "logging"))
        return;
    yajl_val params = json_object_new();
    json_object_set(params, "level", json_string_new(mcp_level_name(want)));
    if (upstream_request(s->up, "logging/setLevel", params, s->cfg->timeout_ms, false, on_set_level,
                         NULL, NULL) == 0)
        s->log_level = want;
}

void logging_set_level(CallRegistry *m, Peer *p, int level)
{
    Workspace *ws = ws_of_peer(m->workspaces, p);

    agent_ensure(m->agents, p->id)->log_level = level;
    for (size_t i = 0; i < ws->n_servers; i++)
        logging_update(m, ws->servers[i]);
}
