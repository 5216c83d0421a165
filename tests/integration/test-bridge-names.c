// SPDX-License-Identifier: MIT
// test-bridge-names: `mcpctl bridge --host-prefix` (issue 16 item 3): every tool name it lists
// fits 64 characters with the host's prefix, names are unique and deterministic, and a call by a
// short name reaches its tool; without the option names are mcpd's own.

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Claude Code's prefix for a server it knows as "mcpd": mcp__<server>__<tool>. */
#define HOST_PREFIX "mcp__mcpd__"
/* The cap MCP hosts put on a tool name, which the host's full name must respect. */
#define NAME_MAX_LEN 64
/* A server name long enough that mcpd's names (under 64) pass 64 with HOST_PREFIX. */
#define LONG_SERVER "github_enterprise_integration_for_the_platform_team"
/* How often the bridge polls for its exit while the test waits for it. */
#define POLL_EXIT_MS 20

#define INIT_LINE                                                                                  \
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"     \
    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"host\",\"version\":\"1\"}}}\n"
#define LIST_LINE "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n"

/*
 * Run `mcpctl bridge ARGS...` (NULL-terminated) as a host does: send first, and once the reply
 * to the tools/list (id 1) is out, then (when not NULL) send (a host calls what it has listed);
 * then end stdin and wait for the bridge to exit. Returns its exit status, -1 if it was still
 * running after H_WAIT_MS; its stdout in *outp (to free).
 */
static int bridge(Harness *h, const char *first, const char *then, char **outp, ...)
{
    _cleanup_free_ char *out_path = xasprintf("%s/bridge-out", h->dir);
    const char *argv[16] = {"mcpctl", "--socket", h->socket, "bridge"};
    int argc = 4, st = 0, in[2];
    va_list ap;

    va_start(ap, outp);
    for (const char *a; (a = va_arg(ap, const char *));)
        argv[argc++] = a;
    va_end(ap);
    /* Emptied before the bridge starts: the wait below must not see an earlier run's reply. */
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CHECK(out >= 0 && pipe2(in, O_CLOEXEC) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0)
            _exit(126);
        execv(getenv("MCPCTL_BINARY"), (char **)argv);
        _exit(127);
    }
    close(in[0]);
    close(out);
    /* The inputs are small: a pipe holds them whole. */
    CHECK(write(in[1], first, strlen(first)) == (ssize_t)strlen(first));
    uint64_t deadline = now_ms() + H_WAIT_MS;
    pid_t done = 0;
    while (then && now_ms() < deadline) {
        _cleanup_free_ char *sofar = h_read_file(out_path);
        if (sofar && strstr(sofar, "\"id\":1,"))
            break;
        usleep(POLL_EXIT_MS * 1000);
    }
    if (then)
        CHECK(write(in[1], then, strlen(then)) == (ssize_t)strlen(then));
    close(in[1]);
    while ((done = waitpid(pid, &st, WNOHANG)) == 0 && now_ms() < deadline)
        usleep(POLL_EXIT_MS * 1000);
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    CHECK((*outp = h_read_file(out_path)) != NULL);
    return done == 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The reply with integer id among out's lines, parsed (to free), or NULL. */
static yajl_val reply(const char *out, int64_t id)
{
    _cleanup_free_ char *copy = xstrdup(out);
    char *save = NULL;

    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        yajl_val v = json_parse(line, NULL);
        int64_t got;
        if (v && !json_get(v, "method") && json_get_int(v, "id", &got) == 0 && got == id)
            return v;
        json_free(v);
    }
    return NULL;
}

/* The tools array of the tools/list reply (id 1) in out, as owned by *rootp. */
static yajl_val listed(const char *out, yajl_val *rootp)
{
    *rootp = reply(out, 1);
    yajl_val tools = json_get_array(json_get_object(*rootp, "result"), "tools");
    CHECK_MSG(tools && json_array_len(tools) > 0, "no tools/list reply: %.400s", out);
    return tools;
}

/* Every name fits with HOST_PREFIX and no two are equal; returns how many tools. */
static size_t check_short_names(yajl_val tools)
{
    size_t n = json_array_len(tools);

    for (size_t i = 0; i < n; i++) {
        const char *a = json_get_string(json_array_at(tools, i), "name");
        CHECK_MSG(a && strlen(HOST_PREFIX) + strlen(a) <= NAME_MAX_LEN,
                  "%s%s is longer than %d characters", HOST_PREFIX, a ? a : "(none)", NAME_MAX_LEN);
        CHECK_MSG(!startswith(a, "mcp_"), "short name %s kept mcpd's mcp_ prefix", a);
        for (size_t j = 0; j < i; j++)
            CHECK_MSG(!streq(a, json_get_string(json_array_at(tools, j), "name")),
                      "two tools are both named %s", a);
    }
    return n;
}

/* The name of the listed tool with this description (the tools keep theirs). */
static const char *name_by_description(yajl_val tools, const char *description)
{
    for (size_t i = 0; i < json_array_len(tools); i++)
        if (streq(json_get_string(json_array_at(tools, i), "description") ?: "", description))
            return json_get_string(json_array_at(tools, i), "name");
    return NULL;
}

/* The text of the call reply with this id, or NULL (an error, or no reply). */
static char *call_text(const char *out, int64_t id)
{
    _cleanup_json_ yajl_val v = reply(out, id);
    yajl_val content = json_get_array(json_get_object(v, "result"), "content");
    const char *t =
        json_array_len(content) ? json_get_string(json_array_at(content, 0), "text") : NULL;
    return t ? xstrdup(t) : NULL;
}

static void call_line(StrBuf *sb, int id, const char *name, const char *text)
{
    strbuf_printf(sb,
                  "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"%s\",\"arguments\":{\"text\":\"%s\"}}}\n",
                  id, name, text);
}

/* Long names: mcpd's are under 64, the host's would not be; the short ones are, and work. */
static void test_long(Harness *h)
{
    _cleanup_free_ char *full_out = NULL, *out = NULL, *out2 = NULL, *called = NULL;
    _cleanup_json_ yajl_val full_root = NULL, root = NULL, root2 = NULL;
    StrBuf in = STRBUF_INIT;

    CHECK(bridge(h, INIT_LINE LIST_LINE, NULL, &full_out, NULL) == 0);
    yajl_val full = listed(full_out, &full_root);
    /* Default mode: mcpd's names as they are, some too long for the host. */
    bool too_long = false;
    for (size_t i = 0; i < json_array_len(full); i++) {
        const char *a = json_get_string(json_array_at(full, i), "name");
        CHECK_MSG(startswith(a, "mcp_"), "default mode changed the name %s", a);
        too_long |= strlen(HOST_PREFIX) + strlen(a) > NAME_MAX_LEN;
    }
    CHECK_MSG(too_long, "no name is too long for the host: the test proves nothing");

    CHECK(bridge(h, INIT_LINE LIST_LINE, NULL, &out, "--host-prefix", HOST_PREFIX, NULL) == 0);
    yajl_val tools = listed(out, &root);
    CHECK_MSG(check_short_names(tools) == json_array_len(full),
              "short mode lists %zu tools, mcpd %zu", json_array_len(tools), json_array_len(full));
    const char *echo = name_by_description(tools, "Return the given text unchanged.");
    CHECK_MSG(echo && startswith(echo, "github_enterprise"), "echo is listed as %s",
              echo ? echo : "(none)");
    printf("  %s%s: %zu characters\n", HOST_PREFIX, echo, strlen(HOST_PREFIX) + strlen(echo));

    /* The same list again, then a call by the short name and one by a name never listed. */
    call_line(&in, 2, echo, "hello42");
    call_line(&in, 3, "no_such_tool_anywhere", "x");
    CHECK(bridge(h, INIT_LINE LIST_LINE, strbuf_str(&in), &out2, "--host-prefix", HOST_PREFIX,
                 NULL) == 0);
    yajl_val again = listed(out2, &root2);
    for (size_t i = 0; i < json_array_len(tools); i++)
        CHECK_MSG(streq(json_get_string(json_array_at(tools, i), "name"),
                        json_get_string(json_array_at(again, i), "name")),
                  "the short names changed between two bridges");
    called = call_text(out2, 2);
    CHECK_MSG(called && streq(called, "hello42"), "call by short name %s: %s", echo,
              called ? called : out2);
    _cleanup_json_ yajl_val unknown = reply(out2, 3);
    yajl_val res = json_get_object(unknown, "result");
    bool is_error = false;
    CHECK_MSG(unknown && (json_get(unknown, "error") ||
                          (json_get_bool(res, "isError", &is_error) == 0 && is_error)),
              "a name never listed did not fail: %.300s", out2);
    strbuf_deinit(&in);
}

/*
 * A collision: one server's own tools "echo" and "mcp_echo" (single-server passthrough keeps
 * them) both shorten to "echo". The earlier full name keeps it, whatever the listing order; the
 * other gets hash digits; a call by each name reaches its own tool.
 */
static void test_collision(Harness *h, const char *server, const char *other_order)
{
    _cleanup_free_ char *out = NULL, *out2 = NULL, *a = NULL, *b = NULL, *hashed = NULL;
    _cleanup_json_ yajl_val root = NULL;
    StrBuf in = STRBUF_INIT;

    CHECK(bridge(h, INIT_LINE LIST_LINE, NULL, &out, "--server", server, "--host-prefix",
                 HOST_PREFIX, NULL) == 0);
    yajl_val tools = listed(out, &root);
    CHECK_MSG(check_short_names(tools) == 2, "%s lists %zu tools: %.400s", server,
              json_array_len(tools), out);
    for (size_t i = 0; i < 2; i++) {
        const char *n = json_get_string(json_array_at(tools, i), "name");
        if (!streq(n, "echo"))
            hashed = xstrdup(n);
    }
    CHECK_MSG(hashed && startswith(hashed, "echo_") && strlen(hashed) == strlen("echo_") + 6,
              "%s: the colliding name is %s", server, hashed ? hashed : "(none)");

    call_line(&in, 2, "echo", "p");
    call_line(&in, 3, hashed, "q");
    CHECK(bridge(h, INIT_LINE LIST_LINE, strbuf_str(&in), &out2, "--server", server,
                 "--host-prefix", HOST_PREFIX, NULL) == 0);
    a = call_text(out2, 2);
    b = call_text(out2, 3);
    CHECK_MSG(a && streq(a, "echo:p"), "%s: echo reached %s", server, a ? a : out2);
    CHECK_MSG(b && streq(b, "mcp_echo:q"), "%s: %s reached %s", server, hashed, b ? b : out2);

    /* The same tools listed in the other order get the same names. */
    _cleanup_free_ char *out3 = NULL;
    _cleanup_json_ yajl_val root3 = NULL;
    CHECK(bridge(h, INIT_LINE LIST_LINE, NULL, &out3, "--server", other_order, "--host-prefix",
                 HOST_PREFIX, NULL) == 0);
    yajl_val swapped = listed(out3, &root3);
    bool found = false;
    for (size_t i = 0; i < json_array_len(swapped); i++)
        found |= streq(json_get_string(json_array_at(swapped, i), "name"), hashed);
    CHECK_MSG(found, "listed in the other order, mcp_echo is not %s: %.300s", hashed, out3);
    strbuf_deinit(&in);
}

/* A prefix that leaves no room for names is refused, naming the option. */
static void test_bad_prefix(Harness *h)
{
    _cleanup_free_ char *out = NULL;
    char prefix[NAME_MAX_LEN + 1];

    memset(prefix, 'p', NAME_MAX_LEN - 4);
    prefix[NAME_MAX_LEN - 4] = '\0';
    CHECK(bridge(h, INIT_LINE, NULL, &out, "--host-prefix", prefix, NULL) == 1);
    CHECK_MSG(!*out, "a refused bridge wrote %s", out);
}

int main(void)
{
    Harness h;
    const char *names = getenv("NAMES_SERVER");

    CHECK_MSG(names, "NAMES_SERVER is not set");
    h_setup(&h, "bridge-names");
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"" LONG_SERVER "\": {\"command\": \"%s\"},"
                  " \"pair\": {\"command\": \"%s\", \"args\": [\"echo\", \"mcp_echo\"]},"
                  " \"riap\": {\"command\": \"%s\", \"args\": [\"mcp_echo\", \"echo\"]}}}",
                  h_fake(), names, names);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "settle");
    h_settle(&h, c, LONG_SERVER, "pair", "riap", NULL);
    mcpc_free(c);

    test_long(&h);
    test_collision(&h, "pair", "riap");
    test_collision(&h, "riap", "pair");
    test_bad_prefix(&h);

    h_check_healthy(&h, "bridge-names", "mcp_" LONG_SERVER "_echo");
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-bridge-names");
}
