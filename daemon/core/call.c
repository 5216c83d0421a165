// SPDX-License-Identifier: MIT
// call: agent requests routed to one upstream (tools/call, prompts/get, resources/read,
// completion/complete), from the agent's line to the upstream and back to that agent with its
// result and progress. What else an upstream sends toward agents is route.c's.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/mcp.h"
#include "common/jsonscan.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/config/tool-filter.h"
#include "daemon/core/agent.h"
#include "daemon/core/audit.h"
#include "daemon/core/call.h"
#include "daemon/core/elicit.h"
#include "daemon/core/mrtr.h"
#include "daemon/core/toolset.h"
#include "daemon/core/wsprofile.h"
#include "daemon/core/view.h"
#include "daemon/core/wssearch.h"
#include "daemon/sys/turn.h"

/*
 * An agent's request id whose JSON text is shorter than this is kept in its Call (every
 * integer, the usual short strings), so the hot path allocates nothing for it; a longer one is
 * allocated.
 */
#define CALL_ID_INLINE 32

/* The pieces of a tools/call body: "name":, the name, ,"arguments":, the arguments. */
#define CALL_BODY_PARTS 4

/*
 * The steps of a tools/call from the agent's line to the upstream's (call_start, call_new,
 * call_dispatch, call_send) and back (call_reply_ok) are one function to the compiler: each is a
 * step worth reading alone, but each call between them costs a prologue, an epilogue and the
 * arguments passed on, on every call (issue 21).
 */
#define CALL_STEP __attribute__((always_inline)) inline

/* The method of tools/call as call_start passes it: known by its address on the hot path. */
static const char call_method_tools[] = "tools/call";

/* A request from an agent routed to one upstream, from arrival to its one reply. */
typedef struct Call {
    uint64_t id;
    CallRegistry *reg;
    const char *method; /* static: tools/call, prompts/get, resources/read, completion/complete */
    bool tool;          /* tools/call: every failure becomes a tool result (DESIGN section 3) */
    uint64_t peer_id;
    char *orig_id;        /* the agent's id as JSON text, so its type is kept (maybe id_buf) */
    char *progress_token; /* the agent's progress token as JSON text, or NULL */
    uint64_t server_id;
    char *meta; /* members of _meta passed on (not progressToken), or NULL */
    char *body; /* the other members of params: "name":...,"arguments":... (NULL: parts) */
    /* While call_new runs: the body in pieces it was given in, sent as they are when the call
     * goes at once; kept as body (one allocation) only when the call must wait or may be sent
     * again (MRTR). */
    const UpstreamPart *parts;
    size_t n_parts;
    uint64_t upstream_id; /* the Upstream it went to, and its request id there */
    uint64_t request_id;
    bool waiting;         /* for its server to connect */
    bool task;            /* tools/call with params.task: its result may be a CreateTaskResult */
    bool progressed;      /* the server reported progress on it */
    uint64_t memo_key;    /* its tool's (or method's) key in the server's ProgressMemo */
    uint64_t started_ms;  /* turn_now_ms() when it was last sent */
    uint64_t arrived_ms;  /* turn_now_ms() when the agent's request came (audit.c) */
    AuditOutcome outcome; /* how it ended, for its audit entry (cancelled until it ends) */
    int64_t code;         /* the code of the error it ended with */
    char *audit_args;     /* its arguments for the audit entry (auditArguments), or NULL */
    struct event *ev_wait;
    ListNode in_agent;    /* in its Agent's calls (none once the agent is gone) */
    ListNode in_server;   /* in its Server's calls (none once the server is gone) */
    unsigned mrtr_rounds; /* input_required rounds so far (mrtr.c) */
    char *body_base;      /* body before the first round's inputResponses, or NULL */
    char id_buf[CALL_ID_INLINE];
} Call;

/*
 * Freed Calls kept for the next ones: enough for a hundred agents with a call each in flight
 * (the load mcpd is built for), about 40 KiB at most when a burst is over.
 */
#define CALL_POOL_KEEP 256

/*
 * Everything that is not a tool result becomes one, as the seed's tool bridge does: the text
 * the model reads, and the original error for programs under _meta["mcpd/error"].
 */
static yajl_val error_result(int64_t code, const char *message, yajl_val data)
{
    yajl_val r = json_object_new(), content = json_array_new(), text = json_object_new();
    yajl_val meta = json_object_new(), err = json_object_new();
    _cleanup_free_ char *t = xasprintf("MCP error: %s", message);

    json_object_set(text, "type", json_string_new("text"));
    json_object_set(text, "text", json_string_new(t));
    json_array_push(content, text);
    json_object_set(r, "content", content);
    json_object_set(r, "isError", json_bool_new(true));
    json_object_set(err, "code", json_int_new(code));
    json_object_set(err, "message", json_string_new(message));
    if (data)
        json_object_set(err, "data", json_copy(data));
    json_object_set(meta, MCPD_META_ERROR, err);
    json_object_set(r, "_meta", meta);
    return r;
}

/* ---- calls ---- */

/* The call's server, or NULL once it is gone (its list forgot its calls): no lookup. */
static Server *call_server(const Call *c)
{
    return c->in_server.list ? container_of(c->in_server.list, Server, calls) : NULL;
}

/* The call's agent, or NULL once it is gone. */
static Agent *call_agent(const Call *c)
{
    return c->in_agent.list ? container_of(c->in_agent.list, Agent, calls) : NULL;
}

/* A Call in c's server's list, by the node the list holds. */
static Call *call_of_server_node(ListNode *n)
{
    return container_of(n, Call, in_server);
}

/* free(p) for what is usually NULL on the hot path: no call then. */
static void free_set(void *p)
{
    if (p)
        free(p);
}

static void call_free(Call *c)
{
    Agent *a = call_agent(c);
    Server *s = call_server(c);

    if (c->tool && audit_enabled(&c->reg->audit))
        audit_call_end(&c->reg->audit,
                       &(AuditCall){c->peer_id, s, c->memo_key, c->orig_id, c->meta, c->audit_args,
                                    turn_now_ms() - c->arrived_ms, c->outcome, c->code, NULL});
    idmap_remove(&c->reg->calls, c->id);
    list_unlink(&c->in_agent);
    list_unlink(&c->in_server);
    if (a && a->calls_in_flight)
        a->calls_in_flight--;
    if (s) {
        if (s->calls_in_flight)
            s->calls_in_flight--;
        s->last_used_ms = turn_now_ms();
    }
    if (c->ev_wait)
        event_free(c->ev_wait);
    if (c->orig_id != c->id_buf)
        free(c->orig_id);
    free_set(c->progress_token);
    free_set(c->meta);
    free_set(c->body);
    free_set(c->body_base);
    free_set(c->audit_args);
    pool_put(&c->reg->pool, c);
}

/* A result as a tree, written as text under the agent's id as text. */
static void reply_result_tree(CallRegistry *m, uint64_t peer_id, const char *id, yajl_val result)
{
    agent_reply_tree_text(m->peers, &m->scratch, peer_id, id, result);
}

static void call_fail(Call *c, int64_t code, const char *message, yajl_val data)
{
    c->outcome = audit_outcome_of_code(code);
    c->code = code;
    if (c->tool) {
        _cleanup_json_ yajl_val r = error_result(code, message, data);
        reply_result_tree(c->reg, c->peer_id, c->orig_id, r);
    } else {
        /* Other methods have no result form for failures: the agent gets the error itself. */
        agent_reply_error_text(c->reg->peers, &c->reg->scratch, c->peer_id, c->orig_id, (int)code,
                               message);
    }
    call_free(c);
}

/* A successful result: URIs are rewritten into the agent's view where they appear. */
static CALL_STEP void call_reply_ok(Call *c, Server *s, const UpstreamReply *r)
{
    Peer *p = peer_get(c->reg->peers, c->peer_id);
    _cleanup_json_ yajl_val tree = NULL;
    Server *only;

    if (!p)
        return; /* the agent has gone: nobody to tell */
    if (c->reg->workspaces->ext->passthrough(c->reg->workspaces->ext_ud, p, &only))
        s = NULL; /* the agent sees the server as itself: its URIs stay as they are */

    if (r->raw && (!s || (c->tool && !c->reg->workspaces->ext->raw_has_uris(r->raw, r->raw_len)))) {
        /* The hot path: nothing to rewrite, the bytes go through. */
        agent_reply_text_to(p, &c->reg->scratch, c->orig_id, r->raw, r->raw_len);
        return;
    }
    if (!r->raw)
        tree = json_copy(r->result);
    else if (json_parse_full(&tree, r->raw, r->raw_len, JSON_UTF8_REPAIR, NULL) != 0)
        tree = NULL;
    if (!tree) {
        agent_reply_text(c->reg->peers, &c->reg->scratch, c->peer_id, c->orig_id, r->raw,
                         r->raw_len);
        return;
    }
    if (s)
        c->reg->workspaces->ext->rewrite_result(ws_of_peer(c->reg->workspaces, p), s, tree);
    reply_result_tree(c->reg, c->peer_id, c->orig_id, tree);
}

static CALL_STEP void call_dispatch(Call *c, Server *s);

/* The answers to a server's input requests are in (mrtr.c): the call goes again with them. */
static void call_mrtr_retry(void *owner, uint64_t call_id, const char *extra, int64_t code,
                            const char *message)
{
    CallRegistry *cr = owner;
    Call *c = idmap_get(&cr->calls, call_id);
    Server *s = c ? call_server(c) : NULL;

    if (!c)
        return; /* cancelled or its agent left meanwhile */
    if (!extra || !s)
        return call_fail(c, code, message ? message : "the server went away", NULL);
    if (!c->body_base)
        c->body_base = c->body;
    else
        free(c->body);
    c->body =
        c->body_base && *c->body_base ? xasprintf("%s,%s", c->body_base, extra) : xstrdup(extra);
    call_dispatch(c, s);
}

/* A modern server's input_required result: true when mrtr.c took the call over (or failed it). */
static bool call_mrtr(Call *c, Server *s, const UpstreamReply *r)
{
    MrtrEnv env = {c->reg->base, c->reg->peers, c->reg->agents, c->reg->workspaces,
                   &c->reg->next_request_id};
    _cleanup_free_ char *why = NULL;
    const Agent *a = agent_get(c->reg->agents, c->peer_id);
    MrtrOutcome o;

    if (a && a->era == AGENT_ERA_MODERN)
        return false; /* it takes input_required itself (methods-modern.c wraps the state) */
    o = mrtr_begin(&env, c->reg, s, c->id, c->peer_id, &c->mrtr_rounds, r, call_mrtr_retry, &why);
    if (o == MRTR_COMPLETE)
        return false;
    c->request_id = 0; /* no upstream request until the retry: a cancel just ends it */
    if (o == MRTR_FAILED)
        call_fail(c, JSONRPC_METHOD_NOT_FOUND, why, NULL);
    return true;
}

/* A tool call ended: its tool's figures (toolstats.h), a few additions, nothing allocated. */
static void call_count(Call *c, Server *s, bool error)
{
    if (s && c->tool)
        toolstats_note(&s->tool_stats, c->memo_key, turn_now_ms() - c->started_ms, error);
}

/* What a call's end says of its tool (progress-memo.c): only a result may say it is quick. */
static void call_note(Call *c, Server *s, bool long_running, bool result)
{
    call_count(c, s, !result);
    if (s && !c->task)
        progress_memo_note(&s->progress, c->memo_key, turn_now_ms() - c->started_ms,
                           long_running || c->progressed, result);
}

static void on_call_reply(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Call *c = ctx;
    Server *s = call_server(c);
    const char *name = s ? s->cfg->name : u->name;

    /* The messages are built in their own branches: the hot path (UPSTREAM_OK) frees nothing. */
    switch (r->outcome) {
    case UPSTREAM_OK:
        /* Only a 2026-07-28 server asks for input in a result (resultType input_required). */
        if (s && upstream_is_modern(u) && call_mrtr(c, s, r))
            return;
        if (c->task && s &&
            tasks_created(
                &c->reg->tasks,
                &(TaskOrigin){s, u->id, c->peer_id, c->orig_id, c->progress_token, c->request_id},
                r->raw, r->raw_len, r->result)) {
            c->outcome = AUDIT_TASK;
            call_free(c);
            return;
        }
        c->outcome = audit_outcome_of_result(&c->reg->audit, r->raw, r->raw_len);
        call_note(c, s, false, true);
        call_reply_ok(c, s, r);
        call_free(c);
        return;
    case UPSTREAM_ERROR:
        call_note(c, s, false, false);
        if (!c->tool) {
            /* The upstream's own error, unchanged: its code means something to the agent. */
            call_fail(c, r->code, r->message, r->data);
            return;
        }
        {
            _cleanup_free_ char *msg =
                r->code == MCP_ERROR_URL_ELICITATION_REQUIRED
                    ? elicit_url_required_text(c->reg->agents, c->peer_id, s, r)
                    : xasprintf("MCP error %" PRId64 ": %s", r->code, r->message);
            call_fail(c, r->code, msg, r->data);
        }
        return;
    case UPSTREAM_TIMEOUT:
        call_note(c, s, true, false);
        call_fail(c, MCP_ERROR_REQUEST_TIMEOUT, r->message, NULL);
        return;
    case UPSTREAM_CLOSED: {
        call_count(c, s, true);
        _cleanup_free_ char *msg =
            xasprintf("MCP server %s closed the connection during the call: %s", name, r->message);
        call_fail(c, MCP_ERROR_CONNECTION_CLOSED, msg, NULL);
        return;
    }
    case UPSTREAM_CANCELLED:
        /* An abort stays an abort: the agent gets no response. */
        call_free(c);
        return;
    }
}

/* The body as one string, kept: the call is sent later (it waits) or again (MRTR rounds). */
static void call_keep_body(Call *c)
{
    StrBuf sb = STRBUF_INIT;

    if (c->body || !c->parts)
        return;
    for (size_t i = 0; i < c->n_parts; i++)
        strbuf_append(&sb, c->parts[i].p, c->parts[i].n);
    c->body = strbuf_detach(&sb, NULL);
    c->parts = NULL;
    c->n_parts = 0;
}

static CALL_STEP void call_send(Call *c, Server *s)
{
    UpstreamPart whole;
    const UpstreamPart *parts;
    size_t n_parts;
    int r;

    c->waiting = false;
    c->upstream_id = s->up->id;
    s->calls_total++;
    if (upstream_is_modern(s->up)) {
        /* Only a modern session reads the level; its input_required rounds resend the body. */
        upstream_next_log_level(s->up, mrtr_log_level(c->reg->agents, c->peer_id));
        call_keep_body(c);
        c->body = tasks_plain_body(c->body); /* 2026-07-28 has no params.task (tasks.c) */
    }
    /* The caller's parts are sent now or never: c does not keep them. */
    parts = c->parts;
    n_parts = c->n_parts;
    c->parts = NULL;
    c->n_parts = 0;
    if (c->body || !parts) {
        whole = (UpstreamPart){c->body ? c->body : "", c->body ? strlen(c->body) : 0};
        parts = &whole;
        n_parts = 1;
    }
    /* Asked of tools that may run long (progress-memo.c); a task's, only under an agent's token */
    bool ask = c->progress_token || progress_memo_ask(&s->progress, c->memo_key);
    c->started_ms = turn_now_ms();
    r = upstream_request_parts(s->up, c->method, c->meta, parts, n_parts, s->cfg->call_timeout_ms,
                               (ask ? UPSTREAM_PROGRESS : 0u) | UPSTREAM_RAW, on_call_reply, c,
                               &c->request_id);
    if (r < 0) {
        _cleanup_free_ char *msg =
            xasprintf("MCP server %s: cannot send the call: %s", s->cfg->name, strerror(-r));
        c->request_id = 0;
        call_fail(c, MCP_ERROR_CONNECTION_CLOSED, msg, NULL);
        return;
    }
}

static void on_call_wait_timeout(evutil_socket_t fd, short what, void *arg)
{
    Call *c = arg;
    Server *s = call_server(c);
    _cleanup_free_ char *msg =
        xasprintf("MCP server %s did not connect in time%s%s", s ? s->cfg->name : "?",
                  s && s->last_error ? ": " : "", s && s->last_error ? s->last_error : "");

    (void)fd, (void)what;
    call_fail(c, MCP_ERROR_REQUEST_TIMEOUT, msg, NULL);
}

/* Route a call by the server's state: run it, wait for the connection, or fail it. */
static CALL_STEP void call_dispatch(Call *c, Server *s)
{
    if (s->state == SERVER_CONNECTED && s->up) {
        call_send(c, s);
        return;
    }
    if (!c->waiting) /* an idle server starts for a call; one that failed meanwhile does not */
        server_wake(s);
    if (s->state == SERVER_CONNECTING || s->state == SERVER_BACKOFF) {
        /* A deferred tool: waitForConnection, bounded by the server's own timeout. */
        struct timeval tv;
        call_keep_body(c);
        c->waiting = true;
        /* Armed on every wait: a call may wait again (an input round's retry while the server
         * reconnects), and each wait has its own bound. */
        if (!c->ev_wait)
            c->ev_wait = evtimer_new(c->reg->base, on_call_wait_timeout, c);
        tv_ms(&tv, s->cfg->timeout_ms > 0 ? s->cfg->timeout_ms : CONFIG_DEFAULT_TIMEOUT_MS);
        evtimer_add(c->ev_wait, &tv);
        return;
    }
    _cleanup_free_ char *msg = xasprintf("MCP server not connected: %s (%s%s%s)", s->cfg->name,
                                         server_state_name(s->state), s->last_error ? ": " : "",
                                         s->last_error ? s->last_error : "");
    call_fail(c, MCPD_ERROR_UNAVAILABLE, msg, NULL);
}

/*
 * The ids of the calls in list (a server's or an agent's), collected first: what is done to
 * each may free it, or others. off: where the list's node is in a Call.
 */
static uint64_t *call_ids(const List *list, size_t off, size_t *np)
{
    uint64_t *ids = xcalloc(list->n ? list->n : 1, sizeof(*ids));
    size_t n = 0;

    for (ListNode *node = list->first; node && n < list->n; node = node->next)
        ids[n++] = ((const Call *)(const void *)((const char *)node - off))->id;
    *np = n;
    return ids;
}

void calls_server_settled(CallRegistry *cr, Server *s)
{
    size_t n;
    _cleanup_free_ uint64_t *ids = NULL;

    if (!s->calls.n || s->state == SERVER_CONNECTING || s->state == SERVER_BACKOFF)
        return;
    ids = call_ids(&s->calls, offsetof(Call, in_server), &n);
    for (size_t i = 0; i < n; i++) {
        Call *c = idmap_get(&cr->calls, ids[i]);
        if (!c || call_server(c) != s || !c->waiting)
            continue;
        event_del(c->ev_wait);
        call_dispatch(c, s);
    }
}

/* Keep the agent's id (JSON text) in c: in the call itself when it is short. */
static void call_set_id(Call *c, const char *id, size_t n)
{
    if (n < sizeof(c->id_buf)) {
        memcpy(c->id_buf, id, n);
        c->id_buf[n] = '\0';
        c->orig_id = c->id_buf;
    } else
        c->orig_id = xstrndup(id, n);
}

/*
 * Start a call of method on server s for agent a (of peer p). id is the agent's id as JSON
 * text (copied); meta and token are taken (may be NULL); the body is either body (taken) or
 * n_parts pieces (borrowed: copied only if the call cannot go at once).
 */
/* The agent's call whose request id is the JSON text id: a walk of its own calls only. */
static Call *agent_call_of_id(const Agent *a, const char *id)
{
    for (ListNode *n = a->calls.first; n; n = n->next) {
        Call *c = container_of(n, Call, in_agent);
        if (streq(c->orig_id, id))
            return c;
    }
    return NULL;
}

/* A call not started: its id is in flight already, or the agent is at its limit (too_many). */
static void call_refuse(CallRegistry *m, Peer *p, Call *c, bool too_many)
{
    _cleanup_free_ char *msg =
        too_many
            ? xasprintf(
                  "too many calls in flight: %d is the limit per agent; wait for answers first",
                  AGENT_MAX_CALLS_IN_FLIGHT)
            : xasprintf("request id %.64s is already in flight from this agent: an id may not be "
                        "reused until its request is answered",
                        c->orig_id);

    agent_reply_error_text(m->peers, &m->scratch, p->id, c->orig_id,
                           too_many ? MCPD_ERROR_TOO_MANY_CALLS : JSONRPC_INVALID_REQUEST, msg);
    if (c->orig_id != c->id_buf)
        free(c->orig_id);
    pool_put(&m->pool, c);
}

static CALL_STEP void call_new(CallRegistry *m, Peer *p, Agent *a, Server *s, const char *method,
                               JsonSpan id, char *body, const UpstreamPart *parts, size_t n_parts,
                               char *meta, char *token, uint64_t memo_key)
{
    Call *c = pool_get(&m->pool);

    c->reg = m;
    call_set_id(c, id.p, id.n);
    /* Both would run and both answers carry the one id: the agent could not tell them apart,
     * and a cancel would stop either. */
    bool reused = agent_call_of_id(a, c->orig_id) != NULL;
    if (reused || a->calls_in_flight >= AGENT_MAX_CALLS_IN_FLIGHT) {
        /* A reused id is said as such even at the limit: it is the request's own fault. */
        call_refuse(m, p, c, !reused);
        free(body);
        free(meta);
        free(token);
        return;
    }
    c->id = ++m->next_call_id;
    c->method = method;
    c->tool = method == call_method_tools || streq(method, call_method_tools);
    c->peer_id = p->id;
    c->progress_token = token;
    c->meta = meta;
    c->body = body;
    c->parts = body ? NULL : parts;
    c->n_parts = body ? 0 : n_parts;
    c->server_id = s->id;
    c->progressed = false;
    c->memo_key = memo_key;
    c->arrived_ms = turn_now_ms();
    c->outcome = AUDIT_CANCELLED;
    c->audit_args = c->tool && n_parts == CALL_BODY_PARTS
                        ? audit_copy_arguments(&m->audit, parts[3].p, parts[3].n)
                        : NULL;
    idmap_put(&m->calls, c->id, c);
    list_push(&a->calls, &c->in_agent);
    list_push(&s->calls, &c->in_server);
    a->calls_in_flight++;
    a->calls_total++;
    s->calls_in_flight++;
    call_dispatch(c, s); /* sends the parts, keeps them as body, or frees c: none stay */
}

static CALL_STEP void call_start(CallRegistry *m, Peer *p, Agent *a, JsonSpan id, const char *name,
                                 const char *args, size_t args_len, char *meta, char *token);

/*
 * mcpd's own tools of search mode (docs/search.md): mcpd_search_tools is answered here;
 * mcpd_call_tool starts the call it names, as if the agent had made it. Whether name was one.
 */
static bool call_own_tool(CallRegistry *m, Peer *p, Agent *a, JsonSpan id, const char *name,
                          const char *args, size_t args_len, char *meta, char *token)
{
    _cleanup_free_ char *id_text = NULL, *copy = NULL, *inner_args = NULL, *result = NULL;
    _cleanup_json_ yajl_val v = NULL;
    const char *inner;

    if (streq(name, WSSEARCH_TOOL_SEARCH)) {
        result = wssearch_call(ws_of_agent(m->workspaces, a), p, args, args_len);
    } else if (streq(name, WSSEARCH_TOOL_CALL)) {
        copy = args ? xstrndup(args, args_len) : NULL;
        v = copy ? json_parse(copy, NULL) : NULL;
        inner = json_get_string(v, "name");
        if (inner && !streq(inner, WSSEARCH_TOOL_CALL) && !streq(inner, WSSEARCH_TOOL_SEARCH) &&
            (!json_get(v, "arguments") || YAJL_IS_OBJECT(json_get(v, "arguments")))) {
            inner_args = json_get(v, "arguments") ? json_to_string(json_get(v, "arguments")) : NULL;
            call_start(m, p, a, id, inner, inner_args, inner_args ? strlen(inner_args) : 0, meta,
                       token);
            return true;
        }
        result = xstrdup("{\"content\":[{\"type\":\"text\",\"text\":\"mcpd_call_tool: name must "
                         "be the name of a tool mcpd_search_tools found, arguments an object\"}],"
                         "\"isError\":true}");
    } else {
        return false;
    }
    id_text = xstrndup(id.p, id.n);
    agent_reply_text(m->peers, &m->scratch, p->id, id_text, result, strlen(result));
    free(meta);
    free(token);
    return true;
}

/* A tools/call refused before any server had it (s: the tool's, or NULL): its audit entry. */
static void call_audit_refused(CallRegistry *m, Peer *p, const Server *s, const char *tool,
                               JsonSpan id, const char *meta, const char *args, size_t args_len,
                               int64_t code)
{
    if (!audit_enabled(&m->audit))
        return;
    _cleanup_free_ char *id_text = xstrndup(id.p, id.n);
    _cleanup_free_ char *shown = audit_copy_arguments(&m->audit, args, args_len);
    audit_call_end(&m->audit, &(AuditCall){.peer_id = p->id,
                                           .server = s,
                                           .tool_name = tool,
                                           .request_id = id_text,
                                           .meta = meta,
                                           .arguments = shown,
                                           .outcome = AUDIT_REFUSED,
                                           .code = code});
}

/*
 * Start a tools/call. id is the agent's id as JSON text; meta and token are taken (may be
 * NULL); args is the arguments object as JSON text (NULL: {}).
 */
static CALL_STEP void call_start(CallRegistry *m, Peer *p, Agent *a, JsonSpan id, const char *name,
                                 const char *args, size_t args_len, char *meta, char *token)
{
    const ViewTool *vt = NULL;
    StrBuf esc = STRBUF_INIT; /* only for a name with escapes: freed at the end */
    UpstreamPart parts[CALL_BODY_PARTS];
    const char *tool = NULL;
    size_t tool_len = 0;
    bool plain = false;
    Server *s = NULL;

    if (m->workspaces->ext->passthrough(m->workspaces->ext_ud, p, &s)) {
        /* The agent sees one server as itself: the name is the server's own. One it does not
         * list goes to it all the same, for its own answer as direct, unless a filter hides it. */
        if (s && (toolset_has(s->tools, name) || config_tool_allowed(s->cfg, name))) {
            tool = name;
            tool_len = strlen(name);
            plain = jsonrpc_text_plain(name, tool_len);
        }
    } else if ((vt = ws_view_find(ws_of_agent(m->workspaces, a), name)) &&
               (s = server_get(m->servers, vt->server_id))) {
        tool = vt->tool;
        tool_len = vt->tool_len;
        plain = vt->tool_plain;
    }
    if (!tool && call_own_tool(m, p, a, id, name, args, args_len, meta, token))
        return;
    if (vt && tool && !wsprofile_allows_tool(m->workspaces, p->id, s->cfg->name, tool)) {
        _cleanup_free_ char *msg =
            xasprintf("Tool %s is not in this agent's profile %s (mcpd.json \"profiles\")", name,
                      wsprofile_of(m->workspaces, p->id)->name);
        _cleanup_free_ char *id_text = xstrndup(id.p, id.n);
        _cleanup_free_ char *own = xstrndup(tool, tool_len);
        agent_reply_error_text(m->peers, &m->scratch, p->id, id_text, JSONRPC_INVALID_PARAMS, msg);
        call_audit_refused(m, p, s, own, id, meta, args, args_len, JSONRPC_INVALID_PARAMS);
        free(meta);
        free(token);
        return;
    }
    if (!tool) {
        _cleanup_free_ char *msg = xasprintf("Unknown tool: %s", name);
        _cleanup_free_ char *id_text = xstrndup(id.p, id.n);
        agent_reply_error_text(m->peers, &m->scratch, p->id, id_text, JSONRPC_INVALID_PARAMS, msg);
        call_audit_refused(m, p, NULL, name, id, meta, args, args_len, JSONRPC_INVALID_PARAMS);
        free(meta);
        free(token);
        return;
    }
    /* The usual name needs no escapes: it goes between quotes as it is, nothing is built. */
    if (plain) {
        parts[0] = (UpstreamPart){"\"name\":\"", 8};
        parts[1] = (UpstreamPart){tool, tool_len};
        parts[2] = (UpstreamPart){"\",\"arguments\":", 14};
    } else {
        json_write_string(&esc, tool, tool_len);
        parts[0] = (UpstreamPart){"\"name\":", 7};
        parts[1] = (UpstreamPart){esc.data, esc.len};
        parts[2] = (UpstreamPart){",\"arguments\":", 13};
    }
    parts[3] = args ? (UpstreamPart){args, args_len} : (UpstreamPart){"{}", 2};
    uint64_t key = progress_memo_key(tool, tool_len);
    toolstats_begin(&s->tool_stats, key, tool, tool_len);
    call_new(m, p, a, s, call_method_tools, id, NULL, parts, CALL_BODY_PARTS, meta, token, key);
    if (esc.data)
        strbuf_deinit(&esc);
}

/* params._meta split into its members as text (without progressToken) and the token. */
static void split_meta(yajl_val meta, char **meta_textp, char **tokenp)
{
    _cleanup_json_ yajl_val mc = NULL;
    _cleanup_json_ yajl_val tok = NULL;

    *meta_textp = *tokenp = NULL;
    if (!meta)
        return;
    /* _meta passes through; the progress token is mcpd's own upstream (rewritten). */
    mc = json_copy(meta);
    tok = json_object_take(mc, MCP_META_PROGRESS_TOKEN);
    if (tok)
        *tokenp = json_to_string(tok);
    if (mc->u.object.len)
        *meta_textp = json_members_text(mc);
}

void call_route(CallRegistry *m, Peer *p, yajl_val id, Server *s, const char *method,
                yajl_val params)
{
    _cleanup_json_ yajl_val body = params ? json_copy(params) : json_object_new();
    _cleanup_json_ yajl_val meta = json_object_take(body, "_meta");
    char *meta_text, *token;

    _cleanup_free_ char *id_text = json_to_string(id);

    split_meta(YAJL_IS_OBJECT(meta) ? meta : NULL, &meta_text, &token);
    call_new(m, p, agent_ensure(m->agents, p->id), s, method, (JsonSpan){id_text, strlen(id_text)},
             json_members_text(body), NULL, 0, meta_text, token,
             progress_memo_key(method, strlen(method)));
}

void call_tool(CallRegistry *m, Peer *p, yajl_val id, yajl_val params)
{
    const char *name = json_get_string(params, "name");
    yajl_val args = json_get(params, "arguments"), meta = json_get_object(params, "_meta");
    _cleanup_free_ char *args_text = NULL, *id_text = NULL;
    char *meta_text = NULL, *token = NULL;
    Agent *a = agent_ensure(m->agents, p->id);
    /* Tasks are not offered to a 2026-07-28 agent: its params.task is ignored, a plain call. */
    bool task = json_get_object(params, "task") && a->era != AGENT_ERA_MODERN;

    if (args && !YAJL_IS_OBJECT(args)) {
        agent_reply_error(m->peers, p->id, id, JSONRPC_INVALID_PARAMS,
                          "\"arguments\" must be an object");
        return;
    }
    split_meta(meta, &meta_text, &token);
    if (args)
        args_text = json_to_string(args);
    if (json_get(params, "inputResponses") || json_get(params, "requestState") || task) {
        /* A 2026-07-28 retry (MRTR): its answers and state follow the arguments upstream; so
         * does a task's request (tasks.c). */
        StrBuf sb = STRBUF_INIT;
        strbuf_puts(&sb, args_text ? args_text : "{}");
        for (size_t i = 0; i < params->u.object.len; i++)
            if (streq(params->u.object.keys[i], "inputResponses") ||
                streq(params->u.object.keys[i], "requestState") ||
                (task && streq(params->u.object.keys[i], "task"))) {
                strbuf_printf(&sb, ",\"%s\":", params->u.object.keys[i]);
                json_write(&sb, params->u.object.values[i]);
            }
        free(args_text);
        args_text = strbuf_detach(&sb, NULL);
    }
    id_text = json_to_string(id);
    uint64_t before = m->next_call_id;
    call_start(m, p, a, (JsonSpan){id_text, strlen(id_text)}, name, args_text,
               args_text ? strlen(args_text) : 0, meta_text, token);
    Call *c = task ? agent_call_of_id(a, id_text) : NULL;
    if (c && c->id > before)
        c->task = true; /* this one (not one refused for its id), sent or waiting */
}

void call_tool_fast(CallRegistry *m, Peer *p, Agent *a, JsonSpan id, JsonSpan name, JsonSpan args,
                    JsonSpan token)
{
    char buf[256];
    size_t n = name.n - 2;
    char *tool = n < sizeof(buf) ? buf : xmalloc(n + 1);

    memcpy(tool, name.p + 1, n);
    tool[n] = '\0';
    call_start(m, p, a, id, tool, args.p, args.n, NULL,
               token.p ? xstrndup(token.p, token.n) : NULL);
    if (tool != buf)
        free(tool);
}

/* The agent's call of that request id: a walk of its own calls only (AGENT_MAX_CALLS_IN_FLIGHT). */
static Call *call_find(CallRegistry *m, uint64_t peer_id, yajl_val orig_id)
{
    Agent *a = agent_get(m->agents, peer_id);
    _cleanup_free_ char *id = NULL;

    if (!a || !a->calls.n)
        return NULL;
    id = json_to_string(orig_id);
    return agent_call_of_id(a, id);
}

/* Stop a call without replying: cancelled upstream if it got there. */
static void call_abort(Call *c, const char *reason)
{
    Server *s = call_server(c);

    if (!c->waiting && s && s->up && s->up->id == c->upstream_id && c->request_id) {
        upstream_cancel(s->up, c->request_id, reason); /* frees c through on_call_reply */
        return;
    }
    call_free(c);
}

void call_cancel(CallRegistry *m, Peer *p, yajl_val request_id)
{
    Call *c = request_id ? call_find(m, p->id, request_id) : NULL;

    if (c)
        call_abort(c, "cancelled by the client");
    else if (!request_id || !tasks_cancel_wait(&m->tasks, p->id, request_id))
        log_debug("peer %llu cancelled a request mcpd does not know (already answered?)",
                  (unsigned long long)p->id);
}

/*
 * The agent whose call caused a request: over stdio nothing names the call, so it is the
 * agent with the most recent call in flight on that server (among those that can answer).
 */
Peer *call_causing_peer(CallRegistry *cr, Server *s, unsigned cap, Peer **anyp)
{
    Peer *best = NULL;
    uint64_t best_call = 0, any_call = 0;

    *anyp = NULL;
    for (ListNode *n = s->calls.first; n; n = n->next) {
        Call *c = call_of_server_node(n);
        Peer *p = c->request_id ? peer_get(cr->peers, c->peer_id) : NULL;
        Agent *a = p ? agent_get(cr->agents, c->peer_id) : NULL;
        if (!a)
            continue; /* not at the server now (waiting, or between rounds), or its agent left */
        if (c->id > any_call) {
            any_call = c->id;
            *anyp = p;
        }
        if ((a->caps & cap) && c->id > best_call) {
            best_call = c->id;
            best = p;
        }
    }
    return best;
}

void calls_server_removed(CallRegistry *m, Server *s)
{
    size_t n;
    _cleanup_free_ uint64_t *ids = call_ids(&s->calls, offsetof(Call, in_server), &n);

    for (size_t i = 0; i < n; i++) {
        Call *c = idmap_get(&m->calls, ids[i]);
        if (c && call_server(c) == s) {
            _cleanup_free_ char *msg = xasprintf("MCP server %s was disconnected", s->cfg->name);
            call_fail(c, MCPD_ERROR_UNAVAILABLE, msg, NULL);
        }
    }
}

void calls_peer_gone(CallRegistry *m, Peer *p)
{
    Agent *a = agent_get(m->agents, p->id);
    static const List none;
    size_t n = 0;
    /* Its own calls only, by id: aborting one may free it (and nothing else of the agent). */
    _cleanup_free_ uint64_t *ids = call_ids(a ? &a->calls : &none, offsetof(Call, in_agent), &n);

    for (size_t i = 0; i < n; i++) {
        Call *c = idmap_get(&m->calls, ids[i]);
        if (c)
            call_abort(c, "client disconnected");
    }
}

void call_registry_deinit(CallRegistry *m)
{
    size_t pos = 0;
    void *v;

    /* First: the calls freed below have no entries (the agents' state may be gone already). */
    audit_deinit(&m->audit);
    mrtr_deinit(m);
    tasks_deinit(&m->tasks);
    while (idmap_next(&m->calls, &pos, NULL, &v))
        call_free(v);
    idmap_deinit(&m->calls);
    strbuf_deinit(&m->scratch);
    pool_drain(&m->pool);
}

void call_registry_init(CallRegistry *cr, WorkspaceRegistry *workspaces)
{
    memset(cr, 0, sizeof(*cr));
    cr->base = workspaces->base;
    cr->peers = workspaces->peers;
    cr->agents = workspaces->agents;
    cr->servers = workspaces->servers;
    cr->workspaces = workspaces;
    cr->pool = (Pool)POOL_INIT(Call, CALL_POOL_KEEP);
    tasks_init(&cr->tasks, cr->peers, cr->agents, cr->servers, workspaces);
    audit_init(&cr->audit, workspaces);
}

/*
 * Progress goes to the one agent whose call it is, under that agent's own token: the upstream
 * request it names is the call's (its ctx), pending for exactly as long as the call lives.
 */
void call_progress(CallRegistry *cr, Server *s, yajl_val params)
{
    Call *c = upstream_progress_ctx(s->up, params);
    yajl_val out;

    if (c)
        c->progressed = true;
    if (!c && tasks_route_notification(&cr->tasks, s, "notifications/progress", params))
        return; /* a task's, after its tools/call was answered */
    if (!c || !c->progress_token)
        return; /* finished, cancelled, or the agent asked for no progress */
    out = json_copy(params);
    json_object_set(out, MCP_META_PROGRESS_TOKEN, json_parse(c->progress_token, NULL));
    agent_notify(cr->peers, c->peer_id, "notifications/progress", out);
    json_free(out);
}

char *call_latest_at(Server *s, uint64_t peer_id)
{
    Call *best = NULL;

    /* The agent's latest call still at that server is the one the server is serving. */
    for (ListNode *n = s->calls.first; n; n = n->next) {
        Call *c = call_of_server_node(n);
        if (c->request_id && c->peer_id == peer_id && (!best || c->id > best->id))
            best = c;
    }
    return best ? xstrdup(best->orig_id) : NULL;
}
