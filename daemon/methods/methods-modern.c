// SPDX-License-Identifier: MIT
// methods-modern: the 2026-07-28 era's adapter: a modern agent's requests checked (_meta, the
// era's methods) and handed to the one set of handlers, and what the core says to the agent
// written in the era's form (its AgentWriter: resultType, list ttl, error codes, a server's
// requests as input_required); its subscriptions/listen streams are modern-listen.c's.

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/idmap.h"
#include "common/json.h"
#include "common/list.h"
#include "common/mcp.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/logging.h"
#include "daemon/core/manager.h"
#include "daemon/core/route.h"
#include "daemon/core/surface.h"
#include "daemon/core/wsprofile.h"
#include "daemon/core/wssearch.h"
#include "daemon/methods/methods-capabilities.h"
#include "daemon/methods/methods-modern.h"
#include "daemon/methods/methods.h"
#include "daemon/methods/modern-listen.h"
#include "daemon/methods/modern-state.h"

/*
 * Requests one modern agent may have in flight. Calls are bounded on their own (per agent,
 * in call.c); this bounds what the writer remembers per connection (lists, reads, gets
 * waiting for a server to start), far above what an agent sends at once.
 */
#define MODERN_MAX_PENDING 1024
/*
 * A request mcpd has not answered after this long no longer counts toward that bound once the
 * bound is reached: a call's own timeout is at most 10 min (CONFIG_MAX_CALL_TIMEOUT_MS), so an
 * entry twice as old is one whose answer was lost, not one still running (or one a progress
 * stream keeps alive, which only loses its reshaping: its answer still goes out, complete).
 * Calls in MRTR have their own expiry (MODERN_RETRY_WAIT_MS) and are left alone.
 */
#define MODERN_PENDING_STALE_MS (2 * CONFIG_MAX_CALL_TIMEOUT_MS)
/*
 * Server requests (elicitation, sampling, roots) one call may have waiting for the agent.
 * A server asks one or two questions at a time; past this it is flooding, and the extra
 * requests get an error.
 */
#define MODERN_MAX_INPUT_REQUESTS 16
/*
 * ttlMs on list results: mcpd's lists change when servers come and go, which listeners hear
 * at once; a client that does not listen re-lists after this long.
 */
#define MODERN_LIST_TTL_MS 60000

/*
 * The indexes of a connection's requests in flight, each an IdMap from a hash of the text to
 * the first of the requests whose text has that hash (a chain through Pending.same): by the id
 * the handlers answer, by the id the agent knows it by now, by its requestState token.
 */
enum { BY_ID, BY_DOWN, BY_TOKEN, N_INDEX };

/* A request of the agent not yet answered. */
typedef struct Pending {
    ListNode node;                 /* in ModernAgent.pending (first: the node is the Pending) */
    struct Pending *same[N_INDEX]; /* the next with the same hash, per index */
    bool indexed[N_INDEX];
    char *id;      /* the id the handlers answer (JSON text): the agent's first request's */
    char *down_id; /* the id of the agent's latest retry, or NULL: id */
    char *method;
    int64_t since_ms; /* when the agent sent it */
    /* MRTR: a legacy server's requests during this call, carried to the agent as input. */
    char token[2 * MODERN_TOKEN_BYTES + 1]; /* the requestState, "" until needed */
    bool parked;                            /* an input_required went out: wait for a retry */
    yajl_val asks;                          /* key -> {method, params} not yet shown */
    yajl_val shown;                         /* key -> request id, shown in the last one */
    /* The final answer, come while parked (what it points to is owned here): sent after the
     * retry, as if it came then. */
    AgentOut held;
    bool has_held;
    struct event *expiry;
    struct ModernAgent *ma;
} Pending;

typedef struct ModernAgent {
    AgentWriter writer; /* its peer's (Peer.writer): what the core says to it goes through here */
    Manager *mg;
    uint64_t peer_id;
    List pending; /* of Pending; ma->pending.n counts them */
    IdMap index[N_INDEX];
    ModernListens listens; /* its subscriptions/listen streams (modern-listen.c) */
    WrapTable wrapped;     /* a modern server's requestStates, under tokens of mcpd's */
    char *cwd, *session;   /* what it attached with ("" for none) */
    bool told_session;     /* its session token went out (_meta of its first result) */
} ModernAgent;

static const char *const list_methods[] = {
    "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read",
};

/* Methods the 2026-07-28 revision removed: a modern agent gets -32601 for them. */
static const char *const removed_methods[] = {
    "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (streq(s, list[i]))
            return true;
    return false;
}

static void send_line(Peer *p, StrBuf *sb)
{
    peer_send(p, sb->data, sb->len);
    strbuf_reset(sb);
}

static void error_data(Peer *p, yajl_val id, int code, const char *message, yajl_val data)
{
    agent_write_plain(
        p, &(AgentOut){
               .kind = AGENT_OUT_ERROR, .id = id, .code = code, .message = message, .data = data});
}

static void reply(Peer *p, yajl_val id, yajl_val result)
{
    agent_reply(p->reg, p->id, id, result);
}

static void fail(Peer *p, yajl_val id, int code, const char *message)
{
    agent_reply_error(p->reg, p->id, id, code, message);
}

static void arm_ms(struct event *ev, int64_t ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

    evtimer_add(ev, &tv);
}

/* ---- requests in flight ---- */

static void held_clear(Pending *pd)
{
    json_free(pd->held.result);
    free((void *)pd->held.raw);
    free((void *)pd->held.message);
    json_free(pd->held.data);
    pd->held = (AgentOut){0};
    pd->has_held = false;
}

static void pending_free(Pending *pd)
{
    if (pd->expiry)
        event_free(pd->expiry);
    json_free(pd->asks);
    json_free(pd->shown);
    held_clear(pd);
    free(pd->id);
    free(pd->down_id);
    free(pd->method);
    free(pd);
}

/* The text pd is found by in one index. */
static const char *index_text(const Pending *pd, int which)
{
    switch (which) {
    case BY_ID:
        return pd->id;
    case BY_DOWN:
        return pd->down_id ? pd->down_id : pd->id;
    default:
        return pd->token;
    }
}

static uint64_t index_key(const char *text)
{
    uint64_t k = hash_fnv1a(text, strlen(text));

    return k == 0 || k == IDMAP_TOMBSTONE ? 1 : k; /* the two keys IdMap keeps for itself */
}

static void index_add(ModernAgent *ma, Pending *pd, int which)
{
    uint64_t k = index_key(index_text(pd, which));

    pd->same[which] = idmap_get(&ma->index[which], k);
    idmap_put(&ma->index[which], k, pd);
    pd->indexed[which] = true;
}

static void index_remove(ModernAgent *ma, Pending *pd, int which)
{
    uint64_t k = index_key(index_text(pd, which));
    Pending **pp = NULL, *head = idmap_get(&ma->index[which], k);

    if (!pd->indexed[which])
        return;
    pd->indexed[which] = false;
    if (head == pd) {
        if (pd->same[which])
            idmap_put(&ma->index[which], k, pd->same[which]);
        else
            idmap_remove(&ma->index[which], k);
        return;
    }
    for (pp = head ? &head->same[which] : NULL; pp && *pp; pp = &(*pp)->same[which])
        if (*pp == pd) {
            *pp = pd->same[which];
            return;
        }
}

/* The request whose text in one index is text, or NULL. */
static Pending *index_find(ModernAgent *ma, const char *text, int which)
{
    for (Pending *pd = idmap_get(&ma->index[which], index_key(text)); pd; pd = pd->same[which])
        if (streq(index_text(pd, which), text))
            return pd;
    return NULL;
}

static void pending_unlink(ModernAgent *ma, Pending *pd)
{
    for (int i = 0; i < N_INDEX; i++)
        index_remove(ma, pd, i);
    list_unlink(&pd->node);
}

static void pending_remove(ModernAgent *ma, Pending *pd)
{
    pending_unlink(ma, pd);
    pending_free(pd);
}

/* Forget requests never answered (MODERN_PENDING_STALE_MS), so they stop counting. */
static void pending_sweep(ModernAgent *ma)
{
    int64_t now = now_ms();

    for (ListNode *n = ma->pending.first, *next; n; n = next) {
        Pending *pd = (Pending *)n;
        next = n->next;
        if (pd->token[0] || pd->parked || now - pd->since_ms < MODERN_PENDING_STALE_MS)
            continue;
        log_info("peer %llu: %s %s unanswered after %d s: no longer counted",
                 (unsigned long long)ma->peer_id, pd->method, pd->id,
                 (int)(MODERN_PENDING_STALE_MS / 1000));
        pending_remove(ma, pd);
    }
}

/* ---- lifetime ---- */

static void modern_free(void *arg);
static void modern_write(AgentWriter *w, Peer *p, const AgentOut *o);

/* The modern state of p's agent, made (and made p's writer) on first use. */
static ModernAgent *agent_of(Manager *mg, Peer *p)
{
    Agent *a = agent_ensure(&mg->agents, p->id);
    ModernAgent *ma = a->modern;

    if (!ma) {
        ma = xcalloc(1, sizeof(*ma));
        ma->writer.write = modern_write;
        ma->mg = mg;
        ma->peer_id = p->id;
        a->modern = ma;
        a->modern_free = modern_free;
        p->writer = &ma->writer;
    }
    return ma;
}

/* The agent went (Agent.modern_free): its era's state goes with it. */
static void modern_free(void *arg)
{
    ModernAgent *ma = arg;
    Peer *p = peer_get(ma->mg->peers, ma->peer_id);

    if (p)
        p->writer = NULL;
    while (ma->pending.first) {
        Pending *pd = (Pending *)ma->pending.first;
        list_unlink(&pd->node);
        pending_free(pd);
    }
    for (int i = 0; i < N_INDEX; i++)
        idmap_deinit(&ma->index[i]);
    modern_listen_deinit(&ma->listens);
    wrap_table_clear(&ma->wrapped);
    free(ma->cwd);
    free(ma->session);
    free(ma);
}

/* ---- server/discover ---- */

static bool version_known(const char *v)
{
    if (!v)
        return false;
    if (streq(v, MCP_PROTOCOL_2026_07_28))
        return true;
    for (size_t i = 0; mcp_protocol_versions[i]; i++)
        if (streq(v, mcp_protocol_versions[i]))
            return true;
    return false;
}

/* -32022 with the versions a request may carry, and the one it did. */
static void unsupported_version(Peer *p, yajl_val id, yajl_val asked, bool discover)
{
    _cleanup_json_ yajl_val data = json_object_new();
    yajl_val list = json_array_new();
    _cleanup_free_ char *msg = NULL;

    json_array_push(list, json_string_new(MCP_PROTOCOL_2026_07_28));
    for (size_t i = 0; discover && mcp_protocol_versions[i]; i++)
        json_array_push(list, json_string_new(mcp_protocol_versions[i]));
    json_object_set(data, "supported", list);
    json_object_set(data, "requested", asked ? json_copy(asked) : json_null_new());
    msg = xasprintf("Unsupported protocol version: mcpd serves %s without initialize (and the "
                    "2025 revisions after initialize)",
                    MCP_PROTOCOL_2026_07_28);
    error_data(p, id, MCP_ERROR_UNSUPPORTED_PROTOCOL_VERSION, msg, data);
}

static void discover(Manager *mg, Peer *p, JsonrpcMsg *m)
{
    yajl_val meta = json_get_object(m->params, "_meta"),
             asked = json_get(meta, MCP_META_PROTOCOL_VERSION);
    const char *only = json_get_string(meta, MCPD_META_SERVER);
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val versions, rmeta;
    char *instructions;
    Server *s;
    bool trial;

    if (asked && !version_known(YAJL_IS_STRING(asked) ? asked->u.string : NULL)) {
        unsupported_version(p, m->id, asked, true);
        return;
    }
    /* A probe naming one server (mcpctl bridge --server) of a connection not placed yet is
     * answered with that server's capabilities and instructions, which the requests after it
     * will see; the connection itself stays unplaced. */
    trial = only && *only && !surface_passthrough(mg, p, &s) &&
            surface_passthrough_set(mg, p, only, &why) == 0;
    r = json_object_new();
    versions = json_array_new();
    json_array_push(versions, json_string_new(MCP_PROTOCOL_2026_07_28));
    for (size_t i = 0; mcp_protocol_versions[i]; i++)
        json_array_push(versions, json_string_new(mcp_protocol_versions[i]));
    json_object_set(r, "resultType", json_string_new("complete"));
    json_object_set(r, "supportedVersions", versions);
    json_object_set(r, "capabilities", methods_capabilities(mg, p));
    /* Tasks are an extension in 2026-07-28, which mcpd does not relay (docs/protocol.md). */
    json_free(json_object_take(json_get_object(r, "capabilities"), "tasks"));
    instructions = surface_instructions(mg, p);
    if (instructions)
        json_object_set(r, "instructions", json_string_new_take(instructions));
    if (trial)
        surface_passthrough_clear(mg, p);
    json_object_set(r, "ttlMs", json_int_new(MODERN_LIST_TTL_MS));
    json_object_set(r, "cacheScope", json_string_new("private"));
    rmeta = json_object_new();
    json_object_set(rmeta, MCP_META_SERVER_INFO, methods_server_info());
    json_object_set(r, "_meta", rmeta);
    reply(p, m->id, r);
}

/* ---- a request's _meta ---- */

static bool bad_meta(Peer *p, JsonrpcMsg *m, const char *field, const char *want)
{
    _cleanup_free_ char *msg = xasprintf("params._meta[\"%s\"] must be %s", field, want);

    fail(p, m->id, JSONRPC_INVALID_PARAMS, msg);
    return false;
}

/* The workspace from mcpd/cwd and mcpd/session: the first request's, or a change while idle. */
static bool attach(Manager *mg, Peer *p, ModernAgent *ma, JsonrpcMsg *m, const char *cwd,
                   const char *token, const char *only)
{
    const char *want_cwd = cwd ? cwd : "", *want_session = token ? token : "";
    _cleanup_free_ char *why = NULL;
    Agent *a = agent_ensure(&mg->agents, p->id);

    if (a->initialized) {
        if ((!cwd || streq(want_cwd, ma->cwd)) && (!token || streq(want_session, ma->session)))
            return true;
        if (a->calls_in_flight || ma->pending.n || ma->listens.n) {
            fail(p, m->id, JSONRPC_INVALID_PARAMS,
                 "params._meta names another workspace or session than this "
                 "connection's while it has requests or listens open: use another "
                 "connection, or wait for them to end");
            return false;
        }
        manager_peer_unplace(mg, p);
    }
    if (ws_attach(&mg->workspaces, p, *want_cwd ? want_cwd : NULL,
                  *want_session ? want_session : NULL, &why) != 0) {
        log_info("peer %llu (pid %d) refused: %s", (unsigned long long)p->id, (int)p->pid, why);
        fail(p, m->id, JSONRPC_INVALID_PARAMS, why);
        return false;
    }
    if (only && surface_passthrough_set(mg, p, only, &why) < 0) {
        manager_peer_unplace(mg, p); /* undone, so that a corrected request starts clean */
        fail(p, m->id, JSONRPC_INVALID_PARAMS, why);
        return false;
    }
    free(ma->cwd);
    free(ma->session);
    ma->told_session = false;
    ma->cwd = xstrdup(want_cwd);
    ma->session = xstrdup(want_session);
    a = agent_ensure(&mg->agents, p->id); /* made by the attach */
    free(a->cwd);
    a->cwd = *want_cwd ? xstrdup(want_cwd) : NULL;
    if (!a->protocol_version)
        a->protocol_version = xstrdup(MCP_PROTOCOL_2026_07_28);
    a->initialized = true;
    return true;
}

/*
 * The agent's profile (core/wsprofile.c) and tool mode (core/wssearch.c), taken at its first
 * request with its workspace and clientInfo: _meta["mcpd/profile"] and ["mcpd/toolMode"] (the
 * bridge's --profile and $MCPD_TOOL_MODE ride on each request until then).
 */
static bool take_profile(Manager *mg, Peer *p, JsonrpcMsg *m, yajl_val meta)
{
    yajl_val v = json_get(meta, MCPD_META_PROFILE), mode = json_get(meta, MCPD_META_TOOL_MODE);
    _cleanup_free_ char *why = NULL;

    if (v && !YAJL_IS_STRING(v))
        return bad_meta(p, m, MCPD_META_PROFILE, "a string: a profile of mcpd.json");
    if (mode && !wssearch_mode_known(YAJL_IS_STRING(mode) ? mode->u.string : NULL))
        return bad_meta(p, m, MCPD_META_TOOL_MODE, "\"search\" or \"all\"");
    if (wsprofile_chosen(&mg->workspaces, p->id))
        return true;
    if (wssearch_choose_profile(&mg->workspaces, p, v ? v->u.string : NULL, &why) != 0) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS, why);
        return false;
    }
    if (mode) /* asked for by the agent: over its profile's */
        wssearch_set_mode(&mg->workspaces, p, mode->u.string, false);
    return true;
}

/* Check and take what a modern request's _meta says; false when an error was sent. */
static bool take_meta(Manager *mg, Peer *p, ModernAgent *ma, JsonrpcMsg *m)
{
    yajl_val meta = json_get(m->params, "_meta"), v, caps, info;
    const char *cwd, *token, *name, *only;
    Agent *a;
    int level;

    if (meta && !YAJL_IS_OBJECT(meta)) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS, "params._meta must be an object");
        return false;
    }
    /* No version at all is unsupported too: the answer names the one to send. */
    v = json_get(meta, MCP_META_PROTOCOL_VERSION);
    if (!YAJL_IS_STRING(v) || !streq(v->u.string, MCP_PROTOCOL_2026_07_28)) {
        unsupported_version(p, m->id, v, false);
        return false;
    }
    caps = json_get(meta, MCP_META_CLIENT_CAPABILITIES);
    if (caps && !YAJL_IS_OBJECT(caps))
        return bad_meta(p, m, MCP_META_CLIENT_CAPABILITIES, "an object");
    info = json_get(meta, MCP_META_CLIENT_INFO);
    if (info && !YAJL_IS_OBJECT(info))
        return bad_meta(p, m, MCP_META_CLIENT_INFO, "an object");
    v = json_get(meta, MCP_META_LOG_LEVEL);
    level = v && YAJL_IS_STRING(v) ? mcp_level_from_name(v->u.string) : -1;
    if (v && level < 0)
        return bad_meta(p, m, MCP_META_LOG_LEVEL,
                        "a log level: debug, info, notice, warning, error, critical, alert or "
                        "emergency");
    v = json_get(meta, MCPD_META_CWD);
    cwd = json_get_string(meta, MCPD_META_CWD);
    if (v && !cwd)
        return bad_meta(p, m, MCPD_META_CWD, "a string (the agent's working directory)");
    v = json_get(meta, MCPD_META_SESSION);
    token = json_get_string(meta, MCPD_META_SESSION);
    if (v && !token)
        return bad_meta(p, m, MCPD_META_SESSION, "a string (MCPD_SESSION of the parent agent)");
    v = json_get(meta, MCPD_META_SERVER);
    only = json_get_string(meta, MCPD_META_SERVER);
    if (v && (!only || !*only))
        return bad_meta(p, m, MCPD_META_SERVER, "a server's name");
    if (!attach(mg, p, ma, m, cwd, token, only))
        return false;
    a = agent_ensure(&mg->agents, p->id);
    if (caps)
        a->caps = agent_caps_parse(caps);
    name = json_get_string(info, "name");
    if (name && !a->client_name) {
        const char *version = json_get_string(info, "version");
        a->client_name = xstrdup(name);
        a->client_version = version ? xstrdup(version) : NULL;
        if (!p->label)
            p->label = xstrdup(name);
    }
    if (level >= 0 && level != a->log_level)
        logging_set_level(&mg->calls, p, level);
    return take_profile(mg, p, m, meta);
}

/*
 * The request's envelope is this hop's: the era's keys and mcpd's own leave _meta before the
 * request goes on (an upstream gets its own envelope; the rest of _meta passes untouched).
 */
static void strip_envelope(yajl_val params)
{
    static const char *const keys[] = {
        MCP_META_PROTOCOL_VERSION,
        MCP_META_CLIENT_CAPABILITIES,
        MCP_META_CLIENT_INFO,
        MCP_META_LOG_LEVEL,
        MCPD_META_CWD,
        MCPD_META_SESSION,
        MCPD_META_SERVER,
        MCPD_META_PROFILE,
        MCPD_META_TOOL_MODE,
    };
    yajl_val meta = json_get_object(params, "_meta");

    for (size_t i = 0; meta && i < N_ELEMENTS(keys); i++)
        json_free(json_object_take(meta, keys[i]));
}

/* ---- MRTR toward a legacy server ---- */

static void abandon(ModernAgent *ma, Peer *p, Pending *pd, const char *why);

static void on_retry_expired(evutil_socket_t fd, short what, void *arg)
{
    Pending *pd = arg;
    ModernAgent *ma = pd->ma;
    Peer *p = peer_get(ma->mg->peers, ma->peer_id);

    (void)fd, (void)what;
    log_info("peer %llu: no retry for %s %s within %d s: the call is cancelled",
             (unsigned long long)ma->peer_id, pd->method, pd->id, MODERN_RETRY_WAIT_MS / 1000);
    if (p)
        abandon(ma, p, pd, "the agent did not come back with the answers in time");
    else
        pending_remove(ma, pd);
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

/*
 * The agent gave up on a request (cancel, or no retry in time): questions the server still
 * waits on are refused now, not at their timeout, and the call is cancelled upstream.
 */
static void abandon(ModernAgent *ma, Peer *p, Pending *pd, const char *why)
{
    yajl_val sets[] = {pd->shown, pd->asks};
    _cleanup_json_ yajl_val id = json_parse(pd->id, NULL);

    pending_unlink(ma, pd);
    for (size_t k = 0; k < N_ELEMENTS(sets); k++)
        for (size_t i = 0; sets[k] && i < sets[k]->u.object.len; i++) {
            _cleanup_json_ yajl_val rid = key_id(sets[k]->u.object.keys[i]);
            refuse_server_request(ma->mg, p, rid, why);
        }
    if (id)
        call_cancel(&ma->mg->calls, p, id);
    pending_free(pd);
}

/* The call's agent gets input_required with every question not yet shown. */
static void ask_agent(Peer *p, Pending *pd)
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
    if (!pd->indexed[BY_TOKEN])
        index_add(pd->ma, pd, BY_TOKEN);
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

/* A legacy server asked the agent something during one of its calls. */
static void server_request(ModernAgent *ma, Peer *p, const AgentOut *o)
{
    _cleanup_free_ char *cause = NULL, *key = NULL;
    _cleanup_json_ yajl_val rid = json_int_new((int64_t)o->request_id);
    yajl_val ask;
    Pending *pd;

    cause = route_cause_of_request(&ma->mg->calls, o->request_id);
    pd = cause ? index_find(ma, cause, BY_ID) : NULL;
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
        ask_agent(p, pd);
}

/* The server withdrew a request (or it timed out): the agent need not answer it. */
static void withdrawn(ModernAgent *ma, yajl_val rid)
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

static void held_out(ModernAgent *ma, Peer *p, Pending *pd);

/* The agent's retry with inputResponses: answers go upstream, the call goes on. */
static void resume(Manager *mg, Peer *p, ModernAgent *ma, Pending *pd, JsonrpcMsg *m,
                   const char *id)
{
    yajl_val answers = json_get(m->params, "inputResponses");

    if (!streq(m->method, pd->method) || !pd->parked) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS,
             !pd->parked ? "params.requestState is being retried already"
                         : "params.requestState belongs to another method");
        return;
    }
    if (pd->shown && pd->shown->u.object.len && !YAJL_IS_OBJECT(answers)) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS,
             "params.inputResponses must be an object with an answer to each of "
             "inputRequests");
        return;
    }
    for (size_t i = 0; pd->shown && i < pd->shown->u.object.len; i++) {
        yajl_val a = json_get(answers, pd->shown->u.object.keys[i]);
        if (!YAJL_IS_OBJECT(a)) {
            _cleanup_free_ char *msg =
                xasprintf("params.inputResponses[\"%s\"] must be the result object for that "
                          "input request",
                          pd->shown->u.object.keys[i]);
            fail(p, m->id, JSONRPC_INVALID_PARAMS, msg);
            return;
        }
    }
    for (size_t i = 0; pd->shown && i < pd->shown->u.object.len; i++) {
        JsonrpcMsg resp = {.kind = JSONRPC_RESPONSE};
        resp.id = pd->shown->u.object.values[i];
        resp.result = json_get(answers, pd->shown->u.object.keys[i]);
        route_peer_response(&mg->calls, p, &resp);
    }
    json_free(pd->shown);
    pd->shown = NULL;
    index_remove(ma, pd, BY_DOWN);
    free(pd->down_id);
    pd->down_id = xstrdup(id);
    index_add(ma, pd, BY_DOWN);
    pd->parked = false;
    event_del(pd->expiry);
    if (pd->has_held) {
        held_out(ma, p, pd);
    } else if (pd->asks && pd->asks->u.object.len) {
        ask_agent(p, pd);
    }
}

/* ---- dispatch ---- */

static void cancelled(Manager *mg, Peer *p, ModernAgent *ma, JsonrpcMsg *m)
{
    yajl_val rid = json_get(m->params, "requestId");
    _cleanup_free_ char *text = rid ? json_to_string(rid) : NULL;
    Pending *pd = text ? index_find(ma, text, BY_DOWN) : NULL;

    if (text && modern_listen_end(&ma->listens, mg, p, text))
        return;
    if (pd)
        abandon(ma, p, pd, "the agent cancelled the call");
}

static bool request(Manager *mg, Peer *p, JsonrpcMsg *m)
{
    ModernAgent *ma = agent_of(mg, p);
    _cleanup_free_ char *id = json_to_string(m->id);
    yajl_val rs;
    Pending *pd;

    if (in_list(m->method, removed_methods, N_ELEMENTS(removed_methods))) {
        _cleanup_free_ char *msg = xasprintf("Method not found: %s (not part of MCP %s, which "
                                             "this connection speaks)",
                                             m->method, MCP_PROTOCOL_2026_07_28);
        fail(p, m->id, JSONRPC_METHOD_NOT_FOUND, msg);
        return true;
    }
    if (m->params && !YAJL_IS_OBJECT(m->params)) {
        fail(p, m->id, JSONRPC_INVALID_PARAMS, "params must be an object");
        return true;
    }
    if (!take_meta(mg, p, ma, m))
        return true;
    if (index_find(ma, id, BY_DOWN) || modern_listen_has(&ma->listens, id)) {
        fail(p, m->id, JSONRPC_INVALID_REQUEST,
             "the id is in use by a request of this connection still in flight");
        return true;
    }
    strip_envelope(m->params);
    if (streq(m->method, "subscriptions/listen")) {
        modern_listen_start(&ma->listens, mg, p, m, id);
        return true;
    }
    rs = json_get(m->params, "requestState");
    if (rs) {
        yajl_val orig = YAJL_IS_STRING(rs) ? wrap_table_take(&ma->wrapped, rs->u.string) : NULL;
        pd = YAJL_IS_STRING(rs) && !orig ? index_find(ma, rs->u.string, BY_TOKEN) : NULL;
        if (pd) {
            resume(mg, p, ma, pd, m, id);
            return true;
        }
        if (!orig) {
            fail(p, m->id, JSONRPC_INVALID_PARAMS,
                 "params.requestState is unknown here: expired, already used, or from "
                 "another connection; send the request again without it");
            return true;
        }
        json_object_set(m->params, "requestState", orig); /* the server's own, for its retry */
    }
    if (ma->pending.n >= MODERN_MAX_PENDING)
        pending_sweep(ma);
    if (ma->pending.n >= MODERN_MAX_PENDING) {
        _cleanup_free_ char *msg = xasprintf("this connection has %d requests in flight, the most "
                                             "mcpd keeps: wait for some answers",
                                             MODERN_MAX_PENDING);
        fail(p, m->id, MCPD_ERROR_TOO_MANY_CALLS, msg);
        return true;
    }
    pd = xcalloc(1, sizeof(*pd));
    pd->id = xstrdup(id);
    pd->method = xstrdup(m->method);
    pd->since_ms = now_ms();
    pd->ma = ma;
    list_push(&ma->pending, &pd->node);
    index_add(ma, pd, BY_ID);
    index_add(ma, pd, BY_DOWN);
    return false;
}

bool methods_modern_dispatch(Manager *mg, Peer *p, JsonrpcMsg *m)
{
    Agent *a = agent_ensure(&mg->agents, p->id);

    if (a->era == AGENT_ERA_LEGACY)
        return false;
    if (m->kind == JSONRPC_REQUEST && streq(m->method, "server/discover")) {
        /* A probe: the era is fixed by what comes next (docs/modern.md). */
        if (m->params && !YAJL_IS_OBJECT(m->params))
            fail(p, m->id, JSONRPC_INVALID_PARAMS, "params must be an object");
        else
            discover(mg, p, m);
        return true;
    }
    if (a->era == AGENT_ERA_UNKNOWN) {
        if (m->kind != JSONRPC_REQUEST)
            return false;
        if (streq(m->method, "initialize") ||
            !json_get(json_get_object(m->params, "_meta"), MCP_META_PROTOCOL_VERSION)) {
            a->era = AGENT_ERA_LEGACY;
            return false;
        }
        a->era = AGENT_ERA_MODERN;
        agent_of(mg, p);
        log_debug("peer %llu speaks MCP %s", (unsigned long long)p->id, MCP_PROTOCOL_2026_07_28);
    }
    switch (m->kind) {
    case JSONRPC_RESPONSE:
    case JSONRPC_ERROR_RESPONSE:
        /* mcpd sends modern agents no requests: nothing to answer. */
        log_debug("peer %llu: a response from a %s agent dropped", (unsigned long long)p->id,
                  MCP_PROTOCOL_2026_07_28);
        return true;
    case JSONRPC_NOTIFICATION:
        if (!streq(m->method, "notifications/cancelled") || !YAJL_IS_OBJECT(m->params))
            return false;
        cancelled(mg, p, agent_of(mg, p), m);
        return true;
    case JSONRPC_REQUEST:
        return request(mg, p, m);
    }
    return false;
}

/* ---- what goes out: the era's writer ---- */

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
    return index_find(ma, text, BY_ID);
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
    held_clear(pd);
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

static void held_out(ModernAgent *ma, Peer *p, Pending *pd)
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
    if (pd && in_list(pd->method, list_methods, N_ELEMENTS(list_methods))) {
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
    if (pd && in_list(pd->method, list_methods, N_ELEMENTS(list_methods)))
        strbuf_printf(&sb, ",\"ttlMs\":%d,\"cacheScope\":\"private\"", MODERN_LIST_TTL_MS);
    strbuf_putc(&sb, '}');
    out->raw = sb.data;
    out->raw_len = sb.len;
    agent_write_plain(p, out);
    strbuf_deinit(&sb);
}

/*
 * A result in the era's form (out: o under the id the agent knows pd by): false when pd is
 * still unanswered (a server's result that does not parse went out as it is).
 */
static bool result_out(ModernAgent *ma, Peer *p, const Pending *pd, const AgentOut *o,
                       AgentOut *out)
{
    _cleanup_json_ yajl_val r = NULL;

    if (o->raw && o->raw_own && o->raw_len >= 2 && o->raw[0] == '{' &&
        o->raw[o->raw_len - 1] == '}') {
        own_result_out(ma, p, pd, out);
        return true;
    }
    if (!o->raw)
        r = o->result ? json_copy(o->result) : json_object_new();
    else if (json_parse_full(&r, o->raw, o->raw_len, JSON_UTF8_REPAIR, NULL) != 0) {
        /* A server's result that does not parse goes out as it is. */
        agent_write_plain(p, o);
        return false;
    }
    if (YAJL_IS_OBJECT(r) && !reshape(ma, p, r, pd, out))
        return true;
    out->raw = NULL;
    out->result = r;
    agent_write_plain(p, out);
    return true;
}

/* An error in the era's form (out: as for result_out). */
static void error_out(Peer *p, const Pending *pd, AgentOut *out)
{
    /* Resource not found is -32602 from 2026-07-28 on. */
    if (pd && streq(pd->method, "resources/read") && out->code == -32002)
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
    bool done = true;

    if (pd && pd->parked) {
        hold(pd, o);
        return;
    }
    down_id(&out, pd);
    if (o->kind == AGENT_OUT_RESULT)
        done = result_out(ma, p, pd, o, &out);
    else
        error_out(p, pd, &out);
    if (pd && done)
        pending_remove(ma, pd);
}

static void notification_out(ModernAgent *ma, Peer *p, const AgentOut *o)
{
    if (streq(o->method, "notifications/cancelled")) {
        /*
         * mcpd cancels only requests it sent an agent, and a modern agent was sent none: its
         * input requests went out as results. The question is void; the agent hears nothing.
         */
        withdrawn(ma, json_get(o->params, "requestId"));
        return;
    }
    if (!modern_listen_notify(&ma->listens, p, o))
        agent_write_plain(p, o);
}

/* The era's writer (AgentWriter.write): what the core says to a modern agent. */
static void modern_write(AgentWriter *w, Peer *p, const AgentOut *o)
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
        server_request(ma, p, o);
        return;
    }
}

void methods_modern_shutdown(MethodsCtx *d)
{
    for (Peer *p = d->manager->peers->first; p; p = p->next) {
        Agent *a = agent_get(&d->manager->agents, p->id);
        ModernAgent *ma = a ? a->modern : NULL;
        if (ma)
            modern_listen_close(&ma->listens, p);
    }
}
