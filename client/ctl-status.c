// SPDX-License-Identifier: MIT
// ctl-status: mcpctl status, tools and call: what mcpd serves, shown for a person or as JSON.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ctl-status.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"

/* HTTP servers get a second line: where, how, and what the last response said. */
static void print_http(yajl_val s)
{
    const char *url = json_get_string(s, "url");
    int64_t status = 0;

    if (!url && !json_get_string(s, "wwwAuthenticate"))
        return;
    printf("%-20s  ", "");
    if (url)
        printf(" %s via %s, session %s", url,
               json_get_string(s, "httpTransport") ?: json_get_string(s, "transport"),
               YAJL_IS_TRUE(json_get(s, "session")) ? "yes" : "no");
    if (json_get_int(s, "lastHttpStatus", &status) == 0)
        printf(", last HTTP status %lld", (long long)status);
    if (json_get_string(s, "wwwAuthenticate"))
        printf(", WWW-Authenticate: %s", json_get_string(s, "wwwAuthenticate"));
    printf("\n");
}

/* stdio servers get a second line: the command, how often it ran, how it last ended and when. */
static void print_process(yajl_val s)
{
    const char *cmd = json_get_string(s, "commandLine"), *exit_how = json_get_string(s, "lastExit");
    int64_t spawns = 0, exit_at = 0, err_at = 0;
    char age[32];

    if (!cmd)
        return;
    json_get_int(s, "spawns", &spawns);
    printf("    command: %s; spawned %lld time%s", cmd, (long long)spawns, spawns == 1 ? "" : "s");
    if (exit_how && json_get_int(s, "lastExitAt", &exit_at) == 0) {
        ctl_fmt_age(age, sizeof(age), exit_at);
        printf("; last exit %s ago: %s", age, exit_how);
    }
    if (json_get_int(s, "lastErrorAt", &err_at) == 0) {
        ctl_fmt_age(age, sizeof(age), err_at);
        printf("; last error %s ago", age);
    }
    printf("\n");
}

static void print_server(const Ctl *ctl, yajl_val s)
{
    int64_t since = 0, tools = 0, pid = 0, calls = 0, restarts = 0, next = 0;
    bool deferred = false;
    char age[32], toolbuf[32], pidbuf[16];
    const char *err = json_get_string(s, "lastError");

    json_get_int(s, "since", &since);
    json_get_int(s, "tools", &tools);
    json_get_int(s, "callsInFlight", &calls);
    json_get_int(s, "restarts", &restarts);
    json_get_bool(s, "toolsDeferred", &deferred);
    ctl_fmt_age(age, sizeof(age), since);
    snprintf(toolbuf, sizeof(toolbuf), "%lld%s", (long long)tools, deferred ? "*" : "");
    if (json_get_int(s, "pid", &pid) == 0)
        snprintf(pidbuf, sizeof(pidbuf), "%lld", (long long)pid);
    else
        snprintf(pidbuf, sizeof(pidbuf), "-");
    int64_t cached = 0;
    char cache[32] = "-";
    if (json_get_int(s, "cacheSavedAt", &cached) == 0)
        ctl_fmt_age(cache, sizeof(cache), cached);
    bool auth = YAJL_IS_TRUE(json_get(s, "needsAuthorization"));
    const char *state = auth ? "needs-auth" : json_get_string(s, "state");
    printf("%-20s %s%-11s%s %-6s %-9s %6s %6s %7s %5lld %8lld  %s", json_get_string(s, "name"),
           ctl_color_of(ctl, state), state, ctl_color_off(ctl, state), age,
           json_get_string(s, "transport"), toolbuf, cache, pidbuf, (long long)calls,
           (long long)restarts, err ? err : "");
    if (json_get_int(s, "nextAttempt", &next) == 0)
        printf("%s(retry in %llds)", err ? " " : "",
               (long long)MAX(0, (next - wall_ms() + 999) / 1000));
    printf("\n");
    print_http(s);
    print_process(s);
}

/* Agents, subagents indented under the agent whose session they joined. */
static void print_agent(yajl_val agents, yajl_val a, int depth)
{
    int64_t id = 0, pid = 0, calls = 0, queued = 0, since = 0, session = 0;
    const char *root = json_get_string(a, "root");
    char age[32], sess[24] = "-";

    json_get_int(a, "id", &id);
    json_get_int(a, "pid", &pid);
    json_get_int(a, "callsInFlight", &calls);
    json_get_int(a, "bytesQueued", &queued);
    json_get_int(a, "connectedAt", &since);
    if (json_get_int(a, "session", &session) == 0)
        snprintf(sess, sizeof(sess), "%lld", (long long)session);
    ctl_fmt_age(age, sizeof(age), since);
    printf("%*s%-*lld %7lld %-*s %-6s %7s %5lld %8lld  %s\n", depth * 2, "", 6 - depth * 2,
           (long long)id, (long long)pid, 20 - depth * 2,
           json_get_string(a, "name") ? json_get_string(a, "name") : "?", age, sess,
           (long long)calls, (long long)queued, root ? root : "(user)");
    for (size_t i = 0; i < json_array_len(agents); i++) {
        yajl_val c = json_array_at(agents, i);
        int64_t parent = 0;
        if (json_get_int(c, "parent", &parent) == 0 && parent == id && depth < 8)
            print_agent(agents, c, depth + 1);
    }
}

static void show_agents(yajl_val agents)
{
    if (!json_array_len(agents))
        return;
    printf("\n%-6s %7s %-20s %-6s %7s %5s %8s  %s\n", "AGENT", "PID", "NAME", "SINCE", "SESSION",
           "CALLS", "QUEUED", "WORKSPACE");
    for (size_t i = 0; i < json_array_len(agents); i++) {
        yajl_val a = json_array_at(agents, i);
        int64_t parent = 0;
        /* Subagents are printed under their parent; orphans (parent gone) at the top. */
        bool has_parent = false;
        if (json_get_int(a, "parent", &parent) == 0)
            for (size_t k = 0; k < json_array_len(agents); k++) {
                int64_t other = 0;
                json_get_int(json_array_at(agents, k), "id", &other);
                has_parent |= other == parent;
            }
        if (!has_parent)
            print_agent(agents, a, 0);
    }
}

static void show_status(const Ctl *ctl, yajl_val st)
{
    yajl_val servers = json_get_array(st, "servers"), agents = json_get_array(st, "agents");
    yajl_val problems = json_get_array(st, "problems"), d = json_get_object(st, "daemon");
    int64_t pid = 0, started = 0, tools = 0;
    char age[32];

    json_get_int(d, "pid", &pid);
    json_get_int(d, "startedAt", &started);
    json_get_int(st, "tools", &tools);
    ctl_fmt_age(age, sizeof(age), started);
    printf("mcpd %s, pid %lld, up %s, socket %s; %lld tools, %zu agents\n\n",
           json_get_string(d, "version"), (long long)pid, age, json_get_string(d, "socket"),
           (long long)tools, json_array_len(agents));
    yajl_val sd = json_get_object(d, "systemd");
    int64_t wd = 0;
    json_get_int(sd, "watchdogUsec", &wd);
    if (YAJL_IS_TRUE(json_get(sd, "underSystemd")))
        printf("under systemd: unit %s, watchdog %s%s\n\n",
               json_get_string(sd, "unit") ? json_get_string(sd, "unit") : "(unknown)",
               wd ? "on" : "off",
               YAJL_IS_TRUE(json_get(sd, "journal")) ? ", logging to the journal" : "");
    else
        printf("not under systemd%s\n\n",
               YAJL_IS_FALSE(json_get(sd, "builtIn")) ? " (built without systemd support)" : "");
    printf("%-20s %-11s %-6s %-9s %6s %6s %7s %5s %8s  %s\n", "SERVER", "STATE", "SINCE",
           "TRANSPORT", "TOOLS", "CACHE", "PID", "CALLS", "RESTARTS", "LAST ERROR");
    for (size_t i = 0; i < json_array_len(servers); i++)
        print_server(ctl, json_array_at(servers, i));
    if (!json_array_len(servers))
        printf("(no servers configured)\n");
    show_agents(agents);
    for (size_t i = 0; i < json_array_len(problems); i++)
        ctl_print_problem(stdout, i ? "config " : "\nconfig ", json_array_at(problems, i));
    printf("\n* deferred: tools shown from the cache or the last known list until the server "
           "connects; CACHE: age of the cached tool list\n");
}

static void show_tools(const char *text)
{
    _cleanup_json_ yajl_val r = json_parse(text, NULL);
    yajl_val tools = json_get_array(r, "tools");

    for (size_t i = 0; i < json_array_len(tools); i++) {
        yajl_val t = json_array_at(tools, i), meta = json_get_object(t, "_meta");
        const char *desc = json_get_string(t, "description");
        bool deferred = false;
        json_get_bool(meta, MCPD_META_DEFERRED, &deferred);
        printf("%-40s %s%s%.*s\n", json_get_string(t, "name"), deferred ? "(deferred) " : "",
               desc ? "" : "", desc ? (int)strcspn(desc, "\n") : 0, desc ? desc : "");
    }
}

/* Print a tool result: its text content for people, the JSON with --json. */
static void show_call(const char *text)
{
    _cleanup_json_ yajl_val r = json_parse(text, NULL);
    yajl_val content = json_get_array(r, "content");

    for (size_t i = 0; i < json_array_len(content); i++) {
        yajl_val item = json_array_at(content, i);
        const char *t = json_get_string(item, "text");
        if (t)
            printf("%s\n", t);
        else {
            _cleanup_free_ char *s = json_to_string(item);
            printf("%s\n", s);
        }
    }
}

/* ---- verbs ---- */

static yajl_val find_server(yajl_val servers, const char *name)
{
    for (size_t i = 0; i < json_array_len(servers); i++)
        if (streq(json_get_string(json_array_at(servers, i), "name"), name))
            return json_array_at(servers, i);
    return NULL;
}

/*
 * status [NAME...]: like `systemctl status`, 0 when every server shown is connected, 3 when
 * one is not, 4 when a name is not configured (the others are still shown).
 */
int ctl_verb_status(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val st = NULL;
    yajl_val servers, shown;
    int r = mcpc_status(ctl->client, &out), code = EXIT_OK;

    if (r != 0)
        return ctl_fail(ctl, r);
    if (!(st = json_parse(out, NULL)) || !(servers = json_get_array(st, "servers"))) {
        fprintf(stderr, "mcpctl: mcpd sent a status without a servers array\n");
        return EXIT_FAILED;
    }
    shown = json_array_new();
    for (int i = 0; i < n; i++) {
        yajl_val s = find_server(servers, args[i]);
        if (s)
            json_array_push(shown, json_copy(s));
        else {
            fprintf(stderr, "mcpctl: no server named \"%s\" is configured (see `mcpctl config`)\n",
                    args[i]);
            code = EXIT_NO_SUCH;
        }
    }
    if (n) {
        json_free(json_object_take(st, "servers"));
        json_object_set(st, "servers", shown);
    } else
        json_free(shown);
    servers = json_get_array(st, "servers");
    for (size_t i = 0; code == EXIT_OK && i < json_array_len(servers); i++) {
        yajl_val s = json_array_at(servers, i);
        if (!streq(json_get_string(s, "state"), "connected") &&
            !streq(json_get_string(s, "state"), "disabled"))
            code = EXIT_NOT_RUNNING;
    }
    if (ctl->json)
        ctl_print_json(st);
    else
        show_status(ctl, st);
    return code;
}

int ctl_verb_tools(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    int r = mcpc_list_tools(ctl->client, &out);

    if (r != 0)
        return ctl_fail(ctl, r);
    if (ctl->json)
        printf("%s\n", out);
    else
        show_tools(out);
    return EXIT_OK;
}

int ctl_verb_call(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    int is_error = 0, r;

    r = mcpc_call_tool(ctl->client, args[0], n == 2 ? args[1] : NULL, &out, &is_error);
    if (r != 0)
        return ctl_fail(ctl, r);
    if (ctl->json)
        printf("%s\n", out);
    else
        show_call(out);
    return is_error ? EXIT_FAILED : EXIT_OK;
}
