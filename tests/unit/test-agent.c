// SPDX-License-Identifier: MIT
// test-agent: the reply API writes 2025 JSON-RPC lines itself, and hands everything it is given
// for an agent with an era writer (Peer.writer) to that writer as one structured AgentOut,
// nothing written behind its back; agent_reset keeps only the era's state.

#include <signal.h>

#include "tests/unit/core-fakes.h"

/* A writer that keeps what it is handed: kind, id and the fields each kind uses. */
typedef struct FakeWriter {
    AgentWriter w;
    int n;
    AgentOutKind kind;
    char *id;     /* the id as JSON text, however it came */
    char *result; /* a tree written as text, or raw text */
    bool raw, raw_own;
    int code;
    char *message, *method, *params;
    uint64_t request_id;
} FakeWriter;

static char *text_of(yajl_val v)
{
    return v ? json_to_string(v) : NULL;
}

static void fake_clear(FakeWriter *f)
{
    free(f->id);
    free(f->result);
    free(f->message);
    free(f->method);
    free(f->params);
    *f = (FakeWriter){.w = f->w};
}

static void fake_write(AgentWriter *w, Peer *p, const AgentOut *o)
{
    FakeWriter *f = (FakeWriter *)w;

    (void)p;
    fake_clear(f);
    f->n = 1;
    f->kind = o->kind;
    f->id = o->id_text ? xstrdup(o->id_text) : text_of(o->id);
    f->raw = o->raw != NULL;
    f->raw_own = o->raw_own;
    f->result = o->raw ? xstrndup(o->raw, o->raw_len) : text_of(o->result);
    f->code = o->code;
    f->message = o->message ? xstrdup(o->message) : NULL;
    f->method = o->method ? xstrdup(o->method) : NULL;
    f->params = text_of(o->params);
    f->request_id = o->request_id;
}

static int n_done;

static void on_done(const void *data, size_t n, void *arg)
{
    (void)data, (void)n, (void)arg;
    n_done++;
}

static void check_line(Core *c, int fd, const char *want)
{
    _cleanup_free_ char *line = core_read_line(c, fd, CORE_WAIT_MS);

    CHECK_MSG(line && streq(line, want), "wrote %s, not %s", line ? line : "(nothing)", want);
}

static void check_quiet(Core *c, int fd)
{
    _cleanup_free_ char *line = core_read_line(c, fd, CORE_QUIET_MS);

    CHECK_MSG(!line, "written behind the writer's back: %s", line);
}

/* Without a writer: the 2025 lines, each API as JSON-RPC writes it. */
static void test_plain_lines(void)
{
    static const char view[] = "{\"tools\":[]}";
    _cleanup_json_ yajl_val id = json_int_new(7), r = json_parse("{\"a\":1}", NULL);
    _cleanup_json_ yajl_val params = json_parse("{\"x\":true}", NULL);
    StrBuf scratch = STRBUF_INIT;
    Core c;
    int fd;

    core_init(&c);
    Peer *p = core_agent(&c, &fd);
    agent_reply(&c.peers, p->id, id, r);
    check_line(&c, fd, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"a\":1}}");
    agent_reply(&c.peers, p->id, id, NULL);
    check_line(&c, fd, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
    agent_reply_text_to(p, &scratch, "\"s\"", "{\"b\":2}", 7);
    check_line(&c, fd, "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":{\"b\":2}}");
    agent_reply_tree_text(&c.peers, &scratch, p->id, "\"t\"", r);
    check_line(&c, fd, "{\"jsonrpc\":\"2.0\",\"id\":\"t\",\"result\":{\"a\":1}}");
    agent_reply_error_text(&c.peers, &scratch, p->id, "3", -32602, "bad \"x\"");
    check_line(&c, fd,
               "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"bad "
               "\\\"x\\\"\"}}");
    agent_reply_error(&c.peers, p->id, id, -32601, "no");
    check_line(&c, fd,
               "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,\"message\":\"no\"}}");
    n_done = 0;
    agent_reply_ref(p, id, view, strlen(view), on_done, NULL);
    check_line(&c, fd, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":[]}}");
    CHECK_INTEQ(n_done, 1);
    agent_notify(&c.peers, p->id, "notifications/x", params);
    check_line(&c, fd,
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":{\"x\":true}}");
    CHECK(agent_request(&c.peers, p->id, 9, "roots/list", NULL));
    check_line(&c, fd, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"roots/list\"}");
    agent_broadcast(&c.peers, &c.agents, "notifications/tools/list_changed", NULL, NULL, NULL);
    check_line(&c, fd, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
    check_quiet(&c, fd);
    strbuf_deinit(&scratch);
    close(fd);
    core_deinit(&c);
}

/* With a writer: each API hands it what it was given, and nothing goes out on its own. */
static void test_writer_gets_each_reply(void)
{
    static const char view[] = "{\"tools\":[]}";
    _cleanup_json_ yajl_val id = json_int_new(7), r = json_parse("{\"a\":1}", NULL);
    _cleanup_json_ yajl_val params = json_parse("{\"x\":true}", NULL);
    FakeWriter f = {.w = {fake_write}};
    StrBuf scratch = STRBUF_INIT;
    Core c;
    int fd;

    core_init(&c);
    Peer *p = core_agent(&c, &fd);
    p->writer = &f.w;

    agent_reply(&c.peers, p->id, id, r);
    CHECK(f.n == 1 && f.kind == AGENT_OUT_RESULT && !f.raw);
    CHECK_STREQ(f.id, "7");
    CHECK_STREQ(f.result, "{\"a\":1}");

    /* The hot path's reply: the server's bytes, not mcpd's own. */
    agent_reply_text_to(p, &scratch, "\"s\"", "{\"b\":2}", 7);
    CHECK(f.kind == AGENT_OUT_RESULT && f.raw && !f.raw_own);
    CHECK_STREQ(f.id, "\"s\"");
    CHECK_STREQ(f.result, "{\"b\":2}");

    agent_reply_tree_text(&c.peers, &scratch, p->id, "\"t\"", r);
    CHECK(f.kind == AGENT_OUT_RESULT && !f.raw);
    CHECK_STREQ(f.id, "\"t\"");
    CHECK_STREQ(f.result, "{\"a\":1}");

    /* The view: mcpd's own object, handed as such; its bytes are released at once. */
    n_done = 0;
    agent_reply_ref(p, id, view, strlen(view), on_done, NULL);
    CHECK(f.kind == AGENT_OUT_RESULT && f.raw && f.raw_own);
    CHECK_STREQ(f.result, view);
    CHECK_INTEQ(n_done, 1);
    agent_reply_raw(&c.peers, p->id, id, view, strlen(view));
    CHECK(f.kind == AGENT_OUT_RESULT && f.raw && f.raw_own);

    agent_reply_error_text(&c.peers, &scratch, p->id, "3", -32602, "bad");
    CHECK(f.kind == AGENT_OUT_ERROR && f.code == -32602);
    CHECK_STREQ(f.id, "3");
    CHECK_STREQ(f.message, "bad");
    agent_reply_error(&c.peers, p->id, id, -32601, "no");
    CHECK(f.kind == AGENT_OUT_ERROR && f.code == -32601);
    CHECK_STREQ(f.id, "7");

    agent_notify(&c.peers, p->id, "notifications/x", params);
    CHECK(f.kind == AGENT_OUT_NOTIFY);
    CHECK_STREQ(f.method, "notifications/x");
    CHECK_STREQ(f.params, "{\"x\":true}");
    fake_clear(&f);
    agent_broadcast(&c.peers, &c.agents, "notifications/tools/list_changed", NULL, NULL, NULL);
    CHECK(f.n == 1 && f.kind == AGENT_OUT_NOTIFY);
    CHECK_STREQ(f.method, "notifications/tools/list_changed");

    CHECK(agent_request(&c.peers, p->id, 9, "roots/list", params));
    CHECK(f.kind == AGENT_OUT_REQUEST && f.request_id == 9);
    CHECK_STREQ(f.method, "roots/list");

    check_quiet(&c, fd);
    /* Another agent without a writer still gets the broadcast as a line. */
    int fd2;
    core_agent(&c, &fd2);
    agent_broadcast(&c.peers, &c.agents, "notifications/tools/list_changed", NULL, NULL, NULL);
    check_line(&c, fd2, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
    check_quiet(&c, fd);
    p->writer = NULL;
    fake_clear(&f);
    strbuf_deinit(&scratch);
    close(fd);
    close(fd2);
    core_deinit(&c);
}

static void fake_modern_free(void *arg)
{
    (*(int *)arg)++;
}

/* agent_reset: an agent as new, but for its era and the era's state. */
static void test_reset_keeps_the_era(void)
{
    AgentRegistry ar = {IDMAP_INIT};
    Agent *a = agent_ensure(&ar, 5);
    int freed = 0;

    a->initialized = true;
    a->client_name = xstrdup("agent");
    a->cwd = xstrdup("/x");
    a->workspace_id = 3;
    a->session_id = 4;
    a->caps = AGENT_CAP_ROOTS;
    a->log_level = 2;
    a->n_requests = 9;
    a->era = AGENT_ERA_MODERN;
    a->modern = &freed;
    a->modern_free = fake_modern_free;
    idmap_put(&a->requests, 1, a);
    agent_reset(a);
    CHECK(agent_get(&ar, 5) == a);
    CHECK(!a->initialized && !a->client_name && !a->cwd && !a->workspace_id && !a->session_id);
    CHECK(a->caps == 0 && a->log_level == -1 && a->n_requests == 0 && a->requests.n == 0);
    CHECK(a->id == 5 && a->era == AGENT_ERA_MODERN && a->modern == &freed);
    CHECK_INTEQ(freed, 0);
    agent_registry_deinit(&ar);
    CHECK_INTEQ(freed, 1); /* the era's state goes with the agent, once */
}

int main(void)
{
    (void)core_add_server; /* core-fakes.h's, not needed here */
    signal(SIGPIPE, SIG_IGN);
    RUN(test_plain_lines);
    RUN(test_writer_gets_each_reply);
    RUN(test_reset_keeps_the_era);
    return test_main_result();
}
