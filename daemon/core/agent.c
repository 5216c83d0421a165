// SPDX-License-Identifier: MIT
// agent: what mcpd says to an agent, keyed by its id (replies, errors, notifications); an agent
// that has gone is skipped quietly, so async work never holds a Peer pointer.

#include "common/jsonrpc.h"
#include "common/strbuf.h"
#include "daemon/core/agent.h"

void agent_reply(PeerRegistry *peers, uint64_t agent_id, yajl_val id, yajl_val result)
{
    Peer *p = peer_get(peers, agent_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return;
    jsonrpc_write_result(&sb, id, result);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

void agent_reply_error(PeerRegistry *peers, uint64_t agent_id, yajl_val id, int code,
                       const char *message)
{
    Peer *p = peer_get(peers, agent_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return;
    jsonrpc_write_error(&sb, id, code, message, NULL);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

void agent_notify(PeerRegistry *peers, uint64_t agent_id, const char *method, yajl_val params)
{
    Peer *p = peer_get(peers, agent_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return;
    jsonrpc_write_notification(&sb, method, params);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}
