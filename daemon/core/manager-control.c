// SPDX-License-Identifier: MIT
// manager-control: what an agent asks of one server by its name (connect, disconnect, its logs,
// mcpd/wait).

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/manager-control.h"
#include "daemon/core/waiter.h"
#include "daemon/sys/runlog.h"

Server *manager_find_server(Manager *m, Peer *p, const char *name)
{
    Workspace *ws = p ? ws_of_peer(&m->workspaces, p) : m->workspaces.user_ws;

    for (size_t i = 0; ws && name && i < ws->n_servers; i++)
        if (streq(ws->servers[i]->cfg->name, name))
            return ws->servers[i];
    for (size_t i = 0; name && i < m->servers.n_order; i++)
        if (streq(m->servers.order[i]->cfg->name, name))
            return m->servers.order[i];
    return NULL;
}

void manager_wait(Manager *m, Peer *p, yajl_val id, const char *name, int64_t timeout_ms)
{
    Server *s = manager_find_server(m, p, name);

    if (!s) {
        _cleanup_free_ char *msg = xasprintf("Unknown server: %s", name);
        agent_reply_error(m->peers, p->id, id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    waiter_add(&m->waiters, p->id, id, s, timeout_ms);
}

int manager_connect(Manager *m, Peer *p, const char *name, char **whyp)
{
    Server *s = manager_find_server(m, p, name);

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return MANAGER_E_UNKNOWN_SERVER;
    }
    if (!s->cfg->enabled) {
        *whyp = xasprintf("Server %s is disabled in %s", name,
                          s->cfg->source.path ? s->cfg->source.path : "its config");
        return MANAGER_E_DISABLED;
    }
    server_restart(s);
    return 0;
}

int manager_disconnect(Manager *m, Peer *p, const char *name, char **whyp)
{
    Server *s = manager_find_server(m, p, name);

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return MANAGER_E_UNKNOWN_SERVER;
    }
    server_stop(s);
    return 0;
}

int manager_logs(Manager *m, Peer *p, const char *name, uint64_t since, yajl_val *resultp,
                 char **whyp)
{
    Server *s = manager_find_server(m, p, name);
    RunLog *rl = NULL;
    yajl_val res;
    StrBuf sb = STRBUF_INIT;

    if (!s) {
        *whyp = xasprintf("Unknown server: %s", name);
        return MANAGER_E_UNKNOWN_SERVER;
    }
    /* A stdio server not started yet by this mcpd may have runs a previous one recorded. */
    if (s->cfg->type == TRANSPORT_STDIO)
        rl = runlog_get(s->cfg->name, s->start_dir);
    res = json_object_new();
    json_object_set(res, "server", json_string_new(s->cfg->name));
    if (rl) {
        json_object_set(res, "spawns", json_int_new((int64_t)runlog_spawns(rl)));
        json_object_set(res, "runs", runlog_json(rl, since));
        runlog_tail(rl, runlog_spawns(rl), &sb);
    } else if (s->up && s->up->transport && s->up->transport->ops->logs) {
        s->up->transport->ops->logs(s->up->transport, &sb);
    }
    /* stderr is arbitrary bytes: keep what is valid UTF-8, mark the rest. */
    json_object_set(res, "text", json_string_new_lossy(strbuf_str(&sb), sb.len));
    strbuf_deinit(&sb);
    runlog_unref(rl);
    *resultp = res;
    return 0;
}
