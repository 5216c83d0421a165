// SPDX-License-Identifier: MIT
// ctl-top: mcpctl top, a live view of what each server costs, refreshed like top(1).

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "client/ctl-table.h"
#include "client/ctl-top.h"

/* How often the view refreshes: mcpd walks /proc at most once a second for a status anyway. */
#define TOP_REFRESH_MS 2000
/* Tools shown below the servers: the busiest, as many as a screen of servers leaves room for. */
#define TOP_TOOLS 10
/* Columns of a server row besides its name: STATE PROCS MEM CPU CALLS ERRORS P50 P99. */
#define SERVER_COLS_W 66

typedef enum { SORT_MEMORY, SORT_CALLS } SortKey;

/* One row: a server's figures as status gives them. */
typedef struct Row {
    const char *name, *state;
    int64_t procs, mem, cpu, calls, errors, p50, p99;
    bool running;
} Row;

/* A tool's row: its server, name and figures. */
typedef struct ToolRow {
    const char *server, *name;
    int64_t calls, errors, p50, p99;
} ToolRow;

static SortKey sort_key;

static int cmp_rows(const void *a, const void *b)
{
    const Row *x = a, *y = b;
    int64_t kx = sort_key == SORT_MEMORY ? x->mem : x->calls;
    int64_t ky = sort_key == SORT_MEMORY ? y->mem : y->calls;

    if (kx != ky)
        return kx < ky ? 1 : -1;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int cmp_tools(const void *a, const void *b)
{
    const ToolRow *x = a, *y = b;

    if (x->calls != y->calls)
        return x->calls < y->calls ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* A server's row: its tree's cost and the sum of its tools' calls (the slowest tool's p99). */
static void fill_row(Row *r, yajl_val s, ToolRow **toolsp, size_t *n_toolsp)
{
    yajl_val pt = json_get_object(s, "processTree"), ts = json_get_object(s, "toolStats");

    *r = (Row){.name = json_get_string(s, "name"), .state = json_get_string(s, "state")};
    r->running = pt != NULL;
    json_get_int(pt, "processes", &r->procs);
    json_get_int(pt, "memoryBytes", &r->mem);
    json_get_int(pt, "cpuMs", &r->cpu);
    for (size_t i = 0; ts && i < ts->u.object.len; i++) {
        yajl_val t = ts->u.object.values[i];
        ToolRow tr = {.server = r->name, .name = ts->u.object.keys[i]};
        json_get_int(t, "calls", &tr.calls);
        json_get_int(t, "errors", &tr.errors);
        json_get_int(t, "p50Ms", &tr.p50);
        json_get_int(t, "p99Ms", &tr.p99);
        r->calls += tr.calls;
        r->errors += tr.errors;
        r->p50 = MAX(r->p50, tr.p50);
        r->p99 = MAX(r->p99, tr.p99);
        *toolsp = xrealloc(*toolsp, (*n_toolsp + 1) * sizeof(**toolsp));
        (*toolsp)[(*n_toolsp)++] = tr;
    }
}

static void put_num(StrBuf *sb, const char *fmt, int64_t v, size_t width, bool known)
{
    char buf[32];

    if (known)
        snprintf(buf, sizeof(buf), fmt, (long long)v);
    else
        snprintf(buf, sizeof(buf), "-");
    strbuf_putc(sb, ' ');
    ctl_cell(sb, buf, width, true);
}

static void put_mem(StrBuf *sb, const Row *r)
{
    char buf[32] = "-", cpu[32] = "-";

    if (r->running) {
        snprintf(buf, sizeof(buf), "%.1fM", (double)r->mem / (1024.0 * 1024.0));
        snprintf(cpu, sizeof(cpu), "%.1fs", (double)r->cpu / 1000.0);
    }
    strbuf_putc(sb, ' ');
    ctl_cell(sb, buf, 9, true);
    strbuf_putc(sb, ' ');
    ctl_cell(sb, cpu, 8, true);
}

static void print_servers(const Ctl *ctl, Row *rows, size_t n, size_t term)
{
    const char **names = xcalloc(n ? n : 1, sizeof(*names));
    size_t name_w;
    StrBuf sb = STRBUF_INIT;

    for (size_t i = 0; i < n; i++)
        names[i] = rows[i].name;
    name_w = ctl_col_width("SERVER", names, n, 12, CTL_COL_MAX);
    if (term && name_w + SERVER_COLS_W > term)
        name_w = MAX((size_t)CTL_NAME_MIN, term > SERVER_COLS_W ? term - SERVER_COLS_W : 0);
    free(names);
    ctl_cell(&sb, "SERVER", name_w, false);
    strbuf_printf(&sb, " %-11s %5s %9s %8s %7s %6s %6s %6s", "STATE", "PROCS", "MEM", "CPU",
                  "CALLS", "ERRORS", "P50", "P99");
    printf("%s\n", strbuf_str(&sb));
    for (size_t i = 0; i < n; i++) {
        const Row *r = &rows[i];
        strbuf_reset(&sb);
        ctl_cell(&sb, r->name, name_w, false);
        strbuf_putc(&sb, ' ');
        strbuf_puts(&sb, ctl_color_of(ctl, r->state));
        ctl_cell(&sb, r->state, 11, false);
        strbuf_puts(&sb, ctl_color_off(ctl, r->state));
        put_num(&sb, "%lld", r->procs, 5, r->running);
        put_mem(&sb, r);
        put_num(&sb, "%lld", r->calls, 7, true);
        put_num(&sb, "%lld", r->errors, 6, true);
        put_num(&sb, "%lldms", r->p50, 6, r->calls > 0);
        put_num(&sb, "%lldms", r->p99, 6, r->calls > 0);
        printf("%s\n", strbuf_str(&sb));
    }
    strbuf_deinit(&sb);
}

static void print_tools(ToolRow *tools, size_t n)
{
    StrBuf sb = STRBUF_INIT;

    if (!n)
        return;
    qsort(tools, n, sizeof(*tools), cmp_tools);
    printf("\n%-24s %-28s %7s %6s %6s %6s\n", "SERVER", "TOOL", "CALLS", "ERRORS", "P50", "P99");
    for (size_t i = 0; i < n && i < TOP_TOOLS; i++) {
        strbuf_reset(&sb);
        ctl_cell(&sb, tools[i].server, 24, false);
        strbuf_putc(&sb, ' ');
        ctl_cell(&sb, tools[i].name, 28, false);
        put_num(&sb, "%lld", tools[i].calls, 7, true);
        put_num(&sb, "%lld", tools[i].errors, 6, true);
        put_num(&sb, "%lldms", tools[i].p50, 6, true);
        put_num(&sb, "%lldms", tools[i].p99, 6, true);
        printf("%s\n", strbuf_str(&sb));
    }
    strbuf_deinit(&sb);
}

/* One screen from one status: a header, the servers sorted, the busiest tools. */
static int show(const Ctl *ctl, bool live)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val st = NULL;
    yajl_val servers;
    Row *rows;
    ToolRow *tools = NULL;
    size_t n, n_tools = 0;
    int64_t total = 0;
    int r = mcpc_status(ctl->client, &out);

    if (r != 0)
        return r;
    if (!(st = json_parse(out, NULL)) || !(servers = json_get_array(st, "servers")))
        return -EPROTO;
    n = json_array_len(servers);
    rows = xcalloc(n ? n : 1, sizeof(*rows));
    for (size_t i = 0; i < n; i++) {
        fill_row(&rows[i], json_array_at(servers, i), &tools, &n_tools);
        total += rows[i].mem;
    }
    qsort(rows, n, sizeof(*rows), cmp_rows);
    if (live)
        printf("\033[H\033[2J"); /* home and clear: cursor movement, not colour */
    printf("mcpd top: %zu servers, %.1f MiB in their processes; sorted by %s%s\n\n", n,
           (double)total / (1024.0 * 1024.0), sort_key == SORT_MEMORY ? "memory" : "calls",
           live ? " (m: memory, c: calls, q: quit)" : "");
    print_servers(ctl, rows, n, ctl_term_width());
    print_tools(tools, n_tools);
    fflush(stdout);
    free(rows);
    free(tools);
    return 0;
}

static struct termios saved_tty;
static bool tty_raw;

static void tty_restore(void)
{
    if (tty_raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
    tty_raw = false;
}

/* Keys one at a time, unechoed; restored at exit (and by a signal's exit through atexit). */
static void tty_make_raw(void)
{
    struct termios t;

    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tty) < 0)
        return;
    t = saved_tty;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    if (tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0) {
        tty_raw = true;
        atexit(tty_restore);
    }
}

static void on_quit_signal(int sig)
{
    (void)sig;
    tty_restore();
    _exit(EXIT_OK);
}

/* Wait up to ms for a key; return it, 0 on timeout, -1 when input ended. */
static int read_key(int ms)
{
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    unsigned char ch;
    int r = poll(&pfd, 1, ms);

    if (r <= 0)
        return 0;
    r = (int)read(STDIN_FILENO, &ch, 1);
    return r == 1 ? ch : -1;
}

int ctl_verb_top(Ctl *ctl, char **args, int n)
{
    bool live = isatty(STDOUT_FILENO);
    bool keys = live && isatty(STDIN_FILENO);
    int r;

    (void)args;
    (void)n;
    if (!live)
        return (r = show(ctl, false)) == 0 ? EXIT_OK : ctl_fail(ctl, r);
    if (keys) {
        tty_make_raw();
        signal(SIGINT, on_quit_signal);
        signal(SIGTERM, on_quit_signal);
    }
    for (;;) {
        if ((r = show(ctl, true)) != 0) {
            tty_restore();
            return ctl_fail(ctl, r);
        }
        int key = keys ? read_key(TOP_REFRESH_MS) : 0;
        if (!keys)
            usleep(TOP_REFRESH_MS * 1000);
        if (key == 'q' || key == 'Q' || key < 0)
            break;
        if (key == 'm' || key == 'M')
            sort_key = SORT_MEMORY;
        else if (key == 'c' || key == 'C')
            sort_key = SORT_CALLS;
    }
    tty_restore();
    return EXIT_OK;
}
