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
#include "client/ctl-safeout.h"
#include "client/ctl-control.h"
#include "client/ctl-logs.h"
#include "client/ctl-pin.h"
#include "client/ctl-status.h"
#include "client/ctl-top.h"
#include "client/ctl-surface.h"
#include "client/ctl-table.h"
#include "client/ctl.h"
#include "client/discover-local.h"
#include "client/setup.h"
#include "client/login.h"
#include "client/include/mcpc.h"
#include "client/trust.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/paths.h"
#include "common/util.h"
#include "common/version.h"

/*
 * --timeout bounds: at least 1 ms; at most the daemon's own longest call timeout
 * (CONFIG_MAX_CALL_TIMEOUT_MS, 10 minutes), since no request can usefully wait longer.
 */
#define TIMEOUT_MAX_MS 600000
/* logs -n: the ring holds far fewer lines than this; the bound only rejects nonsense. */
#define LOGS_MAX_LINES 1000000

/* What a verb accepts besides the global options. */
enum {
    VERB_OFFLINE = 1 << 0, /* runs without connecting first (it connects itself, or never) */
    VERB_CWD = 1 << 1,     /* --cwd DIR */
    VERB_LINES = 1 << 2,   /* -n N */
    VERB_SERVER = 1 << 3,  /* --server NAME */
    VERB_LOGIN = 1 << 4,   /* --no-browser, --headless */
    VERB_FOLLOW = 1 << 5,  /* -f, --run K */
    VERB_PREFIX = 1 << 6,  /* --host-prefix PREFIX, --host NAME, --profile NAME */
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

/* config's columns before FILE, each as wide as its widest cell and at least its 0.1 width. */
static const struct {
    const char *key, *header;
    size_t min;
} config_cols[] = {
    {"name", "SERVER", 24},
    {"provider", "PROVIDER", 13},
    {"level", "LEVEL", 7},
    {"transport", "TRANSPORT", 9}, /* winners only */
};
#define CONFIG_N_COLS N_ELEMENTS(config_cols)

static void config_widths(yajl_val servers, yajl_val skipped, size_t term, size_t w[])
{
    size_t n = json_array_len(servers), m = json_array_len(skipped), fixed = CONFIG_N_COLS;
    const char **cells = xcalloc(n + m + 1, sizeof(*cells));

    for (size_t c = 0; c < CONFIG_N_COLS; c++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            cells[k++] = json_get_string(json_array_at(servers, i), config_cols[c].key);
        for (size_t i = 0; i < m && c + 1 < CONFIG_N_COLS; i++)
            cells[k++] = json_get_string(json_array_at(skipped, i), config_cols[c].key);
        w[c] = ctl_col_width(config_cols[c].header, cells, k, config_cols[c].min, CTL_COL_MAX);
        fixed += c ? w[c] : 0;
    }
    free(cells);
    w[0] = ctl_col_fit(w[0], fixed, term);
}

/* One row of config's tables: cells[] in config_cols' order (no TRANSPORT: n_cols - 1). */
static void print_config_row(const size_t w[], const char *const cells[], size_t n_cols,
                             const char *tail, size_t term)
{
    StrBuf row = STRBUF_INIT;
    size_t used = 0;

    for (size_t c = 0; c < n_cols; c++) {
        ctl_cell(&row, cells[c], w[c], false);
        strbuf_putc(&row, ' ');
        used += w[c] + 1;
    }
    ctl_cell_tail(&row, tail, used, term);
    printf("%s\n", strbuf_str(&row));
    strbuf_deinit(&row);
}

/* A config entry's cells in config_cols' order. */
static void config_cells(yajl_val e, const char *cells[])
{
    for (size_t c = 0; c < CONFIG_N_COLS; c++)
        cells[c] = json_get_string(e, config_cols[c].key);
}

/* mcpctl config: winners, then entries not used and why, then problems. */
static void show_config(yajl_val r)
{
    yajl_val servers = json_get_array(r, "servers"), skipped = json_get_array(r, "skipped");
    yajl_val problems = json_get_array(r, "problems");
    const char *root = json_get_string(r, "root"), *cells[CONFIG_N_COLS];
    size_t term = ctl_term_width(), w[CONFIG_N_COLS];

    config_widths(servers, skipped, term, w);
    printf("%s%s%s\n\n", root ? "Servers for project " : "Servers for the user workspace",
           root ? root : "",
           YAJL_IS_FALSE(json_get(r, "daemon")) ? " (mcpd not running: discovered by mcpctl)" : "");
    for (size_t c = 0; c < CONFIG_N_COLS; c++)
        cells[c] = config_cols[c].header;
    print_config_row(w, cells, CONFIG_N_COLS, "FILE", term);
    for (size_t i = 0; i < json_array_len(servers); i++) {
        yajl_val e = json_array_at(servers, i);
        _cleanup_free_ char *tail = xasprintf(
            "%s%s", json_get_string(e, "path") ?: "-",
            YAJL_IS_FALSE(json_get(e, "enabled")) ? "  (disabled: masks lower entries)" : "");
        config_cells(e, cells);
        print_config_row(w, cells, CONFIG_N_COLS, tail, term);
    }
    if (!json_array_len(servers))
        printf("(none)\n");
    if (json_array_len(skipped)) {
        printf("\nNot used:\n");
        for (size_t c = 0; c < CONFIG_N_COLS; c++)
            cells[c] = config_cols[c].header;
        print_config_row(w, cells, CONFIG_N_COLS - 1, "FILE: REASON", term);
    }
    for (size_t i = 0; i < json_array_len(skipped); i++) {
        yajl_val e = json_array_at(skipped, i);
        _cleanup_free_ char *tail = xasprintf("%s: %s", json_get_string(e, "path") ?: "-",
                                              json_get_string(e, "reason") ?: "");
        config_cells(e, cells);
        print_config_row(w, cells, CONFIG_N_COLS - 1, tail, term);
    }
    for (size_t i = 0; i < json_array_len(problems); i++)
        ctl_print_problem(stdout, i ? "" : "\n", json_array_at(problems, i));
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
        int code = ctl_request(ctl, MCPD_METHOD_DISCOVER, params, &out);
        if (code != EXIT_OK)
            return code;
        res = json_parse(out, NULL);
    } else if (!(res = discover_local(cwd, &why))) {
        fprintf(stderr, "mcpctl: %s\n", why);
        return EXIT_FAILED;
    }
    if (ctl->json)
        ctl_print_json(res);
    else
        show_config(res);
    return EXIT_OK;
}

static int verb_bridge(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *sock = ctl->socket ? xstrdup(ctl->socket) : paths_socket();

    if (ctl->host && !streq(ctl->host, "claude")) {
        fprintf(stderr, "mcpctl bridge: --host %s: the hosts known are: claude\n", ctl->host);
        return EXIT_USAGE;
    }
    /* Sent in the identity the bridge adds to the host's first request, as $MCPD_PROFILE is. */
    if (ctl->profile)
        setenv("MCPD_PROFILE", ctl->profile, 1);
    return bridge_run(sock, ctl->cwd, ctl->server, ctl->host_prefix, ctl->host != NULL);
}

/*
 * http-token: the bearer token of mcpd's loopback HTTP endpoint, which mcpd writes next to its
 * socket (0600) when it listens on loopback (docs/http.md).
 */
static int verb_http_token(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *sock = ctl->socket ? xstrdup(ctl->socket) : paths_socket();
    _cleanup_free_ char *dir = paths_dirname(sock), *path = paths_join(dir, "http-token");
    _cleanup_free_ char *text = NULL, *why = NULL;
    int r = paths_read_regular(path, false, 256, NULL, &text, NULL, &why);

    if (r < 0) {
        fprintf(stderr,
                "mcpctl http-token: %s: %s\n(mcpd writes it when it serves HTTP on loopback: "
                "the listen setting or mcpd --listen 127.0.0.1:PORT; docs/http.md)\n",
                path, why ? why : strerror(-r));
        return EXIT_NOT_RUNNING;
    }
    printf("%s\n", text);
    return EXIT_OK;
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
     ctl_verb_status},
    {"top", "", "live view of each server's memory, CPU and calls (keys m, c; q quits)", 0, 0, 0,
     ctl_verb_top},
    {"tools", "", "the tools agents see", 0, 0, 0, ctl_verb_tools},
    {"call", "TOOL [JSON]", "call a tool with JSON arguments (default {})", 1, 2, 0, ctl_verb_call},
    {"prompts", "", "the prompts agents see, with their arguments", 0, 0, 0, ctl_verb_prompts},
    {"prompt", "NAME [KEY=VALUE...]", "get a prompt's messages (arguments as pairs or JSON)", 1, -1,
     0, ctl_verb_prompt},
    {"resources", "", "the resources and resource templates agents see", 0, 0, 0,
     ctl_verb_resources},
    {"read", "URI", "read a resource (as listed by resources)", 1, 1, 0, ctl_verb_read},
    {"reload", "[--cwd DIR]", "re-read configuration (all workspaces, or DIR's) and reconnect", 0,
     0, VERB_CWD, ctl_verb_reload},
    {"connect", "SERVER", "(re)connect a server, resetting its retry breaker", 1, 1, 0,
     ctl_verb_connect_server},
    {"disconnect", "SERVER", "stop a server and remove its tools", 1, 1, 0, ctl_verb_disconnect},
    {"wait", "SERVER", "wait until a server is connected or has failed", 1, 1, 0, ctl_verb_wait},
    {"pin", "SERVER", "keep a server running (no idle stop) while this command runs", 1, 1,
     VERB_OFFLINE, ctl_verb_pin},
    {"unpin", "SERVER", "end the `mcpctl pin SERVER` commands holding it", 1, 1, 0, ctl_verb_unpin},
    {"login", "SERVER [--no-browser|--headless]", "sign in to a remote server (OAuth)", 1, 1,
     VERB_LOGIN | VERB_OFFLINE, verb_login},
    {"logout", "SERVER", "forget the sign-in to a remote server", 1, 1, 0, verb_logout},
    {"logs", "SERVER [-n N] [--run K] [-f]",
     "the server's last runs: start, stderr, exit (-f: follow)", 1, 1, VERB_LINES | VERB_FOLLOW,
     ctl_verb_logs},
    {"config", "[--cwd DIR]",
     "what discovery finds for DIR (default: here) and why; no mcpd needed", 0, 0,
     VERB_CWD | VERB_OFFLINE, verb_config},
    {"bridge",
     "[--cwd DIR] [--server NAME] [--host-prefix PREFIX] [--host claude] [--profile NAME]",
     "be a stdio MCP server relaying to mcpd (for MCP hosts); --server: only that server, under "
     "its own names; --host-prefix: short tool names that fit 64 with the host's prefix; --host "
     "claude: the project's .mcp.json servers Claude Code runs itself are not listed again; "
     "--profile: the tool set of mcpd.json's profiles this agent gets",
     0, 0, VERB_CWD | VERB_OFFLINE | VERB_SERVER | VERB_PREFIX, verb_bridge},
    {"setup", "AGENT|--all [--dry-run] [--undo] [--profile NAME]",
     "make an agent start only mcpd's bridge (docs/agents.md)", 1, 3, VERB_OFFLINE, verb_setup},
    {"trust", "[DIR] [--server NAME]",
     "approve DIR's (default: here) project servers, or one, until an entry changes", 0, 1,
     VERB_SERVER, verb_trust},
    {"untrust", "[DIR] [--server NAME]", "withdraw those approvals", 0, 1, VERB_SERVER,
     verb_untrust},
    {"http-token", "", "the bearer token of mcpd's loopback HTTP endpoint (docs/http.md)", 0, 0,
     VERB_OFFLINE, verb_http_token},
    {"help", "", "this text", 0, 0, VERB_OFFLINE, verb_help},
};

static const Verb *verb_find(const char *name)
{
    for (size_t i = 0; i < N_ELEMENTS(verbs); i++)
        if (streq(verbs[i].name, name))
            return &verbs[i];
    return NULL;
}

/* usage's layout: the command column, and the width its lines are wrapped to (a terminal's). */
#define USAGE_HEAD_COLS 26
#define USAGE_COLS      80

/* Print text from column col on, wrapped at spaces to USAGE_COLS, continued at column col. */
static void usage_wrapped(FILE *f, const char *text, int col)
{
    int at = col;

    while (*text) {
        int word = (int)strcspn(text, " ");
        if (at > col && at + 1 + word > USAGE_COLS) {
            fprintf(f, "\n%*s", col, "");
            at = col;
        } else if (at > col) {
            fputc(' ', f);
            at++;
        }
        fprintf(f, "%.*s", word, text);
        at += word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', f);
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: mcpctl [OPTIONS] COMMAND [ARGS]\n\nCommands:\n");
    for (size_t i = 0; i < N_ELEMENTS(verbs); i++) {
        _cleanup_free_ char *head =
            xasprintf("%s%s%s", verbs[i].name, *verbs[i].args ? " " : "", verbs[i].args);
        /* A long synopsis gets a line of its own, so the descriptions stay in one column. */
        if (strlen(head) > USAGE_HEAD_COLS)
            fprintf(f, "  %s\n%*s", head, USAGE_HEAD_COLS + 3, "");
        else
            fprintf(f, "  %-*s ", USAGE_HEAD_COLS, head);
        usage_wrapped(f, verbs[i].help, USAGE_HEAD_COLS + 3);
    }
    fprintf(f, "\nOptions (before or after the command; --opt=value or --opt value):\n"
               "  -j, --json                 machine-readable output (every command)\n"
               "  -s, --socket PATH          mcpd's socket (default: $MCPD_SOCKET, else\n"
               "                             $XDG_RUNTIME_DIR/mcpd/mcpd.sock)\n"
               "  -t, --timeout MS           give up after MS milliseconds\n"
               "  -V, --version              print the version\n"
               "  -h, --help                 this text\n"
               "Options of some commands:\n"
               "      --cwd DIR              config, reload, bridge: the project directory\n"
               "  -n, --lines N              logs: the last N lines\n"
               "  -f, --follow               logs: follow new output\n"
               "      --run K                logs: only run K (1: the first since mcpd started)\n"
               "      --server NAME          bridge, trust, untrust: that server only\n"
               "      --host-prefix PREFIX   bridge: the prefix the host puts before tool names\n"
               "      --host claude          bridge: the host is Claude Code (its project's\n"
               "                             .mcp.json servers are left to it)\n"
               "      --profile NAME         bridge, setup: the agent's profile of mcpd.json\n"
               "      --no-browser           login: print the URL, open no browser\n"
               "      --headless             login: mcpd follows the redirect itself\n"
               "Colour only on a terminal, never when NO_COLOR is set; tables fit $COLUMNS.\n"
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
        {"host", required_argument, NULL, 'O'},
        {"profile", required_argument, NULL, 'p'},
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
        case 'O':
            ctl->host = optarg;
            *seenp |= VERB_PREFIX;
            break;
        case 'p':
            ctl->profile = optarg;
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
            printf("mcpctl %s\n", mcpd_version);
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
        if (streq(argv[i], "setup")) {
            safeout_install(false);
            return setup_main(argc - i, argv + i);
        }
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
                : bad & VERB_PREFIX ? "--host-prefix/--host/--profile"
                                    : "-f or --run");
        return EXIT_USAGE;
    }
    /* Text from servers and config files reaches a person's terminal: controls are shown, not
     * sent. The bridge's stdout is the host's JSON-RPC stream, and --json output escapes them. */
    if (verb->run != verb_bridge)
        safeout_install(ctl.json);
    if (!(verb->flags & VERB_OFFLINE) && !ctl_client(&ctl, false))
        return EXIT_NOT_RUNNING;
    r = verb->run(&ctl, argv + optind + 1, n);
    if (ctl.client)
        mcpc_free(ctl.client);
    return r;
}
