// SPDX-License-Identifier: MIT
// test-bridge: `mcpctl bridge` as an MCP host runs it: identity on a late initialize, every
// reply delivered before it exits on stdin EOF, large pipelined traffic.

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Runs of the smallest host (initialize, tools/list, EOF) that must all get both replies. */
#define N_SHORT_RUNS 100
/* Pipelined calls in the bulk run: under mcpd's 256 calls in flight per agent. */
#define N_BULK_CALLS 200
/* Text echoed by each bulk call: 3 MiB each way in all, beyond any pipe or socket buffer. */
#define BULK_TEXT_BYTES 16384
/* The call still running when the host closes stdin: the bridge must wait for it. */
#define LATE_CALL_MS 1500
/* Calls the host cancels: far longer than run_bridge waits, so only the cancel can end them. */
#define CANCELLED_CALL_MS (3 * H_WAIT_MS)

#define INIT_LINE(id)                                                                              \
    "{\"jsonrpc\":\"2.0\",\"id\":" id                                                              \
    ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"                                  \
    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"host\",\"version\":\"1\"}}}\n"

/*
 * Run `mcpctl bridge` in dir (when not NULL) with session in $MCPD_SESSION (when not NULL):
 * feed it input, close its stdin, collect its stdout until it exits. Returns the exit status
 * (-1 if it had to be killed after H_WAIT_MS).
 */
static int run_bridge(Harness *h, const char *dir, const char *session, const char *input,
                      char **outp)
{
    int in[2], out[2], st;
    size_t off = 0, n_in = strlen(input);
    StrBuf sb = STRBUF_INIT;
    pid_t pid;

    CHECK(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
    pid = fork();
    if (pid == 0) {
        dup2(in[0], STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        if (dir && chdir(dir) < 0)
            _exit(126);
        if (session)
            setenv("MCPD_SESSION", session, 1);
        execl(getenv("MCPCTL_BINARY"), "mcpctl", "--socket", h->socket, "bridge", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    if (!n_in) {
        close(in[1]);
        in[1] = -1;
    }
    uint64_t deadline = now_ms() + H_WAIT_MS;
    for (;;) {
        struct pollfd pfd[2] = {{out[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
        if (now_ms() >= deadline || poll(pfd, in[1] >= 0 ? 2 : 1, 100) < 0)
            break;
        if (in[1] >= 0 && pfd[1].revents) {
            ssize_t w = write(in[1], input + off, n_in - off);
            if (w > 0)
                off += (size_t)w;
            if ((w < 0 && errno != EAGAIN) || off == n_in) {
                close(in[1]);
                in[1] = -1;
            }
        }
        if (pfd[0].revents) {
            strbuf_reserve(&sb, 65536);
            ssize_t r = read(out[0], sb.data + sb.len, 65536);
            if (r <= 0)
                break;
            sb.len += (size_t)r;
            sb.data[sb.len] = '\0';
        }
    }
    if (in[1] >= 0)
        close(in[1]);
    close(out[0]);
    if (now_ms() >= deadline)
        kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    *outp = sb.data ? strbuf_detach(&sb, NULL) : xstrdup("");
    return now_ms() >= deadline ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The response with this id (its JSON text) among the output's lines, parsed; NULL if none. */
static yajl_val find_reply(const char *out, const char *id)
{
    _cleanup_free_ char *copy = xstrdup(out);
    char *save = NULL;

    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        yajl_val v = json_parse(line, NULL);
        StrBuf sb = STRBUF_INIT;
        bool match = false;
        if (json_get(v, "id") && !json_get(v, "method")) {
            json_write(&sb, json_get(v, "id"));
            match = streq(strbuf_str(&sb), id);
        }
        strbuf_deinit(&sb);
        if (match)
            return v;
        json_free(v);
    }
    return NULL;
}

static bool list_has(yajl_val reply, const char *name)
{
    yajl_val tools = json_get_array(json_get_object(reply, "result"), "tools");

    for (size_t i = 0; i < json_array_len(tools); i++)
        if (streq(json_get_string(json_array_at(tools, i), "name"), name))
            return true;
    return false;
}

/*
 * A host that probes first (ping, server/discover) still lands in its project's workspace with
 * its parent's session, and a call still running at stdin EOF is answered before the exit.
 */
static void test_probe_first(Harness *h, const char *root)
{
    mcpc_options po = {.socket_path = h->socket, .client_name = "parent", .cwd = root};
    mcpc_client *parent = mcpc_new(&po);
    _cleanup_free_ char *out = NULL, *out2 = NULL;
    yajl_val r;

    CHECK(mcpc_connect(parent) == 0);
    const char *token = mcpc_session(parent);
    _cleanup_free_ char *input = xasprintf(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"method\":\"server/"
        "discover\",\"params\":{}}\n" INIT_LINE(
            "2") "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"late\\u0021\",\"method\":\"tools/call\",\"params\":"
                 "{\"name\":\"mcp_user1_sleep\",\"arguments\":{\"ms\":%d}}}\n",
        LATE_CALL_MS);

    CHECK(run_bridge(h, root, token, input, &out) == 0);
    CHECK_MSG((r = find_reply(out, "1")) && json_get(r, "result"), "ping: %s", out);
    json_free(r);
    CHECK_MSG((r = find_reply(out, "\"d\"")) && json_get(r, "error"), "discover: %s", out);
    json_free(r);
    r = find_reply(out, "2");
    yajl_val meta = json_get_object(json_get_object(r, "result"), "_meta");
    CHECK_MSG(streq(json_get_string(meta, "mcpd/session"), token),
              "the bridge did not join its parent's session: %s", out);
    json_free(r);
    r = find_reply(out, "3");
    CHECK_MSG(list_has(r, "mcp_proj1_echo") && list_has(r, "mcp_user1_echo"),
              "the bridge is not in its project's workspace: %s", out);
    json_free(r);
    r = find_reply(out, "\"late!\"");
    CHECK_MSG(r && json_get(r, "result"), "the call running at EOF was not answered: %s", out);
    json_free(r);

    /* Without a session: the directory alone still picks the project. */
    CHECK(run_bridge(h, root, NULL,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n" INIT_LINE(
                         "2") "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}\n",
                     &out2) == 0);
    r = find_reply(out2, "3");
    CHECK_MSG(list_has(r, "mcp_proj1_echo"), "no session, ping first: %s", out2);
    json_free(r);
    mcpc_free(parent);
}

/*
 * A host that cancels its calls and closes stdin: mcpd sends no reply to a cancelled request,
 * so the bridge must not await one (it used to wait out its drain time, then exit 1). Ids are
 * matched as JSON values: "c\u0041" is cancelled by "cA".
 */
static void test_cancelled(Harness *h)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_free_ char *input = xasprintf(
        INIT_LINE("1") "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"mcp_user1_sleep\",\"arguments\":{\"ms\":%d}}}\n"
                       "{\"jsonrpc\":\"2.0\",\"id\":\"c\\u0041\",\"method\":\"tools/call\","
                       "\"params\":{\"name\":\"mcp_user1_sleep\",\"arguments\":{\"ms\":%d}}}\n"
                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                       "{\"requestId\":2,\"reason\":\"host gave up\"}}\n"
                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                       "{\"requestId\":\"cA\"}}\n",
        CANCELLED_CALL_MS, CANCELLED_CALL_MS);
    yajl_val r;
    int st = run_bridge(h, NULL, NULL, input, &out);

    CHECK_MSG(st == 0, "bridge with cancelled calls: status %d (-1: still running after %d ms)", st,
              H_WAIT_MS);
    CHECK_MSG((r = find_reply(out, "1")) && json_get(r, "result"), "initialize: %s", out);
    json_free(r);
    CHECK_MSG(!(r = find_reply(out, "2")), "a cancelled call was answered: %s", out);
    json_free(r);
}

/* printf 'init\nlist\n' | mcpctl bridge: both replies, every time. */
static void test_short_runs(Harness *h)
{
    int got = 0;

    for (int i = 0; i < N_SHORT_RUNS; i++) {
        _cleanup_free_ char *out = NULL;
        int st = run_bridge(
            h, NULL, NULL,
            INIT_LINE("1") "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n", &out);
        yajl_val a = find_reply(out, "1"), b = find_reply(out, "2");
        if (st == 0 && a && b && list_has(b, "mcp_user1_echo"))
            got++;
        else
            fprintf(stderr, "run %d: status %d, output %s\n", i, st, out);
        json_free(a);
        json_free(b);
    }
    printf("  init+list through the bridge: both replies in %d of %d runs\n", got, N_SHORT_RUNS);
    CHECK(got == N_SHORT_RUNS);
}

/*
 * A host run with MCPD_TOOL_MODE=search (docs/search.md): it starts with mcpd's two tools,
 * finds one with mcpd_search_tools, is told list_changed, lists it and calls it by its name.
 */
static void test_search_mode(Harness *h)
{
    _cleanup_free_ char *out = NULL;
    int st;

    setenv("MCPD_TOOL_MODE", "search", 1);
    st = run_bridge(h, NULL, NULL,
                    INIT_LINE("1") "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
                                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                                   "\"params\":{\"name\":\"mcpd_search_tools\",\"arguments\":"
                                   "{\"query\":\"add two numbers\"}}}\n"
                                   "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}\n"
                                   "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
                                   "\"params\":{\"name\":\"mcp_user1_add\",\"arguments\":"
                                   "{\"a\":2,\"b\":3}}}\n",
                    &out);
    unsetenv("MCPD_TOOL_MODE");
    yajl_val first = find_reply(out, "2"), found = find_reply(out, "3"),
             second = find_reply(out, "4"), sum = find_reply(out, "5");
    CHECK_MSG(st == 0 && first && list_has(first, "mcpd_search_tools") &&
                  !list_has(first, "mcp_user1_add"),
              "first list: %s", out);
    _cleanup_free_ char *found_text = found ? json_to_string(found) : NULL;
    CHECK_MSG(found_text && strstr(found_text, "mcp_user1_add"), "search: %s", out);
    CHECK_MSG(out && strstr(out, "notifications/tools/list_changed"), "no list_changed: %s", out);
    CHECK_MSG(second && list_has(second, "mcp_user1_add"), "second list: %s", out);
    _cleanup_free_ char *sum_text = sum ? json_to_string(sum) : NULL;
    CHECK_MSG(sum_text && strstr(sum_text, "5"), "call: %s", out);
    json_free(first);
    json_free(found);
    json_free(second);
    json_free(sum);
}

/* Megabytes pipelined each way, stdin closed right after: every reply arrives, intact. */
static void test_bulk(Harness *h)
{
    StrBuf in = STRBUF_INIT;
    _cleanup_free_ char *text = xmalloc(BULK_TEXT_BYTES + 1), *out = NULL;
    int got = 0;

    memset(text, 'x', BULK_TEXT_BYTES);
    text[BULK_TEXT_BYTES] = '\0';
    strbuf_puts(&in, INIT_LINE("0"));
    for (int i = 1; i <= N_BULK_CALLS; i++)
        strbuf_printf(&in,
                      "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
                      "\"name\":\"mcp_user1_echo\",\"arguments\":{\"text\":\"%d%s\"}}}\n",
                      i, i, text);
    CHECK(run_bridge(h, NULL, NULL, strbuf_str(&in), &out) == 0);
    _cleanup_free_ char *copy = xstrdup(out);
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        _cleanup_json_ yajl_val v = json_parse(line, NULL);
        int64_t id;
        yajl_val content = json_get_array(json_get_object(v, "result"), "content");
        const char *t =
            json_array_len(content) ? json_get_string(json_array_at(content, 0), "text") : NULL;
        char want[32];
        if (json_get_int(v, "id", &id) != 0 || id == 0)
            continue;
        snprintf(want, sizeof(want), "%lld", (long long)id);
        if (t && startswith(t, want) && strlen(t) == strlen(want) + BULK_TEXT_BYTES)
            got++;
    }
    CHECK_MSG(got == N_BULK_CALLS, "bulk: %d of %d replies; output %zu bytes, begins %.300s", got,
              N_BULK_CALLS, strlen(out), out);
    strbuf_deinit(&in);
}

/*
 * mcpd not running: the host sees why in its initialize reply (hosts show an initialize error,
 * not the bridge's stderr), every request gets that answer, notifications none, and the bridge
 * ends with mcpctl's "not reachable" status when the host closes stdin.
 */
static void test_not_running(Harness *h)
{
    _cleanup_free_ char *out = NULL;
    int st = run_bridge(h, NULL, NULL,
                        INIT_LINE("1") "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                                       "initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"p\","
                                       "\"method\":\"ping\"}\n",
                        &out);
    _cleanup_json_ yajl_val a = find_reply(out, "1"), b = find_reply(out, "\"p\"");
    const char *msg = json_get_string(json_get_object(a, "error"), "message");
    int64_t code = 0;

    CHECK_MSG(st == 3, "bridge without mcpd exited %d", st);
    CHECK_MSG(msg && strstr(msg, "mcpd is not running") && strstr(msg, h->socket) &&
                  strstr(msg, "systemctl --user enable --now mcpd.socket"),
              "initialize without mcpd got: %s", out);
    CHECK(json_get_int(json_get_object(a, "error"), "code", &code) == 0 && code == -32000);
    CHECK_MSG(json_get_object(b, "error"), "ping without mcpd got: %s", out);
    size_t lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++)
        lines++;
    CHECK_MSG(lines == 2, "%zu replies to two requests and a notification: %s", lines, out);
}

int main(void)
{
    Harness h;
    char root[400], path[500];

    h_setup(&h, "bridge");
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"user1\": {\"command\": \"%s\"}}}", h_fake());
    h_write_config(&h, cfg);
    /* The project's server goes soon after its last agent, so the final check sees the baseline. */
    h_write_settings(&h, "{\"workspaceLingerMs\": 500}");
    snprintf(root, sizeof(root), "%s/project", h.dir);
    snprintf(path, sizeof(path), "%s/.mcpd", root);
    CHECK(mkdir(root, 0700) == 0 && mkdir(path, 0700) == 0);
    snprintf(path, sizeof(path), "%s/.mcpd/mcp.json", root);
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"mcpServers\": {\"proj1\": {\"command\": \"%s\"}}}", h_fake());
    fclose(f);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "settle");
    /* The user approves the project's server (mcpctl trust), as before any agent there. */
    _cleanup_free_ char *trust = xasprintf("{\"cwd\": \"%s\"}", root), *trusted = NULL;
    CHECK(mcpc_request(c, "mcpd/trust", trust, &trusted) == 0);
    h_settle(&h, c, "user1", NULL);
    mcpc_free(c);

    test_probe_first(&h, root);
    test_short_runs(&h);
    test_bulk(&h);
    test_search_mode(&h);
    test_cancelled(&h);

    h_check_healthy(&h, "bridge", "mcp_user1_echo");
    CHECK(h_stop(&h) == 0);
    test_not_running(&h);
    h_teardown(&h);
    return h_finish("test-bridge");
}
