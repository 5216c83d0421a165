// SPDX-License-Identifier: MIT
// mcpc-modern: libmcpc's 2026-07-28 era: the per-request _meta, server/discover's verdict, and
// input_required results fulfilled through the server-request handler and retried (MRTR).

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client/mcpc-modern.h"
#include "client/mcpc-private.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"

/* What each 2026-era request carries in params._meta (the caller's own keys win). */
void libmcpc_stamp_meta(mcpc_client *c, yajl_val params)
{
    yajl_val meta = json_get_object(params, "_meta"), caps = json_object_new();
    yajl_val info = json_object_new();

    if (!meta) {
        meta = json_object_new();
        json_object_set(params, "_meta", meta);
    }
    if (c->server_request) {
        /* With a handler, input_required results can be fulfilled. */
        json_object_set(caps, "sampling", json_object_new());
        json_object_set(caps, "elicitation", json_object_new());
        json_object_set(caps, "roots", json_object_new());
    }
    json_object_set(info, "name", json_string_new(c->client_name));
    json_object_set(info, "version", json_string_new(c->client_version));
    if (!json_get(meta, MCP_META_PROTOCOL_VERSION))
        json_object_set(meta, MCP_META_PROTOCOL_VERSION, json_string_new(MCP_PROTOCOL_2026_07_28));
    if (!json_get(meta, MCP_META_CLIENT_CAPABILITIES))
        json_object_set(meta, MCP_META_CLIENT_CAPABILITIES, caps);
    else
        json_free(caps);
    if (!json_get(meta, MCP_META_CLIENT_INFO))
        json_object_set(meta, MCP_META_CLIENT_INFO, info);
    else
        json_free(info);
    if (c->cwd && !json_get(meta, MCPD_META_CWD))
        json_object_set(meta, MCPD_META_CWD, json_string_new(c->cwd));
    if (c->session_in && !json_get(meta, MCPD_META_SESSION))
        json_object_set(meta, MCPD_META_SESSION, json_string_new(c->session_in));
    if (c->profile && !json_get(meta, MCPD_META_PROFILE))
        json_object_set(meta, MCPD_META_PROFILE, json_string_new(c->profile));
}

/* The request goes again, with the answers and the state, under a new wire id. */
static void input_retry(mcpc_client *c, Pending *p)
{
    StrBuf sb = STRBUF_INIT;
    int r;

    json_object_set(p->params, "inputResponses", p->answers);
    p->answers = NULL;
    if (p->state)
        json_object_set(p->params, "requestState", json_copy(p->state));
    else
        json_free(json_object_take(p->params, "requestState"));
    json_free(p->asks);
    p->asks = NULL;
    p->wire_id = ++c->next_id;
    jsonrpc_write_request(&sb, p->wire_id, p->method, p->params);
    r = libmcpc_send_sb(c, &sb, false);
    strbuf_deinit(&sb);
    if (r < 0) {
        libmcpc_pending_unlink(c, p);
        libmcpc_pending_finish(c, p, r, NULL);
    }
}

/*
 * An input_required answer to p: with a handler, each input request goes to it under an id of
 * libmcpc's own (answered through mcpc_respond) and p waits for the answers. Returns false when
 * p is to be finished with result as it is (no handler, too many rounds, not input_required).
 */
bool libmcpc_input_required(mcpc_client *c, Pending *p, yajl_val result)
{
    yajl_val asks = json_get_object(result, "inputRequests");
    unsigned long long round;

    if (c->era != MCPC_ERA_2026 || !c->server_request || !p->method ||
        !streq(json_get_string(result, "resultType") ?: "", "input_required") || !asks ||
        !asks->u.object.len || p->rounds >= MCPC_MAX_INPUT_ROUNDS)
        return false;
    p->rounds++;
    p->asks = json_copy(asks);
    p->answers = json_object_new();
    json_free(p->state);
    p->state = json_copy(json_get(result, "requestState"));
    p->waiting = p->asks->u.object.len;
    /* Back in the list (not answerable by mcpd: the wire id is spent), so cancel and
     * timeouts still find it. */
    p->next = c->pending;
    c->pending = p;
    c->n_pending++;
    round = p->wire_id;
    /* From the message's own tree: a handler that answers at once may finish the round (and
     * p) before the loop ends. */
    for (size_t i = 0; i < asks->u.object.len; i++) {
        yajl_val ask = asks->u.object.values[i];
        _cleanup_free_ char *key =
            xasprintf(MCPC_INPUT_ID_PREFIX "%llu/%s", round, asks->u.object.keys[i]);
        _cleanup_free_ char *id = NULL;
        StrBuf sb = STRBUF_INIT;
        json_write_string(&sb, key, strlen(key));
        id = strbuf_detach(&sb, NULL);
        _cleanup_free_ char *params =
            json_get(ask, "params") ? json_to_string(json_get(ask, "params")) : xstrdup("{}");
        c->server_request(c->server_request_ud, id, json_get_string(ask, "method") ?: "", params);
    }
    return true;
}

/* mcpc_respond for an input request: kept until all are answered. Returns 1 when it was one. */
int libmcpc_input_answer(mcpc_client *c, const char *id_text, yajl_val result, const char *message)
{
    unsigned long long round;
    int used = 0;
    Pending *p;

    if (strncmp(id_text, MCPC_INPUT_ID_PREFIX, strlen(MCPC_INPUT_ID_PREFIX)) != 0 ||
        sscanf(id_text + strlen(MCPC_INPUT_ID_PREFIX), "%llu/%n", &round, &used) != 1 || !used)
        return 0;
    for (p = c->pending; p && !(p->asks && p->wire_id == round); p = p->next)
        ;
    const char *key = id_text + strlen(MCPC_INPUT_ID_PREFIX) + used;
    if (!p || !json_get(p->asks, key) || json_get(p->answers, key))
        return libmcpc_fail(c, -ENOENT, "no input request %s is waiting for an answer", id_text);
    if (message) {
        /* An input request has no error form: the request fails with the handler's error. */
        _cleanup_json_ yajl_val err = json_object_new();
        _cleanup_free_ char *json = NULL;
        json_object_set(err, "code", json_int_new(JSONRPC_INTERNAL_ERROR));
        json_object_set(err, "message", json_string_new(message));
        json = json_to_string(err);
        libmcpc_pending_unlink(c, p);
        libmcpc_pending_finish(c, p, MCPC_E_RPC, json);
        return 1;
    }
    json_object_set(p->answers, key, json_copy(result));
    if (--p->waiting == 0)
        input_retry(c, p);
    return 1;
}

/* server/discover's outcome r and result text: 0 when mcpd serves the 2026 era, else why not. */
int libmcpc_discover_check(mcpc_client *c, int r, const char *text)
{
    _cleanup_json_ yajl_val result = r == 0 ? json_parse(text, NULL) : NULL;
    yajl_val versions = json_get_array(result, "supportedVersions");

    for (size_t i = 0; i < json_array_len(versions); i++)
        if (YAJL_IS_STRING(json_array_at(versions, i)) &&
            streq(json_array_at(versions, i)->u.string, MCP_PROTOCOL_2026_07_28))
            return 0;
    if (r == 0)
        r = libmcpc_fail(c, -EPROTONOSUPPORT,
                         "mcpd does not serve MCP %s (server/discover does not offer it): use "
                         "MCPC_ERA_2025",
                         MCP_PROTOCOL_2026_07_28);
    else if (r == MCPC_E_RPC)
        r = libmcpc_fail(
            c, -EPROTONOSUPPORT,
            "mcpd does not serve MCP %s (server/discover failed: %s): use MCPC_ERA_2025",
            MCP_PROTOCOL_2026_07_28, c->errmsg);
    return r;
}
