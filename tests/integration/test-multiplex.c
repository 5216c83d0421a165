// SPDX-License-Identifier: MIT
// test-multiplex: many agents on shared upstreams: ids, progress, cancel, disconnect, server
// requests, sessions and subagents, workspaces, a stalled reader, the asynchronous libmcpc.

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/util.h"
#include "tests/integration/harness.h"
#include "tests/integration/raw.h"

static int count_in_file(const char *path, const char *needle)
{
    _cleanup_free_ char *text = h_read_file(path);
    int n = 0;

    for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The upstream id mcpd gave the tools/call whose arguments contain marker (from the log). */
static long upstream_call_id(const char *log, const char *marker)
{
    _cleanup_free_ char *text = h_read_file(log);
    char *line = text ? strtok(text, "\n") : NULL;

    for (; line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "tools/call") || !strstr(line, marker))
            continue;
        _cleanup_json_ yajl_val m = json_parse(line, NULL);
        int64_t id = 0;
        if (json_get_int(m, "id", &id) == 0)
            return (long)id;
    }
    return -1;
}

/* ---- two agents, the same ids and progress tokens ---- */

static void test_same_ids(Harness *h)
{
    Raw a, b;
    int progress_a = 0, progress_b = 0;
    bool done_a = false, done_b = false;

    raw_init(&a, h, "agent-a", NULL);
    raw_init(&b, h, "agent-b", NULL);
    /* Both use id 7 and progress token "tok"; A sleeps 800 ms (8 steps), B 300 ms (3). */
    raw_send(&a,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"mcp_up_sleep\",\"arguments\":{\"ms\":800},\"_meta\":{\"progressToken\":\"tok\"}}}");
    raw_send(&b,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"mcp_up_sleep\",\"arguments\":{\"ms\":300},\"_meta\":{\"progressToken\":\"tok\"}}}");
    for (int round = 0; round < 100 && !(done_a && done_b); round++) {
        Raw *rs[2] = {&a, &b};
        for (int k = 0; k < 2; k++) {
            bool *done = k ? &done_b : &done_a;
            int *prog = k ? &progress_b : &progress_a;
            if (*done)
                continue;
            _cleanup_json_ yajl_val m = raw_read(rs[k], 100);
            if (!m)
                continue;
            const char *method = json_get_string(m, "method");
            if (method && streq(method, "notifications/progress")) {
                yajl_val p = json_get_object(m, "params");
                int64_t total = 0;
                CHECK(streq(json_get_string(p, "progressToken"), "tok"));
                CHECK(json_get_int(p, "total", &total) == 0);
                CHECK_MSG(total == (k ? 3 : 8), "agent %c got progress of the other call", 'a' + k);
                (*prog)++;
            } else if (!method) {
                int64_t id = 0;
                CHECK(json_get_int(m, "id", &id) == 0 && id == 7);
                const char *t = result_text(m);
                CHECK_MSG(t && streq(t, k ? "slept 300 ms" : "slept 800 ms"), "agent %c got %s",
                          'a' + k, t ? t : "(none)");
                *done = true;
            }
        }
    }
    CHECK(done_a && done_b);
    CHECK_MSG(progress_a >= 1 && progress_b >= 1, "progress a=%d b=%d", progress_a, progress_b);
    /* Nothing of B's arrives at A afterwards, nor the other way round. */
    yajl_val extra = raw_read_skip(&a, 300, "notifications/tools/list_changed");
    CHECK_MSG(!extra, "agent a got a stray message");
    json_free(extra);
    raw_close(&a);
    raw_close(&b);
}

/* ---- _meta other than the progress token reaches the upstream; odd ids keep their type ---- */

static void test_meta_and_ids(Harness *h, const char *uplog)
{
    Raw a;

    raw_init(&a, h, "meta", NULL);
    raw_send(&a,
             "{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"mcp_up_echo\",\"arguments\":{\"text\":\"m1\"},\"_meta\":{\"progressToken\":5,"
             "\"trace\":\"abc-123\"}}}");
    _cleanup_json_ yajl_val r1 = raw_read_skip(&a, H_WAIT_MS, "notifications/tools/list_changed");
    CHECK(r1 && streq(json_get_string(r1, "id"), "s-1") && streq(result_text(r1), "m1"));
    CHECK_MSG(count_in_file(uplog, "\"trace\":\"abc-123\"") == 1, "extra _meta did not pass");
    char want[96];
    snprintf(want, sizeof(want), "\"_meta\":{\"progressToken\":%ld,\"trace\":\"abc-123\"}",
             upstream_call_id(uplog, "\"m1\""));
    CHECK_MSG(count_in_file(uplog, want) == 1, "upstream did not get %s", want);
    /* An id with escapes, and members in another order, take the general path: same result. */
    raw_send(&a, "{\"params\":{\"arguments\":{\"text\":\"m2\"},\"name\":\"mcp_up_echo\"},"
                 "\"id\":\"q\\\"2\",\"method\":\"tools/call\",\"jsonrpc\":\"2.0\"}");
    _cleanup_json_ yajl_val r2 = raw_read_skip(&a, H_WAIT_MS, "notifications/tools/list_changed");
    CHECK(r2 && streq(json_get_string(r2, "id"), "q\"2") && streq(result_text(r2), "m2"));
    /* Bad arguments and an unknown tool are errors under the agent's own id. */
    raw_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"mcp_up_echo\",\"arguments\":[1]}}");
    _cleanup_json_ yajl_val r3 = raw_read_skip(&a, H_WAIT_MS, "notifications/tools/list_changed");
    int64_t id = 0;
    CHECK(r3 && json_get_object(r3, "error") && json_get_int(r3, "id", &id) == 0 && id == 31);
    raw_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":32,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"mcp_up_nope\"}}");
    _cleanup_json_ yajl_val r4 = raw_read_skip(&a, H_WAIT_MS, "notifications/tools/list_changed");
    CHECK(r4 && json_get_object(r4, "error") && json_get_int(r4, "id", &id) == 0 && id == 32);
    raw_close(&a);
}

/* ---- cancel, and a disconnect mid-call ---- */

static void test_cancel(Harness *h, const char *uplog)
{
    Raw a, b;
    mcpc_client *c = h_client(h, "observer");

    raw_init(&a, h, "canceller", NULL);
    raw_init(&b, h, "bystander", NULL);
    raw_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"mcp_up_sleep\",\"arguments\":{\"ms\":20001}}}");
    raw_send(&b, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"mcp_up_sleep\",\"arguments\":{\"ms\":500}}}");
    long up = -1;
    for (int i = 0; i < 200 && up < 0; i++, h_sleep_ms(25))
        up = upstream_call_id(uplog, "20001");
    CHECK_MSG(up > 0, "the long call never reached the upstream");
    raw_send(&a, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                 "{\"requestId\":9,\"reason\":\"user pressed stop\"}}");
    char needle[96];
    snprintf(needle, sizeof(needle), "\"requestId\":%ld", up);
    bool seen = false;
    for (int i = 0; i < 200 && !seen; i++, h_sleep_ms(25))
        seen = count_in_file(uplog, needle) > 0;
    CHECK_MSG(seen, "the upstream got no notifications/cancelled for id %ld", up);
    /* The bystander's call with the same id completes. */
    _cleanup_json_ yajl_val rb = raw_read_skip(&b, H_WAIT_MS, "notifications/tools/list_changed");
    CHECK(rb && result_text(rb) && streq(result_text(rb), "slept 500 ms"));
    /* The canceller gets no response. */
    _cleanup_json_ yajl_val ra = raw_read_skip(&a, 700, "notifications/tools/list_changed");
    CHECK_MSG(!ra, "a cancelled call was answered");

    /* A disconnect mid-call cancels upstream too. */
    raw_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"mcp_up_sleep\",\"arguments\":{\"ms\":20002}}}");
    up = -1;
    for (int i = 0; i < 200 && up < 0; i++, h_sleep_ms(25))
        up = upstream_call_id(uplog, "20002");
    CHECK(up > 0);
    raw_close(&a);
    snprintf(needle, sizeof(needle), "\"requestId\":%ld", up);
    seen = false;
    for (int i = 0; i < 200 && !seen; i++, h_sleep_ms(25))
        seen = count_in_file(uplog, needle) > 0;
    CHECK_MSG(seen, "a vanished agent's call was not cancelled upstream (id %ld)", up);
    yajl_val st = h_status(c);
    int64_t inflight = -1;
    json_get_int(h_server(st, "up"), "callsInFlight", &inflight);
    CHECK_MSG(inflight == 0, "%lld calls still in flight", (long long)inflight);
    json_free(st);
    raw_close(&b);
    mcpc_free(c);
}

/* ---- server-to-client requests ---- */

typedef struct AskState {
    mcpc_client *c;
    int asked, done;
    char *result;
} AskState;

static void on_server_request(void *ud, const char *id, const char *method, const char *params)
{
    AskState *s = ud;

    s->asked++;
    if (streq(method, "sampling/createMessage"))
        mcpc_respond(s->c, id,
                     "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":"
                     "\"answer from the agent\"},\"model\":\"m\"}");
    else if (streq(method, "elicitation/create"))
        mcpc_respond(s->c, id, "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}");
    else
        mcpc_respond_error(s->c, id, -32601, "not here");
    (void)params;
}

static void on_result(void *ud, unsigned long long id, int status, const char *json)
{
    AskState *s = ud;

    (void)id;
    s->done++;
    free(s->result);
    s->result = json ? xstrdup(json) : xasprintf("(status %d)", status);
}

static char *ask_async(AskState *s, const char *args)
{
    s->done = 0;
    CHECK(mcpc_call_tool_async(s->c, "mcp_asker_ask", args, on_result, NULL, s, NULL) == 0);
    for (int i = 0; i < 400 && !s->done; i++) {
        struct pollfd pfd = {mcpc_fd(s->c), POLLIN, 0};
        poll(&pfd, 1, 50);
        CHECK(mcpc_dispatch(s->c) == 0);
    }
    CHECK(s->done == 1);
    return s->result;
}

/* ---- url-mode elicitation: only to an agent that declared it; its completion follows ---- */

/* A raw agent with the given capabilities, initialized. */
static void raw_with_caps(Raw *r, const Harness *h, const char *name, const char *caps)
{
    raw_open(r, h);
    raw_send(r,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
             "\"protocolVersion\":\"2025-11-25\",\"capabilities\":%s,"
             "\"clientInfo\":{\"name\":\"%s\",\"version\":\"1\"}}}",
             caps, name);
    json_free(raw_read(r, H_WAIT_MS));
    raw_send(r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

#define URL_ASK                                                                                    \
    "{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"url\",\"elicitationId\":"           \
    "\"el-42\",\"url\":\"https://example.com/connect\",\"message\":\"Sign in\"}}"

static void test_url_elicitation(Harness *h)
{
    Raw form, url;

    /* elicitation: {} is form mode only: a url-mode request reaches it as a form naming the
     * link; its answer goes back as the action alone; the completion is not its to hear. */
    raw_with_caps(&form, h, "form-only", "{\"elicitation\":{}}");
    raw_send(&form, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"mcp_asker_ask\",\"arguments\":" URL_ASK "}}");
    _cleanup_json_ yajl_val fq =
        raw_read_skip(&form, H_WAIT_MS, "notifications/tools/list_changed");
    yajl_val fp = json_get_object(fq, "params");
    const char *fm = json_get_string(fp, "message");
    CHECK_MSG(fq && streq(json_get_string(fq, "method"), "elicitation/create") &&
                  !json_get(fp, "mode") && !json_get(fp, "url") && fm && strstr(fm, "Sign in") &&
                  strstr(fm, "https://example.com/connect") &&
                  json_get_object(fp, "requestedSchema"),
              "a url-mode request to a form-only agent came as %s", fm ? fm : "nothing");
    _cleanup_free_ char *fid = fq ? json_to_string(json_get(fq, "id")) : xstrdup("0");
    raw_send(&form,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"accept\","
             "\"content\":{\"x\":1}}}",
             fid);
    _cleanup_json_ yajl_val r1 =
        raw_read_skip(&form, H_WAIT_MS, "notifications/tools/list_changed");
    const char *t1 = r1 ? result_text(r1) : NULL;
    CHECK_MSG(t1 && strstr(t1, "accept") && !strstr(t1, "content"),
              "the form's answer reached the server as %s (or the agent heard the completion)",
              t1 ? t1 : "nothing");

    /* -32042 (the call needs a link first): the agent's text names the link. */
    raw_send(&form, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"mcp_asker_ask\",\"arguments\":{\"requireUrl\":"
                    "\"https://example.com/signin\"}}}");
    _cleanup_json_ yajl_val r4 =
        raw_read_skip(&form, H_WAIT_MS, "notifications/tools/list_changed");
    const char *t4 = r4 ? result_text(r4) : NULL;
    CHECK_MSG(t4 && strstr(t4, "-32042") && strstr(t4, "https://example.com/signin"),
              "-32042 gave %s", t4 ? t4 : "nothing");
    raw_close(&form);

    /* elicitation: {url: {}}: asked, answers accept, then hears the completion before the
     * call's result; a form-mode request is not put to it (it did not declare form). */
    raw_with_caps(&url, h, "url-only", "{\"elicitation\":{\"url\":{}}}");
    raw_send(&url, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                   "\"name\":\"mcp_asker_ask\",\"arguments\":" URL_ASK "}}");
    _cleanup_json_ yajl_val req =
        raw_read_skip(&url, H_WAIT_MS, "notifications/tools/list_changed");
    yajl_val rp = json_get_object(req, "params");
    CHECK_MSG(req && streq(json_get_string(req, "method"), "elicitation/create") &&
                  streq(json_get_string(rp, "mode"), "url") &&
                  streq(json_get_string(rp, "elicitationId"), "el-42"),
              "the url-mode request did not reach the agent that declared it");
    _cleanup_free_ char *rid = req ? json_to_string(json_get(req, "id")) : xstrdup("0");
    raw_send(&url, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"accept\"}}", rid);
    _cleanup_json_ yajl_val done =
        raw_read_skip(&url, H_WAIT_MS, "notifications/tools/list_changed");
    CHECK_MSG(done &&
                  streq(json_get_string(done, "method"), "notifications/elicitation/complete") &&
                  streq(json_get_string(json_get_object(done, "params"), "elicitationId"), "el-42"),
              "no notifications/elicitation/complete for el-42");
    _cleanup_json_ yajl_val r2 = raw_read_skip(&url, H_WAIT_MS, "notifications/tools/list_changed");
    const char *t2 = r2 ? result_text(r2) : NULL;
    CHECK_MSG(t2 && strstr(t2, "accept"), "the url elicitation's call gave %s",
              t2 ? t2 : "nothing");
    raw_send(&url, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
                   "\"name\":\"mcp_asker_ask\",\"arguments\":{\"method\":\"elicitation/create\","
                   "\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":\"object\"}}}}}");
    _cleanup_json_ yajl_val r3 = raw_read_skip(&url, H_WAIT_MS, "notifications/tools/list_changed");
    const char *t3 = r3 ? result_text(r3) : NULL;
    CHECK_MSG(t3 && strstr(t3, "-32601"), "form elicitation to a url-only agent gave %s",
              t3 ? t3 : "nothing");

    /* -32042 to an agent that declared url mode: the completion of its elicitation follows. */
    raw_send(&url, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
                   "\"name\":\"mcp_asker_ask\",\"arguments\":{\"requireUrl\":"
                   "\"https://example.com/signin\"}}}");
    int got_error = 0, got_done = 0;
    for (int i = 0; i < 4 && !(got_error && got_done); i++) {
        _cleanup_json_ yajl_val m =
            raw_read_skip(&url, H_WAIT_MS, "notifications/tools/list_changed");
        if (m && streq(json_get_string(m, "method"), "notifications/elicitation/complete") &&
            streq(json_get_string(json_get_object(m, "params"), "elicitationId"), "req-1"))
            got_done++;
        else if (m && result_text(m) && strstr(result_text(m), "-32042"))
            got_error++;
    }
    CHECK_MSG(got_error == 1 && got_done == 1, "-32042 to a url agent: %d results, %d completions",
              got_error, got_done);
    raw_close(&url);
}

static void test_server_requests(Harness *h, const char *root)
{
    mcpc_options o = {.socket_path = h->socket, .client_name = "answerer", .timeout_ms = 60000};
    AskState s = {0};
    _cleanup_free_ char *roots = NULL;
    int is_error;

    s.c = mcpc_new(&o);
    mcpc_set_server_request_handler(s.c, on_server_request, &s);
    CHECK(mcpc_connect(s.c) == 0);
    char *r = ask_async(&s, "{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],"
                            "\"maxTokens\":5}}");
    CHECK_MSG(r && strstr(r, "answer from the agent"), "sampling gave %s", r);
    r = ask_async(&s, "{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\","
                      "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"name\":{"
                      "\"type\":\"string\"},\"colour\":{\"type\":\"string\",\"default\":"
                      "\"teal\"}}}}}");
    CHECK_MSG(r && strstr(r, "Ada") && strstr(r, "teal"), "elicitation gave %s", r);
    CHECK(s.asked == 2);
    free(s.result);
    mcpc_free(s.c);

    /* An agent that declared nothing: sampling is refused, roots come from its workspace. */
    mcpc_options o2 = {.socket_path = h->socket, .client_name = "plain", .cwd = root};
    mcpc_client *c = mcpc_new(&o2);
    CHECK(mcpc_connect(c) == 0);
    char *t = h_call_text(c, "mcp_asker_ask",
                          "{\"method\":\"sampling/createMessage\",\"params\":{}}", &is_error);
    CHECK_MSG(strstr(t, "-32601"), "sampling without a capable agent gave %s", t);
    free(t);
    t = h_call_text(c, "mcp_asker_ask", "{\"method\":\"roots/list\"}", &is_error);
    roots = xasprintf("file://%s", root);
    CHECK_MSG(strstr(t, roots), "roots/list gave %s", t);
    free(t);
    mcpc_free(c);

    /* A raw agent that answers twice: the second answer is dropped, nothing breaks. */
    Raw a;
    raw_open(&a, h);
    raw_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                 "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"sampling\":{}},"
                 "\"clientInfo\":{\"name\":\"twice\",\"version\":\"1\"}}}");
    json_free(raw_read(&a, H_WAIT_MS));
    raw_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"mcp_asker_ask\",\"arguments\":{\"method\":\"sampling/createMessage\"}}}");
    _cleanup_json_ yajl_val req = raw_read_skip(&a, H_WAIT_MS, "notifications/tools/list_changed");
    CHECK(req && streq(json_get_string(req, "method"), "sampling/createMessage"));
    _cleanup_free_ char *rid = json_to_string(json_get(req, "id"));
    for (int k = 0; k < 2; k++)
        raw_send(&a,
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"role\":\"assistant\",\"content\":"
                 "{\"type\":\"text\",\"text\":\"once\"},\"model\":\"m\"}}",
                 rid);
    _cleanup_json_ yajl_val res = raw_read_skip(&a, H_WAIT_MS, "notifications/tools/list_changed");
    CHECK_MSG(res && result_text(res) && strstr(result_text(res), "once"), "double answer");

    /* An agent that never answers: after the server's callTimeout the request is withdrawn
     * (notifications/cancelled to the agent), the call ends with an error, nothing is stuck. */
    raw_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"mcp_slowask_ask\",\"arguments\":{\"method\":\"sampling/createMessage\"}}}");
    _cleanup_json_ yajl_val req2 = raw_read_skip(&a, H_WAIT_MS, "notifications/tools/list_changed");
    CHECK(req2 && streq(json_get_string(req2, "method"), "sampling/createMessage"));
    int64_t asked_id = -1, n_cancel = 0, n_result = 0;
    json_get_int(req2, "id", &asked_id);
    for (int i = 0; i < 40 && !(n_cancel && n_result); i++) {
        _cleanup_json_ yajl_val m = raw_read(&a, 500);
        if (!m)
            continue;
        int64_t withdrawn = -2, id = -2;
        json_get_int(json_get_object(m, "params"), "requestId", &withdrawn);
        json_get_int(m, "id", &id);
        if (streq(json_get_string(m, "method"), "notifications/cancelled") && withdrawn == asked_id)
            n_cancel++;
        else if (id == 3 && json_get_object(m, "result"))
            n_result++;
    }
    CHECK_MSG(n_cancel == 1 && n_result == 1, "never answering: %lld cancels, %lld results",
              (long long)n_cancel, (long long)n_result);
    raw_close(&a);
    mcpc_client *after = h_client(h, "after-silence");
    _cleanup_free_ char *said =
        h_call_text(after, "mcp_slowask_say", "{\"level\":\"info\",\"text\":\"x\"}", NULL);
    CHECK_MSG(streq(said, "said"), "say gave %s", said);
    if (!streq(said, "said")) {
        _cleanup_free_ char *tl = NULL;
        mcpc_list_tools(after, &tl);
        fprintf(stderr, "tools: %.3000s\n", tl);
        yajl_val st2 = h_status(after);
        _cleanup_free_ char *t2 = json_to_string(h_server(st2, "slowask"));
        fprintf(stderr, "slowask: %s\n", t2);
        json_free(st2);
    }
    yajl_val st = h_status(after);
    int64_t inflight = -1;
    json_get_int(h_server(st, "slowask"), "callsInFlight", &inflight);
    CHECK(inflight == 0);
    json_free(st);
    mcpc_free(after);
}

/* ---- sessions and subagents ---- */

static void test_sessions(Harness *h, const char *root)
{
    mcpc_options po = {.socket_path = h->socket, .client_name = "parent", .cwd = root};
    mcpc_client *parent = mcpc_new(&po), *child, *bad;
    bool found;

    CHECK(mcpc_connect(parent) == 0);
    const char *token = mcpc_session(parent);
    CHECK(token && strlen(token) == 32);
    CHECK(streq(mcpc_session_env(parent) + strlen("MCPD_SESSION="), token));
    /* The child names no cwd: the token alone puts it in the parent's workspace. */
    setenv("MCPD_SESSION", token, 1);
    mcpc_options co = {.socket_path = h->socket, .client_name = "child"};
    child = mcpc_new(&co);
    unsetenv("MCPD_SESSION");
    CHECK(mcpc_connect(child) == 0);
    CHECK(streq(mcpc_session(child), token));
    h_list_count(child, "mcp_proj1_echo", &found);
    CHECK_MSG(found, "the subagent does not see its parent's project tools");
    _cleanup_free_ char *t = h_call_text(child, "mcp_proj1_cwd", NULL, NULL);
    CHECK_MSG(streq(t, root), "project server runs in %s", t);

    yajl_val st = h_status(parent), agents = json_get_array(st, "agents");
    int64_t parent_id = -1, child_parent = -2, pws = -1, cws = -2;
    for (size_t i = 0; i < json_array_len(agents); i++) {
        yajl_val a = json_array_at(agents, i);
        if (streq(json_get_string(a, "name"), "parent")) {
            json_get_int(a, "id", &parent_id);
            json_get_int(a, "workspace", &pws);
        }
        if (streq(json_get_string(a, "name"), "child")) {
            json_get_int(a, "parent", &child_parent);
            json_get_int(a, "workspace", &cws);
        }
    }
    CHECK_MSG(parent_id == child_parent && pws == cws, "status: child not under its parent");
    json_free(st);

    /* A wrong token is refused, with a message that says why. */
    mcpc_options bo = {.socket_path = h->socket,
                       .client_name = "intruder",
                       .session = "0123456789abcdef0123456789abcdef"};
    bad = mcpc_new(&bo);
    CHECK(mcpc_connect(bad) != 0);
    CHECK_MSG(strstr(mcpc_errmsg(bad), "session"), "refusal said: %s", mcpc_errmsg(bad));
    mcpc_free(bad);
    /* The token dies with its session. */
    _cleanup_free_ char *saved = xstrdup(token);
    mcpc_free(parent);
    h_sleep_ms(200);
    bo.session = saved;
    bad = mcpc_new(&bo);
    CHECK_MSG(mcpc_connect(bad) != 0, "a dead session's token was accepted");
    mcpc_free(bad);
    /* The subagent keeps working after its parent left. */
    free(t);
    t = h_call_text(child, "mcp_proj1_echo", "{\"text\":\"still here\"}", NULL);
    CHECK(streq(t, "still here"));
    mcpc_free(child);
}

/* ---- workspaces: shared user servers, separate project servers ---- */

static void test_workspaces(Harness *h, const char *root1, const char *root2)
{
    mcpc_options o1 = {.socket_path = h->socket, .client_name = "in-1", .cwd = root1};
    mcpc_options o2 = {.socket_path = h->socket, .client_name = "in-2", .cwd = root2};
    mcpc_client *c1 = mcpc_new(&o1), *c2 = mcpc_new(&o2), *cu = h_client(h, "no-project");
    bool found;

    CHECK(mcpc_connect(c1) == 0 && mcpc_connect(c2) == 0);
    _cleanup_free_ char *p1 = h_call_text(c1, "mcp_up_pid", NULL, NULL);
    _cleanup_free_ char *p2 = h_call_text(c2, "mcp_up_pid", NULL, NULL);
    _cleanup_free_ char *pu = h_call_text(cu, "mcp_up_pid", NULL, NULL);
    CHECK_MSG(streq(p1, p2) && streq(p1, pu), "user server not shared: %s %s %s", p1, p2, pu);
    h_list_count(c1, "mcp_proj1_echo", &found);
    CHECK(found);
    h_list_count(c1, "mcp_proj2_echo", &found);
    CHECK_MSG(!found, "workspace 1 sees workspace 2's server");
    h_list_count(c2, "mcp_proj2_echo", &found);
    CHECK(found);
    h_list_count(cu, "mcp_proj1_echo", &found);
    CHECK_MSG(!found, "an agent without a project sees project servers");
    /* The same project config in two roots: two processes, each in its own root. */
    _cleanup_free_ char *w1 = h_call_text(c1, "mcp_same_cwd", NULL, NULL);
    _cleanup_free_ char *w2 = h_call_text(c2, "mcp_same_cwd", NULL, NULL);
    CHECK_MSG(streq(w1, root1) && streq(w2, root2), "same-config servers: %s %s", w1, w2);
    yajl_val st = h_status(cu);
    CHECK(json_array_len(json_get_array(st, "workspaces")) >= 3);
    json_free(st);
    mcpc_free(c1);
    mcpc_free(c2);
    mcpc_free(cu);
}

/* ---- project servers are released workspaceLingerMs after a project's last agent leaves ---- */

static int count_servers(mcpc_client *c, const char *name)
{
    yajl_val st = h_status(c), servers = json_get_array(st, "servers");
    int n = 0;

    for (size_t i = 0; i < json_array_len(servers); i++)
        n += streq(json_get_string(json_array_at(servers, i), "name"), name);
    json_free(st);
    return n;
}

static void test_linger(Harness *h, const char *root1)
{
    mcpc_client *c = h_client(h, "watcher");
    bool gone = false;

    /* Every project agent has left (settings: workspaceLingerMs 1500). */
    for (int i = 0; i < 300 && !gone; i++, h_sleep_ms(50))
        gone =
            !count_servers(c, "proj1") && !count_servers(c, "proj2") && !count_servers(c, "same");
    CHECK_MSG(gone, "project servers outlived their workspace's linger time");
    CHECK(count_servers(c, "up") == 1 && h_wait_state(c, "up", "connected", H_WAIT_MS));
    /* A new agent brings its project's servers back. */
    mcpc_options o = {.socket_path = h->socket, .client_name = "back", .cwd = root1};
    mcpc_client *b = mcpc_new(&o);
    bool found = false;
    CHECK(mcpc_connect(b) == 0);
    h_list_count(b, "mcp_proj1_echo", &found);
    CHECK(found);
    mcpc_free(b);
    mcpc_free(c);
}

/* ---- a stalled reader is dropped; everyone else keeps being answered ---- */

static void test_stalled_reader(Harness *h)
{
    enum { N_AGENTS = 50 };
    mcpc_client *agents[N_AGENTS];
    Raw stall;
    int ok = 0;

    raw_init(&stall, h, "stalled", NULL);
    /* Never reads: 40 results of 1 MB each, far past its output bound. */
    for (int i = 0; i < 40; i++)
        raw_send(&stall,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
                 "\"name\":\"mcp_up_big\",\"arguments\":{\"bytes\":1000000}}}",
                 100 + i);
    for (int i = 0; i < N_AGENTS; i++) {
        char name[32];
        snprintf(name, sizeof(name), "steady-%d", i);
        agents[i] = h_client(h, name);
    }
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < N_AGENTS; i++) {
            char args[64];
            snprintf(args, sizeof(args), "{\"text\":\"%d-%d\"}", i, round);
            _cleanup_free_ char *t = h_call_text(agents[i], "mcp_up_echo", args, NULL);
            char want[32];
            snprintf(want, sizeof(want), "%d-%d", i, round);
            ok += streq(t, want);
        }
    CHECK_MSG(ok == 3 * N_AGENTS, "%d of %d answers were right", ok, 3 * N_AGENTS);
    bool dropped = false;
    for (int i = 0; i < 200 && !dropped; i++, h_sleep_ms(50)) {
        yajl_val st = h_status(agents[0]), list = json_get_array(st, "agents");
        dropped = true;
        for (size_t k = 0; k < json_array_len(list); k++)
            if (streq(json_get_string(json_array_at(list, k), "name"), "stalled"))
                dropped = false;
        json_free(st);
    }
    CHECK_MSG(dropped, "the stalled reader was never dropped");
    raw_close(&stall);
    for (int i = 0; i < N_AGENTS; i++)
        mcpc_free(agents[i]);
}

/* ---- the asynchronous API: progress and cancel ---- */

typedef struct AsyncState {
    int results, progress, last_status;
} AsyncState;

static void on_async_result(void *ud, unsigned long long id, int status, const char *json)
{
    AsyncState *s = ud;

    (void)id, (void)json;
    s->results++;
    s->last_status = status;
}

static void on_async_progress(void *ud, unsigned long long id, double p, double total,
                              const char *msg)
{
    AsyncState *s = ud;

    (void)id, (void)p, (void)total, (void)msg;
    s->progress++;
}

static void test_async(Harness *h)
{
    mcpc_client *c = h_client(h, "async");
    AsyncState s = {0};
    unsigned long long id1, id2;

    CHECK(mcpc_call_tool_async(c, "mcp_up_sleep", "{\"ms\":500}", on_async_result,
                               on_async_progress, &s, &id1) == 0);
    CHECK(mcpc_call_tool_async(c, "mcp_up_sleep", "{\"ms\":20003}", on_async_result, NULL, &s,
                               &id2) == 0);
    CHECK(mcpc_pending(c) == 2);
    for (int i = 0; i < 400 && s.results < 1; i++) {
        struct pollfd pfd = {mcpc_fd(c), POLLIN | (mcpc_want_write(c) ? POLLOUT : 0), 0};
        poll(&pfd, 1, 50);
        CHECK(mcpc_dispatch(c) == 0);
    }
    CHECK(s.results == 1 && s.last_status == 0);
    CHECK_MSG(s.progress >= 1, "no progress for an asynchronous call");
    CHECK(mcpc_cancel(c, id2) == 0);
    CHECK(s.results == 2 && s.last_status == -ECANCELED);
    CHECK(mcpc_pending(c) == 0);
    CHECK(mcpc_cancel(c, id2) == -ENOENT);
    /* Blocking calls still work on the same client. */
    _cleanup_free_ char *t = h_call_text(c, "mcp_up_echo", "{\"text\":\"mixed\"}", NULL);
    CHECK(streq(t, "mixed"));
    mcpc_free(c);
}

/* ---- logging: per-agent levels, the most verbose one upstream ---- */

/* The texts of the log messages an agent receives until it has been quiet for 500 ms. */
static char *collect_messages(Raw *r)
{
    StrBuf sb = STRBUF_INIT;

    for (;;) {
        _cleanup_json_ yajl_val m = raw_read(r, 500);
        if (!m)
            return strbuf_detach(&sb, NULL);
        if (streq(json_get_string(m, "method"), "notifications/message")) {
            strbuf_puts(&sb, json_get_string(json_get_object(m, "params"), "data"));
            strbuf_putc(&sb, ' ');
        }
    }
}

static void test_logging(Harness *h, const char *uplog)
{
    Raw verbose, quiet, plain;
    mcpc_client *c = h_client(h, "logger");
    _cleanup_free_ char *t = NULL;

    raw_init(&verbose, h, "verbose", NULL);
    raw_init(&quiet, h, "quiet", NULL);
    raw_init(&plain, h, "plain", NULL);
    raw_send(&verbose, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\","
                       "\"params\":{\"level\":\"debug\"}}");
    raw_send(&quiet, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\","
                     "\"params\":{\"level\":\"error\"}}");
    raw_send(&plain, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\","
                     "\"params\":{\"level\":\"loud\"}}");
    _cleanup_json_ yajl_val bad = raw_read(&plain, H_WAIT_MS);
    CHECK_MSG(json_get_object(bad, "error"), "an unknown level was accepted");
    json_free(raw_read(&verbose, H_WAIT_MS));
    json_free(raw_read(&quiet, H_WAIT_MS));
    bool set = false;
    for (int i = 0; i < 200 && !set; i++, h_sleep_ms(25))
        set = count_in_file(uplog, "\"logging/setLevel\",\"params\":{\"level\":\"debug\"}") > 0;
    CHECK_MSG(set, "the upstream was not set to the most verbose level asked (debug)");
    t = h_call_text(c, "mcp_asker_say", "{\"level\":\"info\",\"text\":\"info-line\"}", NULL);
    CHECK(streq(t, "said"));
    free(t);
    t = h_call_text(c, "mcp_asker_say", "{\"level\":\"debug\",\"text\":\"debug-line\"}", NULL);
    free(t);
    t = h_call_text(c, "mcp_asker_say", "{\"level\":\"error\",\"text\":\"error-line\"}", NULL);
    _cleanup_free_ char *v = collect_messages(&verbose), *q = collect_messages(&quiet);
    _cleanup_free_ char *p = collect_messages(&plain);
    CHECK_MSG(v && streq(v, "info-line debug-line error-line "), "debug agent heard: %s", v);
    CHECK_MSG(q && streq(q, "error-line "), "error agent heard: %s", q);
    CHECK_MSG(p && streq(p, "info-line error-line "), "default agent heard: %s", p);
    raw_close(&verbose);
    raw_close(&quiet);
    raw_close(&plain);
    mcpc_free(c);
}

/* ---- list_changed only for a real change: not to an agent that already has the view ---- */

static void test_no_stray_list_changed(Harness *h)
{
    Raw a;
    char dir[400], meta[600];

    /* A fresh workspace (a folder with no servers of its own) whose servers are all connected:
     * the agent lists the tools, and nothing it does not have is announced afterwards. */
    snprintf(dir, sizeof(dir), "%s/plain-folder", h->dir);
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(meta, sizeof(meta), "{\"mcpd/cwd\":\"%s\"}", dir);
    raw_init(&a, h, "fresh", meta);
    raw_send(&a, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    _cleanup_json_ yajl_val list = raw_read(&a, H_WAIT_MS);
    CHECK_MSG(list && json_get_array(json_get_object(list, "result"), "tools"),
              "tools/list of a fresh workspace failed");
    /* Well past the coalescing delay of a list_changed (LIST_CHANGED_COALESCE_MS). */
    _cleanup_json_ yajl_val stray = raw_read(&a, 1000);
    CHECK_MSG(!stray, "a fresh workspace sent %s to an agent that had just listed its tools",
              stray ? json_get_string(stray, "method") : "");
    /* A real change is still announced: a server taken away removes its tools. */
    mcpc_client *c = h_client(h, "changer");
    _cleanup_free_ char *res = NULL;
    CHECK(mcpc_request(c, "mcpd/disconnect", "{\"server\":\"slowask\"}", &res) == 0);
    _cleanup_json_ yajl_val changed = raw_read(&a, H_WAIT_MS);
    CHECK_MSG(changed &&
                  streq(json_get_string(changed, "method"), "notifications/tools/list_changed"),
              "a server disconnected and the agent was not told its tools changed");
    mcpc_free(c);
    raw_close(&a);
}

int main(void)
{
    Harness h;
    char root1[400], root2[400], uplog[400], buf[1200];

    h_setup(&h, "multiplex");
    snprintf(uplog, sizeof(uplog), "%s/up.log", h.dir);
    snprintf(root1, sizeof(root1), "%s/proj-one", h.dir);
    snprintf(root2, sizeof(root2), "%s/proj-two", h.dir);
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"up\": {\"command\": \"%s\", \"args\": [\"--log\", \"%s\"]},"
                  " \"asker\": {\"command\": \"%s\", \"args\": [\"--ask\"]},"
                  " \"slowask\": {\"command\": \"%s\", \"args\": [\"--ask\"],"
                  " \"callTimeout\": 1500}}}",
                  h_fake(), uplog, h_fake(), h_fake());
    h_write_config(&h, cfg);
    h_write_settings(&h, "{\"maxMessageBytes\": 1048576, \"workspaceLingerMs\": 1500}");
    const char *roots[2] = {root1, root2};
    for (int i = 0; i < 2; i++) {
        snprintf(buf, sizeof(buf), "%s/.mcpd", roots[i]);
        CHECK(mkdir(roots[i], 0700) == 0 && mkdir(buf, 0700) == 0);
        snprintf(buf, sizeof(buf), "%s/.mcpd/mcp.json", roots[i]);
        FILE *f = fopen(buf, "w");
        fprintf(f,
                "{\"mcpServers\": {\"proj%d\": {\"command\": \"%s\"},"
                " \"same\": {\"command\": \"%s\"}}}",
                i + 1, h_fake(), h_fake());
        fclose(f);
    }
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "setup");
    CHECK(h_wait_state(c, "up", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "asker", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "slowask", "connected", H_WAIT_MS));
    for (int i = 0; i < 2; i++) {
        /* The user approves both projects' servers (mcpctl trust), as before any agent. */
        _cleanup_free_ char *out = NULL;
        snprintf(buf, sizeof(buf), "{\"cwd\": \"%s\"}", roots[i]);
        CHECK(mcpc_request(c, "mcpd/trust", buf, &out) == 0);
    }
    mcpc_free(c);

    test_same_ids(&h);
    test_meta_and_ids(&h, uplog);
    test_cancel(&h, uplog);
    test_async(&h);
    test_server_requests(&h, root1);
    test_url_elicitation(&h);
    test_sessions(&h, root1);
    test_workspaces(&h, root1, root2);
    test_linger(&h, root1);
    test_logging(&h, uplog);
    test_stalled_reader(&h);
    test_no_stray_list_changed(&h);

    if (h_failures)
        h_dump_log(&h);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-multiplex");
}
