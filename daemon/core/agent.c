// SPDX-License-Identifier: MIT
// agent: what mcpd says to an agent, keyed by its id (replies, errors, notifications); an agent
// that has gone is skipped quietly, so async work never holds a Peer pointer.

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/core/agent.h"

/* An id given either way, as JSON-RPC writes it. */
static void write_id(StrBuf *sb, const AgentOut *o)
{
    if (o->id_text)
        strbuf_puts(sb, o->id_text);
    else if (o->id)
        json_write(sb, o->id);
    else
        strbuf_puts(sb, "null");
}

/* The 2025 form: one JSON-RPC line. */
static void write_line(StrBuf *sb, const AgentOut *o)
{
    switch (o->kind) {
    case AGENT_OUT_RESULT:
        strbuf_puts(sb, "{\"jsonrpc\":\"2.0\",\"id\":");
        write_id(sb, o);
        strbuf_puts(sb, ",\"result\":");
        if (o->raw)
            strbuf_append(sb, o->raw, o->raw_len);
        else if (o->result)
            json_write(sb, o->result);
        else
            strbuf_puts(sb, "{}");
        strbuf_puts(sb, "}\n");
        return;
    case AGENT_OUT_ERROR:
        strbuf_puts(sb, "{\"jsonrpc\":\"2.0\",\"id\":");
        write_id(sb, o);
        strbuf_printf(sb, ",\"error\":{\"code\":%d,\"message\":", o->code);
        json_write_string(sb, o->message, strlen(o->message));
        if (o->data) {
            strbuf_puts(sb, ",\"data\":");
            json_write(sb, o->data);
        }
        strbuf_puts(sb, "}}\n");
        return;
    case AGENT_OUT_NOTIFY:
        jsonrpc_write_notification(sb, o->method, o->params);
        return;
    case AGENT_OUT_REQUEST:
        jsonrpc_write_request(sb, o->request_id, o->method, o->params);
        return;
    }
}

void agent_write_plain(Peer *p, const AgentOut *o)
{
    StrBuf sb = STRBUF_INIT;

    write_line(&sb, o);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
}

void agent_write(Peer *p, const AgentOut *o)
{
    AgentWriter *w = p->writer;

    if (w)
        w->write(w, p, o);
    else
        agent_write_plain(p, o);
}

/* out to agent agent_id, if it is still there. */
static void write_to(PeerRegistry *peers, uint64_t agent_id, const AgentOut *o)
{
    Peer *p = peer_get(peers, agent_id);

    if (p)
        agent_write(p, o);
}

void agent_reply(PeerRegistry *peers, uint64_t agent_id, yajl_val id, yajl_val result)
{
    write_to(peers, agent_id, &(AgentOut){.kind = AGENT_OUT_RESULT, .id = id, .result = result});
}

void agent_reply_raw(PeerRegistry *peers, uint64_t agent_id, yajl_val id, const char *result,
                     size_t n)
{
    write_to(peers, agent_id,
             &(AgentOut){
                 .kind = AGENT_OUT_RESULT, .id = id, .raw = result, .raw_len = n, .raw_own = true});
}

void agent_reply_ref(Peer *p, yajl_val id, const char *result, size_t n,
                     evbuffer_ref_cleanup_cb done, void *arg)
{
    StrBuf head = STRBUF_INIT;

    if (p->writer) {
        /* The era writes its own form; the bytes are done with once it has. */
        agent_write(
            p,
            &(AgentOut){
                .kind = AGENT_OUT_RESULT, .id = id, .raw = result, .raw_len = n, .raw_own = true});
        done(result, n, arg);
        return;
    }
    /* The envelope around an empty result, then the shared bytes in its place: no copy. */
    jsonrpc_write_result_raw(&head, id, "", 0);
    assert(head.len >= 2 && head.data[head.len - 2] == '}');
    peer_send(p, head.data, head.len - 2);
    peer_send_ref(p, result, n, done, arg);
    peer_send(p, "}\n", 2);
    strbuf_deinit(&head);
}

void agent_reply_tree_text(PeerRegistry *peers, StrBuf *scratch, uint64_t agent_id, const char *id,
                           yajl_val result)
{
    Peer *p = peer_get(peers, agent_id);

    if (!p)
        return;
    if (p->writer) {
        agent_write(p, &(AgentOut){.kind = AGENT_OUT_RESULT, .id_text = id, .result = result});
        return;
    }
    strbuf_reset(scratch);
    write_line(scratch, &(AgentOut){.kind = AGENT_OUT_RESULT, .id_text = id, .result = result});
    peer_send_sb(p, scratch);
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
    size_t id_len, len;
    char *w;

    if (p->writer) {
        agent_write(
            p, &(AgentOut){.kind = AGENT_OUT_RESULT, .id_text = id, .raw = result, .raw_len = n});
        return;
    }
    id_len = strlen(id);
    len = sizeof(REPLY_HEAD) - 1 + id_len + sizeof(REPLY_MID) - 1 + n + sizeof(REPLY_TAIL) - 1;
    w = peer_send_reserve(p, len);
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
    AgentOut o = {.kind = AGENT_OUT_ERROR, .id_text = id, .code = code, .message = message};

    if (!p)
        return;
    if (p->writer) {
        agent_write(p, &o);
        return;
    }
    strbuf_reset(scratch);
    write_line(scratch, &o);
    peer_send_sb(p, scratch);
}

void agent_reply_error(PeerRegistry *peers, uint64_t agent_id, yajl_val id, int code,
                       const char *message)
{
    write_to(peers, agent_id,
             &(AgentOut){.kind = AGENT_OUT_ERROR, .id = id, .code = code, .message = message});
}

void agent_notify(PeerRegistry *peers, uint64_t agent_id, const char *method, yajl_val params)
{
    write_to(peers, agent_id,
             &(AgentOut){.kind = AGENT_OUT_NOTIFY, .method = method, .params = params});
}

void agent_broadcast(PeerRegistry *peers, AgentRegistry *agents, const char *method,
                     yajl_val params, AgentFilter want, void *ctx)
{
    AgentOut o = {.kind = AGENT_OUT_NOTIFY, .method = method, .params = params};
    StrBuf sb = STRBUF_INIT;

    for (Peer *p = peers->first; p; p = p->next) {
        Agent *a = agent_get(agents, p->id);
        if (!a || !a->initialized || (want && !want(a, ctx)))
            continue;
        if (p->writer) {
            agent_write(p, &o);
            continue;
        }
        if (!sb.len)
            write_line(&sb, &o); /* built once for every agent of the 2025 era */
        peer_send_sb(p, &sb);
    }
    strbuf_deinit(&sb);
}

bool agent_request(PeerRegistry *peers, uint64_t agent_id, uint64_t id, const char *method,
                   yajl_val params)
{
    Peer *p = peer_get(peers, agent_id);

    if (!p)
        return false;
    agent_write(
        p, &(AgentOut){
               .kind = AGENT_OUT_REQUEST, .request_id = id, .method = method, .params = params});
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

/* Free what a holds but its era's state. */
static void agent_deinit(Agent *a)
{
    list_detach_all(&a->calls); /* its calls live on until they end; they know it is gone */
    idmap_deinit(&a->requests);
    free(a->client_name);
    free(a->client_version);
    free(a->protocol_version);
    free(a->cwd);
    free(a->exe);
}

void agent_reset(Agent *a)
{
    Agent kept = {
        .id = a->id,
        .log_level = -1,
        .era = a->era,
        .modern = a->modern,
        .modern_free = a->modern_free,
    };

    agent_deinit(a);
    *a = kept;
}

void agent_remove(AgentRegistry *ar, uint64_t id)
{
    Agent *a = idmap_remove(&ar->by_id, id);

    if (!a)
        return;
    if (a->modern && a->modern_free)
        a->modern_free(a->modern);
    agent_deinit(a);
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
