// SPDX-License-Identifier: MIT
// test-http: Streamable HTTP upstreams against the evhttp test server (tests/helpers/http-server).

#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

typedef struct Srv {
    pid_t pid;
    int port;
    char log[400];
} Srv;

/* Start the helper with extra flags (NULL-terminated), on an ephemeral port. */
static void srv_start(Srv *s, Harness *h, const char *name, ...)
{
    const char *bin = getenv("HTTP_SERVER");
    char port_file[400], out[400];
    char *argv[16];
    int n = 0;
    va_list ap;

    snprintf(port_file, sizeof(port_file), "%s/%s.port", h->dir, name);
    snprintf(out, sizeof(out), "%s/%s.out", h->dir, name);
    snprintf(s->log, sizeof(s->log), "%s/%s.log", h->dir, name);
    argv[n++] = (char *)bin;
    argv[n++] = "--port-file";
    argv[n++] = port_file;
    argv[n++] = "--log";
    argv[n++] = s->log;
    va_start(ap, name);
    for (char *a; n < 15 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    s->pid = bg_spawn(argv, NULL, out);
    s->port = bg_wait_port_file(port_file, H_WAIT_MS);
    if (s->port < 0) {
        fprintf(stderr, "http-server %s did not start\n", name);
        exit(99);
    }
}

static yajl_val server_status(mcpc_client *c, const char *name, yajl_val *stp)
{
    *stp = h_status(c);
    return h_server(*stp, name);
}

/* Streamable HTTP basics: session, version header, GET 405 survived, credentials redacted. */
static void check_basics(mcpc_client *c, const Srv *a, const Harness *h)
{
    yajl_val st, s = server_status(c, "a", &st);
    _cleanup_free_ char *log = NULL;
    int64_t code = 0;
    char *t;

    CHECK(streq(json_get_string(s, "transport"), "http"));
    CHECK(streq(json_get_string(s, "httpTransport"), "streamable-http"));
    CHECK(YAJL_IS_TRUE(json_get(s, "session")));
    CHECK(json_get_int(s, "lastHttpStatus", &code) == 0 && (code == 200 || code == 202));
    CHECK_MSG(json_get_string(s, "url") && !strstr(json_get_string(s, "url"), "s3cret"),
              "url shown: %s", json_get_string(s, "url"));
    json_free(st);
    log = h_read_file(h->log);
    CHECK_MSG(log && !strstr(log, "s3cret"), "the password reached the log");

    t = h_call_text(c, "mcp_a_echo", "{\"text\":\"over http\"}", NULL);
    CHECK_MSG(streq(t, "over http"), "echo gave %s", t);
    free(t);
    t = h_call_text(c, "mcp_a_sse_echo", "{\"text\":\"over sse\"}", NULL);
    CHECK_MSG(streq(t, "over sse"), "sse_echo gave %s", t);
    free(t);
    /* After initialize every request carries the session and the negotiated version. */
    CHECK(bg_count_lines(a->log, "POST tools/call", "session=sess-1 version=2025-11-25") == 2);
    CHECK(bg_count_lines(a->log, "POST initialize", "session=-") == 1);
    /* The standalone GET was tried once, got 405, and was not retried. */
    CHECK(bg_count_lines(a->log, "GET -", "last-event-id=-") == 1);
}

static int n_progress;

static void on_notify(void *userdata, const char *method, const char *params)
{
    (void)userdata;
    if (streq(method, "notifications/progress") && strstr(params, "\"tok-7\""))
        n_progress++;
}

/* Stalled body, dropped stream with resumption, progress over SSE. */
static void check_streams(mcpc_client *c, const Srv *a)
{
    _cleanup_free_ char *out = NULL;
    int is_error = 0;
    char *t;

    t = h_call_text(c, "mcp_a_slow", NULL, &is_error);
    CHECK_MSG(is_error == 1, "slow: %s", t);
    free(t);
    /* The stalled body was given up: the HTTP transfer itself ended, not just the wait. */
    for (int i = 0; i < 200 && !bg_count_lines(a->log, "CLOSED slow", NULL); i++)
        h_sleep_ms(50);
    CHECK(bg_count_lines(a->log, "CLOSED slow", NULL) == 1);

    t = h_call_text(c, "mcp_a_drop", NULL, &is_error);
    CHECK_MSG(streq(t, "resumed after a drop") && is_error == 0, "drop: %s", t);
    free(t);
    CHECK(bg_count_lines(a->log, "GET -", "last-event-id=e") == 1);

    mcpc_set_notify(c, on_notify, NULL);
    CHECK(mcpc_request(c, "tools/call",
                       "{\"name\":\"mcp_a_progress\",\"arguments\":{},"
                       "\"_meta\":{\"progressToken\":\"tok-7\"}}",
                       &out) == 0);
    CHECK_MSG(out && strstr(out, "progress done"), "progress: %s", out ? out : mcpc_errmsg(c));
    CHECK_MSG(n_progress == 3, "%d progress notifications reached the agent", n_progress);
    mcpc_set_notify(c, NULL, NULL);
}

/* The session ends under us: the call fails, mcpd starts a new session and re-lists. */
static void check_expiry(mcpc_client *c, const Srv *b)
{
    yajl_val st, s;
    int64_t restarts = 0;
    char *t;
    int is_error = 0;
    bool found;

    t = h_call_text(c, "mcp_b_echo", "{\"text\":\"one\"}", NULL);
    CHECK(streq(t, "one"));
    free(t);
    t = h_call_text(c, "mcp_b_echo", "{\"text\":\"two\"}", &is_error);
    CHECK_MSG(is_error == 1 && strstr(t, "session expired"), "expired call: %s", t);
    free(t);
    CHECK(h_wait_state(c, "b", "connected", H_WAIT_MS));
    for (int i = 0; i < 200 && bg_count_lines(b->log, "POST tools/list", NULL) < 2; i++)
        h_sleep_ms(50);
    CHECK(bg_count_lines(b->log, "POST initialize", NULL) == 2);
    CHECK(bg_count_lines(b->log, "POST tools/list", "session=sess-2") == 1);
    s = server_status(c, "b", &st);
    CHECK(json_get_int(s, "restarts", &restarts) == 0 && restarts == 1);
    json_free(st);
    h_list_count(c, "mcp_b_echo", &found);
    CHECK(found);
    t = h_call_text(c, "mcp_b_echo", "{\"text\":\"three\"}", NULL);
    CHECK_MSG(streq(t, "three"), "after re-initialize: %s", t);
    free(t);
}

/* 401: status says authorization is needed and shows the challenge; no retry loop. */
static void check_auth(mcpc_client *c, const Srv *auth)
{
    yajl_val st, s;
    const char *w;

    CHECK(h_wait_state(c, "noauth", "failed", H_WAIT_MS));
    CHECK(h_wait_state(c, "withauth", "connected", H_WAIT_MS));
    s = server_status(c, "noauth", &st);
    w = json_get_string(s, "wwwAuthenticate");
    CHECK(YAJL_IS_TRUE(json_get(s, "needsAuthorization")));
    CHECK_MSG(w && strstr(w, "resource_metadata=") && strstr(w, "mcp:tools"), "challenge %s", w);
    CHECK(json_get_string(s, "lastError") && strstr(json_get_string(s, "lastError"), "401"));
    json_free(st);
    h_sleep_ms(1500); /* a retry would have happened by now (backoff starts at 0.5 s) */
    /* the era probe (server/discover) met the 401 first: nothing else was tried */
    CHECK(bg_count_lines(auth->log, "POST server/discover", "auth=-") == 1);
    CHECK(bg_count_lines(auth->log, "POST initialize", "auth=-") == 0);
    CHECK(bg_count_lines(auth->log, "POST initialize", "auth=Bearer right") == 1);
}

/* A redirect to another origin is followed without the configured headers. */
static void check_redirect(const Srv *from, const Srv *to)
{
    for (int i = 0; i < 200 && !bg_count_lines(to->log, "POST initialize", NULL); i++)
        h_sleep_ms(50);
    CHECK(bg_count_lines(from->log, "POST initialize", "auth=Bearer s x-test=hello") >= 1);
    CHECK(bg_count_lines(to->log, "POST initialize", NULL) >= 1);
    CHECK_MSG(bg_count_lines(to->log, "auth=Bearer", NULL) == 0, "Authorization crossed origins");
    CHECK_MSG(bg_count_lines(to->log, "x-test=hello", NULL) == 0, "a header crossed origins");
}

/* Server-initiated messages on the standalone GET stream: a notification and a request. */
static void check_get_stream(mcpc_client *c, const Srv *g)
{
    bool found = false;
    char *t;

    CHECK(h_wait_state(c, "g", "connected", H_WAIT_MS));
    for (int i = 0; i < 200 && !bg_count_lines(g->log, "GET -", NULL); i++)
        h_sleep_ms(50);
    t = h_call_text(c, "mcp_g_announce", NULL, NULL);
    CHECK_MSG(streq(t, "announced"), "announce: %s", t);
    free(t);
    /* list_changed made mcpd re-list: the new tool shows up for agents. */
    for (int i = 0; i < 200 && !found; i++) {
        h_list_count(c, "mcp_g_late", &found);
        if (!found)
            h_sleep_ms(50);
    }
    CHECK(found);
    /* The server's ping was answered, as a POST of the response. */
    for (int i = 0; i < 200 && !bg_count_lines(g->log, "POST (response)", NULL); i++)
        h_sleep_ms(50);
    CHECK(bg_count_lines(g->log, "POST (response)", "session=sess-1") == 1);
}

/* Legacy HTTP+SSE: configured and detected; an endpoint on another origin is refused. */
static void check_legacy(mcpc_client *c, const Srv *lg)
{
    static const char *const names[] = {"lg", "la"};
    yajl_val st, s;

    for (size_t i = 0; i < 2; i++) {
        _cleanup_free_ char *tool = xasprintf("mcp_%s_echo", names[i]);
        char *t;
        CHECK(h_wait_state(c, names[i], "connected", H_WAIT_MS));
        s = server_status(c, names[i], &st);
        CHECK_MSG(streq(json_get_string(s, "transport"), "sse"), "%s: %s", names[i],
                  json_get_string(s, "transport"));
        json_free(st);
        t = h_call_text(c, tool, "{\"text\":\"legacy\"}", NULL);
        CHECK_MSG(streq(t, "legacy"), "%s echo: %s", names[i], t);
        free(t);
    }
    /* auto probed with POSTs (server/discover, initialize) to the SSE URL first: both refused */
    CHECK(bg_count_lines(lg->log, "POST (not an endpoint)", NULL) == 2);
    CHECK(h_wait_state(c, "le", "failed", H_WAIT_MS));
    s = server_status(c, "le", &st);
    CHECK_MSG(json_get_string(s, "lastError") &&
                  strstr(json_get_string(s, "lastError"), "not on the origin"),
              "le: %s", json_get_string(s, "lastError"));
    json_free(st);
}

int main(void)
{
    Harness h;
    Srv a, b, auth, from, to, lg, evil, g, cr;
    mcpc_client *c;
    char to_url[128], evil_ep[128];

    if (!getenv("HTTP_SERVER")) {
        fprintf(stderr, "HTTP_SERVER is not set (run through meson test)\n");
        return 99;
    }
    h_setup(&h, "http");
    srv_start(&a, &h, "a", NULL);
    srv_start(&b, &h, "b", "--expire-after", "3", NULL);
    srv_start(&auth, &h, "auth", "--token", "right", NULL);
    srv_start(&cr, &h, "cr", "--token", "from-the-store", NULL);
    srv_start(&to, &h, "to", NULL);
    snprintf(to_url, sizeof(to_url), "http://localhost:%d/mcp", to.port);
    srv_start(&from, &h, "from", "--redirect-to", to_url, NULL);
    srv_start(&lg, &h, "lg", "--legacy", NULL);
    srv_start(&g, &h, "g", "--get-stream", NULL);
    snprintf(evil_ep, sizeof(evil_ep), "http://localhost:%d/message", lg.port);
    srv_start(&evil, &h, "evil", "--legacy", "--endpoint", evil_ep, NULL);
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        " \"a\": {\"type\": \"http\", \"url\": \"http://user:s3cret@127.0.0.1:%d/mcp\","
        "   \"timeout\": 10000, \"callTimeout\": 3000},"
        " \"b\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\"},"
        " \"noauth\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\"},"
        " \"withauth\": {\"url\": \"http://127.0.0.1:%d/mcp\","
        "   \"headers\": {\"Authorization\": \"Bearer right\"}},"
        " \"from\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\", \"reconnect\": "
        "false,"
        "   \"headers\": {\"Authorization\": \"Bearer s\", \"X-Test-Header\": \"hello\"}},"
        " \"lg\": {\"type\": \"sse\", \"url\": \"http://127.0.0.1:%d/sse\"},"
        " \"la\": {\"url\": \"http://127.0.0.1:%d/sse\"},"
        " \"le\": {\"type\": \"sse\", \"url\": \"http://127.0.0.1:%d/sse\", \"reconnect\": false},"
        " \"g\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\"},"
        " \"cred\": {\"url\": \"http://127.0.0.1:%d/mcp\","
        "   \"auth\": {\"type\": \"oauth\", \"credentialId\": \"svc\"}}}}",
        a.port, b.port, auth.port, auth.port, from.port, lg.port, lg.port, evil.port, g.port,
        cr.port);
    h_write_config(&h, cfg);
    /* The credential store gives "cred" its bearer token (the store must be 0600). */
    char cred_path[400];
    snprintf(cred_path, sizeof(cred_path), "%s/config/mcpd/credentials.json", h.dir);
    FILE *cf = fopen(cred_path, "w");
    fputs("{\"svc\": {\"accessToken\": \"from-the-store\"}}", cf);
    fclose(cf);
    chmod(cred_path, 0600);
    h_start(&h, NULL);
    c = h_client(&h, "test-http");
    CHECK(h_wait_state(c, "a", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "b", "connected", H_WAIT_MS));

    check_basics(c, &a, &h);
    check_streams(c, &a);
    check_expiry(c, &b);
    check_auth(c, &auth);
    CHECK_MSG(h_wait_state(c, "cred", "connected", H_WAIT_MS),
              "a bearer token from the credential store did not reach the server");
    yajl_val st = h_status(c);
    _cleanup_free_ char *st_text = json_to_string(st);
    CHECK_MSG(!strstr(st_text, "from-the-store"), "the stored token shows in status");
    CHECK(bg_count_lines(cr.log, "POST initialize", "auth=Bearer from-the-store") == 1);
    json_free(st);
    check_redirect(&from, &to);
    check_legacy(c, &lg);
    check_get_stream(c, &g);

    /* Disconnecting ends the session with DELETE. */
    _cleanup_free_ char *out = NULL;
    CHECK(mcpc_request(c, "mcpd/disconnect", "{\"server\":\"a\"}", &out) == 0);
    for (int i = 0; i < 200 && !bg_count_lines(a.log, "DELETE", NULL); i++)
        h_sleep_ms(50);
    CHECK(bg_count_lines(a.log, "DELETE", "session=sess-1") == 1);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(a.pid);
    bg_stop(b.pid);
    bg_stop(auth.pid);
    bg_stop(from.pid);
    bg_stop(to.pid);
    bg_stop(lg.pid);
    bg_stop(evil.pid);
    bg_stop(g.pid);
    bg_stop(cr.pid);
    h_teardown(&h);
    return h_finish("test-http");
}
