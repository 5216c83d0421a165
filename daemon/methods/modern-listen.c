// SPDX-License-Identifier: MIT
// modern-listen: a 2026-07-28 agent's subscriptions/listen streams: opened, acknowledged,
// carrying the notifications each asked for, and ended by a cancel or mcpd's stop.

#include <stdlib.h>

#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/core/surface.h"
#include "daemon/methods/modern-listen.h"

/* subscriptions/listen streams per connection: one per kind of interest is the usual case. */
#define MODERN_MAX_LISTENS 16
/* URIs one listen may name: the surface keeps at most 1024 per server, shared by all agents. */
#define MODERN_MAX_LISTEN_URIS 256

struct Listen {
    struct Listen *next;
    char *id; /* the subscriptions/listen request's id (JSON text) */
    bool tools, prompts, resources;
    char **uris;
    size_t n_uris;
};

static void send_line(Peer *p, StrBuf *sb)
{
    peer_send(p, sb->data, sb->len);
    strbuf_reset(sb);
}

static void fail(Peer *p, yajl_val id, int code, const char *message)
{
    agent_reply_error(p->reg, p->id, id, code, message);
}

static Listen *listen_by_id(const ModernListens *ls, const char *id)
{
    for (Listen *l = ls->first; l; l = l->next)
        if (streq(l->id, id))
            return l;
    return NULL;
}

static void listen_free(Listen *l)
{
    for (size_t i = 0; i < l->n_uris; i++)
        free(l->uris[i]);
    free(l->uris);
    free(l->id);
    free(l);
}

/* Subscribe this peer to uri's updates (on), or end that; false when it cannot be. */
static bool surface_sub(Manager *mg, Peer *p, const char *uri, bool on)
{
    _cleanup_free_ char *why = NULL;

    return surface_subscribe_uri(mg, p, uri, on, &why) == 0;
}

static bool listen_has_uri(const Listen *l, const char *uri)
{
    for (size_t i = 0; i < l->n_uris; i++)
        if (streq(l->uris[i], uri))
            return true;
    return false;
}

/* params.notifications of a listen, checked: the object, or NULL when an error went out. */
static yajl_val listen_params(const ModernListens *ls, Peer *p, JsonrpcMsg *m)
{
    yajl_val want = json_get(m->params, "notifications"), uris;

    if (!YAJL_IS_OBJECT(want)) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS,
             "params.notifications must be an object (toolsListChanged, "
             "promptsListChanged, resourcesListChanged, resourceSubscriptions)");
        return NULL;
    }
    uris = json_get(want, "resourceSubscriptions");
    if (uris && (!YAJL_IS_ARRAY(uris) || json_array_len(uris) > MODERN_MAX_LISTEN_URIS)) {
        _cleanup_free_ char *msg =
            xasprintf("params.notifications.resourceSubscriptions must be an array of at most %d "
                      "URIs",
                      MODERN_MAX_LISTEN_URIS);
        fail(p, m->id, JSONRPC_INVALID_PARAMS, msg);
        return NULL;
    }
    for (size_t i = 0; i < json_array_len(uris); i++)
        if (!YAJL_IS_STRING(json_array_at(uris, i))) {
            fail(p, m->id, JSONRPC_INVALID_PARAMS,
                 "params.notifications.resourceSubscriptions must hold URI strings");
            return NULL;
        }
    if (ls->n >= MODERN_MAX_LISTENS) {
        _cleanup_free_ char *msg = xasprintf("this connection already has %d subscriptions/listen "
                                             "streams, the most mcpd keeps: cancel one first",
                                             MODERN_MAX_LISTENS);
        fail(p, m->id, JSONRPC_INVALID_REQUEST, msg);
        return NULL;
    }
    return want;
}

void modern_listen_start(ModernListens *ls, Manager *mg, Peer *p, JsonrpcMsg *m, const char *id)
{
    yajl_val want = listen_params(ls, p, m), uris = json_get(want, "resourceSubscriptions");
    _cleanup_json_ yajl_val ack = NULL;
    yajl_val agreed, meta, list;
    StrBuf sb = STRBUF_INIT;
    Listen *l;
    bool on;

    if (!want)
        return;
    ack = json_object_new();
    agreed = json_object_new();
    json_object_set(ack, "notifications", agreed);
    l = xcalloc(1, sizeof(*l));
    l->id = xstrdup(id);
    l->tools = json_get_bool(want, "toolsListChanged", &on) == 0 && on;
    l->prompts = json_get_bool(want, "promptsListChanged", &on) == 0 && on;
    l->resources = json_get_bool(want, "resourcesListChanged", &on) == 0 && on;
    if (l->tools)
        json_object_set(agreed, "toolsListChanged", json_bool_new(true));
    if (l->prompts)
        json_object_set(agreed, "promptsListChanged", json_bool_new(true));
    if (l->resources)
        json_object_set(agreed, "resourcesListChanged", json_bool_new(true));
    list = json_array_new();
    for (size_t i = 0; i < json_array_len(uris); i++) {
        const char *uri = json_array_at(uris, i)->u.string;
        if (listen_has_uri(l, uri) || !surface_sub(mg, p, uri, true))
            continue; /* left out of the acknowledgement: not subscribable here */
        l->uris = xrealloc(l->uris, (l->n_uris + 1) * sizeof(*l->uris));
        l->uris[l->n_uris++] = xstrdup(uri);
        json_array_push(list, json_string_new(uri));
    }
    if (uris)
        json_object_set(agreed, "resourceSubscriptions", list);
    else
        json_free(list);
    l->next = ls->first;
    ls->first = l;
    ls->n++;
    meta = json_object_new();
    json_object_set(meta, MCP_META_SUBSCRIPTION_ID, json_copy(m->id));
    json_object_set(ack, "_meta", meta);
    jsonrpc_write_notification(&sb, "notifications/subscriptions/acknowledged", ack);
    send_line(p, &sb);
    strbuf_deinit(&sb);
}

bool modern_listen_has(const ModernListens *ls, const char *id)
{
    return listen_by_id(ls, id) != NULL;
}

bool modern_listen_end(ModernListens *ls, Manager *mg, Peer *p, const char *id)
{
    Listen *l = listen_by_id(ls, id);

    if (!l)
        return false;
    for (Listen **lp = &ls->first; *lp; lp = &(*lp)->next)
        if (*lp == l) {
            *lp = l->next;
            ls->n--;
            break;
        }
    for (size_t i = 0; i < l->n_uris; i++) {
        bool kept = false;
        for (Listen *o = ls->first; o && !kept; o = o->next)
            kept = listen_has_uri(o, l->uris[i]);
        if (!kept)
            surface_sub(mg, p, l->uris[i], false);
    }
    listen_free(l);
    return true;
}

bool modern_listen_notify(const ModernListens *ls, Peer *p, const AgentOut *o)
{
    const char *uri = json_get_string(o->params, "uri");
    bool tools = streq(o->method, "notifications/tools/list_changed");
    bool prompts = streq(o->method, "notifications/prompts/list_changed");
    bool resources = streq(o->method, "notifications/resources/list_changed");
    bool updated = streq(o->method, "notifications/resources/updated");
    StrBuf sb = STRBUF_INIT;

    if (!tools && !prompts && !resources && !updated)
        return false;
    /* Only through a listen, once per stream that asked for it, each with its id. */
    for (Listen *l = ls->first; l; l = l->next) {
        _cleanup_json_ yajl_val params =
            YAJL_IS_OBJECT(o->params) ? json_copy(o->params) : json_object_new();
        yajl_val meta = json_get_object(params, "_meta");
        if (!((tools && l->tools) || (prompts && l->prompts) || (resources && l->resources) ||
              (updated && uri && listen_has_uri(l, uri))))
            continue;
        if (!meta) {
            meta = json_object_new();
            json_object_set(params, "_meta", meta);
        }
        json_object_set(meta, MCP_META_SUBSCRIPTION_ID, json_parse(l->id, NULL));
        jsonrpc_write_notification(&sb, o->method, params);
        send_line(p, &sb);
    }
    strbuf_deinit(&sb);
    return true;
}

void modern_listen_close(const ModernListens *ls, Peer *p)
{
    _cleanup_json_ yajl_val done = json_object_new();
    StrBuf sb = STRBUF_INIT;

    /* The listen's response ends its stream: the agent hears that mcpd closed it on purpose. */
    json_object_set(done, "resultType", json_string_new("complete"));
    for (Listen *l = ls->first; l; l = l->next) {
        _cleanup_json_ yajl_val id = json_parse(l->id, NULL);
        jsonrpc_write_result(&sb, id, done);
        send_line(p, &sb);
    }
    strbuf_deinit(&sb);
}

void modern_listen_deinit(ModernListens *ls)
{
    while (ls->first) {
        Listen *l = ls->first;
        ls->first = l->next;
        listen_free(l);
    }
    ls->n = 0;
}
