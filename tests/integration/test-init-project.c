// SPDX-License-Identifier: MIT
// test-init-project: an initialize in a new project, whose files mcpd reads on a thread.

/*
 * The answer to initialize names the capabilities and instructions of the agent's servers, so
 * for a project mcpd has not seen it waits for that project's discovery (on a thread, off the
 * loop); an agent that does not wait for the answer (initialize, initialized and a list in one
 * write, as `printf ... | mcpctl bridge` does) still gets every answer, in order, after it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* An answer of id in the lines of text (to free), or NULL. */
static yajl_val reply_of(const char *text, int id)
{
    for (const char *l = text; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        _cleanup_free_ char *line = xstrndup(l, n);
        yajl_val v = json_parse(line, NULL);
        yajl_val vid = json_get(v, "id");
        if (vid && YAJL_IS_INTEGER(vid) && vid->u.number.i == id)
            return v;
        json_free(v);
        l = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* Read until answers of ids 1..n all came (or H_WAIT_MS passed); what came (to free). */
static char *read_answers(int fd, int n)
{
    StrBuf sb = STRBUF_INIT;

    for (int waited = 0; waited < H_WAIT_MS; waited += 200) {
        _cleanup_free_ char *more = h_raw_read(fd, 200);
        bool all = true;
        if (more)
            strbuf_puts(&sb, more);
        for (int id = 1; id <= n && all; id++) {
            yajl_val v = reply_of(strbuf_str(&sb), id);
            all = v != NULL;
            json_free(v);
        }
        if (all)
            break;
    }
    return strbuf_detach(&sb, NULL);
}

int main(void)
{
    Harness h;
    const char *server = getenv("SURFACE_SERVER");
    mcpc_client *c;

    if (!server) {
        fprintf(stderr, "SURFACE_SERVER is not set\n");
        return 1;
    }
    h_setup(&h, "init-project");
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\":{\"alpha\":{\"command\":\"%s\",\"args\":[\"--name\","
                  "\"alpha\"]}}}",
                  server);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, "user-agent");
    h_settle(&h, c, "alpha", NULL);

    /* Two projects mcpd has not seen: each initialize is the first of its workspace. */
    for (int k = 0; k < 2; k++) {
        _cleanup_free_ char *dir = xasprintf("%s/project%d", h.dir, k);
        mkdir(dir, 0700);
        _cleanup_free_ char *req = xasprintf(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":"
            "\"p%d\",\"version\":\"1\"},\"_meta\":{\"mcpd/cwd\":\"%s\"}}}\n"
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/list\"}\n",
            k, dir);
        int fd = h_raw_connect(&h);
        CHECK(fd >= 0 && h_raw_write(fd, req, strlen(req)));
        _cleanup_free_ char *out = read_answers(fd, 3);
        yajl_val init = reply_of(out, 1), tools = reply_of(out, 2), prompts = reply_of(out, 3);
        yajl_val caps = json_get(json_get(init, "result"), "capabilities");
        CHECK_MSG(json_get_object(caps, "prompts") && json_get_object(caps, "resources"),
                  "project %d: initialize names no prompts or resources: %s", k, out);
        CHECK_MSG(json_array_len(json_get(json_get(tools, "result"), "tools")) > 0,
                  "project %d: tools/list sent before the answer: %s", k, out);
        CHECK_MSG(json_array_len(json_get(json_get(prompts, "result"), "prompts")) > 0,
                  "project %d: prompts/list sent before the answer: %s", k, out);
        /* In order: the answer to initialize before those of what came after it. */
        const char *a1 = out ? strstr(out, "\"id\":1") : NULL,
                   *a2 = out ? strstr(out, "\"id\":2") : NULL;
        CHECK_MSG(a1 && a2 && a1 < a2, "project %d: answers out of order: %s", k, out);
        json_free(init);
        json_free(tools);
        json_free(prompts);
        close(fd);
    }
    CHECK(h_check_healthy(&h, "initialize in new projects", "mcp_alpha_echo"));
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-init-project");
}
