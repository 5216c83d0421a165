// SPDX-License-Identifier: MIT
// agent: what mcpd says to an agent, keyed by its id (replies, errors, notifications); an agent
// that has gone is skipped quietly, so async work never holds a Peer pointer.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"
#include "common/util.h"
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

void agent_reply_raw(PeerRegistry *peers, uint64_t agent_id, yajl_val id, const char *result,
                     size_t n)
{
    Peer *p = peer_get(peers, agent_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return;
    jsonrpc_write_result_raw(&sb, id, result, n);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

void agent_reply_text(PeerRegistry *peers, StrBuf *scratch, uint64_t agent_id, const char *id,
                      const char *result, size_t n)
{
    Peer *p = peer_get(peers, agent_id);

    if (p)
        agent_reply_text_to(p, scratch, id, result, n);
}

/* Copy n bytes at w, return the end. */
static char *put(char *w, const void *s, size_t n)
{
    memcpy(w, s, n);
    return w + n;
}

#define REPLY_HEAD      "{\"jsonrpc\":\"2.0\",\"id\":"
#define REPLY_MID       ",\"result\":"
#define REPLY_TAIL      "}\n"
#define PUT_LIT(w, lit) put((w), (lit), sizeof(lit) - 1)

void agent_reply_text_to(Peer *p, StrBuf *scratch, const char *id, const char *result, size_t n)
{
    size_t id_len = strlen(id);
    size_t len =
        sizeof(REPLY_HEAD) - 1 + id_len + sizeof(REPLY_MID) - 1 + n + sizeof(REPLY_TAIL) - 1;
    char *w = peer_send_reserve(p, len);

    if (w) {
        /* The usual case: built where it waits to be written, not copied there. */
        w = PUT_LIT(w, REPLY_HEAD);
        w = put(w, id, id_len);
        w = PUT_LIT(w, REPLY_MID);
        w = put(w, result, n);
        w = PUT_LIT(w, REPLY_TAIL);
        peer_send_commit(p, len);
        return;
    }
    strbuf_reset(scratch);
    strbuf_puts(scratch, "{\"jsonrpc\":\"2.0\",\"id\":");
    strbuf_puts(scratch, id);
    strbuf_puts(scratch, ",\"result\":");
    strbuf_append(scratch, result, n);
    strbuf_puts(scratch, "}\n");
    peer_send_sb(p, scratch);
}

void agent_reply_error_text(PeerRegistry *peers, StrBuf *scratch, uint64_t agent_id, const char *id,
                            int code, const char *message)
{
    Peer *p = peer_get(peers, agent_id);

    if (!p)
        return;
    strbuf_reset(scratch);
    strbuf_printf(scratch, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":", id,
                  code);
    json_write_string(scratch, message, strlen(message));
    strbuf_puts(scratch, "}}\n");
    peer_send_sb(p, scratch);
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

void agent_broadcast(PeerRegistry *peers, AgentRegistry *agents, const char *method,
                     yajl_val params, AgentFilter want, void *ctx)
{
    StrBuf sb = STRBUF_INIT;

    for (Peer *p = peers->first; p; p = p->next) {
        Agent *a = agent_get(agents, p->id);
        if (!a || !a->initialized || (want && !want(a, ctx)))
            continue;
        if (!sb.len)
            jsonrpc_write_notification(&sb, method, params);
        peer_send_sb(p, &sb);
    }
    strbuf_deinit(&sb);
}

bool agent_request(PeerRegistry *peers, uint64_t agent_id, uint64_t id, const char *method,
                   yajl_val params)
{
    Peer *p = peer_get(peers, agent_id);
    StrBuf sb = STRBUF_INIT;

    if (!p)
        return false;
    jsonrpc_write_request(&sb, id, method, params);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
    return true;
}

unsigned agent_caps_parse(yajl_val caps)
{
    yajl_val el = json_get_object(caps, "elicitation");
    bool url = el && json_get_object(el, "url");
    bool form = el && (json_get_object(el, "form") || !url);

    return (json_get_object(caps, "sampling") ? AGENT_CAP_SAMPLING : 0) |
           (form ? AGENT_CAP_ELICITATION : 0) | (url ? AGENT_CAP_ELICITATION_URL : 0) |
           (json_get_object(caps, "roots") ? AGENT_CAP_ROOTS : 0);
}

Agent *agent_ensure(AgentRegistry *ar, uint64_t id)
{
    Agent *a = idmap_get(&ar->by_id, id);

    if (!a) {
        a = xcalloc(1, sizeof(*a));
        a->id = id;
        a->log_level = -1;
        idmap_put(&ar->by_id, id, a);
    }
    return a;
}

void agent_remove(AgentRegistry *ar, uint64_t id)
{
    Agent *a = idmap_remove(&ar->by_id, id);

    if (!a)
        return;
    if (a->modern && a->modern_free)
        a->modern_free(a->modern);
    list_detach_all(&a->calls); /* its calls live on until they end; they know it is gone */
    idmap_deinit(&a->requests);
    free(a->client_name);
    free(a->client_version);
    free(a->protocol_version);
    free(a->cwd);
    free(a);
}

void agent_registry_deinit(AgentRegistry *ar)
{
    size_t pos = 0;
    uint64_t id;

    while (idmap_next(&ar->by_id, &pos, &id, NULL))
        agent_remove(ar, id);
    idmap_deinit(&ar->by_id);
}
