// SPDX-License-Identifier: MIT
// tasks: MCP tasks relayed for agents (see tasks.h and docs/protocol.md, "Tasks").

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/core/tasks.h"

/* The prefix of mcpd's task ids: "mcpd-<seq>-<server>". */
#define TASK_ID_PREFIX "mcpd-"

/* One task a server created for an agent's tools/call. */
typedef struct Task {
    uint64_t seq;
    char *id;      /* mcpd's id, what the agent sees */
    char *up_task; /* the server's taskId */
    uint64_t server_id, upstream_id;
    uint64_t peer_id, session_id; /* the agent that called, and its session (the owner) */
    char *agent_token;            /* the agent's progress token (JSON text), or NULL */
    uint64_t request_id;          /* the tools/call's upstream id: its progress token there */
    yajl_val last;                /* the last Task object its server sent, with mcpd's id */
    uint64_t expires_ms;          /* forgotten then (its ttl, at most TASKS_TTL_MAX_MS) */
    char *lost;                   /* why its server no longer has it, or NULL */
    bool fetched;                 /* its result was fetched: kept to its ttl, the first to go */
} Task;

/* A tasks/get, tasks/result or tasks/cancel waiting at the task's server. */
typedef struct TaskWait {
    uint64_t id;
    TaskRegistry *tr;
    uint64_t peer_id, task_seq, server_id, upstream_id, request_id;
    char *orig_id;      /* the agent's id, JSON text */
    const char *method; /* static */
    char *task_id;      /* mcpd's id, for messages */
} TaskWait;

static const char m_get[] = "tasks/get", m_result[] = "tasks/result", m_cancel[] = "tasks/cancel";

void tasks_init(TaskRegistry *tr, PeerRegistry *peers, AgentRegistry *agents,
                ServerRegistry *servers, WorkspaceRegistry *workspaces)
{
    memset(tr, 0, sizeof(*tr));
    tr->peers = peers;
    tr->agents = agents;
    tr->servers = servers;
    tr->workspaces = workspaces;
}

static void task_free(TaskRegistry *tr, Task *t)
{
    idmap_remove(&tr->by_seq, t->seq);
    tr->n_tasks--;
    free(t->id);
    free(t->up_task);
    free(t->agent_token);
    free(t->lost);
    json_free(t->last);
    free(t);
}

static void early_free(TaskEarly *e)
{
    free(e->up_task);
    free(e->params);
    memset(e, 0, sizeof(*e));
}

static void wait_free(TaskWait *w)
{
    idmap_remove(&w->tr->waiting, w->id);
    free(w->orig_id);
    free(w->task_id);
    free(w);
}

void tasks_deinit(TaskRegistry *tr)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&tr->waiting, &pos, NULL, &v))
        wait_free(v);
    pos = 0;
    while (idmap_next(&tr->by_seq, &pos, NULL, &v))
        task_free(tr, v);
    idmap_deinit(&tr->waiting);
    idmap_deinit(&tr->by_seq);
    for (size_t i = 0; i < TASKS_EARLY_MAX; i++)
        early_free(&tr->early[i]);
}

bool tasks_server_supports(yajl_val caps)
{
    yajl_val req = json_get_object(json_get_object(caps, "tasks"), "requests");

    return json_get_object(json_get_object(req, "tools"), "call") != NULL;
}

yajl_val tasks_capability(void)
{
    yajl_val t = json_object_new(), req = json_object_new(), tools = json_object_new();

    json_object_set(t, "list", json_object_new());
    json_object_set(t, "cancel", json_object_new());
    json_object_set(tools, "call", json_object_new());
    json_object_set(req, "tools", tools);
    json_object_set(t, "requests", req);
    return t;
}

static bool status_terminal(const char *st)
{
    return st && (streq(st, "completed") || streq(st, "failed") || streq(st, "cancelled"));
}

bool tasks_server_busy(TaskRegistry *tr, const Server *s)
{
    size_t pos = 0;
    void *v;

    /* At most TASKS_MAX_TOTAL, walked only when the server's idle timeout is up. A fetched
     * task is done (its result came), whatever status its server last sent. */
    while (idmap_next(&tr->by_seq, &pos, NULL, &v)) {
        const Task *t = v;
        if (t->server_id == s->id && !t->lost && !t->fetched && s->up &&
            t->upstream_id == s->up->id && !status_terminal(json_get_string(t->last, "status")))
            return true;
    }
    return false;
}

/* A tree written under the agent's id (JSON text). */
static void reply_tree(TaskRegistry *tr, uint64_t peer_id, const char *id, yajl_val result)
{
    StrBuf scratch = STRBUF_INIT;

    agent_reply_tree_text(tr->peers, &scratch, peer_id, id, result);
    strbuf_deinit(&scratch);
}

static void reply_error(TaskRegistry *tr, uint64_t peer_id, const char *id, int code,
                        const char *message)
{
    StrBuf scratch = STRBUF_INIT;

    agent_reply_error_text(tr->peers, &scratch, peer_id, id, code, message);
    strbuf_deinit(&scratch);
}

/* _meta["io.modelcontextprotocol/related-task"] of obj, or NULL. */
static yajl_val related_of(yajl_val obj)
{
    return json_get_object(json_get_object(obj, "_meta"), MCP_META_RELATED_TASK);
}

/* Where a message names the task (taskId, related-task), it names mcpd's id. */
static void rewrite_ids(const Task *t, yajl_val obj)
{
    yajl_val rel = related_of(obj);

    if (json_get_string(obj, "taskId"))
        json_object_set(obj, "taskId", json_string_new(t->id));
    if (json_get_string(rel, "taskId"))
        json_object_set(rel, "taskId", json_string_new(t->id));
}

/*
 * Whether Task object task says something older than what t->last says: a terminal status is
 * final (a late "working" does not undo it), and a lastUpdatedAt before the kept one is stale
 * (compared as text when both are written alike: RFC 3339 of one length sorts as time).
 */
static bool task_stale(const Task *t, yajl_val task)
{
    const char *was = json_get_string(t->last, "lastUpdatedAt");
    const char *now = json_get_string(task, "lastUpdatedAt");

    if (status_terminal(json_get_string(t->last, "status")) &&
        !status_terminal(json_get_string(task, "status")))
        return true;
    return was && now && strlen(was) == strlen(now) && strcmp(now, was) < 0;
}

/* The Task object kept for tasks/list: the server's freshest word, under mcpd's id. */
static void task_note(Task *t, yajl_val task)
{
    yajl_val copy;

    if (t->last && task_stale(t, task))
        return;
    copy = json_copy(task);

    json_free(json_object_take(copy, "_meta"));
    json_object_set(copy, "taskId", json_string_new(t->id));
    json_free(t->last);
    t->last = copy;
}

/* Whether the agent of peer_id belongs to session_id. */
static bool agent_in_session(TaskRegistry *tr, uint64_t peer_id, uint64_t session_id)
{
    Agent *a = agent_get(tr->agents, peer_id);

    return a && a->session_id == session_id && peer_get(tr->peers, peer_id);
}

/* Whether agent id may be asked a request needing cap (0: any agent hears notifications). */
static bool agent_can(TaskRegistry *tr, uint64_t id, unsigned cap)
{
    Agent *a = agent_get(tr->agents, id);

    /* A 2026-07-28 agent is asked only inside a call in flight (input_required), which a task's
     * request, its call long answered, is not. */
    return !cap || (a && (a->caps & cap) && a->era != AGENT_ERA_MODERN);
}

/* Who hears of a task (and can answer cap): the agent that started it, else another of its
 * session. */
static uint64_t task_audience_cap(TaskRegistry *tr, const Task *t, uint64_t except, unsigned cap)
{
    size_t pos = 0;
    uint64_t id;
    void *v;

    if (t->peer_id != except && agent_in_session(tr, t->peer_id, t->session_id) &&
        agent_can(tr, t->peer_id, cap))
        return t->peer_id;
    while (idmap_next(&tr->agents->by_id, &pos, &id, &v))
        if (id != except && ((Agent *)v)->initialized && agent_in_session(tr, id, t->session_id) &&
            agent_can(tr, id, cap))
            return id;
    return 0;
}

static uint64_t task_audience(TaskRegistry *tr, const Task *t, uint64_t except)
{
    return task_audience_cap(tr, t, except, 0);
}

/* Forget every task whose ttl has passed (they are gone at their servers too). */
static void tasks_sweep(TaskRegistry *tr)
{
    uint64_t now = now_ms();
    size_t pos = 0;
    void *v;

    while (idmap_next(&tr->by_seq, &pos, NULL, &v))
        if (((Task *)v)->expires_ms <= now)
            task_free(tr, v);
}

/*
 * Forget the oldest task whose result was fetched, of that session (0: of any): a fetched task
 * stays to its ttl, as its server keeps it (tasks/get and tasks/list still show it), but never
 * holds a place a new task needs. False when there is none.
 */
static bool evict_fetched(TaskRegistry *tr, uint64_t session_id)
{
    Task *oldest = NULL;
    size_t pos = 0;
    void *v;

    while (idmap_next(&tr->by_seq, &pos, NULL, &v)) {
        Task *t = v;
        if (t->fetched && (!session_id || t->session_id == session_id) &&
            (!oldest || t->seq < oldest->seq))
            oldest = t;
    }
    if (oldest)
        task_free(tr, oldest);
    return oldest != NULL;
}

static size_t session_count(TaskRegistry *tr, uint64_t session_id)
{
    size_t pos = 0, n = 0;
    void *v;

    while (idmap_next(&tr->by_seq, &pos, NULL, &v))
        n += ((Task *)v)->session_id == session_id;
    return n;
}

static void on_cancel_answer(Upstream *u, void *ctx, const UpstreamReply *r)
{
    (void)ctx;
    if (r->outcome == UPSTREAM_ERROR || r->outcome == UPSTREAM_TIMEOUT)
        log_full(LOG_INFO, u->name, "tasks", "tasks/cancel of a task nobody fetches: %s",
                 r->message);
}

/* Ask the server to cancel a task nobody will fetch; its answer is only logged. */
static void cancel_upstream(Server *s, uint64_t upstream_id, const char *up_task)
{
    yajl_val params;

    if (!s || !s->up || s->up->id != upstream_id)
        return;
    params = json_object_new();
    json_object_set(params, "taskId", json_string_new(up_task));
    upstream_request(s->up, m_cancel, params, s->cfg->call_timeout_ms, 0, on_cancel_answer, NULL,
                     NULL);
}

/* The task server_id's session upstream_id calls up_task, or NULL. */
static Task *task_of_up(TaskRegistry *tr, uint64_t server_id, uint64_t upstream_id,
                        const char *up_task)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&tr->by_seq, &pos, NULL, &v)) {
        Task *t = v;
        if (t->server_id == server_id && t->upstream_id == upstream_id &&
            streq(t->up_task, up_task))
            return t;
    }
    return NULL;
}

/* Keep a status notification of server s for a task not recorded yet (TASKS_EARLY_*). */
static void early_put(TaskRegistry *tr, Server *s, const char *up_task, yajl_val params)
{
    _cleanup_free_ char *text = json_to_string(params);
    TaskEarly *slot = NULL;
    uint64_t now = now_ms();

    if (strlen(up_task) > TASKS_ID_MAX || strlen(text) > TASKS_EARLY_BYTES) {
        log_debug("%s: an oversized status of unknown task dropped", s->cfg->name);
        return;
    }
    for (size_t i = 0; i < TASKS_EARLY_MAX; i++) {
        TaskEarly *e = &tr->early[i];
        if (e->at_ms && e->server_id == s->id && e->upstream_id == s->up->id &&
            streq(e->up_task, up_task)) {
            slot = e; /* the newer status of the same task replaces it */
            break;
        }
        if (!slot || (slot->at_ms && (!e->at_ms || e->at_ms < slot->at_ms)))
            slot = e; /* a free slot, else the oldest */
    }
    early_free(slot);
    slot->server_id = s->id;
    slot->upstream_id = s->up->id;
    slot->at_ms = now;
    slot->up_task = xstrdup(up_task);
    slot->params = text;
    text = NULL;
}

/* The status kept for task t before it was recorded (parsed, to free), or NULL. */
static yajl_val early_take(TaskRegistry *tr, const Task *t)
{
    uint64_t now = now_ms();
    yajl_val params = NULL;

    for (size_t i = 0; i < TASKS_EARLY_MAX; i++) {
        TaskEarly *e = &tr->early[i];
        if (!e->at_ms)
            continue;
        if (e->at_ms + TASKS_EARLY_MS <= now) {
            early_free(e); /* its task never came */
            continue;
        }
        if (!params && e->server_id == t->server_id && e->upstream_id == t->upstream_id &&
            streq(e->up_task, t->up_task)) {
            params = json_parse(e->params, NULL);
            early_free(e);
        }
    }
    return params;
}

/* A status notification of task t (ids the server's): noted, and told to its session. */
static void status_apply(TaskRegistry *tr, Task *t, yajl_val params)
{
    yajl_val out = json_copy(params);
    uint64_t to;

    rewrite_ids(t, out);
    task_note(t, out);
    if ((to = task_audience(tr, t, 0)))
        agent_notify(tr->peers, to, "notifications/tasks/status", out);
    json_free(out);
}

bool tasks_created(TaskRegistry *tr, const TaskOrigin *o, const char *raw, size_t n,
                   yajl_val result)
{
    _cleanup_json_ yajl_val tree = result ? json_copy(result) : NULL;
    Agent *a = agent_get(tr->agents, o->peer_id);
    yajl_val task;
    const char *up_task;
    int64_t ttl = 0;
    Task *t;

    if (o->s->up && o->s->up->id == o->upstream_id && upstream_is_modern(o->s->up))
        return false; /* 2026-07-28: no task was asked for (tasks_plain_body) */
    if (!tree && (!raw || json_parse_full(&tree, raw, n, JSON_UTF8_REPAIR, NULL) != 0))
        return false;
    task = json_get_object(tree, "task");
    up_task = json_get_string(task, "taskId");
    if (!up_task || json_get(tree, "content"))
        return false; /* the server ran the call as a plain one */
    tasks_sweep(tr);
    t = task_of_up(tr, o->s->id, o->upstream_id, up_task);
    if (t && t->fetched) {
        /* The server gave the id of a task whose result was fetched to a new one: it has
         * forgotten the old task (as mcpd did, before fetched tasks were kept), so mcpd does. */
        task_free(tr, t);
        t = NULL;
    }
    if (t) {
        /* A server that gives one id to two tasks: a message naming it could be either's, and
         * a cancel would hit the task already recorded (maybe another session's), so this one
         * is refused and left alone at the server (its ttl ends it there). */
        _cleanup_free_ char *msg =
            xasprintf("MCP server %s gave task id \"%.64s\" to a new task while a task it "
                      "created earlier under that id is still recorded; mcpd refuses the new "
                      "one (messages naming the id could not be told apart): run the tool "
                      "without a task, or report it to the server's authors",
                      o->s->cfg->name, up_task);
        log_full(LOG_WARNING, o->s->cfg->name, "tasks", "duplicate task id \"%.64s\" refused",
                 up_task);
        reply_error(tr, o->peer_id, o->orig_id, JSONRPC_INTERNAL_ERROR, msg);
        return true;
    }
    if (!a) {
        cancel_upstream(o->s, o->upstream_id, up_task);
        return true; /* the agent has gone: nobody will fetch it */
    }
    size_t mine = session_count(tr, a->session_id);
    while (mine >= TASKS_MAX_PER_SESSION && evict_fetched(tr, a->session_id))
        mine--;
    while (tr->n_tasks >= TASKS_MAX_TOTAL && evict_fetched(tr, 0))
        mine = session_count(tr, a->session_id);
    if (strlen(up_task) > TASKS_ID_MAX || tr->n_tasks >= TASKS_MAX_TOTAL ||
        mine >= TASKS_MAX_PER_SESSION) {
        _cleanup_free_ char *msg =
            strlen(up_task) > TASKS_ID_MAX
                ? xasprintf("MCP server %s gave a task id of more than %d bytes; mcpd "
                            "cancelled the task: report it to the server's authors",
                            o->s->cfg->name, TASKS_ID_MAX)
            : mine >= TASKS_MAX_PER_SESSION
                ? xasprintf("too many tasks in this agent session: %d is the limit per "
                            "session; mcpd cancelled the new task at %s. Fetch the results "
                            "of finished tasks (tasks/result) or cancel those no longer "
                            "needed (tasks/cancel), then call again",
                            TASKS_MAX_PER_SESSION, o->s->cfg->name)
                : xasprintf("too many tasks in all: mcpd keeps at most %d tasks across "
                            "every agent session (this session has %zu); mcpd cancelled the "
                            "new task at %s. Fetch the results of finished tasks "
                            "(tasks/result) or cancel those no longer needed (tasks/cancel), "
                            "in this session or others, or end idle sessions, then call again",
                            TASKS_MAX_TOTAL, mine, o->s->cfg->name);
        cancel_upstream(o->s, o->upstream_id, up_task);
        reply_error(tr, o->peer_id, o->orig_id, MCPD_ERROR_TOO_MANY_CALLS, msg);
        return true;
    }
    t = xcalloc(1, sizeof(*t));
    t->seq = ++tr->next_seq;
    t->id = xasprintf(TASK_ID_PREFIX "%" PRIu64 "-%s", t->seq, o->s->cfg->name);
    t->up_task = xstrdup(up_task);
    t->server_id = o->s->id;
    t->upstream_id = o->upstream_id;
    t->peer_id = o->peer_id;
    t->session_id = a->session_id;
    t->agent_token = o->agent_token ? xstrdup(o->agent_token) : NULL;
    t->request_id = o->request_id;
    if (json_get_int(task, "ttl", &ttl) != 0 || ttl <= 0 || ttl > TASKS_TTL_MAX_MS)
        ttl = TASKS_TTL_MAX_MS;
    t->expires_ms = now_ms() + (uint64_t)ttl;
    idmap_put(&tr->by_seq, t->seq, t);
    tr->n_tasks++;
    task_note(t, task);
    rewrite_ids(t, task);
    rewrite_ids(t, tree);
    reply_tree(tr, o->peer_id, o->orig_id, tree);
    /* A status that came before this result: the agent hears it now, knowing the id. */
    _cleanup_json_ yajl_val early = early_take(tr, t);
    if (early)
        status_apply(tr, t, early);
    return true;
}

char *tasks_plain_body(char *body)
{
    _cleanup_free_ char *text = NULL;
    _cleanup_json_ yajl_val tree = NULL;

    if (!body || !strstr(body, "\"task\""))
        return body; /* the usual call: no look at it */
    text = xasprintf("{%s}", body);
    tree = json_parse(text, NULL);
    if (!YAJL_IS_OBJECT(tree) || !json_get(tree, "task"))
        return body; /* "task" is inside the arguments */
    json_free(json_object_take(tree, "task"));
    free(body);
    return json_members_text(tree);
}

/* The task of mcpd id text that agent a may touch, or NULL. */
static Task *task_find(TaskRegistry *tr, const Agent *a, const char *text)
{
    char *end;
    uint64_t seq;
    Task *t;

    if (strncmp(text, TASK_ID_PREFIX, strlen(TASK_ID_PREFIX)) != 0)
        return NULL;
    errno = 0;
    seq = strtoull(text + strlen(TASK_ID_PREFIX), &end, 10);
    if (errno || *end != '-' || !(t = idmap_get(&tr->by_seq, seq)) || !streq(t->id, text))
        return NULL;
    /* Another session's task is as unknown as one that never was: nothing tells them apart. */
    if (!a || t->session_id != a->session_id)
        return NULL;
    if (t->expires_ms <= now_ms()) {
        task_free(tr, t);
        return NULL;
    }
    return t;
}

static size_t waiting_of(TaskRegistry *tr, uint64_t peer_id)
{
    size_t pos = 0, n = 0;
    void *v;

    while (idmap_next(&tr->waiting, &pos, NULL, &v))
        n += ((TaskWait *)v)->peer_id == peer_id;
    return n;
}

static int cmp_seq(const void *x, const void *y)
{
    const Task *a = *(Task *const *)x, *b = *(Task *const *)y;

    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* tasks/list: the session's own tasks from mcpd's records, oldest first, in pages. */
static void tasks_list(TaskRegistry *tr, Peer *p, const Agent *a, yajl_val id, yajl_val params)
{
    const char *cursor = json_get_string(params, "cursor");
    uint64_t after = 0;
    _cleanup_free_ Task **all = NULL;
    size_t pos = 0, n = 0, shown = 0;
    yajl_val r, list;
    void *v;

    if (cursor) {
        char *end;
        errno = 0;
        after = strtoull(cursor, &end, 10);
        if (errno || !*cursor || *end) {
            _cleanup_free_ char *msg = xasprintf(
                "invalid cursor \"%.64s\": pass the nextCursor of mcpd's last tasks/list", cursor);
            agent_reply_error(tr->peers, p->id, id, JSONRPC_INVALID_PARAMS, msg);
            return;
        }
    }
    tasks_sweep(tr);
    all = xcalloc(tr->n_tasks ? tr->n_tasks : 1, sizeof(*all));
    while (idmap_next(&tr->by_seq, &pos, NULL, &v))
        if (((Task *)v)->session_id == a->session_id && ((Task *)v)->seq > after)
            all[n++] = v;
    qsort(all, n, sizeof(*all), cmp_seq);
    r = json_object_new();
    list = json_array_new();
    for (; shown < n && shown < TASKS_LIST_PAGE; shown++) {
        yajl_val o = json_copy(all[shown]->last);
        if (all[shown]->lost) {
            json_object_set(o, "status", json_string_new("failed"));
            json_object_set(o, "statusMessage", json_string_new(all[shown]->lost));
        }
        json_array_push(list, o);
    }
    json_object_set(r, "tasks", list);
    if (shown < n) {
        _cleanup_free_ char *next = xasprintf("%" PRIu64, all[shown - 1]->seq);
        json_object_set(r, "nextCursor", json_string_new(next));
    }
    agent_reply(tr->peers, p->id, id, r);
    json_free(r);
}

/* A task's result, like a call's (call_reply_ok): its URIs in the agent's view, unless the agent
 * sees the server as itself (passthrough). */
static void rewrite_uris(TaskRegistry *tr, uint64_t peer_id, Server *s, yajl_val result)
{
    const WorkspaceExt *ext = tr->workspaces ? tr->workspaces->ext : NULL;
    Peer *p = peer_get(tr->peers, peer_id);
    Server *only;

    if (!ext || !p || !s || ext->passthrough(tr->workspaces->ext_ud, p, &only))
        return;
    ext->rewrite_result(ws_of_peer(tr->workspaces, p), s, result);
}

static void on_wait_reply(Upstream *u, void *ctx, const UpstreamReply *r)
{
    TaskWait *w = ctx;
    TaskRegistry *tr = w->tr;
    Task *t = idmap_get(&tr->by_seq, w->task_seq);
    _cleanup_free_ char *msg = NULL;

    switch (r->outcome) {
    case UPSTREAM_OK: {
        _cleanup_json_ yajl_val res =
            YAJL_IS_OBJECT(r->result) ? json_copy(r->result) : json_object_new();
        if (t)
            rewrite_ids(t, res);
        if (w->method == m_result)
            rewrite_uris(tr, w->peer_id, server_get(tr->servers, w->server_id), res);
        if (t && w->method != m_result && json_get_string(res, "status"))
            task_note(t, res);
        reply_tree(tr, w->peer_id, w->orig_id, res);
        if (t && w->method == m_result)
            t->fetched = true; /* terminal: kept to its ttl, or until its place is needed */
        break;
    }
    case UPSTREAM_ERROR:
        msg = xasprintf("MCP server %s, %s of task %s: %s", u->name, w->method, w->task_id,
                        r->message);
        reply_error(tr, w->peer_id, w->orig_id, (int)r->code, msg);
        if (t && w->method == m_result)
            t->fetched = true; /* its outcome (a failed call's error) was said, as above */
        break;
    case UPSTREAM_TIMEOUT:
        msg = xasprintf("MCP server %s did not answer %s of task %s in time: %s; ask again",
                        u->name, w->method, w->task_id, r->message);
        reply_error(tr, w->peer_id, w->orig_id, MCP_ERROR_REQUEST_TIMEOUT, msg);
        break;
    case UPSTREAM_CLOSED:
        msg = xasprintf("MCP server %s closed the connection during %s of task %s: %s; the task "
                        "is lost with the server's session, run the tool again",
                        u->name, w->method, w->task_id, r->message);
        reply_error(tr, w->peer_id, w->orig_id, MCPD_ERROR_UNAVAILABLE, msg);
        if (t)
            task_free(tr, t);
        break;
    case UPSTREAM_CANCELLED:
        break; /* the agent left */
    }
    wait_free(w);
}

void tasks_request(TaskRegistry *tr, Peer *p, yajl_val id, const char *method, yajl_val params)
{
    Agent *a = agent_get(tr->agents, p->id);
    const char *task_id = json_get_string(params, "taskId");
    _cleanup_free_ char *id_text = json_to_string(id), *msg = NULL;
    Task *t;
    Server *s;
    TaskWait *w;
    int64_t timeout;
    int rc;

    if (!a)
        return;
    if (streq(method, "tasks/list"))
        return tasks_list(tr, p, a, id, params);
    if (!task_id) {
        agent_reply_error(tr->peers, p->id, id, JSONRPC_INVALID_PARAMS,
                          "params.taskId must be a string: a taskId from tools/call or tasks/list");
        return;
    }
    if (!(t = task_find(tr, a, task_id))) {
        msg = xasprintf("unknown task \"%.300s\": this session has no task of that id (a task is "
                        "forgotten once its ttl passed, its session ended, or its result was "
                        "fetched and a new task needed its place); tasks/list shows the "
                        "session's tasks",
                        task_id);
        agent_reply_error(tr->peers, p->id, id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    s = server_get(tr->servers, t->server_id);
    if (t->lost || !s || !s->up || s->up->id != t->upstream_id) {
        msg = xasprintf("task %s is lost: %s; run the tool again", t->id,
                        t->lost ? t->lost : "its server's session ended");
        agent_reply_error(tr->peers, p->id, id, MCPD_ERROR_UNAVAILABLE, msg);
        task_free(tr, t); /* said once: the agent knows */
        return;
    }
    if (waiting_of(tr, p->id) >= TASKS_MAX_WAITING_PER_AGENT) {
        msg = xasprintf("too many tasks/get, tasks/result and tasks/cancel requests waiting: %d is "
                        "the limit per agent; wait for "
                        "answers first",
                        TASKS_MAX_WAITING_PER_AGENT);
        agent_reply_error(tr->peers, p->id, id, MCPD_ERROR_TOO_MANY_CALLS, msg);
        return;
    }
    w = xcalloc(1, sizeof(*w));
    w->id = ++tr->next_wait;
    w->tr = tr;
    w->peer_id = p->id;
    w->task_seq = t->seq;
    w->server_id = s->id;
    w->upstream_id = s->up->id;
    w->orig_id = xstrdup(id_text);
    w->task_id = xstrdup(t->id);
    w->method = streq(method, m_get) ? m_get : streq(method, m_result) ? m_result : m_cancel;
    /* tasks/result waits for the task's end: not the call timeout but the task's own ttl (at
     * most TASKS_TTL_MAX_MS); the agent leaving or the server going ends it sooner. */
    timeout =
        s->cfg->call_timeout_ms > 0 ? s->cfg->call_timeout_ms : CONFIG_DEFAULT_CALL_TIMEOUT_MS;
    if (w->method == m_result && t->expires_ms > now_ms() + (uint64_t)timeout)
        timeout = (int64_t)(t->expires_ms - now_ms());
    yajl_val up = params ? json_copy(params) : json_object_new();
    json_object_set(up, "taskId", json_string_new(t->up_task));
    idmap_put(&tr->waiting, w->id, w);
    rc = upstream_request(s->up, w->method, up, timeout, 0, on_wait_reply, w, &w->request_id);
    if (rc < 0) {
        msg = xasprintf("MCP server %s: cannot send %s: %s", s->cfg->name, method, strerror(-rc));
        agent_reply_error(tr->peers, p->id, id, MCPD_ERROR_UNAVAILABLE, msg);
        wait_free(w);
    }
}

/* The task a server's message names: by its taskId, or the related-task of its _meta. */
static Task *task_of_server(TaskRegistry *tr, Server *s, yajl_val params)
{
    const char *up_task = json_get_string(params, "taskId");

    if (!up_task)
        up_task = json_get_string(related_of(params), "taskId");
    if (!up_task || !s->up)
        return NULL;
    return task_of_up(tr, s->id, s->up->id, up_task);
}

/* Progress of a task whose tools/call has been answered: by related-task or by its token. */
static Task *task_of_progress(TaskRegistry *tr, Server *s, yajl_val params)
{
    Task *t = task_of_server(tr, s, params);
    yajl_val tok = json_get(params, MCP_META_PROGRESS_TOKEN);
    size_t pos = 0;
    void *v;

    if (t || !YAJL_IS_INTEGER(tok) || !s->up)
        return t;
    while (idmap_next(&tr->by_seq, &pos, NULL, &v)) {
        t = v;
        if (t->server_id == s->id && t->upstream_id == s->up->id &&
            t->request_id == (uint64_t)tok->u.number.i)
            return t;
    }
    return NULL;
}

bool tasks_route_notification(TaskRegistry *tr, Server *s, const char *method, yajl_val params)
{
    bool status = streq(method, "notifications/tasks/status");
    Task *t;
    yajl_val out;
    uint64_t to;

    if (!status && !streq(method, "notifications/progress"))
        return false;
    t = status ? task_of_server(tr, s, params) : task_of_progress(tr, s, params);
    if (!t && status && s->up && json_get_string(params, "taskId")) {
        /* Maybe before the CreateTaskResult that names it: kept a while. */
        early_put(tr, s, json_get_string(params, "taskId"), params);
        return true;
    }
    if (!t || t->lost) {
        log_debug("%s: %s for a task mcpd does not know dropped", s->cfg->name, method);
        return true;
    }
    if (status) {
        status_apply(tr, t, params);
        return true;
    }
    if (!t->agent_token)
        return true; /* the agent asked for no progress */
    out = json_copy(params);
    rewrite_ids(t, out);
    json_object_set(out, MCP_META_PROGRESS_TOKEN, json_parse(t->agent_token, NULL));
    if ((to = task_audience(tr, t, 0)))
        agent_notify(tr->peers, to, method, out);
    json_free(out);
    return true;
}

bool tasks_request_peer(TaskRegistry *tr, Server *s, yajl_val params, unsigned cap, Peer **pp,
                        Peer **anyp, bool *as_formp)
{
    Task *t = cap && related_of(params) ? task_of_server(tr, s, params) : NULL;
    uint64_t to, any;

    *pp = *anyp = NULL;
    *as_formp = false;
    if (!t || t->lost)
        return false;
    rewrite_ids(t, params);
    to = task_audience_cap(tr, t, 0, cap);
    if (!to && cap == AGENT_CAP_ELICITATION_URL &&
        (to = task_audience_cap(tr, t, 0, AGENT_CAP_ELICITATION)))
        *as_formp = true; /* shown the link in a form, as a call's own request would be */
    *pp = to ? peer_get(tr->peers, to) : NULL;
    any = task_audience(tr, t, 0);
    *anyp = any ? peer_get(tr->peers, any) : NULL;
    return true;
}

bool tasks_cancel_wait(TaskRegistry *tr, uint64_t peer_id, yajl_val orig_id)
{
    _cleanup_free_ char *text = json_to_string(orig_id);
    size_t pos = 0;
    void *v;

    while (idmap_next(&tr->waiting, &pos, NULL, &v)) {
        TaskWait *w = v;
        Server *s = server_get(tr->servers, w->server_id);
        if (w->peer_id != peer_id || !streq(w->orig_id, text))
            continue;
        if (s && s->up && s->up->id == w->upstream_id && w->request_id)
            upstream_cancel(s->up, w->request_id, "cancelled by the client"); /* frees w */
        else
            wait_free(w);
        return true;
    }
    return false;
}

void tasks_peer_gone(TaskRegistry *tr, uint64_t peer_id)
{
    Agent *a = agent_get(tr->agents, peer_id);
    size_t pos = 0;
    void *v;

    while (idmap_next(&tr->waiting, &pos, NULL, &v)) {
        TaskWait *w = v;
        Server *s = w->peer_id == peer_id ? server_get(tr->servers, w->server_id) : NULL;
        if (w->peer_id != peer_id)
            continue;
        if (s && s->up && s->up->id == w->upstream_id && w->request_id)
            upstream_cancel(s->up, w->request_id, "client disconnected"); /* frees w */
        else
            wait_free(w);
    }
    if (!a)
        return;
    pos = 0;
    while (idmap_next(&tr->by_seq, &pos, NULL, &v)) {
        Task *t = v;
        if (t->session_id != a->session_id || task_audience(tr, t, peer_id))
            continue; /* another agent of the session is still there: the tasks stay */
        if (!t->lost && !status_terminal(json_get_string(t->last, "status")))
            cancel_upstream(server_get(tr->servers, t->server_id), t->upstream_id, t->up_task);
        task_free(tr, t);
    }
}

void tasks_server_gone(TaskRegistry *tr, Server *s, uint64_t upstream_id)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&tr->by_seq, &pos, NULL, &v)) {
        Task *t = v;
        uint64_t to;
        if (t->server_id != s->id || (upstream_id && t->upstream_id != upstream_id) || t->lost)
            continue;
        t->lost = xasprintf("MCP server %s was disconnected (its session ended) and task %s "
                            "with it",
                            s->cfg->name, t->id);
        if (status_terminal(json_get_string(t->last, "status")) || !(to = task_audience(tr, t, 0)))
            continue;
        /* The agent hears it now rather than at its next poll. */
        yajl_val n = json_copy(t->last);
        json_object_set(n, "status", json_string_new("failed"));
        json_object_set(n, "statusMessage", json_string_new(t->lost));
        agent_notify(tr->peers, to, "notifications/tasks/status", n);
        json_free(n);
    }
}
