// SPDX-License-Identifier: MIT
// test-everything-http: the real server-everything over Streamable HTTP and legacy SSE.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

static int n_progress;

static void on_notify(void *userdata, const char *method, const char *params)
{
    (void)userdata;
    if (streq(method, "notifications/progress") && strstr(params, "\"agent-token\""))
        n_progress++;
}

static pid_t start_everything(const char *js, const char *mode, int port, const Harness *h)
{
    char *argv[] = {"node", (char *)js, (char *)mode, NULL};
    char log[400];
    /* putenv keeps the pointer: one static buffer per mode. */
    static char env_http[32], env_sse[32];
    char *env = streq(mode, "sse") ? env_sse : env_http;
    pid_t pid;

    snprintf(env, 32, "PORT=%d", port);
    snprintf(log, sizeof(log), "%s/everything-%s.log", h->dir, mode);
    pid = bg_spawn(argv, env, log);
    if (!bg_wait_port(port, 60000)) {
        fprintf(stderr, "server-everything %s did not listen on %d\n", mode, port);
        exit(99);
    }
    return pid;
}

/* A long-running call with the agent's own progress token: progress reaches the agent. */
static void check_progress(mcpc_client *c, const char *server)
{
    _cleanup_free_ char *params =
        xasprintf("{\"name\":\"mcp_%s_trigger_long_running_operation\",\"arguments\":"
                  "{\"duration\":2,\"steps\":4},\"_meta\":{\"progressToken\":\"agent-token\"}}",
                  server);
    _cleanup_free_ char *out = NULL;

    n_progress = 0;
    mcpc_set_notify(c, on_notify, NULL);
    CHECK(mcpc_request(c, "tools/call", params, &out) == 0);
    CHECK_MSG(out && strstr(out, "Long running operation completed"), "%s: %s", server,
              out ? out : mcpc_errmsg(c));
    CHECK_MSG(n_progress == 4, "%s: %d progress notifications reached the agent", server,
              n_progress);
    mcpc_set_notify(c, NULL, NULL);
}

static void check_server(mcpc_client *c, const char *server, const char *transport, bool session)
{
    yajl_val st = h_status(c), s = h_server(st, server);
    _cleanup_free_ char *tool = xasprintf("mcp_%s_echo", server);
    _cleanup_free_ char *sum = xasprintf("mcp_%s_get_sum", server);
    int is_error = 0;
    char *t;

    CHECK_MSG(streq(json_get_string(s, "transport"), transport), "%s: transport %s", server,
              json_get_string(s, "transport"));
    CHECK(YAJL_IS_TRUE(json_get(s, "session")) == session);
    CHECK(
        streq(json_get_string(json_get_object(s, "serverInfo"), "name"), "mcp-servers/everything"));
    json_free(st);
    t = h_call_text(c, tool, "{\"message\":\"hello over the network\"}", &is_error);
    CHECK_MSG(streq(t, "Echo: hello over the network") && !is_error, "%s echo: %s", server, t);
    free(t);
    t = h_call_text(c, sum, "{\"a\":40,\"b\":2}", &is_error);
    CHECK_MSG(strstr(t, "42") && !is_error, "%s get-sum: %s", server, t);
    free(t);
    check_progress(c, server);
}

int main(void)
{
    const char *js = getenv("EVERYTHING_JS"), *base = getenv("EVERYTHING_PORT_BASE");
    int p_http = base ? atoi(base) : 3101, p_sse = p_http + 1;
    pid_t ev_http, ev_sse;
    yajl_val st;
    int64_t restarts = 0;
    Harness h;
    mcpc_client *c;
    char *t;

    if (!js) {
        fprintf(stderr, "EVERYTHING_JS is not set (run through tests/interop/run-netns.sh)\n");
        return 99;
    }
    h_setup(&h, "everything-http");
    ev_http = start_everything(js, "streamableHttp", p_http, &h);
    ev_sse = start_everything(js, "sse", p_sse, &h);
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        " \"eh\": {\"url\": \"http://127.0.0.1:%d/mcp\", \"timeout\": 60000},"
        " \"es\": {\"type\": \"sse\", \"url\": \"http://127.0.0.1:%d/sse\", \"timeout\": 60000},"
        " \"ea\": {\"url\": \"http://127.0.0.1:%d/sse\", \"timeout\": 60000}}}",
        p_http, p_sse, p_sse);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "interop-http");
    CHECK(h_wait_state(c, "eh", "connected", 60000));
    CHECK(h_wait_state(c, "es", "connected", 60000));
    CHECK(h_wait_state(c, "ea", "connected", 60000));

    check_server(c, "eh", "http", true); /* auto: the POST probe found Streamable HTTP */
    check_server(c, "es", "sse", false); /* configured legacy SSE */
    check_server(c, "ea", "sse", false); /* auto: the POST got 404, the SSE GET worked */

    /* A restarted server has forgotten the session: mcpd starts a new one by itself. */
    bg_stop(ev_http);
    ev_http = start_everything(js, "streamableHttp", p_http, &h);
    for (int i = 0; i < 600 && restarts < 1; i++) {
        st = h_status(c);
        json_get_int(h_server(st, "eh"), "restarts", &restarts);
        json_free(st);
        if (restarts < 1) {
            /* A call is what finds out (the GET stream may still be waiting to retry). */
            t = h_call_text(c, "mcp_eh_echo", "{\"message\":\"probe\"}", NULL);
            free(t);
            h_sleep_ms(100);
        }
    }
    CHECK_MSG(restarts >= 1, "no new session after the server restarted");
    CHECK(h_wait_state(c, "eh", "connected", 60000));
    t = h_call_text(c, "mcp_eh_echo", "{\"message\":\"new session\"}", NULL);
    CHECK_MSG(streq(t, "Echo: new session"), "after the restart: %s", t);
    free(t);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(ev_http);
    bg_stop(ev_sse);
    h_teardown(&h);
    return h_finish("test-everything-http");
}
