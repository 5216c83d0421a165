// SPDX-License-Identifier: MIT
// test-modern-bridge: `mcpctl bridge` run by a host of MCP 2026-07-28: no initialize, so the
// bridge's identity (its project, the parent's session) rides on the first requests' _meta;
// a subscriptions/listen the host leaves open does not hold the bridge at stdin EOF.

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"modern-host\",\"version\":\"1\"}}"

/*
 * How long the bridge may take to answer and exit. Far below its 65 s wait for replies still
 * owed at stdin EOF, which an open listen (never answered) would otherwise cost.
 */
#define BRIDGE_EXIT_MS 30000

/* The reply with this id among the output's lines (parsed), or NULL. */
static yajl_val reply_to(const char *out, const char *needle)
{
    _cleanup_free_ char *copy = xstrdup(out);
    char *save = NULL;

    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (strstr(line, needle))
            return json_parse(line, NULL);
    return NULL;
}

static void test_modern_host(Harness *h, const char *root, const char *session)
{
    _cleanup_free_ char *input = xasprintf("%s/modern-host.in", h->dir), *out = NULL;
    FILE *f = fopen(input, "w");
    uint64_t t0;
    int status = -1;

    CHECK(f != NULL);
    if (!f)
        return;
    fputs("{\"jsonrpc\":\"2.0\",\"id\":\"probe\",\"method\":\"server/discover\",\"params\":{" META
          "}}\n"
          "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" META "}}\n"
          "{\"jsonrpc\":\"2.0\",\"id\":\"sub\",\"method\":\"subscriptions/listen\",\"params\":{"
          "\"notifications\":{\"toolsListChanged\":true}," META "}}\n"
          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
          "\"mcp_user1_echo\",\"arguments\":{\"text\":\"modern host\"}," META "}}\n",
          f);
    fclose(f);
    t0 = now_ms();
    out = h_shell(&status, "cd '%s' && MCPD_SESSION='%s' '%s' --socket '%s' bridge < '%s'", root,
                  session, getenv("MCPCTL_BINARY"), h->socket, input);
    CHECK_MSG(status == 0, "the bridge exited with %d", status);
    CHECK_MSG(now_ms() - t0 < BRIDGE_EXIT_MS,
              "the bridge took %llu ms to exit (an open listen held it?)",
              (unsigned long long)(now_ms() - t0));

    _cleanup_json_ yajl_val probe = reply_to(out, "\"id\":\"probe\"");
    CHECK_MSG(json_get_array(json_get_object(probe, "result"), "supportedVersions"),
              "no discover result: %s", out);
    /* The project's own server is listed: the bridge's directory reached mcpd. */
    _cleanup_json_ yajl_val list = reply_to(out, "\"id\":1,");
    CHECK_MSG(list && strstr(out, "\"mcp_proj1_echo\""), "the project's tools are missing: %s",
              out);
    CHECK(streq(json_get_string(json_get_object(list, "result"), "resultType"), "complete"));
    _cleanup_json_ yajl_val ack = reply_to(out, "notifications/subscriptions/acknowledged");
    CHECK_MSG(ack, "no acknowledgement of the listen: %s", out);
    _cleanup_json_ yajl_val call = reply_to(out, "\"id\":2,");
    CHECK_MSG(call && strstr(out, "modern host"), "the call was not answered: %s", out);
    CHECK_MSG(!reply_to(out, "\"id\":\"sub\",\"result\""), "the listen was answered: %s", out);
}

/* While a 2026 host is connected through the bridge, mcpd lists it in its project and session. */
static void test_identity(Harness *h, const char *root, mcpc_client *parent)
{
    static const char line[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" META "}}\n";
    int in[2], st = -1;
    bool seen = false;
    pid_t pid;

    /* The host's stdin is a pipe the test holds open until it has looked. */
    CHECK(pipe2(in, O_CLOEXEC) == 0);
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(in[0], STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        if (chdir(root) < 0)
            _exit(126);
        setenv("MCPD_SESSION", mcpc_session(parent), 1);
        execl(getenv("MCPCTL_BINARY"), "mcpctl", "--socket", h->socket, "bridge", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    CHECK(write(in[1], line, sizeof(line) - 1) == (ssize_t)(sizeof(line) - 1));
    for (int waited = 0; waited < H_WAIT_MS && !seen; waited += 100) {
        _cleanup_json_ yajl_val status = h_status(parent);
        yajl_val agents = json_get_array(status, "agents");
        for (size_t i = 0; i < json_array_len(agents); i++) {
            yajl_val a = json_array_at(agents, i);
            const char *r = json_get_string(a, "root");
            if (streq(json_get_string(a, "name"), "modern-host") &&
                streq(json_get_string(a, "protocolVersion"), "2026-07-28") && r && streq(r, root) &&
                json_get(a, "parent"))
                seen = true;
        }
        if (!seen)
            h_sleep_ms(100);
    }
    CHECK_MSG(seen, "mcpd does not list the 2026 host in its project, under its parent");
    /* End of input: the bridge owes nothing and exits at once. */
    close(in[1]);
    for (int waited = 0; waited < H_WAIT_MS && waitpid(pid, &st, WNOHANG) == 0; waited += 100)
        h_sleep_ms(100);
    if (waitpid(pid, &st, WNOHANG) == 0) {
        CHECK_MSG(false, "the bridge did not exit after its input ended");
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
}

int main(void)
{
    Harness h;
    char root[400], path[500];

    h_setup(&h, "modern-bridge");
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"user1\": {\"command\": \"%s\"}}}", h_fake());
    h_write_config(&h, cfg);
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
    _cleanup_free_ char *trust = xasprintf("{\"cwd\": \"%s\"}", root), *trusted = NULL;
    CHECK(mcpc_request(c, "mcpd/trust", trust, &trusted) == 0);
    h_settle(&h, c, "user1", NULL);
    mcpc_options po = {.socket_path = h.socket, .client_name = "parent", .cwd = root};
    mcpc_client *parent = mcpc_new(&po);
    CHECK(mcpc_connect(parent) == 0);

    test_modern_host(&h, root, mcpc_session(parent));
    test_identity(&h, root, parent);

    mcpc_free(parent);
    mcpc_free(c);
    h_check_healthy(&h, "modern bridge", "mcp_user1_echo");
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-modern-bridge");
}
