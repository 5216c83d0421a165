// SPDX-License-Identifier: MIT
// ctl-status: mcpctl status, tools and call: what mcpd serves, shown for a person or as JSON.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ctl-cost.h"
#include "client/ctl-status.h"
#include "client/ctl-table.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"

/* A row's second line, cut to the terminal like the rows (term 0: whole). */
static void print_fit(StrBuf *line, size_t term)
{
    StrBuf out = STRBUF_INIT;

    ctl_cell_tail(&out, strbuf_str(line), 0, term);
    printf("%s\n", strbuf_str(&out));
    strbuf_deinit(&out);
    strbuf_deinit(line);
}

/* HTTP servers get a second line: where, how, and what the last response said. */
static void print_http(yajl_val s, size_t term)
{
    const char *url = json_get_string(s, "url");
    int64_t status = 0;
    StrBuf sb = STRBUF_INIT;

    if (!url && !json_get_string(s, "wwwAuthenticate"))
        return;
    strbuf_printf(&sb, "%-20s  ", "");
    if (url)
        strbuf_printf(&sb, " %s via %s, session %s", url,
                      json_get_string(s, "httpTransport") ?: json_get_string(s, "transport"),
                      YAJL_IS_TRUE(json_get(s, "session")) ? "yes" : "no");
    if (json_get_int(s, "lastHttpStatus", &status) == 0)
        strbuf_printf(&sb, ", last HTTP status %lld", (long long)status);
    if (json_get_string(s, "wwwAuthenticate"))
        strbuf_printf(&sb, ", WWW-Authenticate: %s", json_get_string(s, "wwwAuthenticate"));
    print_fit(&sb, term);
}

/* stdio servers get a second line: the command, how often it ran, how it last ended and when. */
static void print_process(yajl_val s, size_t term)
{
    const char *cmd = json_get_string(s, "commandLine"), *exit_how = json_get_string(s, "lastExit");
    int64_t spawns = 0, exit_at = 0, err_at = 0;
    char age[32];
    StrBuf sb = STRBUF_INIT;

    if (!cmd)
        return;
    json_get_int(s, "spawns", &spawns);
    strbuf_printf(&sb, "    command: %s; spawned %lld time%s", cmd, (long long)spawns,
                  spawns == 1 ? "" : "s");
    if (exit_how && json_get_int(s, "lastExitAt", &exit_at) == 0) {
        ctl_fmt_age(age, sizeof(age), exit_at);
        strbuf_printf(&sb, "; last exit %s ago: %s", age, exit_how);
    }
    if (json_get_int(s, "lastErrorAt", &err_at) == 0) {
        ctl_fmt_age(age, sizeof(age), err_at);
        strbuf_printf(&sb, "; last error %s ago", age);
    }
    print_fit(&sb, term);
}

/* A list of a sandbox policy's paths, after a label, when it has any. */
static void print_sandbox_list(StrBuf *sb, yajl_val sandbox, const char *field, const char *label)
{
    yajl_val list = json_get_array(sandbox, field);

    for (size_t i = 0; i < json_array_len(list); i++) {
        yajl_val p = json_array_at(list, i);
        strbuf_printf(sb, "%s%s", i ? ", " : label, YAJL_IS_STRING(p) ? p->u.string : "?");
    }
}

/* How a contained stdio server runs (docs/sandbox.md): one line; none for an unconfined one. */
static void print_sandbox(yajl_val s, size_t term)
{
    yajl_val sb_policy = json_get_object(s, "sandbox");
    StrBuf sb = STRBUF_INIT;

    if (!sb_policy)
        return;
    strbuf_printf(&sb,
                  "    sandbox: \"%s\" (%s): network %s; writes: %sprivate /tmp, "
                  "tool caches",
                  json_get_string(sb_policy, "profile"),
                  json_get_string(s, "sandboxedBy") ?: "not running",
                  YAJL_IS_TRUE(json_get(sb_policy, "network")) ? "on" : "off",
                  YAJL_IS_TRUE(json_get(sb_policy, "projectWrite")) ? "working directory, " : "");
    print_sandbox_list(&sb, sb_policy, "allowWrite", ", ");
    print_sandbox_list(&sb, sb_policy, "denyWrite", "; read-only: ");
    strbuf_puts(&sb, "; denied: secrets (docs/sandbox.md)");
    print_sandbox_list(&sb, sb_policy, "denyRead", ", ");
    print_fit(&sb, term);
}

/* A running stdio server's cost, from its whole process tree: a third line. */
static void print_cost(yajl_val s, size_t term)
{
    yajl_val pt = json_get_object(s, "processTree");
    int64_t procs = 0, mem = 0, cpu = 0, running = 0;
    const char *measure = json_get_string(pt, "measure");
    char age[32];
    StrBuf sb = STRBUF_INIT;

    if (!pt)
        return;
    json_get_int(pt, "processes", &procs);
    json_get_int(pt, "memoryBytes", &mem);
    json_get_int(pt, "cpuMs", &cpu);
    json_get_int(pt, "runningMs", &running);
    ctl_fmt_age(age, sizeof(age), wall_ms() - running);
    strbuf_printf(&sb, "    cost: %lld process%s, %.1f MiB %s, CPU %.2f s, running %s",
                  (long long)procs, procs == 1 ? "" : "es", (double)mem / (1024.0 * 1024.0),
                  measure ? measure : "PSS", (double)cpu / 1000.0, age);
    print_fit(&sb, term);
}

/* The fixed columns of a server row after its name, and the gaps between them. */
static const struct {
    const char *header;
    size_t width;
    bool right;
} server_cols[] = {
    {"STATE", 11, false}, {"SINCE", 6, false}, {"TRANSPORT", 9, false},
    {"TOOLS", 6, true},   {"CACHE", 6, true},  {"PID", 7, true},
    {"ACTIVE", 6, true},  {"CALLS", 6, true},  {"RESTARTS", 8, true},
};

/* Columns of a server row before LAST ERROR. */
static size_t server_row_width(size_t name_w)
{
    size_t w = name_w + 1;

    for (size_t i = 0; i < N_ELEMENTS(server_cols); i++)
        w += server_cols[i].width + 1;
    return w + 1;
}

/* One row of the servers table: cells[] in server_cols' order, then the free text. */
static void print_server_row(const Ctl *ctl, const char *name, size_t name_w,
                             const char *const *cells, const char *tail, size_t term)
{
    StrBuf row = STRBUF_INIT;

    ctl_cell(&row, name, name_w, false);
    for (size_t i = 0; i < N_ELEMENTS(server_cols); i++) {
        strbuf_putc(&row, ' ');
        /* STATE is coloured; the colour is outside the cell, so the width is the text's. */
        if (i == 0 && ctl)
            strbuf_puts(&row, ctl_color_of(ctl, cells[0]));
        ctl_cell(&row, cells[i], server_cols[i].width, server_cols[i].right);
        if (i == 0 && ctl)
            strbuf_puts(&row, ctl_color_off(ctl, cells[0]));
    }
    strbuf_puts(&row, "  ");
    ctl_cell_tail(&row, tail, server_row_width(name_w), term);
    printf("%s\n", strbuf_str(&row));
    strbuf_deinit(&row);
}

static void print_server(const Ctl *ctl, yajl_val s, size_t name_w, size_t term)
{
    int64_t since = 0, tools = 0, pid = 0, calls = 0, total = 0, restarts = 0, next = 0, cached = 0;
    bool deferred = false;
    char age[32], toolbuf[32], pidbuf[24], cache[32] = "-", callbuf[24], totalbuf[24],
                                           restartbuf[24];
    const char *err = json_get_string(s, "lastError");
    _cleanup_free_ char *tail = NULL;

    json_get_int(s, "since", &since);
    json_get_int(s, "tools", &tools);
    json_get_int(s, "callsInFlight", &calls);
    json_get_int(s, "callsTotal", &total);
    json_get_int(s, "restarts", &restarts);
    json_get_bool(s, "toolsDeferred", &deferred);
    ctl_fmt_age(age, sizeof(age), since);
    snprintf(toolbuf, sizeof(toolbuf), "%lld%s", (long long)tools, deferred ? "*" : "");
    if (json_get_int(s, "pid", &pid) == 0)
        snprintf(pidbuf, sizeof(pidbuf), "%lld", (long long)pid);
    else
        snprintf(pidbuf, sizeof(pidbuf), "-");
    if (json_get_int(s, "cacheSavedAt", &cached) == 0)
        ctl_fmt_age(cache, sizeof(cache), cached);
    snprintf(callbuf, sizeof(callbuf), "%lld", (long long)calls);
    snprintf(totalbuf, sizeof(totalbuf), "%lld", (long long)total);
    snprintf(restartbuf, sizeof(restartbuf), "%lld", (long long)restarts);
    bool auth = YAJL_IS_TRUE(json_get(s, "needsAuthorization"));
    const char *state = auth ? "needs-auth" : json_get_string(s, "state");
    if (json_get_int(s, "nextAttempt", &next) == 0)
        tail = xasprintf("%s%s(retry in %llds)", err ? err : "", err ? " " : "",
                         (long long)MAX(0, (next - wall_ms() + 999) / 1000));
    const char *cells[] = {state,   age,      json_get_string(s, "transport"),
                           toolbuf, cache,    pidbuf,
                           callbuf, totalbuf, restartbuf};
    print_server_row(ctl, json_get_string(s, "name"), name_w, cells, tail ? tail : err, term);
    print_http(s, term);
    print_process(s, term);
    print_sandbox(s, term);
    print_cost(s, term);
}

/* Columns of an agent row besides AGENT, NAME and WORKSPACE (PID ... QUEUED and the gaps). */
#define AGENT_FIXED_COLS 49

/* An agent row and its depth under the agent whose session it joined. */
typedef struct AgentRow {
    yajl_val a;
    int depth;
    char *id; /* the id, indented by depth */
} AgentRow;

/* Agents, subagents after the agent whose session they joined, into rows (at most n). */
static void collect_agent(yajl_val agents, yajl_val a, int depth, AgentRow *rows, size_t *np,
                          size_t n)
{
    int64_t id = 0;

    if (*np >= n)
        return;
    json_get_int(a, "id", &id);
    rows[*np] = (AgentRow){a, depth, xasprintf("%*s%lld", depth * 2, "", (long long)id)};
    (*np)++;
    for (size_t i = 0; i < json_array_len(agents); i++) {
        yajl_val c = json_array_at(agents, i);
        int64_t parent = 0;
        if (json_get_int(c, "parent", &parent) == 0 && parent == id && depth < 8)
            collect_agent(agents, c, depth + 1, rows, np, n);
    }
}

static void print_agent(const AgentRow *r, size_t id_w, size_t name_w, size_t term)
{
    yajl_val a = r->a;
    int64_t pid = 0, calls = 0, total = 0, queued = 0, since = 0, session = 0;
    const char *root = json_get_string(a, "root");
    char age[32], sess[24] = "-", num[4][24];
    StrBuf row = STRBUF_INIT;

    json_get_int(a, "pid", &pid);
    json_get_int(a, "callsInFlight", &calls);
    json_get_int(a, "callsTotal", &total);
    json_get_int(a, "bytesQueued", &queued);
    json_get_int(a, "connectedAt", &since);
    if (json_get_int(a, "session", &session) == 0)
        snprintf(sess, sizeof(sess), "%lld", (long long)session);
    ctl_fmt_age(age, sizeof(age), since);
    snprintf(num[0], sizeof(num[0]), "%lld", (long long)pid);
    snprintf(num[1], sizeof(num[1]), "%lld", (long long)calls);
    snprintf(num[2], sizeof(num[2]), "%lld", (long long)queued);
    snprintf(num[3], sizeof(num[3]), "%lld", (long long)total);
    ctl_cell(&row, r->id, id_w, false);
    strbuf_putc(&row, ' ');
    ctl_cell(&row, num[0], 7, true);
    strbuf_putc(&row, ' ');
    ctl_cell(&row, json_get_string(a, "name") ? json_get_string(a, "name") : "?", name_w, false);
    strbuf_putc(&row, ' ');
    ctl_cell(&row, age, 6, false);
    strbuf_putc(&row, ' ');
    ctl_cell(&row, sess, 7, true);
    strbuf_putc(&row, ' ');
    ctl_cell(&row, num[1], 6, true);
    strbuf_putc(&row, ' ');
    ctl_cell(&row, num[3], 6, true);
    strbuf_putc(&row, ' ');
    ctl_cell(&row, num[2], 8, true);
    strbuf_puts(&row, "  ");
    ctl_cell_tail(&row, root ? root : "(user)", id_w + name_w + AGENT_FIXED_COLS, term);
    printf("%s\n", strbuf_str(&row));
    strbuf_deinit(&row);
}

static void show_agents(yajl_val agents, size_t term)
{
    size_t n = json_array_len(agents), n_rows = 0, id_w, name_w;
    /* Each agent once, in a tree; a parent loop cannot make more rows than agents. */
    AgentRow *rows = xcalloc(n ? n : 1, sizeof(*rows));
    const char **ids = xcalloc(n ? n : 1, sizeof(*ids)),
               **names = xcalloc(n ? n : 1, sizeof(*names));

    if (!n)
        goto out;
    for (size_t i = 0; i < n; i++) {
        yajl_val a = json_array_at(agents, i);
        int64_t parent = 0;
        /* Subagents are printed under their parent; orphans (parent gone) at the top. */
        bool has_parent = false;
        if (json_get_int(a, "parent", &parent) == 0)
            for (size_t k = 0; k < n; k++) {
                int64_t other = 0;
                json_get_int(json_array_at(agents, k), "id", &other);
                has_parent |= other == parent;
            }
        if (!has_parent)
            collect_agent(agents, a, 0, rows, &n_rows, n);
    }
    for (size_t i = 0; i < n_rows; i++) {
        ids[i] = rows[i].id;
        names[i] = json_get_string(rows[i].a, "name") ?: "?";
    }
    id_w = ctl_col_width("AGENT", ids, n_rows, 6, CTL_COL_MAX);
    name_w = ctl_col_width("NAME", names, n_rows, 20, CTL_COL_MAX);
    name_w = ctl_col_fit(name_w, id_w + AGENT_FIXED_COLS, term);
    StrBuf head = STRBUF_INIT;
    strbuf_putc(&head, '\n');
    ctl_cell(&head, "AGENT", id_w, false);
    strbuf_printf(&head, " %7s ", "PID");
    ctl_cell(&head, "NAME", name_w, false);
    strbuf_printf(&head, " %-6s %7s %6s %6s %8s  %s", "SINCE", "SESSION", "ACTIVE", "CALLS",
                  "QUEUED", "WORKSPACE");
    printf("%s\n", strbuf_str(&head));
    strbuf_deinit(&head);
    for (size_t i = 0; i < n_rows; i++)
        print_agent(&rows[i], id_w, name_w, term);
out:
    for (size_t i = 0; i < n_rows; i++)
        free(rows[i].id);
    free(rows);
    free(ids);
    free(names);
}

/* When mcpd last heard the machine resume from sleep, and what it did then (daemon.resume). */
static void show_resume(yajl_val r)
{
    int64_t n = 0, at = 0, slept = -1, v[5] = {0};
    static const char *const keys[] = {"pinged", "restarted", "reopened", "tokensRefreshed",
                                       "resubscribed"};
    char age[32], asleep[32] = "";

    if (!r)
        return;
    json_get_int(r, "resumes", &n);
    if (n == 0) {
        printf("no resume from sleep since start (watching %s)\n\n",
               json_get_string(r, "watching") ?: "?");
        return;
    }
    json_get_int(r, "lastAt", &at);
    ctl_fmt_age(age, sizeof(age), at);
    if (json_get_int(r, "sleptMs", &slept) == 0 && slept >= 0)
        ctl_fmt_age(asleep, sizeof(asleep), wall_ms() - slept - 500); /* rounded, not cut */
    for (size_t i = 0; i < N_ELEMENTS(keys); i++)
        json_get_int(r, keys[i], &v[i]);
    printf("resumed from sleep %s ago (%s%s%s; %lld times since start): %lld pinged, %lld "
           "restarted, %lld reopened, %lld tokens refreshed, %lld subscriptions renewed\n\n",
           age, json_get_string(r, "source") ?: "?", *asleep ? ", asleep " : "", asleep,
           (long long)n, (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3],
           (long long)v[4]);
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
    show_resume(json_get_object(d, "resume"));
    size_t n = json_array_len(servers), term = ctl_term_width(), name_w;
    const char **names = xcalloc(n ? n : 1, sizeof(*names)), *heads[N_ELEMENTS(server_cols)];
    for (size_t i = 0; i < n; i++)
        names[i] = json_get_string(json_array_at(servers, i), "name");
    name_w = ctl_col_width("SERVER", names, n, 20, CTL_COL_MAX);
    name_w = ctl_col_fit(name_w, server_row_width(0), term);
    free(names);
    for (size_t i = 0; i < N_ELEMENTS(server_cols); i++)
        heads[i] = server_cols[i].header;
    print_server_row(NULL, "SERVER", name_w, heads, "LAST ERROR", term);
    for (size_t i = 0; i < n; i++)
        print_server(ctl, json_array_at(servers, i), name_w, term);
    if (!n)
        printf("(no servers configured)\n");
    show_agents(agents, term);
    ctl_cost_status(st);
    for (size_t i = 0; i < json_array_len(problems); i++)
        ctl_print_problem(stdout, i ? "config " : "\nconfig ", json_array_at(problems, i));
    printf("\n* deferred: tools shown from the cache or the last known list until the server "
           "connects; CACHE: age of the cached tool list\n");
}

static void show_tools(const char *text)
{
    _cleanup_json_ yajl_val r = json_parse(text, NULL);
    yajl_val tools = json_get_array(r, "tools");
    size_t n = json_array_len(tools), term = ctl_term_width(), name_w;
    const char **names = xcalloc(n ? n : 1, sizeof(*names));

    for (size_t i = 0; i < n; i++)
        names[i] = json_get_string(json_array_at(tools, i), "name");
    name_w = ctl_col_fit(ctl_col_width("", names, n, 40, CTL_COL_MAX), 1, term);
    free(names);
    for (size_t i = 0; i < n; i++) {
        yajl_val t = json_array_at(tools, i), meta = json_get_object(t, "_meta");
        const char *desc = json_get_string(t, "description");
        bool deferred = false;
        StrBuf row = STRBUF_INIT;
        json_get_bool(meta, MCPD_META_DEFERRED, &deferred);
        /* The description's first line: the rest is for the model, not for a list. */
        _cleanup_free_ char *line =
            xasprintf("%s%.*s", deferred ? "(deferred) " : "", desc ? (int)strcspn(desc, "\n") : 0,
                      desc ? desc : "");
        ctl_cell(&row, json_get_string(t, "name"), name_w, false);
        strbuf_putc(&row, ' ');
        ctl_cell_tail(&row, line, name_w + 1, term);
        printf("%s\n", strbuf_str(&row));
        strbuf_deinit(&row);
    }
    ctl_cost_tools(tools);
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
            !streq(json_get_string(s, "state"), "disabled") &&
            !streq(json_get_string(s, "state"), "idle")) /* stopped, cached: a call starts it */
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
