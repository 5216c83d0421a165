// SPDX-License-Identifier: MIT
// test-upstream: the MCP client session (daemon/upstream/upstream.c) over a fake transport:
// handshake, replies matched by id, timeouts, paging, server requests, a transport that dies.
//
// upstream.c is compiled into this program, and the program itself provides the transport
// constructors of daemon/upstream/transport.h: every session talks to the fake below, which
// records what upstream sends and delivers what the test scripts from the event loop, as a
// real transport would (never from inside send()).

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/upstream/transport-http.h"
#include "daemon/upstream/transport-stdio.h"
#include "daemon/upstream/transport.h"
#include "daemon/upstream/upstream.h"
#include "tests/unit/test.h"

/* Lines one test may send or queue: far more than any scenario here needs. */
#define FAKE_MAX_LINES 64
/* How long a wait for the loop may take before the test gives up (generous: a loaded box). */
#define WAIT_MS 10000
/* A request timeout short enough to wait for, long enough to be the only thing firing. */
#define SHORT_TIMEOUT_MS 50

/* The one fake transport (a test runs one session at a time). */
typedef struct Fake {
    Transport t;
    bool live;                  /* created and not yet closed by upstream */
    bool closed;                /* upstream called close() */
    const char *kind;           /* which constructor made it: "stdio" or "http" */
    int send_error;             /* when non-zero, send() fails with it */
    char *sent[FAKE_MAX_LINES]; /* lines upstream sent, without their newline */
    size_t n_sent;
    char *queue[FAKE_MAX_LINES]; /* lines to deliver to upstream from the loop */
    size_t n_queue;
    const char *close_reason; /* after the queue: report the transport dead, with this */
    struct event *deliver;
} Fake;

static Fake fake;
static struct event_base *base;

static int fake_send(Transport *t, const char *line, size_t len)
{
    (void)t;
    if (fake.send_error)
        return fake.send_error;
    CHECK(len > 0 && line[len - 1] == '\n');
    if (fake.n_sent < FAKE_MAX_LINES)
        fake.sent[fake.n_sent++] = xstrndup(line, len ? len - 1 : 0);
    return 0;
}

static void fake_close(Transport *t)
{
    (void)t;
    fake.closed = true;
    fake.live = false;
}

static void fake_status(Transport *t, yajl_val obj)
{
    (void)t, (void)obj;
}

static const TransportOps fake_ops = {"fake", fake_send, fake_close, fake_status, NULL};

/* Deliver the queued lines, then the death if one is scripted, as the loop would. */
static void on_deliver(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    for (size_t i = 0; i < fake.n_queue; i++) {
        char *line = fake.queue[i];
        fake.queue[i] = NULL;
        if (fake.live)
            fake.t.cb.message(fake.t.userdata, line, strlen(line));
        free(line);
    }
    fake.n_queue = 0;
    if (fake.close_reason && fake.live) {
        const char *why = fake.close_reason;
        fake.close_reason = NULL;
        fake.t.cb.closed(fake.t.userdata, why);
    }
}

static int fake_new(Transport **tp, const char *kind, const TransportCallbacks *cb, void *ud)
{
    CHECK(!fake.live);
    fake.t = (Transport){.ops = &fake_ops, .cb = *cb, .userdata = ud, .base = base};
    fake.live = true;
    fake.closed = false;
    fake.kind = kind;
    if (!fake.deliver)
        fake.deliver = event_new(base, -1, 0, on_deliver, NULL);
    *tp = &fake.t;
    return 0;
}

int transport_stdio_new(Transport **tp, struct event_base *b, const ServerConfig *cfg,
                        const char *default_cwd, const TransportCallbacks *cb, void *userdata,
                        char **whyp)
{
    (void)b, (void)cfg, (void)default_cwd, (void)whyp;
    return fake_new(tp, "stdio", cb, userdata);
}

int transport_http_new(Transport **tp, struct event_base *b, const ServerConfig *cfg,
                       int64_t max_call_timeout_ms, const TransportCallbacks *cb, void *userdata,
                       char **whyp)
{
    (void)b, (void)cfg, (void)max_call_timeout_ms, (void)whyp;
    return fake_new(tp, "http", cb, userdata);
}

/* Queue one line for upstream (printf-style); it arrives on the next loop turn. */
__attribute__((format(printf, 1, 2))) static void fake_push(const char *fmt, ...)
{
    va_list ap;
    char *line;

    va_start(ap, fmt);
    CHECK(vasprintf(&line, fmt, ap) >= 0);
    va_end(ap);
    if (fake.n_queue < FAKE_MAX_LINES)
        fake.queue[fake.n_queue++] = line;
    else
        free(line);
    event_active(fake.deliver, EV_TIMEOUT, 0);
}

/* Script the transport's death after what is queued. */
static void fake_die(const char *reason)
{
    fake.close_reason = reason;
    event_active(fake.deliver, EV_TIMEOUT, 0);
}

/* The last line sent with this method, parsed (to free), or NULL. */
static yajl_val sent_msg(const char *method)
{
    for (size_t i = fake.n_sent; i-- > 0;) {
        yajl_val v = json_parse(fake.sent[i], NULL);
        if (streq(json_get_string(v, "method"), method))
            return v;
        json_free(v);
    }
    return NULL;
}

/* The id of the last request sent with this method, or -1. */
static int64_t sent_id(const char *method)
{
    _cleanup_json_ yajl_val v = sent_msg(method);
    int64_t id = -1;

    if (json_get_int(v, "id", &id) < 0)
        id = -1;
    return id;
}

static size_t sent_count(const char *method)
{
    size_t n = 0;

    for (size_t i = 0; i < fake.n_sent; i++) {
        _cleanup_json_ yajl_val v = json_parse(fake.sent[i], NULL);
        n += streq(json_get_string(v, "method"), method);
    }
    return n;
}

static void on_guard(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    *(bool *)arg = true;
}

/* Run the loop until *flag or WAIT_MS; return whether flag came true. */
static bool run_until(const bool *flag)
{
    bool expired = false;
    struct timeval tv = {WAIT_MS / 1000, (WAIT_MS % 1000) * 1000};
    struct event *guard = evtimer_new(base, on_guard, &expired);

    evtimer_add(guard, &tv);
    while (!*flag && !expired)
        event_base_loop(base, EVLOOP_ONCE);
    event_free(guard);
    return *flag;
}

/* Let every event that is already due run (deliveries, frees). */
static void run_pending(void)
{
    event_base_loop(base, EVLOOP_NONBLOCK);
    event_base_loop(base, EVLOOP_NONBLOCK);
}

/* ---- the owner's side: what the session reported ---- */

typedef struct Seen {
    bool ready, closed;
    char *closed_reason;
    int n_notifications;
    char *last_notification;
    int n_requests;
    char *last_request;
    bool auth;
} Seen;

static Seen seen;

static void ev_ready(void *ud)
{
    (void)ud;
    seen.ready = true;
}

static void ev_closed(void *ud, const char *reason)
{
    (void)ud;
    seen.closed = true;
    free(seen.closed_reason);
    seen.closed_reason = xstrdup(reason);
}

static void ev_notification(void *ud, const char *method, yajl_val params)
{
    (void)ud, (void)params;
    seen.n_notifications++;
    free(seen.last_notification);
    seen.last_notification = xstrdup(method);
}

static void ev_request(void *ud, yajl_val id, const char *method, yajl_val params)
{
    (void)ud, (void)id, (void)params;
    seen.n_requests++;
    free(seen.last_request);
    seen.last_request = xstrdup(method);
}

static void ev_auth(void *ud, const char *challenge)
{
    (void)ud;
    seen.auth = challenge && strstr(challenge, "Bearer");
}

static const UpstreamEvents events = {ev_ready, ev_closed, ev_notification, ev_request, ev_auth};

/* One reply as the reply fn saw it. */
typedef struct Got {
    bool done;
    UpstreamOutcome outcome;
    int64_t code;
    char *message;
    char *result; /* the result as JSON text (from the tree, or the raw bytes) */
    bool raw;
    int calls;
} Got;

static void on_reply(Upstream *u, void *ctx, const UpstreamReply *r)
{
    Got *g = ctx;

    (void)u;
    g->calls++;
    g->done = true;
    g->outcome = r->outcome;
    g->code = r->code;
    g->message = r->message ? xstrdup(r->message) : NULL;
    g->raw = r->raw != NULL;
    if (r->raw)
        g->result = xstrndup(r->raw, r->raw_len);
    else if (r->result)
        g->result = json_to_string(r->result);
}

static void got_deinit(Got *g)
{
    free(g->message);
    free(g->result);
    *g = (Got){0};
}

static void reset(void)
{
    for (size_t i = 0; i < fake.n_sent; i++)
        free(fake.sent[i]);
    for (size_t i = 0; i < fake.n_queue; i++)
        free(fake.queue[i]);
    struct event *deliver = fake.deliver;
    fake = (Fake){.deliver = deliver};
    free(seen.closed_reason);
    free(seen.last_notification);
    free(seen.last_request);
    seen = (Seen){0};
}

/* The 2025 handshake is what these tests drive: the era is pinned, so no server/discover probe. */
static ServerConfig stdio_cfg = {
    .name = "fake", .type = TRANSPORT_STDIO, .timeout_ms = 30000, .protocol = PROTOCOL_LEGACY};

/* Start a session and answer its initialize with result (JSON text of the result object). */
static Upstream *start_with(const ServerConfig *cfg, const char *result)
{
    _cleanup_free_ char *why = NULL;
    Upstream *u = NULL;
    int64_t id;

    reset();
    CHECK_INTEQ(upstream_start(&u, base, cfg, "/", 60000, &events, NULL, &why), 0);
    id = sent_id("initialize");
    CHECK(id > 0);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"result\":%s}", id, result);
    return u;
}

#define READY_RESULT                                                                               \
    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{\"listChanged\":true},"      \
    "\"prompts\":{}},\"serverInfo\":{\"name\":\"fake\",\"version\":\"1\"},"                        \
    "\"instructions\":\"use it well\"}"

/* A session past its handshake. */
static Upstream *start_ready(void)
{
    Upstream *u = start_with(&stdio_cfg, READY_RESULT);

    CHECK(run_until(&seen.ready));
    return u;
}

/* Close the session and let the loop free it. */
static void finish(Upstream *u)
{
    upstream_close(u);
    CHECK(fake.closed);
    run_pending();
}

static void test_handshake(void)
{
    Upstream *u = start_with(&stdio_cfg, READY_RESULT);
    _cleanup_json_ yajl_val init = sent_msg("initialize");
    yajl_val params = json_get_object(init, "params");

    CHECK_STREQ(fake.kind, "stdio");
    /* What mcpd asks for: its newest version, and the client capabilities it serves. */
    CHECK_STREQ(json_get_string(params, "protocolVersion"), MCP_PROTOCOL_LATEST);
    CHECK(json_get_object(json_get_object(params, "capabilities"), "roots"));
    CHECK(json_get_object(json_get_object(params, "capabilities"), "sampling"));
    CHECK_STREQ(json_get_string(json_get_object(params, "clientInfo"), "name"), "mcpd");
    CHECK(!u->initialized);
    CHECK(run_until(&seen.ready));
    CHECK(u->initialized);
    CHECK_STREQ(u->protocol_version, "2025-06-18");
    CHECK_STREQ(u->instructions, "use it well");
    CHECK_STREQ(json_get_string(u->server_info, "name"), "fake");
    CHECK(json_get_object(u->capabilities, "tools"));
    /* initialized follows the answer, as a notification (no id). */
    _cleanup_json_ yajl_val note = sent_msg("notifications/initialized");
    CHECK(note && !json_get(note, "id"));
    CHECK(!seen.closed);
    finish(u);
    CHECK(!seen.closed); /* closing by mcpd is not reported back to mcpd */
}

static void test_handshake_refused(void)
{
    static const struct {
        const char *result, *why;
    } cases[] = {
        {"{\"protocolVersion\":\"1999-01-01\",\"capabilities\":{}}", "\"1999-01-01\""},
        {"{\"protocolVersion\":\"" MCP_PROTOCOL_2026_07_28 "\",\"capabilities\":{}}",
         "does not speak"},
        {"{\"capabilities\":{}}", "no protocolVersion"},
    };

    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        Upstream *u = start_with(&stdio_cfg, cases[i].result);
        CHECK(run_until(&seen.closed));
        CHECK(!seen.ready && !u->initialized);
        CHECK_MSG(seen.closed_reason && strstr(seen.closed_reason, cases[i].why), "case %zu: %s", i,
                  seen.closed_reason ? seen.closed_reason : "NULL");
        CHECK_INTEQ(sent_count("notifications/initialized"), 0);
        finish(u);
    }
    /* An error answer names the server's code and message. */
    reset();
    _cleanup_free_ char *why = NULL;
    Upstream *u = NULL;
    CHECK_INTEQ(upstream_start(&u, base, &stdio_cfg, "/", 60000, &events, NULL, &why), 0);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRId64
              ",\"error\":{\"code\":-32602,\"message\":\"bad version\"}}",
              sent_id("initialize"));
    CHECK(run_until(&seen.closed));
    CHECK(seen.closed_reason && strstr(seen.closed_reason, "-32602") &&
          strstr(seen.closed_reason, "bad version"));
    finish(u);
}

static void test_http_config_uses_http(void)
{
    ServerConfig cfg = {
        .name = "remote", .type = TRANSPORT_HTTP, .timeout_ms = 30000, .protocol = PROTOCOL_LEGACY};
    Upstream *u = start_with(&cfg, READY_RESULT);

    CHECK_STREQ(fake.kind, "http");
    CHECK(run_until(&seen.ready));
    finish(u);
}

static void test_replies_matched_by_id(void)
{
    Upstream *u = start_ready();
    Got a = {0}, b = {0}, c = {0};
    uint64_t ida = 0, idb = 0, idc = 0;

    CHECK_INTEQ(upstream_request(u, "tools/call", json_parse("{\"name\":\"a\"}", NULL), 0, 0,
                                 on_reply, &a, &ida),
                0);
    CHECK_INTEQ(upstream_request(u, "tools/call", json_parse("{\"name\":\"b\"}", NULL), 0, 0,
                                 on_reply, &b, &idb),
                0);
    CHECK_INTEQ(upstream_request(u, "prompts/get", NULL, 0, 0, on_reply, &c, &idc), 0);
    CHECK(ida && idb && idc && ida != idb && idb != idc);
    CHECK_INTEQ(upstream_n_pending(u), 3);
    /* Out of order, with one answer for nobody and one that is not JSON-RPC in between. */
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"result\":{\"who\":\"b\"}}", idb);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":9999,\"result\":{\"who\":\"nobody\"}}");
    fake_push("not json at all");
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64
              ",\"error\":{\"code\":-32602,\"message\":\"Unknown tool\",\"data\":{\"x\":1}}}",
              idc);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"result\":{\"who\":\"a\"}}", ida);
    CHECK(run_until(&a.done));
    CHECK(b.done && c.done);
    CHECK_INTEQ(a.outcome, UPSTREAM_OK);
    CHECK_STREQ(a.result, "{\"who\":\"a\"}");
    CHECK_STREQ(b.result, "{\"who\":\"b\"}");
    CHECK_INTEQ(c.outcome, UPSTREAM_ERROR);
    CHECK_INTEQ(c.code, -32602);
    CHECK_STREQ(c.message, "Unknown tool");
    CHECK(a.calls == 1 && b.calls == 1 && c.calls == 1);
    CHECK_INTEQ(upstream_n_pending(u), 0);
    /* The session survived the junk line. */
    CHECK(!seen.closed);
    /* A second answer for a finished request goes nowhere. */
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"result\":{\"again\":true}}", ida);
    run_pending();
    CHECK_INTEQ(a.calls, 1);
    got_deinit(&a), got_deinit(&b), got_deinit(&c);
    finish(u);
}

static void test_raw_results(void)
{
    Upstream *u = start_ready();
    Got g = {0}, e = {0};
    uint64_t id = 0, ide = 0;

    /* A plain result for a raw request comes as its bytes; an error still comes parsed. */
    CHECK_INTEQ(upstream_request_text(u, "tools/call", "\"trace\":\"t1\"", "\"name\":\"x\"", 0,
                                      UPSTREAM_RAW | UPSTREAM_PROGRESS, on_reply, &g, &id),
                0);
    CHECK_INTEQ(upstream_request_text(u, "tools/call", NULL, "\"name\":\"y\"", 0, UPSTREAM_RAW,
                                      on_reply, &e, &ide),
                0);
    _cleanup_json_ yajl_val sent = sent_msg("tools/call");
    /* The last tools/call sent is y's: no _meta at all. */
    CHECK(sent && !json_get(json_get_object(sent, "params"), "_meta"));
    CHECK_STREQ(json_get_string(json_get_object(sent, "params"), "name"), "y");
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64
              ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}",
              id);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"error\":{\"code\":-32603}}", ide);
    CHECK(run_until(&e.done));
    CHECK(g.done && g.raw);
    CHECK_STREQ(g.result, "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}");
    CHECK(!e.raw && e.outcome == UPSTREAM_ERROR && e.code == -32603);
    CHECK_STREQ(e.message, "(no message)");
    got_deinit(&g), got_deinit(&e);
    finish(u);
}

static void test_progress_token(void)
{
    Upstream *u = start_ready();
    Got g = {0};
    uint64_t id = 0;

    CHECK_INTEQ(upstream_request_text(u, "tools/call", "\"trace\":\"t1\"", "\"name\":\"x\"", 0,
                                      UPSTREAM_PROGRESS, on_reply, &g, &id),
                0);
    _cleanup_json_ yajl_val sent = sent_msg("tools/call");
    yajl_val meta = json_get_object(json_get_object(sent, "params"), "_meta");
    int64_t tok = 0;
    /* The token is the request's own id; the agent's other _meta members pass through. */
    CHECK(json_get_int(meta, MCP_META_PROGRESS_TOKEN, &tok) == 0 && tok == (int64_t)id);
    CHECK_STREQ(json_get_string(meta, "trace"), "t1");
    /* Progress reaches the owner as a notification. */
    fake_push("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
              "{\"progressToken\":%" PRIu64 ",\"progress\":1}}",
              id);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"result\":{}}", id);
    CHECK(run_until(&g.done));
    CHECK_INTEQ(seen.n_notifications, 1);
    CHECK_STREQ(seen.last_notification, "notifications/progress");
    got_deinit(&g);
    finish(u);
}

static void test_timeout(void)
{
    Upstream *u = start_ready();
    Got g = {0}, other = {0};
    uint64_t id = 0, id2 = 0;

    CHECK_INTEQ(upstream_request(u, "tools/call", NULL, SHORT_TIMEOUT_MS, 0, on_reply, &g, &id), 0);
    CHECK_INTEQ(upstream_request(u, "tools/list", NULL, 0, 0, on_reply, &other, &id2), 0);
    CHECK(run_until(&g.done));
    CHECK_INTEQ(g.outcome, UPSTREAM_TIMEOUT);
    CHECK(g.message && strstr(g.message, "timed out"));
    /* The server is told to stop, naming the request and why. */
    _cleanup_json_ yajl_val cancel = sent_msg("notifications/cancelled");
    int64_t rid = 0;
    CHECK(json_get_int(json_get_object(cancel, "params"), "requestId", &rid) == 0 &&
          rid == (int64_t)id);
    CHECK_STREQ(json_get_string(json_get_object(cancel, "params"), "reason"), "timeout");
    /* Only that request ended; a late answer to it is dropped. */
    CHECK(!other.done);
    CHECK_INTEQ(upstream_n_pending(u), 1);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"result\":{}}", id);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"result\":{\"tools\":[]}}", id2);
    CHECK(run_until(&other.done));
    CHECK_INTEQ(g.calls, 1);
    CHECK_INTEQ(other.outcome, UPSTREAM_OK);
    got_deinit(&g), got_deinit(&other);
    finish(u);
}

static void test_cancel(void)
{
    Upstream *u = start_ready();
    Got g = {0};
    uint64_t id = 0;

    CHECK_INTEQ(upstream_request(u, "tools/call", NULL, 0, 0, on_reply, &g, &id), 0);
    upstream_cancel(u, id, "the agent gave up");
    CHECK(g.done && g.outcome == UPSTREAM_CANCELLED);
    _cleanup_json_ yajl_val cancel = sent_msg("notifications/cancelled");
    CHECK_STREQ(json_get_string(json_get_object(cancel, "params"), "reason"), "the agent gave up");
    /* Cancelling what is no longer pending sends nothing more. */
    size_t n = sent_count("notifications/cancelled");
    upstream_cancel(u, id, NULL);
    CHECK_INTEQ(sent_count("notifications/cancelled"), n);
    CHECK_INTEQ(g.calls, 1);
    got_deinit(&g);
    finish(u);
}

/* Answer the last tools/list sent with a page of names and, if next, a cursor. */
static void answer_page(const char *names_json, const char *next)
{
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"result\":{\"tools\":%s%s%s%s}}",
              sent_id("tools/list"), names_json, next ? ",\"nextCursor\":\"" : "", next ? next : "",
              next ? "\"" : "");
}

/* The cursor of the last tools/list sent, or NULL (to free). */
static char *sent_cursor(void)
{
    _cleanup_json_ yajl_val v = sent_msg("tools/list");
    const char *c = json_get_string(json_get_object(v, "params"), "cursor");

    return c ? xstrdup(c) : NULL;
}

static const UpstreamListLimits wide = {.max_tools = 1000, .max_pages = 100, .max_bytes = 1 << 24};

/* Run one paged list to its end, answering page i with pages[i] (cursor "c<i+1>" when more). */
static void list_run(Upstream *u, const UpstreamListLimits *lim, const char *const *pages,
                     size_t n_pages, bool loop_cursor, Got *g)
{
    upstream_list_tools(u, 0, lim, on_reply, g);
    for (size_t i = 0; i < n_pages && !g->done; i++) {
        char next[16];
        _cleanup_free_ char *cursor = sent_cursor();
        if (i == 0)
            CHECK(cursor == NULL);
        else {
            snprintf(next, sizeof(next), "c%zu", loop_cursor ? (size_t)1 : i);
            CHECK_STREQ(cursor, next);
        }
        snprintf(next, sizeof(next), "c%zu", loop_cursor ? (size_t)1 : i + 1);
        size_t sent_before = sent_count("tools/list");
        answer_page(pages[i], i + 1 < n_pages ? next : NULL);
        /* The answer is handled on this loop turn: the next page is asked for, or the end. */
        run_pending();
        CHECK(g->done || sent_count("tools/list") == sent_before + 1);
    }
    CHECK(run_until(&g->done));
}

static void test_paging(void)
{
    static const char *const pages[] = {
        "[{\"name\":\"a\"},{\"name\":\"b\"}]",
        "[{\"title\":\"nameless\"},{\"name\":\"c\"}]",
        "[{\"name\":\"d\"}]",
    };
    Upstream *u = start_ready();
    Got g = {0};

    list_run(u, &wide, pages, N_ELEMENTS(pages), false, &g);
    CHECK_INTEQ(g.outcome, UPSTREAM_OK);
    /* Every page, in order, without the entry that has no name; no note: nothing was cut. */
    CHECK_STREQ(
        g.result,
        "{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"},{\"name\":\"d\"}]}");
    CHECK_STREQ(g.message, NULL);
    CHECK_INTEQ(sent_count("tools/list"), 3);
    got_deinit(&g);
    finish(u);
}

static void test_paging_bounds(void)
{
    static const char *const pages[] = {
        "[{\"name\":\"a\"},{\"name\":\"b\"}]",
        "[{\"name\":\"c\"},{\"name\":\"d\"}]",
        "[{\"name\":\"e\"}]",
    };
    UpstreamListLimits few_tools = wide, few_pages = wide;
    Upstream *u = start_ready();
    Got g = {0};

    few_tools.max_tools = 3;
    list_run(u, &few_tools, pages, N_ELEMENTS(pages), false, &g);
    CHECK_INTEQ(g.outcome, UPSTREAM_OK);
    CHECK_STREQ(g.result, "{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}");
    CHECK(g.message && strstr(g.message, "maxToolsPerServer"));
    /* The cut list is not fetched further. */
    CHECK_INTEQ(sent_count("tools/list"), 2);
    got_deinit(&g);
    finish(u);

    u = start_ready();
    few_pages.max_pages = 2;
    list_run(u, &few_pages, pages, N_ELEMENTS(pages), false, &g);
    CHECK_INTEQ(g.outcome, UPSTREAM_OK);
    CHECK(g.message && strstr(g.message, "maxListPages"));
    CHECK_INTEQ(sent_count("tools/list"), 2);
    got_deinit(&g);
    finish(u);
}

static void test_paging_loop(void)
{
    static const char *const pages[] = {
        "[{\"name\":\"a\"}]",
        "[{\"name\":\"b\"}]",
        "[{\"name\":\"c\"}]",
    };
    Upstream *u = start_ready();
    Got g = {0};

    /* The server hands out "c1" again: the list ends there as an error naming it. */
    list_run(u, &wide, pages, N_ELEMENTS(pages), true, &g);
    CHECK_INTEQ(g.outcome, UPSTREAM_ERROR);
    CHECK(g.message && strstr(g.message, "\"c1\" twice"));
    got_deinit(&g);
    finish(u);
}

static void test_list_without_capability(void)
{
    Upstream *u = start_ready();
    Got g = {0};
    size_t before = fake.n_sent;

    /* READY_RESULT declares tools and prompts, not resources: [] without asking. */
    upstream_list(u, "resources/list", "resources", "resources", 0, &wide, on_reply, &g);
    CHECK(g.done && g.outcome == UPSTREAM_OK);
    CHECK_STREQ(g.result, "{\"resources\":[]}");
    CHECK_INTEQ(fake.n_sent, before);
    got_deinit(&g);
    finish(u);
}

static void test_server_requests(void)
{
    Upstream *u = start_ready();

    /* ping is answered by the session itself; anything else goes to the owner. */
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}");
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}");
    run_pending();
    CHECK_INTEQ(seen.n_requests, 1);
    CHECK_STREQ(seen.last_request, "roots/list");
    bool answered = false;
    for (size_t i = 0; i < fake.n_sent; i++)
        answered |= strstr(fake.sent[i], "\"id\":\"p1\"") && strstr(fake.sent[i], "\"result\"");
    CHECK(answered);
    yajl_val id = json_int_new(7);
    upstream_respond_error(u, id, JSONRPC_METHOD_NOT_FOUND, "no roots here");
    json_free(id);
    CHECK(strstr(fake.sent[fake.n_sent - 1], "\"id\":7") &&
          strstr(fake.sent[fake.n_sent - 1], "-32601"));
    finish(u);
}

static void test_transport_dies_mid_request(void)
{
    Upstream *u = start_ready();
    Got a = {0}, b = {0};

    CHECK_INTEQ(upstream_request(u, "tools/call", NULL, 0, 0, on_reply, &a, NULL), 0);
    CHECK_INTEQ(
        upstream_request(u, "tools/call", NULL, SHORT_TIMEOUT_MS * 100, 0, on_reply, &b, NULL), 0);
    fake_die("exited with status 1");
    CHECK(run_until(&seen.closed));
    /* Every request in flight ends once, with the transport's reason; then the owner hears. */
    CHECK(a.done && b.done && a.calls == 1 && b.calls == 1);
    CHECK_INTEQ(a.outcome, UPSTREAM_CLOSED);
    CHECK_INTEQ(a.code, MCP_ERROR_CONNECTION_CLOSED);
    CHECK_STREQ(a.message, "exited with status 1");
    CHECK_STREQ(seen.closed_reason, "exited with status 1");
    CHECK_INTEQ(upstream_n_pending(u), 0);
    got_deinit(&a), got_deinit(&b);
    finish(u);
}

static void test_dies_during_handshake(void)
{
    _cleanup_free_ char *why = NULL;
    Upstream *u = NULL;

    reset();
    CHECK_INTEQ(upstream_start(&u, base, &stdio_cfg, "/", 60000, &events, NULL, &why), 0);
    fake_die("command not found");
    CHECK(run_until(&seen.closed));
    /* Reported once, by the transport's death, not a second time by the failed initialize. */
    CHECK_STREQ(seen.closed_reason, "command not found");
    CHECK(!seen.ready);
    finish(u);
}

static void test_close_with_requests_pending(void)
{
    Upstream *u = start_ready();
    Got g = {0};

    fake.send_error = 0;
    CHECK_INTEQ(upstream_request(u, "tools/call", NULL, 0, 0, on_reply, &g, NULL), 0);
    upstream_close(u);
    CHECK(g.done && g.outcome == UPSTREAM_CLOSED);
    CHECK(fake.closed);
    /* Closed by mcpd: the owner is not called back, and nothing more can be sent. */
    CHECK(!seen.closed);
    run_pending();
    got_deinit(&g);
}

static void test_send_failure(void)
{
    Upstream *u = start_ready();
    Got g = {0};

    fake.send_error = -EPIPE;
    CHECK_INTEQ(upstream_request(u, "tools/call", NULL, 0, 0, on_reply, &g, NULL), -EPIPE);
    CHECK(!g.done);
    CHECK_INTEQ(upstream_n_pending(u), 0);
    fake.send_error = 0;
    finish(u);
}

static void test_auth_challenge(void)
{
    Upstream *u = start_ready();

    fake.t.cb.auth(fake.t.userdata, "Bearer resource_metadata=\"https://x/.well-known\"");
    CHECK(seen.auth);
    finish(u);
}

/* Auto era: server/discover first; -32022 naming 2026-07-28 is retried; a result makes it modern.
 */
static void test_era_modern(void)
{
    ServerConfig cfg = {.name = "modern", .type = TRANSPORT_STDIO, .timeout_ms = 30000};
    _cleanup_free_ char *why = NULL;
    Upstream *u = NULL;
    int64_t id;

    reset();
    memcpy(cfg.hash, "modern-hash", sizeof("modern-hash"));
    CHECK_INTEQ(upstream_start(&u, base, &cfg, "/", 60000, &events, NULL, &why), 0);
    _cleanup_json_ yajl_val probe = sent_msg("server/discover");
    yajl_val meta = json_get_object(json_get_object(probe, "params"), "_meta");
    CHECK_STREQ(json_get_string(meta, MCP_META_PROTOCOL_VERSION), MCP_PROTOCOL_2026_07_28);
    CHECK(json_get_object(meta, MCP_META_CLIENT_CAPABILITIES));
    CHECK(json_get_object(meta, MCP_META_CLIENT_INFO));
    id = sent_id("server/discover");
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"error\":{\"code\":-32022,\"message\":"
              "\"no\",\"data\":{\"supported\":[\"" MCP_PROTOCOL_2026_07_28 "\"]}}}",
              id);
    run_pending();
    CHECK_INTEQ(sent_count("server/discover"), 2);
    CHECK_INTEQ(sent_count("initialize"), 0);
    /* The ping behind the first probe (stdio) is sent once, not with the retry. */
    CHECK_INTEQ(sent_count("ping"), 1);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"result\":{\"resultType\":\"complete\","
              "\"supportedVersions\":[\"" MCP_PROTOCOL_2026_07_28
              "\"],\"capabilities\":{\"tools\":{}},"
              "\"_meta\":{\"" MCP_META_SERVER_INFO "\":{\"name\":\"m\",\"version\":\"1\"}}}}",
              sent_id("server/discover"));
    CHECK(run_until(&seen.ready));
    CHECK(upstream_is_modern(u));
    CHECK_STREQ(u->protocol_version, MCP_PROTOCOL_2026_07_28);
    CHECK_STREQ(json_get_string(u->server_info, "name"), "m");
    CHECK_INTEQ(sent_count("initialize"), 0);
    /* A modern session has no ping (discover instead) and no logging/setLevel. */
    CHECK(upstream_request(u, "logging/setLevel", NULL, 1000, 0, on_reply, NULL, NULL) < 0);
    finish(u);
}

/* Auto era: any other answer to the probe means the 2025 era, remembered for the next start. */
static void test_era_fallback(void)
{
    ServerConfig cfg = {.name = "old", .type = TRANSPORT_STDIO, .timeout_ms = 30000};
    _cleanup_free_ char *why = NULL;
    Upstream *u = NULL;

    reset();
    memcpy(cfg.hash, "old-hash", sizeof("old-hash"));
    CHECK_INTEQ(upstream_start(&u, base, &cfg, "/", 60000, &events, NULL, &why), 0);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"error\":{\"code\":-32601,\"message\":"
              "\"Method not found\"}}",
              sent_id("server/discover"));
    run_pending();
    CHECK(sent_id("initialize") > 0);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"result\":%s}", sent_id("initialize"),
              READY_RESULT);
    CHECK(run_until(&seen.ready));
    CHECK(!upstream_is_modern(u));
    finish(u);
    /* The next session of the same config goes straight to initialize. */
    reset();
    CHECK_INTEQ(upstream_start(&u, base, &cfg, "/", 60000, &events, NULL, &why), 0);
    CHECK_INTEQ(sent_count("server/discover"), 0);
    CHECK(sent_id("initialize") > 0);
    finish(u);
    era_forget(cfg.hash);
}

/* Auto era: an error with id null while the probe waits (the server could not read it) is its
 * answer: initialize goes at once. */
static void test_era_null_id_error(void)
{
    ServerConfig cfg = {.name = "nullid", .type = TRANSPORT_STDIO, .timeout_ms = 30000};
    _cleanup_free_ char *why = NULL;
    Upstream *u = NULL;

    reset();
    memcpy(cfg.hash, "nullid-hash", sizeof("nullid-hash"));
    CHECK_INTEQ(upstream_start(&u, base, &cfg, "/", 60000, &events, NULL, &why), 0);
    CHECK_INTEQ(sent_count("ping"), 1);
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
              "\"Parse error\"}}");
    run_pending();
    CHECK(sent_id("initialize") > 0);
    /* The ping's late answer is dropped quietly; the handshake goes on. */
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"result\":{}}", sent_id("ping"));
    fake_push("{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"result\":%s}", sent_id("initialize"),
              READY_RESULT);
    CHECK(run_until(&seen.ready));
    CHECK(!upstream_is_modern(u));
    finish(u);
    era_forget(cfg.hash);
}

int main(void)
{
    base = event_base_new();
    RUN(test_handshake);
    RUN(test_handshake_refused);
    RUN(test_http_config_uses_http);
    RUN(test_replies_matched_by_id);
    RUN(test_raw_results);
    RUN(test_progress_token);
    RUN(test_timeout);
    RUN(test_cancel);
    RUN(test_paging);
    RUN(test_paging_bounds);
    RUN(test_paging_loop);
    RUN(test_list_without_capability);
    RUN(test_server_requests);
    RUN(test_transport_dies_mid_request);
    RUN(test_dies_during_handshake);
    RUN(test_close_with_requests_pending);
    RUN(test_send_failure);
    RUN(test_auth_challenge);
    RUN(test_era_modern);
    RUN(test_era_fallback);
    RUN(test_era_null_id_error);
    reset();
    event_free(fake.deliver);
    event_base_free(base);
    return test_main_result();
}
