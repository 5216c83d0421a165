// SPDX-License-Identifier: MIT
// test-probe-batch: issue 35 item 5, the two downstream gaps: an initialize after a
// server/discover probe through `mcpctl bridge` keeps the bridge's identity (project, session),
// handed off or relayed, as on the socket; JSON-RPC batches are taken on 2025-03-26 sessions,
// and refused on later versions as before.

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* How long a raw client waits for the answers after its last write. */
#define READ_QUIET_MS 1500

#define INIT_LINE(version)                                                                         \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"     \
    "\"" version "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"host\",\"version\":\"1\"}}}\n"
#define BATCH                                                                                      \
    "[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},"                                         \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"                              \
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"                \
    "\"mcp_steady_echo\",\"arguments\":{\"text\":\"in a batch\"}}}]\n"

/*
 * A host that probes with server/discover (as one preferring 2025-11-25 may, with the 2026
 * _meta), then initializes: through the bridge (relay: handoff "0") it joins its parent's
 * session in its project, as on the socket.
 */
static void test_probe_then_initialize(Harness *h, const char *root, const char *handoff)
{
    mcpc_options po = {.socket_path = h->socket, .client_name = "parent", .cwd = root};
    mcpc_client *parent = mcpc_new(&po);
    _cleanup_free_ char *out = NULL;
    int st;

    CHECK(mcpc_connect(parent) == 0);
    out = h_shell(&st,
                  "cd '%s' && printf '%%s\\n' "
                  "'{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"method\":\"server/discover\",\"params\":"
                  "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}' "
                  "'%s' | MCPD_BRIDGE_HANDOFF=%s MCPD_SESSION=%s '%s' --socket '%s' bridge",
                  root,
                  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{"
                  "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
                  "\"name\":\"prober\",\"version\":\"1\"}}}",
                  handoff, mcpc_session(parent), getenv("MCPCTL_BINARY"), h->socket);
    CHECK_MSG(st == 0 && strstr(out, "\"id\":\"d\",\"result\""), "discover (%s): %s", handoff, out);
    _cleanup_free_ char *want = xasprintf("\"mcpd/session\":\"%s\"", mcpc_session(parent));
    CHECK_MSG(strstr(out, "\"id\":2,\"result\"") && strstr(out, want),
              "initialize after discover (handoff %s) lost the parent's session: %s", handoff, out);
    mcpc_free(parent);
}

/* A raw client at version: its batch's answers (to free). */
static char *batch_on(Harness *h, const char *init)
{
    int fd = h_raw_connect(h);

    CHECK(fd >= 0 && h_raw_write(fd, init, strlen(init)) && h_raw_write(fd, BATCH, strlen(BATCH)));
    char *out = h_raw_read(fd, READ_QUIET_MS);
    close(fd);
    return out;
}

static void test_batches(Harness *h)
{
    _cleanup_free_ char *old = batch_on(h, INIT_LINE("2025-03-26"));
    CHECK_MSG(strstr(old, "\"id\":2,\"result\":{}") && strstr(old, "in a batch") &&
                  !strstr(old, "batches are not supported"),
              "a 2025-03-26 batch: %s", old);
    h_check_healthy(h, "a 2025-03-26 batch", CONTROL);

    const char *later[] = {"2025-06-18", "2025-11-25"};
    for (size_t i = 0; i < N_ELEMENTS(later); i++) {
        _cleanup_free_ char *init = xasprintf(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            "\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":\"host\","
            "\"version\":\"1\"}}}\n",
            later[i]);
        _cleanup_free_ char *out = batch_on(h, init);
        CHECK_MSG(strstr(out, "batches are not supported") && !strstr(out, "in a batch"),
                  "a %s batch was taken: %s", later[i], out);
    }

    /* Through the bridge, handed off, the same. */
    int st;
    _cleanup_free_ char *bridged =
        h_shell(&st, "printf '%%s' '%s%s' | '%s' --socket '%s' bridge", INIT_LINE("2025-03-26"),
                BATCH, getenv("MCPCTL_BINARY"), h->socket);
    CHECK_MSG(st == 0 && strstr(bridged, "\"id\":2,\"result\":{}") && strstr(bridged, "in a batch"),
              "a 2025-03-26 batch through the bridge: %s", bridged);
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    char root[400];

    h_setup(&h, "probe-batch");
    snprintf(root, sizeof(root), "%s/project", h.dir);
    CHECK(mkdir(root, 0700) == 0);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "probe-batch");
    h_settle(&h, c, "steady", NULL);

    test_probe_then_initialize(&h, root, "1");
    test_probe_then_initialize(&h, root, "0");
    test_batches(&h);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-probe-batch");
}
