// SPDX-License-Identifier: MIT
// mcpctl: inspect and control mcpd from the command line (status, tools, call, reload, ...).

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "client/bridge.h"
#include "client/include/mcpc.h"
#include "client/trust.h"
#include "common/paths.h"
#include "common/json.h"
#include "common/util.h"

/* Exit codes a script can branch on. */
enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1, /* the request failed, or the tool returned isError */
    EXIT_USAGE = 2,
    EXIT_NO_DAEMON = 3, /* cannot reach mcpd */
};

static bool opt_json;
static int opt_timeout_ms;

static void usage(FILE *f)
{
    fprintf(f, "Usage: mcpctl [--json] [--socket PATH] [--timeout MS] COMMAND [ARGS]\n"
               "\n"
               "Commands:\n"
               "  status                  servers, their state, tools and errors; agents\n"
               "  tools                   the tools agents see\n"
               "  call NAME [JSON]        call a tool with JSON arguments (default {})\n"
               "  reload                  re-read configuration and reconnect what changed\n"
               "  connect SERVER          (re)connect a server, resetting its retry breaker\n"
               "  disconnect SERVER       stop a server and remove its tools\n"
               "  wait SERVER             wait until a server is connected or has failed\n"
               "  logs SERVER             the server's recent stderr\n"
               "  bridge [--cwd DIR]      be a stdio MCP server relaying to mcpd (for MCP hosts)\n"
               "  config [--cwd DIR]      the servers discovery finds for DIR (default: the\n"
               "                          current directory), where each comes from, and every\n"
               "                          entry not used and why; nothing is connected\n"
               "  trust [--server NAME] [DIR]    approve a project's servers (default: the\n"
               "                          current directory) until an entry changes\n"
               "  untrust [--server NAME] [DIR]  withdraw those approvals\n"
               "\n"
               "Exit status: 0 ok, 1 request or tool failed, 2 usage, 3 mcpd not reachable.\n");
}

static void fmt_age(char *buf, size_t n, int64_t since_ms)
{
    int64_t s = (wall_ms() - since_ms) / 1000;

    if (s < 0)
        s = 0;
    if (s < 120)
        snprintf(buf, n, "%llds", (long long)s);
    else if (s < 7200)
        snprintf(buf, n, "%lldm", (long long)(s / 60));
    else if (s < 172800)
        snprintf(buf, n, "%lldh", (long long)(s / 3600));
    else
        snprintf(buf, n, "%lldd", (long long)(s / 86400));
}

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

static void print_server(yajl_val s)
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
    fmt_age(age, sizeof(age), since);
    snprintf(toolbuf, sizeof(toolbuf), "%lld%s", (long long)tools, deferred ? "*" : "");
    if (json_get_int(s, "pid", &pid) == 0)
        snprintf(pidbuf, sizeof(pidbuf), "%lld", (long long)pid);
    else
        snprintf(pidbuf, sizeof(pidbuf), "-");
    int64_t cached = 0;
    char cache[32] = "-";
    if (json_get_int(s, "cacheSavedAt", &cached) == 0)
        fmt_age(cache, sizeof(cache), cached);
    bool auth = YAJL_IS_TRUE(json_get(s, "needsAuthorization"));
    printf("%-20s %-11s %-6s %-9s %6s %6s %7s %5lld %8lld  %s", json_get_string(s, "name"),
           auth ? "needs-auth" : json_get_string(s, "state"), age, json_get_string(s, "transport"),
           toolbuf, cache, pidbuf, (long long)calls, (long long)restarts, err ? err : "");
    if (json_get_int(s, "nextAttempt", &next) == 0)
        printf("%s(retry in %llds)", err ? " " : "",
               (long long)MAX(0, (next - wall_ms() + 999) / 1000));
    printf("\n");
    print_http(s);
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
    fmt_age(age, sizeof(age), since);
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

static int show_status(const char *text)
{
    _cleanup_json_ yajl_val st = json_parse(text, NULL);
    yajl_val servers = json_get_array(st, "servers"), agents = json_get_array(st, "agents");
    yajl_val problems = json_get_array(st, "problems"), d = json_get_object(st, "daemon");
    int64_t pid = 0, started = 0, tools = 0;
    char age[32];

    json_get_int(d, "pid", &pid);
    json_get_int(d, "startedAt", &started);
    json_get_int(st, "tools", &tools);
    fmt_age(age, sizeof(age), started);
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
        print_server(json_array_at(servers, i));
    if (!json_array_len(servers))
        printf("(no servers configured)\n");
    show_agents(agents);
    for (size_t i = 0; i < json_array_len(problems); i++) {
        yajl_val p = json_array_at(problems, i);
        printf("%sconfig problem: %s%s%s\n", i ? "" : "\n", json_get_string(p, "path") ?: "",
               json_get_string(p, "path") ? ": " : "", json_get_string(p, "error"));
    }
    printf("\n* deferred: tools shown from the cache or the last known list until the server "
           "connects; CACHE: age of the cached tool list\n");
    return EXIT_OK;
}

static int show_tools(const char *text)
{
    _cleanup_json_ yajl_val r = json_parse(text, NULL);
    yajl_val tools = json_get_array(r, "tools");

    for (size_t i = 0; i < json_array_len(tools); i++) {
        yajl_val t = json_array_at(tools, i), meta = json_get_object(t, "_meta");
        const char *desc = json_get_string(t, "description");
        bool deferred = false;
        json_get_bool(meta, "mcpd/deferred", &deferred);
        printf("%-40s %s%s%.*s\n", json_get_string(t, "name"), deferred ? "(deferred) " : "",
               desc ? "" : "", desc ? (int)strcspn(desc, "\n") : 0, desc ? desc : "");
    }
    return EXIT_OK;
}

/* Print a tool result: its text content for people, the JSON with --json. */
static int show_call(const char *text, int is_error)
{
    _cleanup_json_ yajl_val r = json_parse(text, NULL);
    yajl_val content = json_get_array(r, "content");

    if (opt_json) {
        printf("%s\n", text);
        return is_error ? EXIT_FAILED : EXIT_OK;
    }
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
    return is_error ? EXIT_FAILED : EXIT_OK;
}

/* mcpctl config: winners, then entries not used and why, then problems. */
static int show_config(const char *text)
{
    _cleanup_json_ yajl_val r = json_parse(text, NULL);
    yajl_val servers = json_get_array(r, "servers"), skipped = json_get_array(r, "skipped");
    yajl_val problems = json_get_array(r, "problems");
    const char *root = json_get_string(r, "root");

    printf("%s%s\n\n", root ? "Servers for project " : "Servers for the user workspace",
           root ? root : "");
    printf("%-24s %-13s %-7s %-9s %s\n", "SERVER", "PROVIDER", "LEVEL", "TRANSPORT", "FILE");
    for (size_t i = 0; i < json_array_len(servers); i++) {
        yajl_val e = json_array_at(servers, i);
        printf("%-24s %-13s %-7s %-9s %s%s\n", json_get_string(e, "name"),
               json_get_string(e, "provider"), json_get_string(e, "level"),
               json_get_string(e, "transport"), json_get_string(e, "path") ?: "-",
               YAJL_IS_FALSE(json_get(e, "enabled")) ? "  (disabled: masks lower entries)" : "");
    }
    if (!json_array_len(servers))
        printf("(none)\n");
    if (json_array_len(skipped))
        printf("\nNot used:\n%-24s %-13s %-7s %s\n", "SERVER", "PROVIDER", "LEVEL", "FILE: REASON");
    for (size_t i = 0; i < json_array_len(skipped); i++) {
        yajl_val e = json_array_at(skipped, i);
        printf("%-24s %-13s %-7s %s: %s\n", json_get_string(e, "name"),
               json_get_string(e, "provider"), json_get_string(e, "level"),
               json_get_string(e, "path") ?: "-", json_get_string(e, "reason"));
    }
    for (size_t i = 0; i < json_array_len(problems); i++) {
        yajl_val e = json_array_at(problems, i);
        printf("%sproblem: %s%s%s\n", i ? "" : "\n", json_get_string(e, "path") ?: "",
               json_get_string(e, "path") ? ": " : "", json_get_string(e, "error"));
    }
    return EXIT_OK;
}

/* config [--cwd DIR] [--json]: the project defaults to the current directory. */
static int run_config(mcpc_client *c, int argc, char **argv)
{
    _cleanup_free_ char *cwd = NULL, *params = NULL, *out = NULL;
    yajl_val p;
    int r;

    for (int i = 1; i < argc; i++) {
        if (streq(argv[i], "--json"))
            opt_json = true;
        else if (streq(argv[i], "--cwd") && i + 1 < argc)
            cwd = realpath(argv[++i], NULL) ?: xstrdup(argv[i]);
        else if (startswith(argv[i], "--cwd="))
            cwd = realpath(argv[i] + 6, NULL) ?: xstrdup(argv[i] + 6);
        else
            return usage(stderr), EXIT_USAGE;
    }
    if (!cwd)
        cwd = getcwd(NULL, 0);
    p = json_object_new();
    if (cwd)
        json_object_set(p, "cwd", json_string_new(cwd));
    params = json_to_string(p);
    json_free(p);
    if ((r = mcpc_request(c, "mcpd/discover", params, &out)) != 0) {
        fprintf(stderr, "mcpctl: %s\n", mcpc_errmsg(c));
        return r == -ECONNRESET || r == -ECONNREFUSED ? EXIT_NO_DAEMON : EXIT_FAILED;
    }
    return opt_json ? (printf("%s\n", out), EXIT_OK) : show_config(out);
}

static int params_server(const char *server, char **outp)
{
    yajl_val p = json_object_new();

    json_object_set(p, "server", json_string_new(server));
    if (opt_timeout_ms)
        json_object_set(p, "timeoutMs", json_int_new(opt_timeout_ms));
    *outp = json_to_string(p);
    json_free(p);
    return 0;
}

static int run(mcpc_client *c, int argc, char **argv)
{
    const char *cmd = argv[0];
    _cleanup_free_ char *out = NULL, *params = NULL;
    int r, is_error = 0;

    if (streq(cmd, "status")) {
        if ((r = mcpc_status(c, &out)) != 0)
            goto fail;
        return opt_json ? (printf("%s\n", out), EXIT_OK) : show_status(out);
    }
    if (streq(cmd, "tools")) {
        if ((r = mcpc_list_tools(c, &out)) != 0)
            goto fail;
        return opt_json ? (printf("%s\n", out), EXIT_OK) : show_tools(out);
    }
    if (streq(cmd, "call")) {
        if (argc < 2 || argc > 3)
            return usage(stderr), EXIT_USAGE;
        if ((r = mcpc_call_tool(c, argv[1], argc == 3 ? argv[2] : NULL, &out, &is_error)) != 0)
            goto fail;
        return show_call(out, is_error);
    }
    if (streq(cmd, "config"))
        return run_config(c, argc, argv);
    if (streq(cmd, "trust") || streq(cmd, "untrust"))
        return trust_run(c, argc, argv, opt_json);
    if (streq(cmd, "reload")) {
        if ((r = mcpc_request(c, "mcpd/reload", NULL, &out)) != 0)
            goto fail;
        printf("%s\n", out);
        return EXIT_OK;
    }
    if (streq(cmd, "connect") || streq(cmd, "disconnect") || streq(cmd, "wait") ||
        streq(cmd, "logs")) {
        _cleanup_free_ char *method = xasprintf("mcpd/%s", cmd);
        _cleanup_json_ yajl_val res = NULL;
        if (argc != 2)
            return usage(stderr), EXIT_USAGE;
        params_server(argv[1], &params);
        if ((r = mcpc_request(c, method, params, &out)) != 0)
            goto fail;
        res = json_parse(out, NULL);
        if (streq(cmd, "logs") && !opt_json)
            fputs(json_get_string(res, "text") ?: "", stdout);
        else
            printf("%s\n", out);
        if (streq(cmd, "wait"))
            return YAJL_IS_TRUE(json_get(res, "connected")) ? EXIT_OK : EXIT_FAILED;
        return EXIT_OK;
    }
    fprintf(stderr, "mcpctl: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
fail:
    fprintf(stderr, "mcpctl: %s\n", mcpc_errmsg(c));
    return r == -ECONNRESET || r == -ECONNREFUSED ? EXIT_NO_DAEMON : EXIT_FAILED;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"socket", required_argument, NULL, 's'},
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    mcpc_options o = {.client_name = "mcpctl"};
    mcpc_client *c;
    int ch, r;

    while ((ch = getopt_long(argc, argv, "+js:t:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'j':
            opt_json = true;
            break;
        case 's':
            o.socket_path = optarg;
            break;
        case 't':
            opt_timeout_ms = atoi(optarg);
            o.timeout_ms = opt_timeout_ms > 0 ? opt_timeout_ms + 5000 : 0;
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (streq(argv[optind], "bridge")) {
        const char *cwd = NULL;
        if (argc - optind == 3 && streq(argv[optind + 1], "--cwd"))
            cwd = argv[optind + 2];
        else if (argc - optind != 1) {
            usage(stderr);
            return EXIT_USAGE;
        }
        _cleanup_free_ char *sock = o.socket_path ? xstrdup(o.socket_path) : paths_socket();
        return bridge_run(sock, cwd);
    }
    c = mcpc_new(&o);
    if (!c)
        return EXIT_FAILED;
    if (mcpc_connect(c) != 0) {
        fprintf(stderr, "mcpctl: %s\n", mcpc_errmsg(c));
        mcpc_free(c);
        return EXIT_NO_DAEMON;
    }
    r = run(c, argc - optind, argv + optind);
    mcpc_free(c);
    return r;
}
