// SPDX-License-Identifier: MIT
// test-tasks: MCP tasks through the real mcpd and task-capable fake servers: the capability, a
// task created, polled, its result fetched, cancelled, listed; sessions that cannot see each
// other's tasks; the same task id from two servers; a task's own requests and progress after
// its tools/call was answered, checked for the capability like a call's (url as a form, roots
// answered by mcpd); a modern agent's params.task; a waiting tasks/result cancelled; a result's
// URIs; a server task id given twice; a server that dies mid-task; ttl; the per-session cap;
// a status sent before the CreateTaskResult; a task's sampling asked of an agent that joined its
// session later; a legacy agent's params.task on a 2026-07-28 server; the total cap.

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/harness.h"
#include "tests/integration/raw.h"

/* The per-session and total bounds of daemon/core/tasks.h, as agents meet them. */
#define CAP_PER_SESSION 256
#define CAP_TOTAL       4096

/* Request ids of this test's own requests start here (below: tools/call ids). */
static int next_id = 100;

/* The response to request id, skipping notifications and requests (kept in *skippedp when
 * asked: the first one of method want_method). */
static yajl_val wait_response(Raw *r, int id)
{
    for (;;) {
        yajl_val m = raw_read(r, H_WAIT_MS);
        int64_t got = -1;
        if (!m)
            return NULL;
        if (!json_get_string(m, "method") && json_get_int(m, "id", &got) == 0 && got == id)
            return m;
        json_free(m);
    }
}

/* The next message of method (a notification or request), others skipped. */
static yajl_val wait_method(Raw *r, const char *method)
{
    for (;;) {
        yajl_val m = raw_read(r, H_WAIT_MS);
        if (!m || streq(json_get_string(m, "method"), method))
            return m;
        json_free(m);
    }
}

/* Send a request and wait for its response. */
static yajl_val rpc(Raw *r, const char *method, const char *params)
{
    int id = next_id++;

    raw_send(r, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id, method,
             params);
    return wait_response(r, id);
}

/* A task-augmented call of tool; returns mcpd's taskId (to free), or NULL. Its ttl is an hour:
 * the total cap's 4096 tasks took two minutes to make under valgrind, and a ttl of a minute let
 * the first ones expire before the last was made. */
static char *create_task(Raw *r, const char *tool, const char *args, const char *extra)
{
    _cleanup_free_ char *params =
        xasprintf("{\"name\":\"%s\",\"arguments\":%s,\"task\":{\"ttl\":3600000}%s}", tool, args,
                  extra ? extra : "");
    _cleanup_json_ yajl_val m = rpc(r, "tools/call", params);
    yajl_val task = json_get_object(json_get_object(m, "result"), "task");
    const char *id = json_get_string(task, "taskId");

    CHECK_MSG(id && streq(json_get_string(task, "status"), "working"),
              "tools/call of %s with a task gave no CreateTaskResult", tool);
    return id ? xstrdup(id) : NULL;
}

/* Send method for task_id without waiting; returns the request id. */
static int task_send(Raw *r, const char *method, const char *task_id)
{
    int id = next_id++;

    raw_send(r, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{\"taskId\":\"%s\"}}",
             id, method, task_id);
    return id;
}

static yajl_val task_rpc(Raw *r, const char *method, const char *task_id)
{
    _cleanup_free_ char *params = xasprintf("{\"taskId\":\"%s\"}", task_id);
    return rpc(r, method, params);
}

static int64_t error_code(yajl_val m)
{
    int64_t code = 0;

    json_get_int(json_get_object(m, "error"), "code", &code);
    return code;
}

static const char *error_message(yajl_val m)
{
    const char *t = json_get_string(json_get_object(m, "error"), "message");
    return t ? t : "";
}

static const char *related_id(yajl_val obj)
{
    return json_get_string(
        json_get_object(json_get_object(obj, "_meta"), "io.modelcontextprotocol/related-task"),
        "taskId");
}

/* Every taskId tasks/list gives this agent, page by page, as one string "id id ...". */
static char *list_ids(Raw *r, int *np)
{
    StrBuf sb = STRBUF_INIT;
    _cleanup_free_ char *cursor = NULL;

    *np = 0;
    for (int page = 0; page < 100; page++) {
        _cleanup_free_ char *params =
            cursor ? xasprintf("{\"cursor\":\"%s\"}", cursor) : xstrdup("{}");
        _cleanup_json_ yajl_val m = rpc(r, "tasks/list", params);
        yajl_val res = json_get_object(m, "result"), tasks = json_get_array(res, "tasks");
        CHECK_MSG(tasks, "tasks/list gave no tasks array");
        for (size_t i = 0; i < json_array_len(tasks); i++) {
            strbuf_printf(&sb, "%s ", json_get_string(json_array_at(tasks, i), "taskId"));
            (*np)++;
        }
        free(cursor);
        cursor =
            json_get_string(res, "nextCursor") ? xstrdup(json_get_string(res, "nextCursor")) : NULL;
        if (!cursor)
            break;
    }
    strbuf_puts(&sb, "");
    return strbuf_detach(&sb, NULL);
}

/* ---- the capability ---- */

static bool init_has_tasks(Harness *h, const char *meta)
{
    Raw r;
    raw_open(&r, h);
    raw_send(&r,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
             "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":"
             "\"caps\",\"version\":\"1\"},\"_meta\":%s}}",
             meta);
    _cleanup_json_ yajl_val m = raw_read(&r, H_WAIT_MS);
    yajl_val caps = json_get_object(json_get_object(m, "result"), "capabilities");
    yajl_val req = json_get_object(json_get_object(caps, "tasks"), "requests");
    bool has = json_get_object(json_get_object(req, "tools"), "call") &&
               json_get_object(json_get_object(caps, "tasks"), "list") &&
               json_get_object(json_get_object(caps, "tasks"), "cancel");
    raw_close(&r);
    return has;
}

static void test_capability(Harness *h)
{
    CHECK_MSG(init_has_tasks(h, "{}"), "the aggregated workspace does not declare tasks");
    CHECK_MSG(init_has_tasks(h, "{\"mcpd/server\":\"ta\"}"),
              "a passthrough agent of a task server does not get tasks");
    CHECK_MSG(!init_has_tasks(h, "{\"mcpd/server\":\"plain\"}"),
              "a passthrough agent of a server without tasks was offered tasks");
}

/* ---- created, progress and status after the call, polled, fetched, forgotten ---- */

static void test_lifecycle(Harness *h)
{
    Raw a;
    _cleanup_free_ char *tid = NULL;

    raw_init(&a, h, "agent-a", NULL);
    tid = create_task(&a, "mcp_ta_task_sleep", "{\"ms\":300}",
                      ",\"_meta\":{\"progressToken\":\"pa\"}");
    if (!tid)
        return raw_close(&a);
    CHECK_MSG(strncmp(tid, "mcpd-", 5) == 0, "the task id %s is the server's, not mcpd's", tid);
    /* Progress and the final status come after the tools/call was answered. */
    _cleanup_json_ yajl_val prog = wait_method(&a, "notifications/progress");
    yajl_val pp = json_get_object(prog, "params");
    CHECK_MSG(streq(json_get_string(pp, "progressToken"), "pa"), "progress lost its token");
    CHECK_MSG(streq(related_id(pp), tid), "progress names task %s", related_id(pp));
    _cleanup_json_ yajl_val st = wait_method(&a, "notifications/tasks/status");
    yajl_val sp = json_get_object(st, "params");
    CHECK_MSG(streq(json_get_string(sp, "taskId"), tid), "status names %s",
              json_get_string(sp, "taskId"));
    CHECK(streq(json_get_string(sp, "status"), "completed"));

    _cleanup_json_ yajl_val got = task_rpc(&a, "tasks/get", tid);
    yajl_val gr = json_get_object(got, "result");
    CHECK_MSG(streq(json_get_string(gr, "taskId"), tid) &&
                  streq(json_get_string(gr, "status"), "completed"),
              "tasks/get: %s", json_get_string(gr, "status"));
    _cleanup_json_ yajl_val res = task_rpc(&a, "tasks/result", tid);
    CHECK_MSG(result_text(res) && streq(result_text(res), "task slept 300 ms"), "result: %s",
              result_text(res) ? result_text(res) : "(none)");
    CHECK_MSG(streq(related_id(json_get_object(res, "result")), tid),
              "the result's related-task is not mcpd's id");
    /* Terminal and fetched: kept to its ttl, as its server keeps it (the spec's retention). */
    _cleanup_json_ yajl_val again = task_rpc(&a, "tasks/get", tid);
    yajl_val ar = json_get_object(again, "result");
    CHECK_MSG(streq(json_get_string(ar, "taskId"), tid) &&
                  streq(json_get_string(ar, "status"), "completed"),
              "a fetched task: %s", ar ? json_get_string(ar, "status") : error_message(again));
    _cleanup_json_ yajl_val res2 = task_rpc(&a, "tasks/result", tid);
    CHECK_MSG(result_text(res2) && streq(result_text(res2), "task slept 300 ms"),
              "the result fetched again: %s", result_text(res2) ? result_text(res2) : "(none)");
    /* An id mcpd never gave: the error names it and what to do. */
    _cleanup_json_ yajl_val unknown = task_rpc(&a, "tasks/get", "nope");
    CHECK_MSG(error_code(unknown) == -32602 && strstr(error_message(unknown), "\"nope\"") &&
                  strstr(error_message(unknown), "tasks/list"),
              "unknown task: %s", error_message(unknown));
    raw_close(&a);
}

/* ---- tasks/result waits past the server's callTimeout; cancel; list ---- */

static void test_wait_cancel_list(Harness *h)
{
    Raw a;
    int n = 0;

    raw_init(&a, h, "agent-w", NULL);
    /* tb's callTimeout is 1000 ms: the task runs 2500 ms, tasks/result waits for it. */
    _cleanup_free_ char *slow = create_task(&a, "mcp_tb_task_sleep", "{\"ms\":2500}", NULL);
    _cleanup_free_ char *long_task = create_task(&a, "mcp_ta_task_sleep", "{\"ms\":600000}", NULL);
    if (!slow || !long_task)
        return raw_close(&a);
    _cleanup_free_ char *ids = list_ids(&a, &n);
    CHECK_MSG(n == 2 && strstr(ids, slow) && strstr(ids, long_task), "tasks/list: %s", ids);
    _cleanup_json_ yajl_val res = task_rpc(&a, "tasks/result", slow);
    CHECK_MSG(result_text(res) && streq(result_text(res), "task slept 2500 ms"),
              "tasks/result past callTimeout: %s %s", result_text(res) ? result_text(res) : "",
              error_message(res));
    _cleanup_json_ yajl_val c = task_rpc(&a, "tasks/cancel", long_task);
    CHECK_MSG(streq(json_get_string(json_get_object(c, "result"), "status"), "cancelled") &&
                  streq(json_get_string(json_get_object(c, "result"), "taskId"), long_task),
              "tasks/cancel: %s", error_message(c));
    _cleanup_json_ yajl_val g = task_rpc(&a, "tasks/get", long_task);
    CHECK(streq(json_get_string(json_get_object(g, "result"), "status"), "cancelled"));
    raw_close(&a);
}

/* ---- sessions: another agent sees nothing, a subagent sees its parent's ---- */

/* Open and initialize an agent (no capabilities); returns its session token (to free). */
static char *open_owner(Raw *r, Harness *h, const char *name)
{
    raw_open(r, h);
    raw_send(r,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
             "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
             "\"name\":\"%s\",\"version\":\"1\"}}}",
             name);
    _cleanup_json_ yajl_val init = raw_read(r, H_WAIT_MS);
    const char *token =
        json_get_string(json_get_object(json_get_object(init, "result"), "_meta"), "mcpd/session");
    CHECK_MSG(token, "%s got no session token", name);
    return xstrdup(token ? token : "");
}

static void test_isolation(Harness *h)
{
    Raw a, b, sub;
    int n = 0;
    const char *verbs[] = {"tasks/get", "tasks/result", "tasks/cancel"};

    _cleanup_free_ char *token = open_owner(&a, h, "owner");
    _cleanup_free_ char *tid = create_task(&a, "mcp_ta_task_sleep", "{\"ms\":600000}", NULL);
    raw_init(&b, h, "stranger", NULL);
    for (size_t i = 0; tid && i < N_ELEMENTS(verbs); i++) {
        _cleanup_json_ yajl_val m = task_rpc(&b, verbs[i], tid);
        CHECK_MSG(error_code(m) == -32602 && !json_get(m, "result"),
                  "another session's %s of %s was not refused", verbs[i], tid);
    }
    _cleanup_free_ char *bl = list_ids(&b, &n);
    CHECK_MSG(n == 0, "another session lists %s", bl);
    _cleanup_free_ char *meta = xasprintf("{\"mcpd/session\":\"%s\"}", token);
    raw_init(&sub, h, "subagent", meta);
    _cleanup_free_ char *sl = list_ids(&sub, &n);
    CHECK_MSG(n == 1 && tid && strstr(sl, tid), "the subagent lists %s", sl);
    _cleanup_json_ yajl_val g = task_rpc(&sub, "tasks/get", tid ? tid : "");
    CHECK_MSG(streq(json_get_string(json_get_object(g, "result"), "status"), "working"),
              "the subagent cannot poll its session's task: %s", error_message(g));
    raw_close(&b);
    raw_close(&sub);
    raw_close(&a);
}

/* ---- the same upstream task id from two servers ---- */

static void test_collision(Harness *h, const char *log_ca, const char *log_cb)
{
    Raw a;

    raw_init(&a, h, "agent-c", NULL);
    _cleanup_free_ char *t1 = create_task(&a, "mcp_ca_task_sleep", "{\"ms\":100}", NULL);
    _cleanup_free_ char *t2 = create_task(&a, "mcp_cb_task_sleep", "{\"ms\":200}", NULL);
    if (!t1 || !t2)
        return raw_close(&a);
    CHECK_MSG(strcmp(t1, t2) != 0, "two servers' tasks got one id %s", t1);
    _cleanup_json_ yajl_val r2 = task_rpc(&a, "tasks/result", t2);
    _cleanup_json_ yajl_val r1 = task_rpc(&a, "tasks/result", t1);
    CHECK_MSG(result_text(r1) && streq(result_text(r1), "task slept 100 ms"), "ca's result: %s",
              result_text(r1) ? result_text(r1) : error_message(r1));
    CHECK_MSG(result_text(r2) && streq(result_text(r2), "task slept 200 ms"), "cb's result: %s",
              result_text(r2) ? result_text(r2) : error_message(r2));
    /* Both servers said "task-1": each was asked for its own by that id (their logs). */
    _cleanup_free_ char *la = h_read_file(log_ca), *lb = h_read_file(log_cb);
    CHECK_MSG(la && strstr(la, "\"taskId\":\"task-1\"") && lb &&
                  strstr(lb, "\"taskId\":\"task-1\""),
              "the servers were not asked for their own task-1");
    raw_close(&a);
}

/* ---- a task's elicitation reaches its agent after the call was answered ---- */

static void test_task_elicitation(Harness *h)
{
    Raw e;

    raw_init_caps(&e, h, "asker", NULL, "{\"elicitation\":{}}");
    _cleanup_free_ char *tid =
        create_task(&e, "mcp_ta_task_sleep", "{\"ms\":50,\"ask\":true}", NULL);
    if (!tid)
        return raw_close(&e);
    _cleanup_json_ yajl_val req = wait_method(&e, "elicitation/create");
    CHECK_MSG(req, "the task's elicitation did not reach its agent");
    CHECK_MSG(streq(related_id(json_get_object(req, "params")), tid),
              "the elicitation's related-task is not mcpd's id");
    yajl_val rid = json_get(req, "id");
    if (rid) {
        _cleanup_free_ char *idt = json_to_string(rid);
        raw_send(
            &e, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"accept\",\"content\":{}}}",
            idt);
    }
    _cleanup_json_ yajl_val res = task_rpc(&e, "tasks/result", tid);
    CHECK_MSG(result_text(res) && streq(result_text(res), "task slept 50 ms, answer accept"),
              "result after the elicitation: %s",
              result_text(res) ? result_text(res) : error_message(res));
    raw_close(&e);
}

/*
 * tasks/result of tid, answered by mcpd; NULL at once should mcpd ask this agent method (it
 * declared no capability for it), noted in *askedp.
 */
static yajl_val result_unasked(Raw *r, const char *tid, const char *method, bool *askedp)
{
    int id = task_send(r, "tasks/result", tid);

    *askedp = false;
    for (;;) {
        yajl_val m = raw_read(r, H_WAIT_MS);
        int64_t got = -1;
        if (!m)
            return NULL;
        if (streq(json_get_string(m, "method"), method) && json_get(m, "id")) {
            *askedp = true;
            json_free(m);
            return NULL;
        }
        if (!json_get_string(m, "method") && json_get_int(m, "id", &got) == 0 && got == id)
            return m;
        json_free(m);
    }
}

/* ---- a task's requests are checked like a call's: capability, url as a form, roots ---- */

static void test_task_request_caps(Harness *h)
{
    static const struct {
        const char *asks, *method, *answer;
    } cases[] = {
        /* No capability: the server hears -32601, as for a call's own request. */
        {"sampling", "sampling/createMessage", "answer error -32601"},
        {"url", "elicitation/create", "answer error -32601"},
        /* roots/list is mcpd's to answer when the agent has no roots. */
        {"roots", "roots/list", "answer roots"},
    };
    Raw a, f;

    raw_init(&a, h, "no-caps", NULL);
    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        _cleanup_free_ char *args = xasprintf("{\"ms\":20,\"asks\":\"%s\"}", cases[i].asks);
        _cleanup_free_ char *tid = create_task(&a, "mcp_ta_task_sleep", args, NULL);
        bool asked = false;
        if (!tid)
            continue;
        _cleanup_json_ yajl_val res = result_unasked(&a, tid, cases[i].method, &asked);
        CHECK_MSG(!asked, "an agent without the capability was sent the task's %s",
                  cases[i].method);
        CHECK_MSG(result_text(res) && strstr(result_text(res), cases[i].answer),
                  "task asking %s: %s", cases[i].asks,
                  result_text(res) ? result_text(res) : error_message(res));
    }
    raw_close(&a);

    /* A form-only agent is shown a task's url-mode elicitation as a form naming the link. */
    raw_init_caps(&f, h, "forms-only", NULL, "{\"elicitation\":{\"form\":{}}}");
    _cleanup_free_ char *tid =
        create_task(&f, "mcp_ta_task_sleep", "{\"ms\":20,\"asks\":\"url\"}", NULL);
    _cleanup_json_ yajl_val req = tid ? wait_method(&f, "elicitation/create") : NULL;
    yajl_val rp = json_get_object(req, "params");
    const char *msg = json_get_string(rp, "message");
    CHECK_MSG(req && !json_get(rp, "mode") && json_get_object(rp, "requestedSchema") && msg &&
                  strstr(msg, "https://example.com/task-login"),
              "a form-only agent got the task's url elicitation as is (mode %s)",
              json_get_string(rp, "mode") ? json_get_string(rp, "mode") : "-");
    if (json_get(req, "id")) {
        _cleanup_free_ char *idt = json_to_string(json_get(req, "id"));
        raw_send(&f, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"accept\"}}", idt);
    }
    _cleanup_json_ yajl_val res = tid ? task_rpc(&f, "tasks/result", tid) : NULL;
    CHECK_MSG(result_text(res) && strstr(result_text(res), "answer accept"),
              "the url elicitation as a form: %s",
              result_text(res) ? result_text(res) : error_message(res));
    raw_close(&f);
}

/* ---- a 2026-07-28 agent is offered no tasks: its params.task makes a plain call ---- */

static void test_modern_no_task(Harness *h)
{
    Raw m;

    raw_open(&m, h);
    raw_send(&m, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
                 "\"name\":\"mcp_ta_task_sleep\",\"arguments\":{\"ms\":20},\"task\":{},"
                 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                 "\"io.modelcontextprotocol/clientCapabilities\":{},"
                 "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"modern\",\"version\":"
                 "\"1\"}}}}");
    _cleanup_json_ yajl_val r = wait_response(&m, 7);
    CHECK_MSG(result_text(r) && streq(result_text(r), "slept 20 ms") &&
                  !json_get(json_get_object(r, "result"), "task"),
              "a modern agent's tools/call with params.task: %s",
              result_text(r) ? result_text(r) : error_message(r));
    raw_close(&m);
}

/* ---- a waiting tasks/result the agent cancels, or leaves, is cancelled at the server ---- */

static int count_in(const char *path, const char *needle)
{
    _cleanup_free_ char *log = h_read_file(path);
    int n = 0;

    for (const char *p = log; p && (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void test_cancel_wait(Harness *h, const char *log_tw)
{
    Raw a, b;
    int n = 0;

    raw_init(&a, h, "agent-cw", NULL);
    _cleanup_free_ char *tid = create_task(&a, "mcp_tw_task_sleep", "{\"ms\":600000}", NULL);
    if (!tid)
        return raw_close(&a);
    int waiting = task_send(&a, "tasks/result", tid);
    raw_send(&a,
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
             "{\"requestId\":%d,\"reason\":\"timeout\"}}",
             waiting);
    for (int tries = 0; tries < 300 && (n = count_in(log_tw, "notifications/cancelled")) < 1;
         tries++)
        h_sleep_ms(100);
    CHECK_MSG(n == 1, "the cancelled tasks/result was not cancelled at the server");
    /* Cancelled: no answer comes, and its slot is free (the next answer is tasks/get's). */
    int get = task_send(&a, "tasks/get", tid);
    for (;;) {
        _cleanup_json_ yajl_val m = raw_read(&a, H_WAIT_MS);
        int64_t got = -1;
        if (m && (json_get_string(m, "method") || json_get_int(m, "id", &got) != 0))
            continue; /* a notification */
        CHECK_MSG(m && got == get, "the cancelled tasks/result %d was answered (or nothing was)",
                  waiting);
        break;
    }
    raw_close(&a);

    /* An agent that leaves with a tasks/result waiting: cancelled there too. */
    raw_init(&b, h, "agent-cw2", NULL);
    _cleanup_free_ char *t2 = create_task(&b, "mcp_tw_task_sleep", "{\"ms\":600000}", NULL);
    task_send(&b, "tasks/result", t2 ? t2 : "");
    _cleanup_json_ yajl_val g = task_rpc(&b, "tasks/get", t2 ? t2 : "");
    (void)g; /* only its cleanup is wanted */
    raw_close(&b);
    for (int tries = 0; tries < 300 && (n = count_in(log_tw, "notifications/cancelled")) < 2;
         tries++)
        h_sleep_ms(100);
    CHECK_MSG(n == 2, "a leaving agent's tasks/result was not cancelled at the server");
}

/* ---- a task's result has its URIs in the agent's view, like a call's ---- */

static void test_result_uris(Harness *h)
{
    Raw a;

    raw_init(&a, h, "agent-u", NULL);
    _cleanup_free_ char *tid =
        create_task(&a, "mcp_ta_task_sleep", "{\"ms\":20,\"link\":true}", NULL);
    _cleanup_json_ yajl_val res = tid ? task_rpc(&a, "tasks/result", tid) : NULL;
    yajl_val content = json_get_array(json_get_object(res, "result"), "content");
    const char *uri = json_get_string(json_array_at(content, 1), "uri");
    CHECK_MSG(streq(uri, "ui://ta/task/view.html"), "the task result's resource_link: %s",
              uri ? uri : error_message(res));
    raw_close(&a);
}

/* ---- one server task id given twice: the second is refused, the first untouched ---- */

static void test_duplicate_id(Harness *h)
{
    Raw a, b;
    const char *call = "{\"name\":\"mcp_ta_task_sleep\",\"arguments\":{\"ms\":600000,"
                       "\"id\":\"dup\"},\"task\":{}}";

    raw_init(&a, h, "dup-a", NULL);
    raw_init(&b, h, "dup-b", NULL);
    _cleanup_json_ yajl_val first = rpc(&a, "tools/call", call);
    const char *tid =
        json_get_string(json_get_object(json_get_object(first, "result"), "task"), "taskId");
    CHECK(tid != NULL);
    _cleanup_json_ yajl_val second = rpc(&b, "tools/call", call);
    CHECK_MSG(!json_get(second, "result") && strstr(error_message(second), "\"dup\"") &&
                  strstr(error_message(second), "ta"),
              "a second task of server id dup was accepted: %s", error_message(second));
    _cleanup_json_ yajl_val g = task_rpc(&a, "tasks/get", tid ? tid : "");
    CHECK_MSG(streq(json_get_string(json_get_object(g, "result"), "status"), "working"),
              "the first task of id dup: %s", error_message(g));
    raw_close(&b);
    raw_close(&a);
}

/* ---- ttl ---- */

static void test_ttl(Harness *h)
{
    Raw a;

    raw_init(&a, h, "agent-t", NULL);
    _cleanup_json_ yajl_val m = rpc(
        &a, "tools/call",
        "{\"name\":\"mcp_ta_task_sleep\",\"arguments\":{\"ms\":600000},\"task\":{\"ttl\":300}}");
    const char *tid =
        json_get_string(json_get_object(json_get_object(m, "result"), "task"), "taskId");
    CHECK(tid != NULL);
    h_sleep_ms(800);
    _cleanup_json_ yajl_val g = task_rpc(&a, "tasks/get", tid ? tid : "");
    CHECK_MSG(error_code(g) == -32602, "a task past its ttl is still there");
    raw_close(&a);
}

/* ---- a server that dies mid-task ---- */

static void test_server_dies(Harness *h)
{
    Raw a;

    raw_init(&a, h, "agent-d", NULL);
    _cleanup_free_ char *t1 = create_task(&a, "mcp_die_task_sleep", "{\"ms\":600000}", NULL);
    _cleanup_free_ char *t2 = create_task(&a, "mcp_die_task_sleep", "{\"ms\":600000}", NULL);
    _cleanup_json_ yajl_val pidm =
        rpc(&a, "tools/call", "{\"name\":\"mcp_die_pid\",\"arguments\":{}}");
    const char *pid_text = result_text(pidm);
    if (!t1 || !t2 || !pid_text)
        return raw_close(&a);
    int waiting = task_send(&a, "tasks/result", t1);
    h_sleep_ms(200);
    CHECK(kill((pid_t)atoi(pid_text), SIGKILL) == 0);
    _cleanup_json_ yajl_val r = wait_response(&a, waiting);
    CHECK_MSG(r && error_code(r) == -32004 && strstr(error_message(r), "die") &&
                  strstr(error_message(r), "run the tool again"),
              "the waiting tasks/result: %s", r ? error_message(r) : "(nothing)");
    _cleanup_json_ yajl_val g = task_rpc(&a, "tasks/get", t2);
    CHECK_MSG(error_code(g) == -32004 && strstr(error_message(g), "disconnected"),
              "a task of the dead server: %s", error_message(g));
    raw_close(&a);
}

/* ---- the per-session cap, paging, and the session's end ---- */

static void test_cap(Harness *h, const char *log_cap)
{
    Raw a;
    int n = 0, made = 0;

    raw_init(&a, h, "agent-cap", NULL);
    for (int i = 0; i < CAP_PER_SESSION; i++) {
        _cleanup_free_ char *t = create_task(&a, "mcp_cap_task_sleep", "{\"ms\":600000}", NULL);
        made += t != NULL;
    }
    CHECK_MSG(made == CAP_PER_SESSION, "only %d tasks made", made);
    _cleanup_json_ yajl_val over = rpc(
        &a, "tools/call", "{\"name\":\"mcp_cap_task_sleep\",\"arguments\":{\"ms\":1},\"task\":{}}");
    CHECK_MSG(error_code(over) == -32003 && strstr(error_message(over), "too many tasks"),
              "task %d: %s", CAP_PER_SESSION + 1, error_message(over));
    _cleanup_free_ char *ids = list_ids(&a, &n);
    (void)ids; /* only its cleanup is wanted */
    CHECK_MSG(n == CAP_PER_SESSION, "tasks/list pages gave %d tasks", n);
    raw_close(&a);
    /* The session ended: its tasks are cancelled at their server. */
    int cancels = 0;
    for (int tries = 0;
         tries < 300 && (cancels = count_in(log_cap, "\"tasks/cancel\"")) < CAP_PER_SESSION + 1;
         tries++)
        h_sleep_ms(100);
    CHECK_MSG(cancels == CAP_PER_SESSION + 1, "%d tasks/cancel reached the server", cancels);
}

/*
 * A fetched task never holds a place a new one needs: with the session's cap met by tasks
 * whose results were fetched, the next task is made, and the oldest fetched one goes.
 */
static void test_fetched_make_room(Harness *h)
{
    Raw a;
    char *ids[CAP_PER_SESSION] = {NULL};
    int made = 0, fetched = 0;

    raw_init(&a, h, "agent-room", NULL);
    for (int i = 0; i < CAP_PER_SESSION; i++)
        made += (ids[i] = create_task(&a, "mcp_ta_task_sleep", "{\"ms\":1}", NULL)) != NULL;
    CHECK_MSG(made == CAP_PER_SESSION, "only %d tasks made", made);
    for (int i = 0; i < CAP_PER_SESSION && ids[i]; i++) {
        _cleanup_json_ yajl_val r = task_rpc(&a, "tasks/result", ids[i]);
        fetched += result_text(r) != NULL;
    }
    CHECK_MSG(fetched == made, "%d of %d results fetched", fetched, made);
    _cleanup_free_ char *more = create_task(&a, "mcp_ta_task_sleep", "{\"ms\":1}", NULL);
    CHECK_MSG(more != NULL, "the cap met by fetched tasks refused a new one");
    _cleanup_json_ yajl_val oldest = task_rpc(&a, "tasks/get", ids[0]);
    CHECK_MSG(error_code(oldest) == -32602, "the oldest fetched task is still kept");
    _cleanup_json_ yajl_val next = task_rpc(&a, "tasks/get", ids[1]);
    CHECK_MSG(streq(json_get_string(json_get_object(next, "result"), "status"), "completed"),
              "the second fetched task went too: %s", error_message(next));
    for (int i = 0; i < CAP_PER_SESSION; i++)
        free(ids[i]);
    raw_close(&a);
}

/* ---- a status the server sent before the CreateTaskResult is not lost ---- */

/* The status tasks/list gives task tid, or NULL (to free). */
static char *listed_status(Raw *r, const char *tid)
{
    _cleanup_json_ yajl_val m = rpc(r, "tasks/list", "{}");
    yajl_val tasks = json_get_array(json_get_object(m, "result"), "tasks");

    for (size_t i = 0; i < json_array_len(tasks); i++)
        if (streq(json_get_string(json_array_at(tasks, i), "taskId"), tid))
            return xstrdup(json_get_string(json_array_at(tasks, i), "status")
                               ? json_get_string(json_array_at(tasks, i), "status")
                               : "(none)");
    return NULL;
}

static void test_early_status(Harness *h)
{
    Raw a;

    raw_init(&a, h, "agent-early", NULL);
    /* The server writes "completed" before its CreateTaskResult ("working"). */
    _cleanup_free_ char *tid =
        create_task(&a, "mcp_ta_task_sleep", "{\"ms\":5,\"early\":true}", NULL);
    if (!tid)
        return raw_close(&a);
    _cleanup_json_ yajl_val st = wait_method(&a, "notifications/tasks/status");
    yajl_val sp = json_get_object(st, "params");
    CHECK_MSG(st && streq(json_get_string(sp, "taskId"), tid) &&
                  streq(json_get_string(sp, "status"), "completed"),
              "the status sent before the CreateTaskResult did not reach the agent");
    _cleanup_free_ char *listed = listed_status(&a, tid);
    CHECK_MSG(streq(listed, "completed"), "tasks/list says task %s is %s", tid,
              listed ? listed : "(not listed)");
    _cleanup_json_ yajl_val res = task_rpc(&a, "tasks/result", tid);
    CHECK_MSG(result_text(res) && streq(result_text(res), "task slept 5 ms"), "result: %s",
              result_text(res) ? result_text(res) : error_message(res));
    raw_close(&a);
}

/* ---- a task's sampling goes to an agent of its session that joined after it began ---- */

static void test_sampling_later_agent(Harness *h)
{
    Raw a, b;

    _cleanup_free_ char *token = open_owner(&a, h, "no-sampling");
    /* The task asks once it has run 3 s: the sampler has joined by then. */
    _cleanup_free_ char *tid =
        create_task(&a, "mcp_ta_task_sleep", "{\"ms\":3000,\"asks\":\"sampling\"}", NULL);
    _cleanup_free_ char *meta = xasprintf("{\"mcpd/session\":\"%s\"}", token);
    raw_init_caps(&b, h, "sampler", meta, "{\"sampling\":{}}");
    _cleanup_json_ yajl_val req = tid ? wait_method(&b, "sampling/createMessage") : NULL;
    CHECK_MSG(req && json_get(req, "id"),
              "the task's sampling did not reach the capable agent that joined its session");
    CHECK_MSG(!req || streq(related_id(json_get_object(req, "params")), tid),
              "the sampling request's related-task is not mcpd's id");
    if (req && json_get(req, "id")) {
        _cleanup_free_ char *idt = json_to_string(json_get(req, "id"));
        raw_send(&b,
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"role\":\"assistant\","
                 "\"content\":{\"type\":\"text\",\"text\":\"hi\"},\"model\":\"m\"}}",
                 idt);
    }
    _cleanup_json_ yajl_val res = tid ? task_rpc(&a, "tasks/result", tid) : NULL;
    CHECK_MSG(result_text(res) && streq(result_text(res), "task slept 3000 ms, answer sampled"),
              "the task after the sampling: %s",
              result_text(res) ? result_text(res) : error_message(res));
    raw_close(&b);
    raw_close(&a);
}

/* ---- a legacy agent's task on a 2026-07-28 server: the plain call, its plain result ---- */

static void test_modern_server(Harness *h)
{
    Raw a;

    raw_init(&a, h, "legacy-on-modern", NULL);
    _cleanup_json_ yajl_val r =
        rpc(&a, "tools/call",
            "{\"name\":\"mcp_mod_echo\",\"arguments\":{\"text\":\"hi\"},\"task\":{}}");
    yajl_val res = json_get_object(r, "result");
    bool is_error = false;
    json_get_bool(res, "isError", &is_error);
    CHECK_MSG(res && !json_get(res, "task") && !is_error && result_text(r) &&
                  strstr(result_text(r), "hi"),
              "params.task on a 2026-07-28 server: %s",
              result_text(r) ? result_text(r) : error_message(r));
    raw_close(&a);
}

/* ---- the total cap: sixteen full sessions, then a seventeenth's task is refused ---- */

static void test_total_cap(Harness *h)
{
    enum { SESSIONS = CAP_TOTAL / CAP_PER_SESSION };
    Raw agents[SESSIONS], late;
    int made = 0;

    for (int s = 0; s < SESSIONS; s++) {
        raw_init(&agents[s], h, "agent-total", NULL);
        for (int i = 0; i < CAP_PER_SESSION; i++) {
            _cleanup_free_ char *t =
                create_task(&agents[s], "mcp_tot_task_sleep", "{\"ms\":600000}", NULL);
            made += t != NULL;
        }
    }
    CHECK_MSG(made == CAP_TOTAL, "only %d tasks made", made);
    raw_init(&late, h, "agent-late", NULL);
    _cleanup_json_ yajl_val over =
        rpc(&late, "tools/call",
            "{\"name\":\"mcp_tot_task_sleep\",\"arguments\":{\"ms\":1},\"task\":{}}");
    const char *msg = error_message(over);
    CHECK_MSG(error_code(over) == -32003 && strstr(msg, "4096") &&
                  strstr(msg, "across every agent session (this session has 0)") &&
                  strstr(msg, "tasks/result") && strstr(msg, "tasks/cancel") && strstr(msg, "tot"),
              "task %d: %s", CAP_TOTAL + 1, msg);
    /* One session freed: the next task is made. */
    raw_close(&agents[0]);
    bool made_late = false;
    for (int tries = 0; tries < 100 && !made_late; tries++) {
        _cleanup_json_ yajl_val m =
            rpc(&late, "tools/call",
                "{\"name\":\"mcp_tot_task_sleep\",\"arguments\":{\"ms\":600000},"
                "\"task\":{}}");
        made_late = json_get_object(json_get_object(m, "result"), "task") != NULL;
        if (!made_late)
            h_sleep_ms(100);
    }
    CHECK_MSG(made_late, "no task could be made once a session had ended");
    raw_close(&late);
    for (int s = 1; s < SESSIONS; s++)
        raw_close(&agents[s]);
}

int main(void)
{
    Harness h;
    char log_ca[400], log_cb[400], log_cap[400], log_tw[400];

    h_setup(&h, "tasks");
    snprintf(log_ca, sizeof(log_ca), "%s/ca.log", h.dir);
    snprintf(log_cb, sizeof(log_cb), "%s/cb.log", h.dir);
    snprintf(log_cap, sizeof(log_cap), "%s/cap.log", h.dir);
    snprintf(log_tw, sizeof(log_tw), "%s/tw.log", h.dir);
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        " \"ta\": {\"command\": \"%1$s\", \"args\": [\"--tasks\"]},"
        " \"tb\": {\"command\": \"%1$s\", \"args\": [\"--tasks\"], \"callTimeout\": 1000},"
        " \"ca\": {\"command\": \"%1$s\", \"args\": [\"--tasks\", \"--log\", \"%2$s\"]},"
        " \"cb\": {\"command\": \"%1$s\", \"args\": [\"--tasks\", \"--log\", \"%3$s\"]},"
        " \"die\": {\"command\": \"%1$s\", \"args\": [\"--tasks\"]},"
        " \"cap\": {\"command\": \"%1$s\", \"args\": [\"--tasks\", \"--log\", \"%4$s\"]},"
        " \"tw\": {\"command\": \"%1$s\", \"args\": [\"--tasks\", \"--log\", \"%5$s\"]},"
        " \"tot\": {\"command\": \"%1$s\", \"args\": [\"--tasks\"]},"
        " \"mod\": {\"command\": \"%6$s\"},"
        " \"plain\": {\"command\": \"%1$s\"}}}",
        h_fake(), log_ca, log_cb, log_cap, log_tw, getenv("MODERN_SERVER"));
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "setup");
    const char *names[] = {"ta", "tb", "ca", "cb", "die", "cap", "tw", "tot", "mod", "plain"};
    for (size_t i = 0; i < N_ELEMENTS(names); i++)
        CHECK_MSG(h_wait_state(c, names[i], "connected", H_WAIT_MS), "%s did not connect",
                  names[i]);
    mcpc_free(c);

    test_capability(&h);
    test_lifecycle(&h);
    test_wait_cancel_list(&h);
    test_isolation(&h);
    test_collision(&h, log_ca, log_cb);
    test_task_elicitation(&h);
    test_task_request_caps(&h);
    test_modern_no_task(&h);
    test_cancel_wait(&h, log_tw);
    test_result_uris(&h);
    test_duplicate_id(&h);
    test_ttl(&h);
    test_server_dies(&h);
    test_cap(&h, log_cap);
    test_fetched_make_room(&h);
    test_early_status(&h);
    test_sampling_later_agent(&h);
    test_modern_server(&h);
    test_total_cap(&h);

    if (h_failures)
        h_dump_log(&h);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-tasks");
}
