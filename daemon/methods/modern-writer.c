// SPDX-License-Identifier: MIT
// modern-writer: what the core says to a 2026-07-28 agent, written in the era's form (its
// AgentWriter): resultType, the session token, list ttl, error codes, answers held for a retry.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/core/manager.h"
#include "daemon/core/workspace.h"
#include "daemon/methods/modern-ask.h"
#include "daemon/methods/modern-writer.h"

/* Methods whose results are lists a client may keep: they get ttlMs and cacheScope. */
static const char *const list_methods[] = {
    "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read",
};

static bool is_list(const char *method)
{
    for (size_t i = 0; method && i < N_ELEMENTS(list_methods); i++)
        if (streq(method, list_methods[i]))
            return true;
    return false;
}

static bool agent_initialized(ModernAgent *ma)
{
    Agent *a = agent_get(&ma->mg->agents, ma->peer_id);

    return a && a->initialized;
}

/* The request o answers, or NULL; *textp holds the id's text when o has it as a tree. */
static Pending *answered(ModernAgent *ma, const AgentOut *o, char **textp)
{
    const char *text = o->id_text;

    if (!text)
        text = *textp = o->id ? json_to_string(o->id) : xstrdup("null");
    return modern_pending_find(ma, text, MODERN_BY_ID);
}

/* out goes under the id the agent knows pd by now (a retry's, after input_required). */
static void down_id(AgentOut *out, const Pending *pd)
{
    if (pd && pd->down_id) {
        out->id = NULL;
        out->id_text = pd->down_id;
    }
}

/* The call ended while the agent answers its questions: its answer is kept for the retry. */
static void hold(Pending *pd, const AgentOut *o)
{
    modern_pending_held_clear(pd);
    pd->held = (AgentOut){.kind = o->kind, .code = o->code, .raw_len = o->raw_len};
    pd->held.result = o->result ? json_copy(o->result) : NULL;
    if (o->raw) {
        char *raw = xmalloc(o->raw_len ? o->raw_len : 1);
        memcpy(raw, o->raw, o->raw_len);
        pd->held.raw = raw;
    }
    pd->held.raw_own = o->raw_own;
    pd->held.message = o->message ? xstrdup(o->message) : NULL;
    pd->held.data = o->data ? json_copy(o->data) : NULL;
    pd->has_held = true;
}

void modern_writer_held_out(ModernAgent *ma, Peer *p, Pending *pd)
{
    AgentOut o = pd->held;

    /* Written as when it came, under the id the handlers answered: pd is found again. */
    o.id = NULL;
    o.id_text = pd->id;
    pd->has_held = false;
    pd->held = (AgentOut){0};
    ma->writer.write(&ma->writer, p, &o); /* pd is answered, and gone */
    json_free(o.result);
    free((void *)o.raw);
    free((void *)o.message);
    json_free(o.data);
}

/* What the era adds to a result object: false when an error went out instead. */
static bool reshape(ModernAgent *ma, Peer *p, yajl_val r, const Pending *pd, const AgentOut *out)
{
    const char *rt = json_get_string(r, "resultType");

    if (!rt)
        json_object_set(r, "resultType", json_string_new("complete"));
    else if (streq(rt, "input_required") && json_get(r, "requestState")) {
        const char *token = wrap_table_put(&ma->wrapped, json_get(r, "requestState"));
        if (!token) {
            agent_write_plain(p, &(AgentOut){
                                     .kind = AGENT_OUT_ERROR,
                                     .id = out->id,
                                     .id_text = out->id_text,
                                     .code = JSONRPC_INTERNAL_ERROR,
                                     .message = "mcpd has no randomness to protect the "
                                                "server's requestState",
                                 });
            return false;
        }
        json_object_set(r, "requestState", json_string_new(token));
    }
    if (!ma->told_session && agent_initialized(ma)) {
        /* What initialize's _meta gives a 2025 agent: the token its subagents join by. */
        yajl_val meta = json_get_object(r, "_meta");
        if (!meta) {
            meta = json_object_new();
            json_object_set(r, "_meta", meta);
        }
        json_object_set(meta, MCPD_META_SESSION,
                        json_string_new(ws_peer_token(&ma->mg->workspaces, p)));
        ma->told_session = true;
    }
    if (pd && is_list(pd->method)) {
        if (!json_get(r, "ttlMs"))
            json_object_set(r, "ttlMs", json_int_new(MODERN_LIST_TTL_MS));
        if (!json_get(r, "cacheScope"))
            json_object_set(r, "cacheScope", json_string_new("private"));
    }
    return true;
}

/*
 * A result object of mcpd's own (AgentOut.raw_own: none of the members the era adds): the
 * same members appended to its text, in reshape's order, without reading it.
 */
static void own_result_out(ModernAgent *ma, Peer *p, const Pending *pd, AgentOut *out)
{
    StrBuf sb = STRBUF_INIT;
    const char *token;

    strbuf_append(&sb, out->raw, out->raw_len - 1);
    strbuf_puts(&sb,
                out->raw_len > 2 ? ",\"resultType\":\"complete\"" : "\"resultType\":\"complete\"");
    if (!ma->told_session && agent_initialized(ma)) {
        token = ws_peer_token(&ma->mg->workspaces, p);
        strbuf_puts(&sb, ",\"_meta\":{\"" MCPD_META_SESSION "\":");
        json_write_string(&sb, token, strlen(token));
        strbuf_putc(&sb, '}');
        ma->told_session = true;
    }
    if (pd && is_list(pd->method))
        strbuf_printf(&sb, ",\"ttlMs\":%d,\"cacheScope\":\"private\"", MODERN_LIST_TTL_MS);
    strbuf_putc(&sb, '}');
    out->raw = sb.data;
    out->raw_len = sb.len;
    agent_write_plain(p, out);
    strbuf_deinit(&sb);
}

/* A result in the era's form (out: o under the id the agent knows pd by). */
static void result_out(ModernAgent *ma, Peer *p, const Pending *pd, const AgentOut *o,
                       AgentOut *out)
{
    _cleanup_json_ yajl_val r = NULL;

    if (o->raw && o->raw_own && o->raw_len >= 2 && o->raw[0] == '{' &&
        o->raw[o->raw_len - 1] == '}') {
        own_result_out(ma, p, pd, out);
        return;
    }
    if (!o->raw)
        r = o->result ? json_copy(o->result) : json_object_new();
    else if (json_parse_full(&r, o->raw, o->raw_len, JSON_UTF8_REPAIR, NULL) != 0) {
        /*
         * Text that does not parse goes out as it is, and answers its request all the same.
         * No server's bytes should come here: a server's result reaches the writer only after
         * jsonscan accepted its whole line, and jsonscan refuses whatever this parser refuses
         * (tests/fuzz/fuzz-jsonscan.c), and mcpd's own texts are JSON it wrote. Should one come
         * anyway, the agent still gets it, and the request does not stay in flight.
         */
        agent_write_plain(p, out);
        return;
    }
    if (YAJL_IS_OBJECT(r) && !reshape(ma, p, r, pd, out))
        return;
    out->raw = NULL;
    out->result = r;
    agent_write_plain(p, out);
}

/* An error in the era's form (out: as for result_out). */
static void error_out(Peer *p, const Pending *pd, AgentOut *out)
{
    /* Resource not found is -32602 from 2026-07-28 on. */
    if (pd && streq(pd->method, "resources/read") && out->code == MCP_ERROR_RESOURCE_NOT_FOUND)
        out->code = JSONRPC_INVALID_PARAMS;
    if (!out->message)
        out->message = "(no message)";
    agent_write_plain(p, out);
}

/*
 * The answer to a request of the agent: kept while the agent answers the call's input
 * requests, else written under the id the agent knows the request by, which is then done.
 */
static void answer_out(ModernAgent *ma, Peer *p, const AgentOut *o)
{
    _cleanup_free_ char *text = NULL;
    Pending *pd = answered(ma, o, &text);
    AgentOut out = *o;

    if (pd && pd->parked) {
        hold(pd, o);
        return;
    }
    down_id(&out, pd);
    if (o->kind == AGENT_OUT_RESULT)
        result_out(ma, p, pd, o, &out);
    else
        error_out(p, pd, &out);
    if (pd)
        modern_pending_remove(ma, pd);
}

static void notification_out(ModernAgent *ma, Peer *p, const AgentOut *o)
{
    if (streq(o->method, "notifications/cancelled")) {
        /*
         * mcpd cancels only requests it sent an agent, and a modern agent was sent none: its
         * input requests went out as results. The question is void; the agent hears nothing.
         */
        modern_ask_withdrawn(ma, json_get(o->params, "requestId"));
        return;
    }
    if (!modern_listen_notify(&ma->listens, p, o))
        agent_write_plain(p, o);
}

void modern_writer_write(AgentWriter *w, Peer *p, const AgentOut *o)
{
    ModernAgent *ma = (ModernAgent *)w; /* the writer is its first member */

    switch (o->kind) {
    case AGENT_OUT_RESULT:
    case AGENT_OUT_ERROR:
        answer_out(ma, p, o);
        return;
    case AGENT_OUT_NOTIFY:
        notification_out(ma, p, o);
        return;
    case AGENT_OUT_REQUEST:
        modern_ask_server_request(ma, p, o);
        return;
    }
}
