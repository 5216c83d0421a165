// SPDX-License-Identifier: MIT
// mrtr: multi round-trip requests (2026-07-28) toward 2025 agents: a modern server's
// input_required result becomes requests to the calling agent, and the call goes again with
// the answers (inputResponses) and the server's opaque requestState.

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/idmap.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/mcp.h"
#include "daemon/core/agent.h"
#include "daemon/core/elicit.h"
#include "daemon/core/mrtr.h"

/* One round: the input requests of one input_required result, put to one agent. */
typedef struct MrtrRound {
    MrtrEnv env;
    void *owner;
    uint64_t call_id, peer_id;
    MrtrRetryFn fn;
    yajl_val responses; /* {key: the agent's result}, as they come */
    char *state;        /* requestState as JSON text, passed back untouched; or NULL */
    size_t n_waiting;
    struct event *timer;
} MrtrRound;

/* One request put to the agent, by the id it sees (from the manager's request ids). */
typedef struct MrtrAsk {
    uint64_t id;
    MrtrRound *round;
    char *key;        /* the inputRequests key its answer goes under */
    bool url_as_form; /* a url-mode elicitation shown as a form: the answer is the action alone */
} MrtrAsk;

static IdMap asks; /* agent request id -> MrtrAsk, for every manager */

const char *mrtr_log_level(AgentRegistry *agents, uint64_t peer_id)
{
    Agent *p = agent_get(agents, peer_id);

    /* An agent that never sent logging/setLevel hears info and up (call.c's default). */
    return mcp_level_name(p && p->log_level >= 0 && p->log_level < MCP_N_LEVELS ? p->log_level
                                                                                : MCP_LEVEL_INFO);
}

/* Free a round and forget its asks; those still open are withdrawn from the agent. */
static void round_free(MrtrRound *rd, const char *withdraw)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&asks, &pos, NULL, &v)) {
        MrtrAsk *a = v;
        if (a->round != rd)
            continue;
        if (withdraw) {
            yajl_val params = json_object_new();
            json_object_set(params, "requestId", json_int_new((int64_t)a->id));
            json_object_set(params, "reason", json_string_new(withdraw));
            agent_notify(rd->env.peers, rd->peer_id, "notifications/cancelled", params);
            json_free(params);
        }
        idmap_remove(&asks, a->id);
        free(a->key);
        free(a);
    }
    if (rd->timer)
        event_free(rd->timer);
    json_free(rd->responses);
    free(rd->state);
    free(rd);
}

/* The round failed: the call hears it (by id: it may be gone). */
static void round_fail(MrtrRound *rd, int64_t code, const char *message, const char *withdraw)
{
    void *owner = rd->owner;
    uint64_t call_id = rd->call_id;
    MrtrRetryFn fn = rd->fn;

    round_free(rd, withdraw);
    fn(owner, call_id, NULL, code, message);
}

/* Every answer is in: the call goes again with them and the state. */
static void round_done(MrtrRound *rd)
{
    StrBuf sb = STRBUF_INIT;
    void *owner = rd->owner;
    uint64_t call_id = rd->call_id;
    MrtrRetryFn fn = rd->fn;

    strbuf_puts(&sb, "\"inputResponses\":");
    json_write(&sb, rd->responses);
    if (rd->state)
        strbuf_printf(&sb, ",\"requestState\":%s", rd->state);
    round_free(rd, NULL);
    fn(owner, call_id, strbuf_str(&sb), 0, NULL);
    strbuf_deinit(&sb);
}

static void on_round_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    round_fail(arg, MCP_ERROR_REQUEST_TIMEOUT,
               "the agent did not answer the server's input requests in time", "timeout");
}

unsigned mrtr_request_cap(const char *method, yajl_val params)
{
    if (streq(method, "elicitation/create"))
        return streq(json_get_string(params, "mode"), "url") ? AGENT_CAP_ELICITATION_URL
                                                             : AGENT_CAP_ELICITATION;
    if (streq(method, "sampling/createMessage"))
        return AGENT_CAP_SAMPLING;
    if (streq(method, "roots/list"))
        return AGENT_CAP_ROOTS;
    return 0;
}

const char *mrtr_cap_name(unsigned cap)
{
    switch (cap) {
    case AGENT_CAP_SAMPLING:
        return "sampling";
    case AGENT_CAP_ELICITATION:
        return "elicitation";
    case AGENT_CAP_ELICITATION_URL:
        return "elicitation.url";
    default:
        return "roots";
    }
}

/* roots/list for an agent that declared no roots: mcpd answers with the workspace root. */
static yajl_val roots_of(const MrtrEnv *env, Peer *p)
{
    Workspace *ws = ws_of_peer(env->workspaces, p);
    yajl_val r = json_object_new(), roots = json_array_new();

    if (ws && ws->root) {
        yajl_val root = json_object_new();
        _cleanup_free_ char *uri = xasprintf("file://%s", ws->root);
        json_object_set(root, "uri", json_string_new(uri));
        json_array_push(roots, root);
    }
    json_object_set(r, "roots", roots);
    return r;
}

/* Whether every input request can go to this agent; else *whyp says which cannot. */
static bool requests_ok(Server *s, unsigned caps, yajl_val reqs, char **whyp)
{
    if (!reqs || !reqs->u.object.len || reqs->u.object.len > MRTR_MAX_INPUT_REQUESTS) {
        *whyp = xasprintf("MCP server %s answered input_required with %s inputRequests (1 to %d "
                          "are served)",
                          s->cfg->name, reqs ? "too many or no" : "no", MRTR_MAX_INPUT_REQUESTS);
        return false;
    }
    for (size_t i = 0; i < reqs->u.object.len; i++) {
        yajl_val req = reqs->u.object.values[i];
        const char *method = json_get_string(req, "method");
        unsigned cap = method ? mrtr_request_cap(method, json_get_object(req, "params")) : 0;
        if (!cap) {
            *whyp = xasprintf("MCP server %s asked for input mcpd cannot forward: %s", s->cfg->name,
                              method ? method : "(an input request without a method)");
            return false;
        }
        /* url mode for an agent with forms only: shown as a form naming the link (round_ask). */
        if (cap == AGENT_CAP_ELICITATION_URL && (caps & AGENT_CAP_ELICITATION))
            continue;
        if (!(caps & cap) && cap != AGENT_CAP_ROOTS) {
            *whyp = xasprintf("MCP server %s needs %s from the agent to go on, and this agent "
                              "did not declare the %s capability",
                              s->cfg->name, method, mrtr_cap_name(cap));
            return false;
        }
    }
    return true;
}

/* Put each input request to the agent (roots/list without the capability: answered here). */
static void round_ask(MrtrRound *rd, Peer *p, unsigned caps, yajl_val reqs)
{
    for (size_t i = 0; i < reqs->u.object.len; i++) {
        yajl_val req = reqs->u.object.values[i], params = json_get_object(req, "params");
        const char *method = json_get_string(req, "method");
        _cleanup_json_ yajl_val as_form = NULL;
        MrtrAsk *a;

        if (streq(method, "roots/list") && !(caps & AGENT_CAP_ROOTS)) {
            json_object_set(rd->responses, reqs->u.object.keys[i], roots_of(&rd->env, p));
            continue;
        }
        a = xcalloc(1, sizeof(*a));
        a->id = ++*rd->env.next_request_id;
        a->round = rd;
        a->key = xstrdup(reqs->u.object.keys[i]);
        if (mrtr_request_cap(method, params) == AGENT_CAP_ELICITATION_URL &&
            !(caps & AGENT_CAP_ELICITATION_URL)) {
            as_form = elicit_url_as_form(params);
            a->url_as_form = true;
        }
        idmap_put(&asks, a->id, a);
        rd->n_waiting++;
        agent_write(p, &(AgentOut){.kind = AGENT_OUT_REQUEST,
                                   .request_id = a->id,
                                   .method = method,
                                   .params = as_form ? as_form : params});
    }
}

static yajl_val parse_result(const UpstreamReply *r, yajl_val *ownedp)
{
    *ownedp = NULL;
    if (!r->raw)
        return r->result;
    /* The hot path hands raw text: only a result that may ask for input is parsed. */
    if (!memmem(r->raw, r->raw_len, "input_required", strlen("input_required")))
        return NULL;
    if (json_parse_full(ownedp, r->raw, r->raw_len, 0, NULL) != 0)
        return NULL;
    return *ownedp;
}

MrtrOutcome mrtr_begin(const MrtrEnv *env, void *owner, Server *s, uint64_t call_id,
                       uint64_t peer_id, unsigned *roundsp, const UpstreamReply *r, MrtrRetryFn fn,
                       char **whyp)
{
    _cleanup_json_ yajl_val owned = NULL;
    yajl_val result = parse_result(r, &owned), reqs, state;
    Peer *p = peer_get(env->peers, peer_id);
    Agent *ag = agent_get(env->agents, peer_id);
    MrtrRound *rd;
    struct timeval tv;

    if (!streq(json_get_string(result, "resultType"), "input_required"))
        return MRTR_COMPLETE; /* absent means complete */
    reqs = json_get_object(result, "inputRequests");
    state = json_get(result, "requestState");
    if (!p || !ag) {
        *whyp = xstrdup("the agent is gone");
        return MRTR_FAILED;
    }
    if (++*roundsp > MRTR_MAX_ROUNDS) {
        *whyp = xasprintf("MCP server %s asked for input more than %d times in one call: given up",
                          s->cfg->name, MRTR_MAX_ROUNDS);
        return MRTR_FAILED;
    }
    if (!requests_ok(s, ag->caps, reqs, whyp))
        return MRTR_FAILED;
    rd = xcalloc(1, sizeof(*rd));
    rd->env = *env;
    rd->owner = owner;
    rd->call_id = call_id;
    rd->peer_id = peer_id;
    rd->fn = fn;
    rd->responses = json_object_new();
    rd->state = state && !YAJL_IS_NULL(state) ? json_to_string(state) : NULL;
    log_full(LOG_DEBUG, s->cfg->name, "mrtr", "input_required (round %u): asking the agent",
             *roundsp);
    round_ask(rd, p, ag->caps, reqs);
    if (!rd->n_waiting) {
        round_done(rd); /* roots only, answered here: the retry goes out at once */
        return MRTR_STARTED;
    }
    rd->timer = evtimer_new(env->base, on_round_timeout, rd);
    tv_ms(&tv,
          s->cfg->call_timeout_ms > 0 ? s->cfg->call_timeout_ms : CONFIG_DEFAULT_CALL_TIMEOUT_MS);
    evtimer_add(rd->timer, &tv);
    return MRTR_STARTED;
}

/* The agent's answer as the server gets it: a form put for a url-mode request gives url mode's
 * answer, the action alone (a form's content would tell the server nothing it asked for). */
static yajl_val answer_of(const MrtrAsk *a, yajl_val result)
{
    const char *action = json_get_string(result, "action");
    yajl_val r;

    if (!a->url_as_form)
        return YAJL_IS_OBJECT(result) ? json_copy(result) : json_object_new();
    r = json_object_new();
    json_object_set(r, "action", json_string_new(action ? action : "cancel"));
    return r;
}

bool mrtr_peer_response(void *owner, Peer *p, const JsonrpcMsg *msg)
{
    MrtrAsk *a = NULL;
    MrtrRound *rd;

    if (YAJL_IS_INTEGER(msg->id) && msg->id->u.number.i > 0)
        a = idmap_get(&asks, (uint64_t)msg->id->u.number.i);
    if (!a || a->round->owner != owner || a->round->peer_id != p->id)
        return false;
    rd = a->round;
    if (msg->kind != JSONRPC_RESPONSE) {
        yajl_val code = json_get(msg->error, "code");
        const char *text = json_get_string(msg->error, "message");
        _cleanup_free_ char *why =
            xasprintf("the agent refused the server's input request: %s", text ? text : "?");
        round_fail(rd, YAJL_IS_INTEGER(code) ? code->u.number.i : JSONRPC_INTERNAL_ERROR, why,
                   "another input request failed");
        return true;
    }
    json_object_set(rd->responses, a->key, answer_of(a, msg->result));
    idmap_remove(&asks, a->id);
    free(a->key);
    free(a);
    if (--rd->n_waiting == 0)
        round_done(rd);
    return true;
}

/* Every round of owner (of one peer, or all): freed without a retry. */
static void rounds_drop(void *owner, uint64_t peer_id, bool all)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&asks, &pos, NULL, &v)) {
        MrtrRound *rd = ((MrtrAsk *)v)->round;
        if (rd->owner == owner && (all || rd->peer_id == peer_id)) {
            round_free(rd, NULL);
            pos = 0; /* the table changed under the walk */
        }
    }
}

void mrtr_peer_gone(void *owner, Peer *p)
{
    rounds_drop(owner, p->id, false);
}

void mrtr_deinit(void *owner)
{
    rounds_drop(owner, 0, true);
    if (!asks.n)
        idmap_deinit(&asks);
}
