// SPDX-License-Identifier: MIT
// test-viewref: tools/list answers share the built view by reference, across rebuilds and drops.

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Tools of the big server: a view of about 1 MB, so a few answers overfill the socket. */
#define BIG_TOOLS 3000
/* Tools the fake server offers by default (the "changer" server), before its late_tool. */
#define FAKE_TOOLS 10
/*
 * When the "changer" server announces its new tool: meant to come after the unread lists are
 * queued (the answers are checked either way, all alike).
 */
#define LATE_MS 5000
/* Lists a reader asks for and leaves unread: several MB held in its output queue. */
#define N_UNREAD 5
/* Lists a reading agent asks for while the view does not change. */
#define N_LISTS 20
/* Silence that ends a raw read: generous, the daemon may be slow under load. */
#define READ_IDLE_MS 3000

/* The user workspace's counters from mcpctl status. */
static void view_counters(mcpc_client *c, int64_t *buildsp, int64_t *sendsp)
{
    yajl_val st = h_status(c), wss = json_get_array(st, "workspaces");

    *buildsp = *sendsp = -1;
    for (size_t i = 0; i < json_array_len(wss); i++) {
        yajl_val ws = json_array_at(wss, i);
        if (!YAJL_IS_NULL(json_get(ws, "root")))
            continue;
        json_get_int(ws, "viewBuilds", buildsp);
        json_get_int(ws, "viewSends", sendsp);
    }
    json_free(st);
}

/* Send initialize, initialized and n tools/list requests (ids 1..n) on a raw connection. */
static int raw_lists(Harness *h, int n)
{
    int fd = h_raw_connect(h);
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, h_raw_initialize);
    strbuf_puts(&sb, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for (int i = 1; i <= n; i++)
        strbuf_printf(&sb, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}\n", i);
    CHECK(fd >= 0 && h_raw_write(fd, sb.data, sb.len));
    strbuf_deinit(&sb);
    return fd;
}

/* Each answer of a raw read: a whole list, ids 1..n in order, all the same size; return it. */
static int check_raw_answers(char *all, int n)
{
    int seen = 0, want_tools = -1;
    char *save = NULL;

    for (char *line = strtok_r(all, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        _cleanup_json_ yajl_val msg = json_parse(line, NULL);
        int64_t id = -1;
        json_get_int(msg, "id", &id);
        if (id < 1)
            continue; /* initialize, notifications */
        yajl_val tools = json_get_array(json_get_object(msg, "result"), "tools");
        if (want_tools < 0)
            want_tools = (int)json_array_len(tools);
        CHECK_MSG(id == seen + 1 && (int)json_array_len(tools) == want_tools,
                  "answer %lld: %zu tools, want %d", (long long)id, json_array_len(tools),
                  want_tools);
        seen++;
    }
    CHECK_MSG(seen == n, "%d of %d lists answered", seen, n);
    return want_tools;
}

int main(void)
{
    Harness h;
    int64_t builds0, sends0, builds1, sends1;
    _cleanup_free_ char *first = NULL;
    bool found;

    h_setup(&h, "viewref");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"big\": {\"command\": \"%1$s\", \"args\": [\"--only-generic\", "
        "\"--tools\", \"%2$d\"]},"
        "\"changer\": {\"command\": \"%1$s\", \"args\": [\"--list-changed-after-ms\", \"%3$d\"]}}}",
        h_fake(), BIG_TOOLS, LATE_MS);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "reader");
    h_settle(&h, c, "big", "changer", NULL);

    /* A reader that reads nothing yet: its queue holds the view by reference. */
    int unread = raw_lists(&h, N_UNREAD);
    /* A reader that leaves with lists unread: the references go with its queue. */
    int gone = raw_lists(&h, N_UNREAD);
    h_sleep_ms(200);
    close(gone);

    /* The late tool rebuilds the view while the old one is still queued. */
    for (int i = 0; i < 200 && h_list_count(c, "mcp_changer_late_tool", &found) >= 0 && !found; i++)
        h_sleep_ms(50);
    CHECK_MSG(found, "the late tool never appeared");
    _cleanup_free_ char *all = h_raw_read(unread, READ_IDLE_MS);
    close(unread);
    int n_tools = check_raw_answers(all, N_UNREAD);
    CHECK_MSG(n_tools == BIG_TOOLS + FAKE_TOOLS || n_tools == BIG_TOOLS + FAKE_TOOLS + 1,
              "the unread lists had %d tools", n_tools);
    printf("  %d lists queued by reference across a view rebuild: %s\n", N_UNREAD,
           n_tools == BIG_TOOLS + FAKE_TOOLS ? "yes" : "no (the late tool came first)");

    /* An unchanged view is built once and sent by reference to every list. */
    view_counters(c, &builds0, &sends0);
    for (int i = 0; i < N_LISTS; i++) {
        _cleanup_free_ char *out = NULL;
        CHECK(mcpc_list_tools(c, &out) == 0);
        if (!first)
            first = xstrdup(out);
        else
            CHECK(out && streq(out, first));
    }
    view_counters(c, &builds1, &sends1);
    CHECK_MSG(builds0 >= 1 && builds1 == builds0 && sends1 - sends0 == N_LISTS,
              "builds %lld -> %lld, sends %lld -> %lld", (long long)builds0, (long long)builds1,
              (long long)sends0, (long long)sends1);
    mcpc_free(c);
    h_check_healthy(&h, "viewref", "mcp_changer_echo");
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-viewref");
}
