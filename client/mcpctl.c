// SPDX-License-Identifier: MIT
// mcpctl: inspect and control mcpd from the command line (status, tools, call, reload, ...).

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/bridge.h"
#include "client/discover-local.h"
#include "client/setup.h"
#include "client/login.h"
#include "client/include/mcpc.h"
#include "client/trust.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"

/* Exit codes a script can branch on; status follows `systemctl status` (LSB: 3 and 4). */
enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1, /* the request failed, the tool returned isError, reload refused something */
    EXIT_USAGE = 2,
    EXIT_NOT_RUNNING = 3, /* mcpd not reachable, or (status) a server is not connected */
    EXIT_NO_SUCH = 4,     /* status: a server name that is not configured */
};

/*
 * --timeout bounds: at least 1 ms; at most the daemon's own longest call timeout
 * (CONFIG_MAX_CALL_TIMEOUT_MS, 10 minutes), since no request can usefully wait longer.
 */
#define TIMEOUT_MAX_MS 600000
/*
 * mcpd/wait is given this much less than --timeout, so that its answer (with the server's
 * state and error) arrives before mcpctl's own deadline: one local round trip, with room for
 * a loaded machine.
 */
#define WAIT_REPLY_MARGIN_MS 250
/* logs -n: the ring holds far fewer lines than this; the bound only rejects nonsense. */
#define LOGS_MAX_LINES 1000000
/*
 * logs -f asks for news this often: a person watching sees a line within a blink, and one
 * small local request four times a second costs the daemon nothing.
 */
#define LOGS_FOLLOW_POLL_MS 250

/* Options, accepted before or after the verb, as --opt=value or --opt value. */
typedef struct Ctl {
    bool json;
    bool color;
    int timeout_ms; /* 0: not given */
    long lines;     /* logs -n; -1: all */
    bool follow;    /* logs -f */
    long run;       /* logs --run K; 0: every run kept */
    const char *socket;
    const char *cwd;
    const char *server;      /* trust, untrust, bridge: --server NAME */
    const char *host_prefix; /* bridge: --host-prefix PREFIX */
    LoginMode login_mode;
    mcpc_client *client;
} Ctl;

/* What a verb accepts besides the global options. */
enum {
    VERB_OFFLINE = 1 << 0, /* runs without connecting first (it connects itself, or never) */
    VERB_CWD = 1 << 1,     /* --cwd DIR */
    VERB_LINES = 1 << 2,   /* -n N */
    VERB_SERVER = 1 << 3,  /* --server NAME */
    VERB_LOGIN = 1 << 4,   /* --no-browser, --headless */
    VERB_FOLLOW = 1 << 5,  /* -f, --run K */
    VERB_PREFIX = 1 << 6,  /* --host-prefix PREFIX */
};

typedef struct Verb {
    const char *name;
    const char *args; /* synopsis of the positional arguments */
    const char *help;
    int min_args, max_args; /* positional arguments after the verb; -1: no limit */
    unsigned flags;
    int (*run)(Ctl *ctl, char **args, int n_args);
} Verb;

static const Verb *verb_find(const char *name);
static void usage(FILE *f);

/* ANSI colour for a state word, only when ctl->color (a tty and no NO_COLOR). */
static const char *color_of(const Ctl *ctl, const char *state)
{
    if (!ctl->color || !state)
        return "";
    if (streq(state, "connected"))
        return "\033[32m";
    if (streq(state, "failed") || streq(state, "needs-auth"))
        return "\033[31m";
    return "\033[33m";
}

static const char *color_off(const Ctl *ctl, const char *state)
{
    return ctl->color && state ? "\033[0m" : "";
}

/* The daemon could not be reached (3), or the request failed (1); the message says which. */
static int fail(Ctl *ctl, int r)
{
    fprintf(stderr, "mcpctl: %s\n", mcpc_errmsg(ctl->client));
    return r == -ECONNRESET || r == -ECONNREFUSED || r == -ENOENT ? EXIT_NOT_RUNNING : EXIT_FAILED;
}

/* Connect on first use; on failure print why and return NULL. */
static mcpc_client *ctl_client(Ctl *ctl, bool quiet)
{
    mcpc_options o = {.client_name = "mcpctl", .socket_path = ctl->socket};

    if (ctl->client)
        return ctl->client;
    o.timeout_ms = ctl->timeout_ms;
    ctl->client = mcpc_new(&o);
    if (!ctl->client)
        return NULL;
    if (mcpc_connect(ctl->client) != 0) {
        if (!quiet)
            fprintf(stderr, "mcpctl: %s\n", mcpc_errmsg(ctl->client));
        mcpc_free(ctl->client);
        ctl->client = NULL;
        return NULL;
    }
    return ctl->client;
}

/* One request whose result is printed as JSON or handed to show; 3/1 on failure. */
static int request(Ctl *ctl, const char *method, const char *params, char **outp)
{
    int r = mcpc_request(ctl->client, method, params, outp);

    return r == 0 ? EXIT_OK : fail(ctl, r);
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
        fmt_age(age, sizeof(age), exit_at);
        printf("; last exit %s ago: %s", age, exit_how);
    }
    if (json_get_int(s, "lastErrorAt", &err_at) == 0) {
        fmt_age(age, sizeof(age), err_at);
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
    const char *state = auth ? "needs-auth" : json_get_string(s, "state");
    printf("%-20s %s%-11s%s %-6s %-9s %6s %6s %7s %5lld %8lld  %s", json_get_string(s, "name"),
           color_of(ctl, state), state, color_off(ctl, state), age, json_get_string(s, "transport"),
           toolbuf, cache, pidbuf, (long long)calls, (long long)restarts, err ? err : "");
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

static void show_status(const Ctl *ctl, yajl_val st)
{
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
        print_server(ctl, json_array_at(servers, i));
    if (!json_array_len(servers))
        printf("(no servers configured)\n");
    show_agents(agents);
    for (size_t i = 0; i < json_array_len(problems); i++) {
        yajl_val p = json_array_at(problems, i);
        const char *path = json_get_string(p, "path"), *err = json_get_string(p, "error") ?: "";
        bool placed = path && strstr(err, path);
        printf("%sconfig %s: %s%s%s\n", i ? "" : "\n",
               streq(json_get_string(p, "severity") ?: "", "warning") ? "warning" : "problem",
               path && !placed ? path : "", path && !placed ? ": " : "", err);
    }
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
        json_get_bool(meta, "mcpd/deferred", &deferred);
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

/* mcpctl config: winners, then entries not used and why, then problems. */
static void show_config(yajl_val r)
{
    yajl_val servers = json_get_array(r, "servers"), skipped = json_get_array(r, "skipped");
    yajl_val problems = json_get_array(r, "problems");
    const char *root = json_get_string(r, "root");

    printf("%s%s%s\n\n", root ? "Servers for project " : "Servers for the user workspace",
           root ? root : "",
           YAJL_IS_FALSE(json_get(r, "daemon")) ? " (mcpd not running: discovered by mcpctl)" : "");
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
}

/* Print JSON text as one line (for --json), or hand the parsed value to show. */
static void print_json(yajl_val v)
{
    _cleanup_free_ char *s = json_to_string(v);

    printf("%s\n", s);
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
static int verb_status(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val st = NULL;
    yajl_val servers, shown;
    int r = mcpc_status(ctl->client, &out), code = EXIT_OK;

    if (r != 0)
        return fail(ctl, r);
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
        print_json(st);
    else
        show_status(ctl, st);
    return code;
}

static int verb_tools(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    int r = mcpc_list_tools(ctl->client, &out);

    if (r != 0)
        return fail(ctl, r);
    if (ctl->json)
        printf("%s\n", out);
    else
        show_tools(out);
    return EXIT_OK;
}

static int verb_call(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    int is_error = 0, r;

    r = mcpc_call_tool(ctl->client, args[0], n == 2 ? args[1] : NULL, &out, &is_error);
    if (r != 0)
        return fail(ctl, r);
    if (ctl->json)
        printf("%s\n", out);
    else
        show_call(out);
    return is_error ? EXIT_FAILED : EXIT_OK;
}

/* ---- prompts and resources ---- */

/* Every page of a list (the lister is one of mcpc_list_prompts and friends) into one array. */
static int list_all(Ctl *ctl, int (*lister)(mcpc_client *, const char *, char **), const char *key,
                    yajl_val *allp)
{
    _cleanup_free_ char *cursor = NULL;
    yajl_val all = json_array_new();

    do {
        _cleanup_free_ char *out = NULL;
        _cleanup_json_ yajl_val page = NULL;
        int r = lister(ctl->client, cursor, &out);
        if (r != 0) {
            json_free(all);
            return fail(ctl, r);
        }
        page = json_parse(out, NULL);
        yajl_val items = json_get_array(page, key);
        for (size_t i = 0; i < json_array_len(items); i++)
            json_array_push(all, json_copy(json_array_at(items, i)));
        const char *next = json_get_string(page, "nextCursor");
        free(cursor);
        cursor = next && *next ? xstrdup(next) : NULL;
    } while (cursor);
    *allp = all;
    return EXIT_OK;
}

static void print_wrapped(const char *key, yajl_val v)
{
    yajl_val o = json_object_new();
    _cleanup_free_ char *text = NULL;

    json_object_set(o, key, json_copy(v));
    text = json_to_string(o);
    printf("%s\n", text);
    json_free(o);
}

static int verb_prompts(Ctl *ctl, char **args, int n)
{
    _cleanup_json_ yajl_val all = NULL;
    int code = list_all(ctl, mcpc_list_prompts, "prompts", &all);

    if (code != EXIT_OK)
        return code;
    if (ctl->json) {
        print_wrapped("prompts", all);
        return EXIT_OK;
    }
    for (size_t i = 0; i < json_array_len(all); i++) {
        yajl_val p = json_array_at(all, i), pargs = json_get_array(p, "arguments");
        const char *desc = json_get_string(p, "description");
        printf("%s", json_get_string(p, "name"));
        for (size_t j = 0; j < json_array_len(pargs); j++) {
            yajl_val a = json_array_at(pargs, j);
            printf(YAJL_IS_TRUE(json_get(a, "required")) ? " %s=" : " [%s=]",
                   json_get_string(a, "name"));
        }
        printf("%s%s\n", desc ? "\n    " : "", desc ? desc : "");
    }
    return EXIT_OK;
}

static int verb_resources(Ctl *ctl, char **args, int n)
{
    _cleanup_json_ yajl_val res = NULL, tmpl = NULL;
    int code = list_all(ctl, mcpc_list_resources, "resources", &res);

    if (code != EXIT_OK ||
        (code = list_all(ctl, mcpc_list_resource_templates, "resourceTemplates", &tmpl)) != EXIT_OK)
        return code;
    if (ctl->json) {
        yajl_val o = json_object_new();
        _cleanup_free_ char *text = NULL;
        json_object_set(o, "resources", json_copy(res));
        json_object_set(o, "resourceTemplates", json_copy(tmpl));
        text = json_to_string(o);
        printf("%s\n", text);
        json_free(o);
        return EXIT_OK;
    }
    for (size_t i = 0; i < json_array_len(res); i++) {
        yajl_val r = json_array_at(res, i);
        const char *mime = json_get_string(r, "mimeType");
        printf("%s  %s%s%s%s\n", json_get_string(r, "uri"), json_get_string(r, "name"),
               mime ? " (" : "", mime ? mime : "", mime ? ")" : "");
    }
    for (size_t i = 0; i < json_array_len(tmpl); i++) {
        yajl_val t = json_array_at(tmpl, i);
        printf("%s  %s (template)\n", json_get_string(t, "uriTemplate"),
               json_get_string(t, "name"));
    }
    return EXIT_OK;
}

static int verb_read(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val contents;
    int rc = mcpc_read_resource(ctl->client, args[0], &out);

    if (rc != 0)
        return fail(ctl, rc);
    if (ctl->json) {
        printf("%s\n", out);
        return EXIT_OK;
    }
    r = json_parse(out, NULL);
    contents = json_get_array(r, "contents");
    for (size_t i = 0; i < json_array_len(contents); i++) {
        yajl_val c = json_array_at(contents, i);
        const char *text = json_get_string(c, "text"), *blob = json_get_string(c, "blob");
        if (text)
            printf("%s%s", text, *text && text[strlen(text) - 1] == '\n' ? "" : "\n");
        else
            printf("(%zu bytes of base64 data, %s)\n", blob ? strlen(blob) : 0,
                   json_get_string(c, "mimeType") ? json_get_string(c, "mimeType") : "binary");
    }
    return EXIT_OK;
}

/* prompt NAME [KEY=VALUE... | JSON]: the prompt's messages. */
static int verb_prompt(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL, *json = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val msgs;
    int rc;

    if (n == 2 && args[1][0] == '{') {
        json = xstrdup(args[1]);
    } else if (n > 1) {
        yajl_val o = json_object_new();
        for (int i = 1; i < n; i++) {
            char *eq = strchr(args[i], '=');
            if (!eq) {
                fprintf(stderr,
                        "mcpctl: prompt arguments are KEY=VALUE or one JSON object, "
                        "not \"%s\"\n",
                        args[i]);
                json_free(o);
                return EXIT_USAGE;
            }
            _cleanup_free_ char *key = xstrndup(args[i], (size_t)(eq - args[i]));
            json_object_set(o, key, json_string_new(eq + 1));
        }
        json = json_to_string(o);
        json_free(o);
    }
    if ((rc = mcpc_get_prompt(ctl->client, args[0], json, &out)) != 0)
        return fail(ctl, rc);
    if (ctl->json) {
        printf("%s\n", out);
        return EXIT_OK;
    }
    r = json_parse(out, NULL);
    msgs = json_get_array(r, "messages");
    for (size_t i = 0; i < json_array_len(msgs); i++) {
        yajl_val m = json_array_at(msgs, i), c = json_get_object(m, "content");
        const char *text = json_get_string(c, "text");
        _cleanup_free_ char *raw = text ? NULL : json_to_string(c);
        printf("%s: %s\n", json_get_string(m, "role"), text ? text : raw);
    }
    return EXIT_OK;
}

/* reload: what changed per server, then problems; 1 when anything was refused or wrong. */
static int verb_reload(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL, *params = NULL;
    _cleanup_json_ yajl_val res = NULL;
    yajl_val servers, problems;
    int code;

    if (ctl->cwd) {
        _cleanup_free_ char *real = realpath(ctl->cwd, NULL);
        yajl_val p = json_object_new();
        json_object_set(p, "cwd", json_string_new(real ? real : ctl->cwd));
        params = json_to_string(p);
        json_free(p);
    }
    if ((code = request(ctl, "mcpd/reload", params, &out)) != EXIT_OK)
        return code;
    res = json_parse(out, NULL);
    servers = json_get_object(res, "servers");
    problems = json_get_array(res, "problems");
    code = EXIT_OK;
    /* Warnings (an unknown field ignored) refuse nothing; any other problem does. */
    for (size_t i = 0; i < json_array_len(problems); i++)
        if (!streq(json_get_string(json_array_at(problems, i), "severity") ?: "", "warning"))
            code = EXIT_FAILED;
    for (size_t i = 0; servers && i < servers->u.object.len; i++)
        if (YAJL_IS_STRING(servers->u.object.values[i]) &&
            streq(servers->u.object.values[i]->u.string, "refused"))
            code = EXIT_FAILED;
    if (ctl->json) {
        printf("%s\n", out);
        return code;
    }
    int64_t n_ws = 0;
    json_get_int(res, "workspaces", &n_ws);
    printf("reloaded %lld workspace%s\n", (long long)n_ws, n_ws == 1 ? "" : "s");
    for (size_t i = 0; servers && i < servers->u.object.len; i++) {
        yajl_val v = servers->u.object.values[i];
        _cleanup_free_ char *s = YAJL_IS_STRING(v) ? NULL : json_to_string(v);
        printf("  %-24s %s\n", servers->u.object.keys[i], s ? s : v->u.string);
    }
    if (servers && !servers->u.object.len)
        printf("  (no server changed)\n");
    for (size_t i = 0; i < json_array_len(problems); i++) {
        yajl_val p = json_array_at(problems, i);
        const char *path = json_get_string(p, "path"), *err = json_get_string(p, "error") ?: "";
        bool warning = streq(json_get_string(p, "severity") ?: "", "warning");
        /* Messages that give their file:line:column say where already. */
        bool placed = path && strstr(err, path);
        fprintf(stderr, "%s: %s%s%s\n", warning ? "warning" : "problem",
                path && !placed ? path : "", path && !placed ? ": " : "", err);
    }
    return code;
}

static char *params_server(const Ctl *ctl, const char *server, bool timeout)
{
    yajl_val p = json_object_new();
    char *s;

    json_object_set(p, "server", json_string_new(server));
    if (timeout && ctl->timeout_ms) {
        int t = ctl->timeout_ms > 2 * WAIT_REPLY_MARGIN_MS ? ctl->timeout_ms - WAIT_REPLY_MARGIN_MS
                                                           : ctl->timeout_ms / 2;
        json_object_set(p, "timeoutMs", json_int_new(t));
    }
    s = json_to_string(p);
    json_free(p);
    return s;
}

/* connect, disconnect: the answer is empty on success; say what happened. */
static int verb_connect(Ctl *ctl, char **args, int n, const char *method, const char *done)
{
    _cleanup_free_ char *out = NULL, *params = params_server(ctl, args[0], false);
    int code = request(ctl, method, params, &out);

    if (code != EXIT_OK)
        return code;
    if (ctl->json)
        printf("%s\n", out);
    else
        printf("%s: %s\n", args[0], done);
    return EXIT_OK;
}

static int verb_connect_server(Ctl *ctl, char **args, int n)
{
    return verb_connect(ctl, args, n, "mcpd/connect", "connecting (see `mcpctl wait`)");
}

static int verb_disconnect(Ctl *ctl, char **args, int n)
{
    return verb_connect(ctl, args, n, "mcpd/disconnect", "stopped, its tools removed");
}

/* A method on one server: its raw result in *outp and parsed in *resp (both to free). */
static int server_request(Ctl *ctl, const char *method, const char *server, bool timeout,
                          char **outp, yajl_val *resp)
{
    _cleanup_free_ char *params = params_server(ctl, server, timeout);
    int code = request(ctl, method, params, outp);

    if (code == EXIT_OK)
        *resp = json_parse(*outp, NULL);
    return code;
}

static int verb_wait(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val res = NULL;
    int code = server_request(ctl, "mcpd/wait", args[0], true, &out, &res);
    const char *state, *err;

    if (code != EXIT_OK)
        return code;
    code = YAJL_IS_TRUE(json_get(res, "connected")) ? EXIT_OK : EXIT_FAILED;
    if (ctl->json) {
        printf("%s\n", out);
        return code;
    }
    state = json_get_string(res, "state") ?: "unknown";
    err = json_get_string(res, "error");
    printf("%s: %s%s%s%s%s%s\n", args[0], color_of(ctl, state), state, color_off(ctl, state),
           YAJL_IS_TRUE(json_get(res, "timedOut")) ? " (timed out waiting)" : "", err ? ": " : "",
           err ? err : "");
    return code;
}

/* The start of the last n lines of text (all of it when n < 0); a final newline ends a line. */
static const char *tail_lines(const char *text, long n)
{
    size_t len = strlen(text), i = len;
    long seen = 0;

    if (n < 0)
        return text;
    if (i > 0 && text[i - 1] == '\n')
        i--;
    for (; i > 0; i--)
        if (text[i - 1] == '\n' && ++seen == n)
            return text + i;
    return n == 0 ? text + len : text;
}

/* Where logs -f has got to: the run being shown and how many of its stderr bytes were printed. */
typedef struct LogCursor {
    uint64_t run;
    uint64_t bytes;
    bool ended; /* its end was printed */
} LogCursor;

static void log_run_header(StrBuf *sb, yajl_val r)
{
    int64_t k = 0, pid = 0, started = 0;
    char when[32] = "?";
    time_t t;
    struct tm tm;

    json_get_int(r, "run", &k);
    json_get_int(r, "pid", &pid);
    json_get_int(r, "startedAt", &started);
    t = (time_t)(started / 1000);
    if (localtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    if (pid)
        strbuf_printf(sb, "-- run %lld, pid %lld, started %s --\n", (long long)k, (long long)pid,
                      when);
    else
        strbuf_printf(sb, "-- run %lld, at %s --\n", (long long)k, when);
}

/* Append what of run r the cursor has not shown yet: header, new stderr, its end. */
static void log_run_render(StrBuf *sb, yajl_val r, LogCursor *cur)
{
    int64_t k = 0, total = 0, dur = 0;
    const char *text = json_get_string(r, "stderr") ?: "";
    uint64_t len = strlen(text), first;

    json_get_int(r, "run", &k);
    json_get_int(r, "stderrBytes", &total);
    json_get_int(r, "durationMs", &dur);
    if ((uint64_t)k != cur->run) {
        *cur = (LogCursor){.run = (uint64_t)k};
        log_run_header(sb, r);
    }
    if (cur->ended)
        return;
    /* The daemon keeps a tail: bytes before it are gone, and the text may be re-encoded. */
    first = (uint64_t)total > len ? (uint64_t)total - len : 0;
    if (cur->bytes < first && first > 0)
        strbuf_printf(sb, "[... %llu earlier bytes not kept]\n",
                      (unsigned long long)(first - cur->bytes));
    if ((uint64_t)total > cur->bytes) {
        uint64_t from = MAX(cur->bytes, first) - first;
        strbuf_puts(sb, text + MIN(from, len));
        if (len && text[len - 1] != '\n' && !YAJL_IS_TRUE(json_get(r, "running")))
            strbuf_putc(sb, '\n');
        cur->bytes = (uint64_t)total;
    }
    if (!YAJL_IS_TRUE(json_get(r, "running"))) {
        if (dur < 1000)
            strbuf_printf(sb, "-- run %lld %s after %lld ms --\n", (long long)k,
                          json_get_string(r, "exit") ?: "ended", (long long)dur);
        else
            strbuf_printf(sb, "-- run %lld %s after %.1f s --\n", (long long)k,
                          json_get_string(r, "exit") ?: "ended", (double)dur / 1000.0);
        cur->ended = true;
    }
}

/* One mcpd/logs request from run `since` on; its result parsed in *resp. */
static int logs_request(Ctl *ctl, const char *server, uint64_t since, yajl_val *resp)
{
    _cleanup_free_ char *out = NULL, *params = NULL;
    yajl_val p = json_object_new();
    int code;

    json_object_set(p, "server", json_string_new(server));
    if (since)
        json_object_set(p, "since", json_int_new((int64_t)since));
    params = json_to_string(p);
    json_free(p);
    if ((code = request(ctl, "mcpd/logs", params, &out)) == EXIT_OK)
        *resp = json_parse(out, NULL);
    return code;
}

/* Render the runs of a logs answer (only run ctl->run when given) past the cursor. */
static void logs_render(const Ctl *ctl, yajl_val res, StrBuf *sb, LogCursor *cur)
{
    yajl_val runs = json_get_array(res, "runs");

    if (!runs) {
        /* No process record (an HTTP server): whatever the transport keeps. */
        strbuf_puts(sb, json_get_string(res, "text") ?: "");
        return;
    }
    for (size_t i = 0; i < json_array_len(runs); i++) {
        yajl_val r = json_array_at(runs, i);
        int64_t k = 0;
        json_get_int(r, "run", &k);
        if ((ctl->run && k != ctl->run) || (uint64_t)k < cur->run)
            continue;
        log_run_render(sb, r, cur);
    }
}

/* logs --json: the answer, with only run K and each stderr cut to its last N lines. */
static void logs_print_json(const Ctl *ctl, yajl_val res)
{
    yajl_val runs = json_get_array(res, "runs"), kept = json_array_new();

    for (size_t i = 0; i < json_array_len(runs); i++) {
        yajl_val r = json_array_at(runs, i);
        int64_t k = 0;
        json_get_int(r, "run", &k);
        if (ctl->run && k != ctl->run)
            continue;
        if (ctl->lines >= 0)
            json_object_set(
                r, "stderr",
                json_string_new(tail_lines(json_get_string(r, "stderr") ?: "", ctl->lines)));
        json_array_push(kept, json_copy(r));
    }
    if (runs)
        json_object_set(res, "runs", kept);
    else
        json_free(kept);
    if (ctl->lines >= 0)
        json_object_set(
            res, "text",
            json_string_new(tail_lines(json_get_string(res, "text") ?: "", ctl->lines)));
    print_json(res);
}

/*
 * logs NAME [-n N] [--run K] [-f]: every run the daemon keeps (start, stderr tail, how it
 * ended), the last N lines with -n, one run with --run, then new output as it comes with -f.
 */
static int verb_logs(Ctl *ctl, char **args, int n)
{
    _cleanup_json_ yajl_val res = NULL;
    LogCursor cur = {0};
    StrBuf sb = STRBUF_INIT;
    int code = logs_request(ctl, args[0], (uint64_t)ctl->run, &res);

    if (code != EXIT_OK)
        return code;
    if (ctl->json && ctl->follow) {
        fprintf(stderr, "mcpctl: logs -f prints text; for JSON, run logs --json without -f\n");
        return EXIT_USAGE;
    }
    if (ctl->json) {
        logs_print_json(ctl, res);
        return EXIT_OK;
    }
    if (ctl->run && !json_array_len(json_get_array(res, "runs"))) {
        fprintf(stderr, "mcpctl: %s has no run %ld kept (see `mcpctl logs %s`)\n", args[0],
                ctl->run, args[0]);
        return EXIT_FAILED;
    }
    logs_render(ctl, res, &sb, &cur);
    if (!sb.len && !ctl->follow)
        fprintf(stderr,
                "mcpctl: nothing recorded for %s yet (no process run; an HTTP server has "
                "none: see `mcpctl status %s`)\n",
                args[0], args[0]);
    fputs(tail_lines(strbuf_str(&sb), ctl->lines), stdout);
    fflush(stdout);
    while (ctl->follow && !(ctl->run && cur.ended)) {
        struct timespec ts = {0, LOGS_FOLLOW_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
        res = json_free(res);
        if ((code = logs_request(ctl, args[0], cur.run, &res)) != EXIT_OK)
            break;
        strbuf_reset(&sb);
        logs_render(ctl, res, &sb, &cur);
        fputs(strbuf_str(&sb), stdout);
        fflush(stdout);
    }
    strbuf_deinit(&sb);
    return code;
}

/* config [--cwd DIR]: from the daemon when it runs (it knows --config), else in-process. */
static int verb_config(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *cwd = NULL, *params = NULL, *out = NULL, *why = NULL;
    _cleanup_json_ yajl_val res = NULL;

    cwd = ctl->cwd ? (realpath(ctl->cwd, NULL) ?: xstrdup(ctl->cwd)) : getcwd(NULL, 0);
    if (ctl_client(ctl, true)) {
        yajl_val p = json_object_new();
        if (cwd)
            json_object_set(p, "cwd", json_string_new(cwd));
        params = json_to_string(p);
        json_free(p);
        int code = request(ctl, "mcpd/discover", params, &out);
        if (code != EXIT_OK)
            return code;
        res = json_parse(out, NULL);
    } else if (!(res = discover_local(cwd, &why))) {
        fprintf(stderr, "mcpctl: %s\n", why);
        return EXIT_FAILED;
    }
    if (ctl->json)
        print_json(res);
    else
        show_config(res);
    return EXIT_OK;
}

static int verb_bridge(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *sock = ctl->socket ? xstrdup(ctl->socket) : paths_socket();

    return bridge_run(sock, ctl->cwd, ctl->server, ctl->host_prefix);
}

/* trust / untrust [DIR] [--server NAME]: client/trust.c. */
static int verb_trust(Ctl *ctl, char **args, int n)
{
    return trust_run(ctl->client, false, n ? args[0] : NULL, ctl->server, ctl->json);
}

static int verb_untrust(Ctl *ctl, char **args, int n)
{
    return trust_run(ctl->client, true, n ? args[0] : NULL, ctl->server, ctl->json);
}

/* Reached only without setup's own options (main hands "setup ..." over before parsing). */
static int verb_setup(Ctl *ctl, char **args, int n)
{
    return setup_main(n + 1, args - 1);
}

static int verb_help(Ctl *ctl, char **args, int n)
{
    usage(stdout);
    return EXIT_OK;
}

/* The verbs, in the order usage lists them; add a row to add a verb. */
static int verb_login(Ctl *ctl, char **args, int n)
{
    if (!ctl->timeout_ms)
        ctl->timeout_ms = LOGIN_TIMEOUT_MS;
    if (!ctl_client(ctl, false))
        return EXIT_NOT_RUNNING;
    return login_run(ctl->client, args[0], ctl->login_mode, ctl->json);
}

static int verb_logout(Ctl *ctl, char **args, int n)
{
    return logout_run(ctl->client, args[0], ctl->json);
}

static const Verb verbs[] = {
    {"status", "[SERVER...]", "servers, their state, tools and errors; agents", 0, -1, 0,
     verb_status},
    {"tools", "", "the tools agents see", 0, 0, 0, verb_tools},
    {"call", "TOOL [JSON]", "call a tool with JSON arguments (default {})", 1, 2, 0, verb_call},
    {"prompts", "", "the prompts agents see, with their arguments", 0, 0, 0, verb_prompts},
    {"prompt", "NAME [KEY=VALUE...]", "get a prompt's messages (arguments as pairs or JSON)", 1, -1,
     0, verb_prompt},
    {"resources", "", "the resources and resource templates agents see", 0, 0, 0, verb_resources},
    {"read", "URI", "read a resource (as listed by resources)", 1, 1, 0, verb_read},
    {"reload", "[--cwd DIR]", "re-read configuration (all workspaces, or DIR's) and reconnect", 0,
     0, VERB_CWD, verb_reload},
    {"connect", "SERVER", "(re)connect a server, resetting its retry breaker", 1, 1, 0,
     verb_connect_server},
    {"disconnect", "SERVER", "stop a server and remove its tools", 1, 1, 0, verb_disconnect},
    {"wait", "SERVER", "wait until a server is connected or has failed", 1, 1, 0, verb_wait},
    {"login", "SERVER [--no-browser|--headless]", "sign in to a remote server (OAuth)", 1, 1,
     VERB_LOGIN | VERB_OFFLINE, verb_login},
    {"logout", "SERVER", "forget the sign-in to a remote server", 1, 1, 0, verb_logout},
    {"logs", "SERVER [-n N] [--run K] [-f]",
     "the server's last runs: start, stderr, exit (-f: follow)", 1, 1, VERB_LINES | VERB_FOLLOW,
     verb_logs},
    {"config", "[--cwd DIR]",
     "what discovery finds for DIR (default: here) and why; no mcpd needed", 0, 0,
     VERB_CWD | VERB_OFFLINE, verb_config},
    {"bridge", "[--cwd DIR] [--server NAME] [--host-prefix PREFIX]",
     "be a stdio MCP server relaying to mcpd (for MCP hosts); --server: only that server, under "
     "its own names; --host-prefix: short tool names that fit 64 with the host's prefix",
     0, 0, VERB_CWD | VERB_OFFLINE | VERB_SERVER | VERB_PREFIX, verb_bridge},
    {"setup", "AGENT|--all [--dry-run] [--undo]",
     "make an agent start only mcpd's bridge (docs/agents.md)", 1, 3, VERB_OFFLINE, verb_setup},
    {"trust", "[DIR] [--server NAME]",
     "approve DIR's (default: here) project servers, or one, until an entry changes", 0, 1,
     VERB_SERVER, verb_trust},
    {"untrust", "[DIR] [--server NAME]", "withdraw those approvals", 0, 1, VERB_SERVER,
     verb_untrust},
    {"help", "", "this text", 0, 0, VERB_OFFLINE, verb_help},
};

static const Verb *verb_find(const char *name)
{
    for (size_t i = 0; i < N_ELEMENTS(verbs); i++)
        if (streq(verbs[i].name, name))
            return &verbs[i];
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: mcpctl [OPTIONS] COMMAND [ARGS]\n\nCommands:\n");
    for (size_t i = 0; i < N_ELEMENTS(verbs); i++) {
        char head[64];
        snprintf(head, sizeof(head), "%s %s", verbs[i].name, verbs[i].args);
        fprintf(f, "  %-26s %s\n", head, verbs[i].help);
    }
    fprintf(f, "\nOptions (before or after the command; --opt=value or --opt value):\n"
               "  -j, --json                 machine-readable output (every command)\n"
               "  -s, --socket PATH          mcpd's socket (default: $MCPD_SOCKET, else\n"
               "                             $XDG_RUNTIME_DIR/mcpd/mcpd.sock)\n"
               "  -t, --timeout MS           give up after MS milliseconds\n"
               "  -V, --version              print the version\n"
               "  -h, --help                 this text\n"
               "Colour only on a terminal, never when NO_COLOR is set.\n"
               "\nExit status: 0 ok; 1 request or tool failed; 2 usage; 3 mcpd not reachable, or\n"
               "(status) a server is not connected; 4 (status) no such server.\n"
               "See mcpctl(1).\n");
}

/* Parse every option wherever it stands; *verbp and the positional arguments remain. */
static int parse_options(Ctl *ctl, int argc, char **argv, unsigned *seenp)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"socket", required_argument, NULL, 's'},
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"cwd", required_argument, NULL, 'C'},
        {"lines", required_argument, NULL, 'n'},
        {"server", required_argument, NULL, 'S'},
        {"no-browser", no_argument, NULL, 'B'},
        {"headless", no_argument, NULL, 'H'},
        {"follow", no_argument, NULL, 'f'},
        {"run", required_argument, NULL, 'R'},
        {"host-prefix", required_argument, NULL, 'P'},
        {NULL, 0, NULL, 0},
    };
    int64_t v;
    int ch;

    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":js:t:hVn:f", opts, NULL)) != -1) {
        switch (ch) {
        case 'j':
            ctl->json = true;
            break;
        case 's':
            ctl->socket = optarg;
            break;
        case 't':
            if (parse_int64(optarg, 1, TIMEOUT_MAX_MS, &v) < 0) {
                fprintf(stderr, "mcpctl: --timeout \"%s\": give milliseconds from 1 to %d\n",
                        optarg, TIMEOUT_MAX_MS);
                return EXIT_USAGE;
            }
            ctl->timeout_ms = (int)v;
            break;
        case 'C':
            ctl->cwd = optarg;
            *seenp |= VERB_CWD;
            break;
        case 'n':
            if (parse_int64(optarg, 0, LOGS_MAX_LINES, &v) < 0) {
                fprintf(stderr, "mcpctl: -n \"%s\": give a number of lines from 0 to %d\n", optarg,
                        LOGS_MAX_LINES);
                return EXIT_USAGE;
            }
            ctl->lines = (long)v;
            *seenp |= VERB_LINES;
            break;
        case 'P':
            ctl->host_prefix = optarg;
            *seenp |= VERB_PREFIX;
            break;
        case 'S':
            ctl->server = optarg;
            *seenp |= VERB_SERVER;
            break;
        case 'B':
        case 'H':
            ctl->login_mode = ch == 'B' ? LOGIN_NO_BROWSER : LOGIN_HEADLESS;
            *seenp |= VERB_LOGIN;
            break;
        case 'f':
            ctl->follow = true;
            *seenp |= VERB_FOLLOW;
            break;
        case 'R':
            if (parse_int64(optarg, 1, INT32_MAX, &v) < 0) {
                fprintf(stderr, "mcpctl: --run \"%s\": give a run number (1, 2, ...)\n", optarg);
                return EXIT_USAGE;
            }
            ctl->run = (long)v;
            *seenp |= VERB_FOLLOW;
            break;
        case 'h':
            usage(stdout);
            return -1;
        case 'V':
            printf("mcpctl %s\n", MCPD_VERSION);
            return -1;
        case ':':
            fprintf(stderr, "mcpctl: option %s needs a value\n", argv[optind - 1]);
            return EXIT_USAGE;
        default:
            fprintf(stderr, "mcpctl: unknown option \"%s\" (see mcpctl --help)\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    Ctl ctl = {.lines = -1};
    const char *no_color = getenv("NO_COLOR");
    const Verb *verb;
    unsigned seen = 0;
    int r, n;

    ctl.color = isatty(STDOUT_FILENO) && !(no_color && no_color[0]);
    /* setup has options of its own (--all, --undo, --dry-run): it parses its arguments itself. */
    for (int i = 1; i < argc && argv[i][0] != '-'; i++)
        if (streq(argv[i], "setup"))
            return setup_main(argc - i, argv + i);
    r = parse_options(&ctl, argc, argv, &seen);
    if (r != EXIT_OK)
        return r < 0 ? EXIT_OK : r;
    if (optind >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!(verb = verb_find(argv[optind]))) {
        fprintf(stderr, "mcpctl: unknown command \"%s\" (see mcpctl --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    n = argc - optind - 1;
    if (n < verb->min_args || (verb->max_args >= 0 && n > verb->max_args)) {
        fprintf(stderr, "mcpctl: usage: mcpctl %s %s\n", verb->name, verb->args);
        return EXIT_USAGE;
    }
    if (seen & ~verb->flags) {
        unsigned bad = seen & ~verb->flags;
        fprintf(stderr, "mcpctl: %s does not take %s\n", verb->name,
                bad & VERB_CWD      ? "--cwd"
                : bad & VERB_SERVER ? "--server"
                : bad & VERB_LINES  ? "-n"
                : bad & VERB_LOGIN  ? "--no-browser/--headless"
                : bad & VERB_PREFIX ? "--host-prefix"
                                    : "-f or --run");
        return EXIT_USAGE;
    }
    if (!(verb->flags & VERB_OFFLINE) && !ctl_client(&ctl, false))
        return EXIT_NOT_RUNNING;
    r = verb->run(&ctl, argv + optind + 1, n);
    if (ctl.client)
        mcpc_free(ctl.client);
    return r;
}
