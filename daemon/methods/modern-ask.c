// SPDX-License-Identifier: MIT
// modern-ask: a legacy server's requests during a 2026-07-28 agent's call, put to the agent as
// that call's input_required result, withdrawn, or refused when the agent gives the call up.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/manager.h"
#include "daemon/core/route.h"
#include "daemon/methods/modern-ask.h"

/*
 * Server requests (elicitation, sampling, roots) one call may have waiting for the agent.
 * A server asks one or two questions at a time; past this it is flooding, and the extra
 * requests get an error.
 */
#define MODERN_MAX_INPUT_REQUESTS 16

static void send_line(Peer *p, StrBuf *sb)
{
    peer_send(p, sb->data, sb->len);
    strbuf_reset(sb);
}

static void arm_ms(struct event *ev, int64_t ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

    evtimer_add(ev, &tv);
}

static void on_retry_expired(evutil_socket_t fd, short what, void *arg)
{
    Pending *pd = arg;
    ModernAgent *ma = pd->ma;
    Peer *p = peer_get(ma->mg->peers, ma->peer_id);

    (void)fd, (void)what;
    log_info("peer %llu: no retry for %s %s within %d s: the call is cancelled",
             (unsigned long long)ma->peer_id, pd->method, pd->id, MODERN_RETRY_WAIT_MS / 1000);
    if (p)
        modern_ask_abandon(ma, p, pd, "the agent did not come back with the answers in time");
    else
        modern_pending_remove(ma, pd);
}

/* An input request's key names the request mcpd forwarded: "mcpd-<id>". */
#define KEY_PREFIX "mcpd-"

static yajl_val key_id(const char *key)
{
    return json_int_new(strtoll(key + strlen(KEY_PREFIX), NULL, 10));
}

/* The upstream hears that its request could not be carried to the agent. */
static void refuse_server_request(Manager *mg, Peer *p, yajl_val id, const char *why)
{
    JsonrpcMsg resp = {.kind = JSONRPC_ERROR_RESPONSE, .id = id};

    resp.error = json_object_new();
    json_object_set(resp.error, "code", json_int_new(JSONRPC_INTERNAL_ERROR));
    json_object_set(resp.error, "message", json_string_new(why));
    route_peer_response(&mg->calls, p, &resp);
    json_free(resp.error);
}

void modern_ask_abandon(ModernAgent *ma, Peer *p, Pending *pd, const char *why)
{
    yajl_val sets[] = {pd->shown, pd->asks};
    _cleanup_json_ yajl_val id = json_parse(pd->id, NULL);

    modern_pending_unlink(ma, pd);
    for (size_t k = 0; k < N_ELEMENTS(sets); k++)
        for (size_t i = 0; sets[k] && i < sets[k]->u.object.len; i++) {
            _cleanup_json_ yajl_val rid = key_id(sets[k]->u.object.keys[i]);
            refuse_server_request(ma->mg, p, rid, why);
        }
    if (id)
        call_cancel(&ma->mg->calls, p, id);
    modern_pending_free(pd);
}

void modern_ask_agent(Peer *p, Pending *pd)
{
    _cleanup_json_ yajl_val r = json_object_new(),
                            id = json_parse(pd->down_id ? pd->down_id : pd->id, NULL);
    StrBuf sb = STRBUF_INIT;

    if (!pd->token[0] && !modern_new_token(pd->token)) {
        for (size_t i = 0; i < pd->asks->u.object.len; i++) {
            _cleanup_json_ yajl_val rid = key_id(pd->asks->u.object.keys[i]);
            refuse_server_request(pd->ma->mg, p, rid, "mcpd has no randomness for a requestState");
        }
        json_free(pd->asks);
        pd->asks = NULL;
        return;
    }
    if (!pd->indexed[MODERN_BY_TOKEN])
        modern_pending_index_add(pd->ma, pd, MODERN_BY_TOKEN);
    if (!pd->shown)
        pd->shown = json_object_new();
    for (size_t i = 0; i < pd->asks->u.object.len; i++) {
        const char *key = pd->asks->u.object.keys[i];
        json_object_set(pd->shown, key, key_id(key));
    }
    json_object_set(r, "resultType", json_string_new("input_required"));
    json_object_set(r, "inputRequests", pd->asks);
    pd->asks = NULL;
    json_object_set(r, "requestState", json_string_new(pd->token));
    jsonrpc_write_result(&sb, id, r);
    send_line(p, &sb);
    strbuf_deinit(&sb);
    pd->parked = true;
    if (!pd->expiry)
        pd->expiry = evtimer_new(pd->ma->mg->base, on_retry_expired, pd);
    arm_ms(pd->expiry, MODERN_RETRY_WAIT_MS);
}

void modern_ask_server_request(ModernAgent *ma, Peer *p, const AgentOut *o)
{
    _cleanup_free_ char *cause = NULL, *key = NULL;
    _cleanup_json_ yajl_val rid = json_int_new((int64_t)o->request_id);
    yajl_val ask;
    Pending *pd;

    cause = route_cause_of_request(&ma->mg->calls, o->request_id);
    pd = cause ? modern_pending_find(ma, cause, MODERN_BY_ID) : NULL;
    if (!pd) {
        refuse_server_request(ma->mg, p, rid,
                              "the agent speaks MCP 2026-07-28 and has no call in flight to "
                              "carry this request");
        return;
    }
    if ((pd->asks ? pd->asks->u.object.len : 0) + (pd->shown ? pd->shown->u.object.len : 0) >=
        MODERN_MAX_INPUT_REQUESTS) {
        _cleanup_free_ char *why = xasprintf("the call already has %d requests waiting for the "
                                             "agent, the most mcpd carries",
                                             MODERN_MAX_INPUT_REQUESTS);
        refuse_server_request(ma->mg, p, rid, why);
        return;
    }
    key = xasprintf(KEY_PREFIX "%lld", (long long)o->request_id);
    ask = json_object_new();
    json_object_set(ask, "method", json_string_new(o->method));
    if (o->params)
        json_object_set(ask, "params", json_copy(o->params));
    if (!pd->asks)
        pd->asks = json_object_new();
    json_object_set(pd->asks, key, ask);
    if (!pd->parked)
        modern_ask_agent(p, pd);
}

void modern_ask_withdrawn(ModernAgent *ma, yajl_val rid)
{
    _cleanup_free_ char *key = NULL;

    if (!YAJL_IS_INTEGER(rid))
        return;
    key = xasprintf(KEY_PREFIX "%lld", (long long)rid->u.number.i);
    for (ListNode *n = ma->pending.first; n; n = n->next) {
        Pending *pd = (Pending *)n;
        yajl_val v = json_object_take(pd->shown, key);
        if (!v)
            v = json_object_take(pd->asks, key);
        if (v) {
            json_free(v);
            return;
        }
    }
}
