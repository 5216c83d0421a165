// SPDX-License-Identifier: MIT
// test-audit: an audit entry per tool call (docs/audit.md): 10 000 calls from 100 agents make
// one entry each with every field and no arguments; auditArguments brings them, redacted; the
// trace context of a call's _meta is in its entry; a call refused before any server has it (an
// unknown tool, outside the agent's profile) has an entry too.

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"
#include "tests/integration/raw.h"

#define AGENTS          100
#define CALLS_PER_AGENT 100
#define CALLS           (AGENTS * CALLS_PER_AGENT)
#define TRACEPARENT     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

/* The entries written so far (lines of the file). */
static int count_lines(const char *path)
{
    _cleanup_free_ char *text = h_read_file(path);
    int n = 0;

    for (const char *p = text; p && (p = strchr(p, '\n')); p++)
        n++;
    return n;
}

static bool wait_lines(const char *path, int want)
{
    for (int waited = 0; waited < H_WAIT_MS; waited += 50) {
        if (count_lines(path) >= want)
            return true;
        h_sleep_ms(50);
    }
    return false;
}

/* Call i of an agent: mostly add; one in ten a tool error, one in ten a JSON-RPC error. */
static const char *tool_of(int i)
{
    return i % 10 == 0 ? "tool_error" : i % 10 == 1 ? "fail" : "add";
}

static const char *outcome_of(int i)
{
    return i % 10 == 0 ? "tool-error" : i % 10 == 1 ? "error" : "ok";
}

static void many_agents(Harness *h, const char *audit)
{
    static Raw agents[AGENTS];
    static bool seen[AGENTS][CALLS_PER_AGENT];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    int answered = 0, bad = 0;

    exe[n > 0 ? n : 0] = '\0';
    for (int a = 0; a < AGENTS; a++) {
        char name[32];
        snprintf(name, sizeof(name), "agent-%d", a);
        raw_init(&agents[a], h, name, NULL);
    }
    for (int a = 0; a < AGENTS; a++)
        for (int i = 0; i < CALLS_PER_AGENT; i++)
            raw_send(&agents[a],
                     "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"mcp_fake_%s\",\"arguments\":{\"a\":%d,\"b\":1}}}",
                     1000 + i, tool_of(i), a);
    for (int a = 0; a < AGENTS; a++)
        for (int i = 0; i < CALLS_PER_AGENT;) {
            _cleanup_json_ yajl_val m = raw_read(&agents[a], H_WAIT_MS);
            if (!m)
                break;
            if (!json_get(m, "id"))
                continue; /* a notification (list_changed) */
            answered += json_get(m, "result") != NULL;
            i++;
        }
    CHECK_MSG(answered == CALLS, "%d of %d calls answered", answered, CALLS);
    CHECK_MSG(wait_lines(audit, CALLS), "%d audit entries for %d calls", count_lines(audit), CALLS);

    _cleanup_free_ char *text = h_read_file(audit);
    int entries = 0;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        _cleanup_json_ yajl_val e = json_parse(line, NULL);
        int64_t id = 0, pid = 0, took = -1, time = 0;
        int a = -1;
        const char *agent = json_get_string(e, "agent");
        entries++;
        if (agent)
            sscanf(agent, "agent-%d", &a);
        json_get_int(e, "requestId", &id);
        json_get_int(e, "pid", &pid);
        json_get_int(e, "durationMs", &took);
        json_get_int(e, "time", &time);
        int i = (int)id - 1000;
        bool ok = a >= 0 && a < AGENTS && i >= 0 && i < CALLS_PER_AGENT && !seen[a][i] &&
                  pid == getpid() && took >= 0 && time > 0 &&
                  streq(json_get_string(e, "server"), "fake") &&
                  streq(json_get_string(e, "tool"), tool_of(i)) &&
                  streq(json_get_string(e, "outcome"), outcome_of(i)) &&
                  streq(json_get_string(e, "exe"), exe) && json_get_string(e, "project") &&
                  !json_get(e, "arguments") && (i % 10 != 1 || json_get(e, "code"));
        if (ok)
            seen[a][i] = true;
        else if (bad++ < 3)
            fprintf(stderr, "test-audit: a wrong or repeated entry: %s\n", line);
    }
    CHECK_MSG(entries == CALLS && bad == 0, "%d entries, %d of them wrong, for %d calls", entries,
              bad, CALLS);
    for (int a = 0; a < AGENTS; a++)
        raw_close(&agents[a]);
}

/* With auditArguments the entry has them, with the secrets masked; the trace context too. */
static void arguments_and_trace(Harness *h, const char *audit)
{
    Raw r;
    int before = count_lines(audit);

    h_write_settings(h, "{\"audit\": \"file\", \"auditArguments\": true}");
    CHECK(h_wait_log(h, "reloading configuration", H_WAIT_MS));
    raw_init(&r, h, "secretive", NULL);
    raw_send(&r, "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"tools/call\",\"params\":"
                 "{\"name\":\"mcp_fake_echo\",\"arguments\":{\"text\":"
                 "\"https://user:hunter2@example.com/x?api_key=K3Y&q=1\","
                 "\"apiToken\":\"T0KEN\"},\"_meta\":{\"traceparent\":\"" TRACEPARENT "\","
                 "\"tracestate\":\"vendor=1\"}}}");
    _cleanup_json_ yajl_val m = raw_read(&r, H_WAIT_MS);
    CHECK(m && json_get(m, "result"));
    CHECK(wait_lines(audit, before + 1));
    _cleanup_free_ char *text = h_read_file(audit);
    const char *last = text ? strstr(text, "\"requestId\":\"s\"") : NULL;
    CHECK_MSG(last, "no entry for the call with arguments");
    if (!last)
        return;
    while (last > text && last[-1] != '\n')
        last--;
    _cleanup_free_ char *line = xstrndup(last, strcspn(last, "\n"));
    CHECK_MSG(strstr(line, "\"arguments\":{") && strstr(line, "example.com") &&
                  strstr(line, "\"apiToken\":\"***\"") && !strstr(line, "hunter2") &&
                  !strstr(line, "K3Y") && !strstr(line, "T0KEN"),
              "arguments not there, or not redacted: %s", line);
    CHECK_MSG(strstr(line, "\"traceparent\":\"" TRACEPARENT "\"") &&
                  strstr(line, "\"tracestate\":\"vendor=1\""),
              "no trace context in %s", line);
    raw_close(&r);
}

/* The entry whose requestId is id (JSON text) in the file, parsed; NULL if none. */
static yajl_val entry_of(const char *audit, const char *id)
{
    _cleanup_free_ char *text = h_read_file(audit);
    _cleanup_free_ char *needle = xasprintf("\"requestId\":%s", id);
    char *at = text ? strstr(text, needle) : NULL;

    if (!at)
        return NULL;
    while (at > text && at[-1] != '\n')
        at--;
    at[strcspn(at, "\n")] = '\0';
    return json_parse(at, NULL);
}

/* Calls refused before any server has them (an unknown tool, one the profile does not allow):
 * an entry each, outcome "refused", with the code the agent got. */
static void refused_calls(Harness *h, const char *audit)
{
    Raw r;
    int before = count_lines(audit);

    raw_init(&r, h, "narrow", NULL);
    raw_send(&r, "{\"jsonrpc\":\"2.0\",\"id\":\"unknown\",\"method\":\"tools/call\",\"params\":"
                 "{\"name\":\"mcp_nowhere_tool\",\"arguments\":{}}}");
    raw_send(&r, "{\"jsonrpc\":\"2.0\",\"id\":\"profile\",\"method\":\"tools/call\",\"params\":"
                 "{\"name\":\"mcp_fake_add\",\"arguments\":{\"a\":1,\"b\":2}}}");
    for (int got = 0; got < 2;) {
        _cleanup_json_ yajl_val m = raw_read(&r, H_WAIT_MS);
        if (!m)
            break;
        if (!json_get(m, "id"))
            continue; /* a notification */
        got++;
        CHECK_MSG(json_get(m, "error"), "a refused call was answered with a result");
    }
    CHECK_MSG(wait_lines(audit, before + 2), "%d entries for 2 refused calls",
              count_lines(audit) - before);
    _cleanup_json_ yajl_val u = entry_of(audit, "\"unknown\""), p = entry_of(audit, "\"profile\"");
    int64_t code = 0, pid = 0;
    CHECK_MSG(u && streq(json_get_string(u, "outcome"), "refused") &&
                  streq(json_get_string(u, "tool"), "mcp_nowhere_tool") &&
                  streq(json_get_string(u, "server"), "") &&
                  streq(json_get_string(u, "agent"), "narrow") &&
                  json_get_int(u, "code", &code) == 0 && code == -32602 &&
                  json_get_int(u, "pid", &pid) == 0 && pid == getpid(),
              "unknown tool: no entry or a wrong one");
    CHECK_MSG(p && streq(json_get_string(p, "outcome"), "refused") &&
                  streq(json_get_string(p, "tool"), "add") &&
                  streq(json_get_string(p, "server"), "fake") &&
                  json_get_int(p, "code", &code) == 0 && code == -32602 &&
                  !json_get(p, "arguments"),
              "refused by the profile: no entry or a wrong one");
    raw_close(&r);
}

int main(void)
{
    Harness h;

    h_setup(&h, "audit");
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"fake\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *audit = paths_join(h.dir, "state/mcpd/audit.jsonl");
    h_write_config(&h, cfg);
    /* The agent "narrow" may call only echo (refused_calls). */
    h_write_settings(&h, "{\"audit\": \"file\", \"profiles\": {\"echo-only\": {\"tools\": "
                         "[\"fake/echo\"]}}, \"clientProfiles\": {\"narrow\": \"echo-only\"}}");
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "control");
    CHECK(h_wait_state(c, "fake", "connected", H_WAIT_MS));

    many_agents(&h, audit);
    refused_calls(&h, audit);
    arguments_and_trace(&h, audit);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    if (h_failures)
        h_dump_log(&h);
    h_teardown(&h);
    return h_finish("test-audit");
}
