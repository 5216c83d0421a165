// SPDX-License-Identifier: MIT
// test-mcpctl: mcpctl as a person and a script use it: --version, status exit codes (0/3/4),
// --json on every verb, options anywhere, --timeout honoured, colour rules, config without mcpd.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/version.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_alpha_echo"
/* The sleep call outlasts --timeout by far, so only mcpctl's own deadline can end it early. */
#define SLEEP_MS   20000
#define TIMEOUT_MS 1000
/*
 * mcpctl must be back within this of --timeout: process start, connect and exit on a machine
 * shared with other test runs; far below SLEEP_MS, so a timeout ignored (or padded by seconds,
 * as it once was) fails.
 */
#define TIMEOUT_SLACK_MS 3500

/* Run a shell command line; its stdout (to free), exit status and duration. */
static char *run(int *statusp, uint64_t *msp, const char *fmt, ...) _printf_(3, 4);
static char *run(int *statusp, uint64_t *msp, const char *fmt, ...)
{
    uint64_t start = now_ms();
    va_list ap;
    char *out;

    va_start(ap, fmt);
    out = h_vshell(statusp, fmt, ap);
    va_end(ap);
    if (msp)
        *msp = now_ms() - start;
    return out;
}

/* mcpctl against h's daemon: "CTL ARGS" with the socket given as an option. */
#define CTL(h, st, args, ...)                                                                      \
    run(st, NULL, "'%s' --socket '%s' " args, getenv("MCPCTL_BINARY"), (h)->socket, ##__VA_ARGS__)

static bool is_json_object(const char *s)
{
    _cleanup_json_ yajl_val v = json_parse(s, NULL);
    return v && YAJL_IS_OBJECT(v);
}

static void write_servers(Harness *h)
{
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        "\"alpha\": {\"command\": \"%s\", \"args\": [\"--name\", \"alpha\", \"--tools\", \"2\"]},"
        "\"broken\": {\"command\": \"%s/no-such-program\"}"
        "}}",
        h_fake(), h->dir);
    h_write_config(h, cfg);
}

/* config's answer without mcpd, with the "daemon": false marker taken out, for comparing. */
static char *offline_config;

/* Before mcpd runs: config discovers in-process; other verbs say mcpd is not reachable (3). */
static void test_without_daemon(Harness *h)
{
    int st;
    _cleanup_free_ char *j = CTL(h, &st, "config --json");
    _cleanup_json_ yajl_val v = json_parse(j, NULL);
    yajl_val servers = json_get_array(v, "servers");

    CHECK_MSG(st == 0 && json_array_len(servers) == 2, "config --json without mcpd: %d %s", st, j);
    CHECK(YAJL_IS_FALSE(json_get(v, "daemon")));
    json_free(json_object_take(v, "daemon"));
    offline_config = json_to_string(v);
    _cleanup_free_ char *t = CTL(h, &st, "config --cwd=%s", h->dir);
    CHECK_MSG(st == 0 && strstr(t, "alpha ") && strstr(t, "broken ") && strstr(t, "not running"),
              "config table without mcpd: %d %s", st, t);
    _cleanup_free_ char *s = CTL(h, &st, "status 2>&1");
    CHECK_MSG(st == 3 && strstr(s, "cannot connect"), "status without mcpd: %d %s", st, s);
}

/*
 * Both programs, status and serverInfo say the version of the build: meson's project version
 * and, from a git checkout (MCPD_SOURCE_ROOT) not at its release tag, the commit.
 */
static void test_version(Harness *h)
{
    const char *root = getenv("MCPD_SOURCE_ROOT");
    int st, git_st;
    _cleanup_free_ char *v = CTL(h, &st, "--version");
    _cleanup_free_ char *want = xasprintf("mcpctl %s\n", mcpd_version);
    CHECK_MSG(st == 0 && streq(v, want), "--version: %d %s", st, v);
    _cleanup_free_ char *d = run(&st, NULL, "'%s' --version", getenv("MCPD_BINARY"));
    _cleanup_free_ char *dwant = xasprintf("mcpd %s\n", mcpd_version);
    CHECK_MSG(st == 0 && streq(d, dwant), "mcpd --version: %d %s", st, d);
    CHECK_MSG(startswith(mcpd_version, MCPD_VERSION), "%s is not of %s", mcpd_version,
              MCPD_VERSION);
    _cleanup_free_ char *s = CTL(h, &st, "status");
    _cleanup_free_ char *swant = xasprintf("mcpd %s, pid", mcpd_version);
    CHECK_MSG(strstr(s, swant), "status does not say \"%s\": %s", swant, s);
    _cleanup_free_ char *j = CTL(h, &st, "--json status");
    _cleanup_json_ yajl_val sj = json_parse(j, NULL);
    CHECK(streq(json_get_string(json_get_object(sj, "daemon"), "version"), mcpd_version));
    /* A build from git names its commit, unless it is the release's own tag, clean. */
    _cleanup_free_ char *head =
        root ? run(&git_st, NULL, "git -C '%s' rev-parse --short=12 HEAD 2>/dev/null", root) : NULL;
    _cleanup_free_ char *tagged = root ? run(&st, NULL,
                                             "git -C '%s' describe --tags --exact-match --match "
                                             "'v%s' --dirty 2>/dev/null",
                                             root, MCPD_VERSION)
                                       : NULL;
    if (head && git_st == 0 && *head && !(st == 0 && !strstr(tagged, "dirty"))) {
        /*
         * The commit it names is HEAD, or one before it: a commit made after the build (the
         * binaries are not rebuilt until the next meson test or ninja) is not the build's.
         */
        const char *g = strstr(mcpd_version, "+git.");
        const char *hash = g ? strstr(g, ".g") : NULL;
        int anc = 1;
        if (hash) {
            _cleanup_free_ char *commit = xstrndup(hash + 2, strspn(hash + 2, "0123456789abcdef"));
            _cleanup_free_ char *o = run(
                &anc, NULL, "git -C '%s' merge-base --is-ancestor '%s' HEAD 2>&1", root, commit);
            (void)o; /* only its cleanup is wanted */
        }
        head[strcspn(head, "\n")] = '\0';
        CHECK_MSG(hash && anc == 0, "built from git at %s, the version says %s", head,
                  mcpd_version);
    }
}

static void test_version_and_usage(Harness *h)
{
    int st;

    test_version(h);
    free(CTL(h, &st, "frobnicate 2>/dev/null"));
    CHECK(st == 2);
    free(CTL(h, &st, "status --bogus 2>/dev/null"));
    CHECK(st == 2);
    free(CTL(h, &st, "tools --cwd / 2>/dev/null"));
    CHECK(st == 2);
    free(CTL(h, &st, "--timeout=soon tools 2>/dev/null"));
    CHECK(st == 2);
    _cleanup_free_ char *help = CTL(h, &st, "help");
    CHECK(st == 0 && strstr(help, "status [SERVER...]"));
}

/* The daemon's discovery and mcpctl's own give the same answer. */
static void test_config_same(Harness *h)
{
    int st;
    _cleanup_free_ char *j = CTL(h, &st, "config --json");
    _cleanup_json_ yajl_val v = json_parse(j, NULL);
    _cleanup_free_ char *online = json_to_string(v);

    CHECK_MSG(st == 0 && streq(online, offline_config),
              "config differs with and without mcpd:\n%s\n%s", online, offline_config);
    free(offline_config);
}

/* The exit codes of `systemctl status`: 0 all connected, 3 one is not, 4 no such server. */
static void test_status_codes(Harness *h)
{
    int st;
    _cleanup_free_ char *a = CTL(h, &st, "status alpha");
    CHECK_MSG(st == 0 && strstr(a, "alpha ") && !strstr(a, "broken "), "status alpha: %d %s", st,
              a);
    _cleanup_free_ char *b = CTL(h, &st, "status broken");
    CHECK_MSG(st == 3 && strstr(b, "broken "), "status broken: %d %s", st, b);
    free(CTL(h, &st, "status"));
    CHECK_MSG(st == 3, "status with a broken server: %d", st);
    _cleanup_free_ char *n = CTL(h, &st, "status alpha nosuch 2>&1");
    CHECK_MSG(st == 4 && strstr(n, "\"nosuch\"") && strstr(n, "alpha "), "status nosuch: %d %s", st,
              n);
    /* --json filters to the names too. */
    _cleanup_free_ char *j = CTL(h, &st, "status alpha --json");
    _cleanup_json_ yajl_val v = json_parse(j, NULL);
    CHECK_MSG(st == 0 && json_array_len(json_get_array(v, "servers")) == 1, "%d %s", st, j);
}

/* Every verb answers --json with one JSON object, wherever the option stands. */
static void test_json_everywhere(Harness *h)
{
    static const char *const verbs[] = {
        "--json status alpha",
        "status --json alpha",
        "tools --json",
        "call --json mcp_alpha_echo '{\"text\":\"hi\"}'",
        "-j reload",
        "logs alpha --json",
        "logs alpha -n 1 --json",
        "--json=x status 2>/dev/null", /* not valid: --json takes no value (checked below) */
        "disconnect alpha --json",
        "connect --json alpha",
        "wait alpha --json --timeout=30000",
        "config --json --cwd /",
    };
    int st;

    for (size_t i = 0; i < N_ELEMENTS(verbs); i++) {
        _cleanup_free_ char *out = CTL(h, &st, "%s", verbs[i]);
        if (strstr(verbs[i], "--json="))
            CHECK_MSG(st == 2, "%s: %d", verbs[i], st);
        else
            CHECK_MSG(st == 0 && is_json_object(out), "mcpctl %s: %d %s", verbs[i], st, out);
    }
    /* People get sentences, not JSON. */
    static const char *const human[] = {"reload", "disconnect alpha", "connect alpha",
                                        "--timeout 30000 wait alpha",
                                        "call " CONTROL " '{\"text\":\"plain\"}'"};
    for (size_t i = 0; i < N_ELEMENTS(human); i++) {
        _cleanup_free_ char *out = CTL(h, &st, "%s", human[i]);
        CHECK_MSG(st == 0 && out[0] && out[0] != '{', "mcpctl %s: %d %s", human[i], st, out);
    }
    _cleanup_free_ char *w = CTL(h, &st, "wait alpha");
    CHECK_MSG(st == 0 && streq(w, "alpha: connected\n"), "wait: %d %s", st, w);
    _cleanup_free_ char *c = CTL(h, &st, "call " CONTROL " '{\"text\":\"plain\"}'");
    CHECK_MSG(streq(c, "plain\n"), "call: %s", c);
}

/* --opt=value and --opt value, before and after the verb, for every option that takes one. */
static void test_option_forms(Harness *h)
{
    const char *ctl = getenv("MCPCTL_BINARY");
    int st;

    free(run(&st, NULL, "'%s' status alpha --socket='%s'", ctl, h->socket));
    CHECK(st == 0);
    free(run(&st, NULL, "'%s' --socket '%s' status alpha", ctl, h->socket));
    CHECK(st == 0);
    _cleanup_free_ char *a = CTL(h, &st, "config --cwd=/ --json");
    _cleanup_free_ char *b = CTL(h, &st, "--cwd / config --json");
    CHECK_MSG(st == 0 && is_json_object(a) && streq(a, b), "config --cwd forms differ:\n%s\n%s", a,
              b);
    /* bridge takes --cwd=DIR like config does; it ends when its host closes stdin. */
    free(CTL(h, &st, "bridge --cwd=%s </dev/null", h->dir));
    CHECK_MSG(st == 0, "bridge --cwd=DIR: %d", st);
    free(CTL(h, &st, "--cwd %s bridge </dev/null", h->dir));
    CHECK_MSG(st == 0, "--cwd DIR bridge: %d", st);
}

/* --timeout is the whole wait: a 20 s tool call is given up after about a second. */
static void test_timeout(Harness *h)
{
    uint64_t ms = 0;
    int st;
    _cleanup_free_ char *out =
        run(&st, &ms, "'%s' --socket '%s' call mcp_alpha_sleep '{\"ms\":%d}' --timeout=%d 2>&1",
            getenv("MCPCTL_BINARY"), h->socket, SLEEP_MS, TIMEOUT_MS);

    CHECK_MSG(st == 1 && ms >= TIMEOUT_MS && ms < TIMEOUT_MS + TIMEOUT_SLACK_MS,
              "call with --timeout %d: exit %d after %llu ms: %s", TIMEOUT_MS, st,
              (unsigned long long)ms, out);
    CHECK_MSG(strstr(out, "ms"), "the timeout is named: %s", out);
}

/* Colour on a terminal only, and never with NO_COLOR (script(1) gives mcpctl a pty). */
static void test_colour(Harness *h)
{
    const char *ctl = getenv("MCPCTL_BINARY");
    int st;

    _cleanup_free_ char *pipe = CTL(h, &st, "status alpha");
    CHECK(!strchr(pipe, '\033'));
    if (system("command -v script >/dev/null") != 0) {
        fprintf(stderr, "script(1) missing: the terminal half of the colour check is skipped\n");
        return;
    }
    _cleanup_free_ char *tty =
        run(&st, NULL, "script -qec \"'%s' --socket '%s' status alpha\" /dev/null", ctl, h->socket);
    CHECK_MSG(strstr(tty, "\033[32m"), "no colour on a terminal: %s", tty);
    _cleanup_free_ char *nc =
        run(&st, NULL, "NO_COLOR=1 script -qec \"'%s' --socket '%s' status alpha\" /dev/null", ctl,
            h->socket);
    CHECK_MSG(strstr(nc, "alpha") && !strchr(nc, '\033'), "colour despite NO_COLOR: %s", nc);
}

/*
 * A server's text with terminal controls in it (here the echo of a title-setting sequence, a
 * bell and a screen clear): mcpctl shows them as ^[ ^G, never sends them to the terminal.
 */
static void test_controls_shown(Harness *h)
{
    int st;
    _cleanup_free_ char *out =
        CTL(h, &st, "call %s '{\"text\": \"a\\u001b]0;pwned\\u0007b\\u001b[2Jc\\r\"}'", CONTROL);

    CHECK_MSG(st == 0 && strstr(out, "a^[]0;pwned^Gb^[[2Jc^M"), "call printed: %s", out);
    CHECK_MSG(!strchr(out, '\033') && !strchr(out, '\007') && !strchr(out, '\r'),
              "a control character reached the terminal: %s", out);
}

/* Display columns of s[0..n): the test's own count (its kana and emoji take 2, the rest 1). */
static size_t cols_of(const char *s, size_t n)
{
    size_t cols = 0;

    for (size_t i = 0; i < n;) {
        unsigned char b = (unsigned char)s[i];
        size_t len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
        cols += len == 4 || (len == 3 && b >= 0xe3 && b <= 0xe9) ? 2 : 1;
        i += len;
    }
    return cols;
}

/* The display column of needle in line (-1: not there). */
static long col_of(const char *line, const char *needle)
{
    const char *p = strstr(line, needle);
    return p ? (long)cols_of(line, (size_t)(p - line)) : -1;
}

/* Every line of the table at out (to its end or an empty line) fits in cols. */
static void check_fits(const char *out, size_t cols, const char *what)
{
    CHECK_MSG(out, "%s: no table", what);
    for (const char *l = out ? out : ""; *l && *l != '\n';) {
        size_t n = strcspn(l, "\n");
        CHECK_MSG(cols_of(l, n) <= cols, "%s: a line wider than %zu: %.*s", what, cols, (int)n, l);
        l += n + (l[n] == '\n');
    }
}

/*
 * Tables align by what the terminal shows: agent names with kana, an emoji, terminal controls
 * (shown as ^[ and ^J, two columns each) and one of 100 letters (cut with "…") leave the
 * WORKSPACE column where the header has it; with COLUMNS set no row of a table is wider
 * (the name column narrows to fit, cells are cut with "…").
 */
static void test_tables(Harness *h)
{
    char long_name[101];
    memset(long_name, 'n', 100);
    long_name[100] = '\0';
    const char *names[] = {"エージェント", "bad\033[2Jname\n", "emoji😀", long_name};
    mcpc_client *agents[N_ELEMENTS(names)];
    int st;

    for (size_t i = 0; i < N_ELEMENTS(names); i++)
        agents[i] = h_client(h, names[i]);
    /*
     * 104: the servers table's fixed columns (76 with both ACTIVE and CALLS), the narrowest name
     * column (CTL_NAME_MIN) and the shortest tail (CTL_TAIL_MIN).
     */
    _cleanup_free_ char *out =
        run(&st, NULL, "COLUMNS=104 '%s' --socket '%s' status", getenv("MCPCTL_BINARY"), h->socket);
    const char *head = strstr(out, "\nAGENT ");
    CHECK_MSG(head, "no agents table: %s", out);
    head = head ? head + 1 : "\n";
    long ws = col_of(head, "WORKSPACE");
    int rows = 0;
    for (const char *l = strchr(head, '\n') + 1; *l && *l != '\n'; rows++) {
        _cleanup_free_ char *line = xstrndup(l, strcspn(l, "\n"));
        CHECK_MSG(col_of(line, "(user)") == ws, "WORKSPACE at column %ld, this row's at %ld: %s",
                  ws, col_of(line, "(user)"), line);
        l += strlen(line) + (l[strlen(line)] == '\n');
    }
    CHECK_MSG(rows >= (int)N_ELEMENTS(names), "%d agent rows: %s", rows, out);
    CHECK_MSG(strstr(out, "bad^[[2Jname^J ") && strstr(out, "nnnn\xe2\x80\xa6 ") &&
                  strstr(out, "エージェント ") && !strstr(out, long_name),
              "names as shown: %s", out);
    check_fits(strstr(out, "SERVER "), 104, "status's servers");
    check_fits(head, 104, "status's agents");
    _cleanup_free_ char *tools =
        run(&st, NULL, "COLUMNS=40 '%s' --socket '%s' tools", getenv("MCPCTL_BINARY"), h->socket);
    CHECK_MSG(st == 0 && strstr(tools, "\xe2\x80\xa6\n"), "tools not cut at 40: %s", tools);
    check_fits(tools, 40, "tools");
    _cleanup_free_ char *cfg = run(&st, NULL, "COLUMNS=70 '%s' --socket '%s' config --cwd '%s'",
                                   getenv("MCPCTL_BINARY"), h->socket, h->dir);
    check_fits(strstr(cfg, "SERVER "), 70, "config");
    for (size_t i = 0; i < N_ELEMENTS(names); i++)
        mcpc_free(agents[i]);
}

/* The cell of line under header (right-aligned: it ends where the header's name ends), to free. */
static char *cell_under(const char *head, const char *line, const char *name)
{
    long end = col_of(head, name);
    size_t n = strcspn(line, "\n");

    if (end < 0 || (size_t)end + strlen(name) > n)
        return xstrdup("?");
    end += (long)strlen(name);
    long start = end;
    while (start > 0 && line[start - 1] != ' ')
        start--;
    return xstrndup(line + start, (size_t)(end - start));
}

/* The line of a table (from its header) whose first cell is first, to free; NULL if none. */
static char *row_of(const char *head, const char *first)
{
    for (const char *l = head; *l && *l != '\n';) {
        size_t n = strcspn(l, "\n");
        if (n > strlen(first) && !strncmp(l, first, strlen(first)) && l[strlen(first)] == ' ')
            return xstrndup(l, n);
        l += n + (l[n] == '\n');
    }
    return NULL;
}

/* The ACTIVE and CALLS cells of alpha's row and of the caller's, in status text out. */
static void check_calls_cells(const char *out, const char *shead, const char *ahead)
{
    _cleanup_free_ char *srow = row_of(shead, "alpha");
    CHECK_MSG(srow, "no alpha row: %s", out);
    _cleanup_free_ char *s_active = srow ? cell_under(shead, srow, "ACTIVE") : NULL,
                        *s_calls = srow ? cell_under(shead, srow, "CALLS") : NULL;
    CHECK_MSG(s_active && streq(s_active, "0") && s_calls && atoi(s_calls) >= 3,
              "alpha: ACTIVE %s CALLS %s: %s", s_active, s_calls, out);
    /* The caller's row: its name is the third cell; find it by scanning the rows. */
    bool seen = false;
    for (const char *l = strchr(ahead, '\n'); l && l[1] && l[1] != '\n'; l = strchr(l + 1, '\n')) {
        _cleanup_free_ char *line = xstrndup(l + 1, strcspn(l + 1, "\n"));
        if (!strstr(line, " caller "))
            continue;
        _cleanup_free_ char *active = cell_under(ahead, line, "ACTIVE"),
                            *calls = cell_under(ahead, line, "CALLS");
        CHECK_MSG(streq(active, "0") && streq(calls, "3"), "caller: ACTIVE %s CALLS %s: %s", active,
                  calls, out);
        seen = true;
    }
    CHECK_MSG(seen, "no caller row: %s", out);
}

/*
 * status shows calls in flight (ACTIVE) and calls made (CALLS) for servers and agents, so it
 * does not read 0 after calls ran.
 */
static void test_calls_columns(Harness *h)
{
    mcpc_client *a = h_client(h, "caller");
    int st;

    for (int i = 0; i < 3; i++) {
        char *res = NULL;
        CHECK(mcpc_call_tool(a, CONTROL, "{\"text\":\"x\"}", &res, NULL) == 0);
        free(res);
    }
    _cleanup_free_ char *out = CTL(h, &st, "status");
    const char *shead = out ? strstr(out, "SERVER ") : NULL;
    const char *ahead = out ? strstr(out, "\nAGENT ") : NULL;
    CHECK_MSG(shead && ahead, "status: %s",
              out ? out : "(none)"); /* exit 3: "broken" is not connected */
    if (shead && ahead)
        check_calls_cells(out, shead, ahead + 1);
    mcpc_free(a);
}

/* The command a man page entry (".TP" then ".B name", ".BR name ...", ".BI name ...") is for. */
/* s with each "-" written as roff's "\-" (newly allocated). */
static char *roff_escape(const char *s)
{
    StrBuf sb = STRBUF_INIT;

    for (; *s; s++)
        strbuf_puts(&sb, *s == '-' ? "\\-" : (char[]){*s, '\0'});
    return strbuf_detach(&sb, NULL);
}

static char *man_entry_name(const char *line)
{
    if (!startswith(line, ".B"))
        return NULL;
    line += strcspn(line, " ");
    line += strspn(line, " ");
    /* As printed: roff's "\-" is a hyphen (http\-token). */
    char *name = xstrndup(line, strcspn(line, " \n")), *w = name;
    for (const char *r = name; *r; r++)
        if (!(r[0] == '\\' && r[1] == '-'))
            *w++ = *r;
    *w = '\0';
    return name;
}

/*
 * mcpctl --help and mcpctl(1) describe the same commands and options: every command of the
 * one is an entry of the other's COMMANDS, both ways, every --option of --help is in the man
 * page, and no line of --help is wider than a terminal's 80 columns.
 */
static void test_help_matches_man(Harness *h)
{
    const char *root = getenv("MCPD_SOURCE_ROOT");
    int st;
    _cleanup_free_ char *help = CTL(h, &st, "--help");
    _cleanup_free_ char *man_path = root ? xasprintf("%s/docs/man/mcpctl.1", root) : NULL;
    _cleanup_free_ char *man = man_path ? h_read_file(man_path) : NULL;

    if (!man) {
        fprintf(stderr, "no MCPD_SOURCE_ROOT: --help is not compared with mcpctl(1)\n");
        return;
    }
    check_fits(help, 80, "--help");
    const char *cmds = strstr(help, "\nCommands:\n"), *end = strstr(help, "\nOptions");
    CHECK(cmds && end);
    for (const char *l = cmds ? cmds + 11 : ""; cmds && l < end; l += strcspn(l, "\n") + 1) {
        if (!startswith(l, "  ") || l[2] < 'a' || l[2] > 'z')
            continue;
        _cleanup_free_ char *verb = xstrndup(l + 2, strcspn(l + 2, " \n"));
        /* roff writes a command's hyphen as "\-" (http\-token). */
        _cleanup_free_ char *roff = roff_escape(verb);
        _cleanup_free_ char *b = xasprintf("\n.B %s\n", roff), *br = xasprintf("\n.BR %s ", roff),
                            *bi = xasprintf("\n.BI %s ", roff);
        CHECK_MSG(strstr(man, b) || strstr(man, br) || strstr(man, bi),
                  "mcpctl(1) has no entry for the command \"%s\" of --help", verb);
    }
    const char *sec = strstr(man, "\n.SH COMMANDS\n"), *sec_end = strstr(man, "\n.SH OPTIONS\n");
    CHECK(sec && sec_end);
    for (const char *l = sec ? sec + 1 : ""; sec && l < sec_end; l += strcspn(l, "\n") + 1) {
        if (!startswith(l, ".TP\n"))
            continue;
        _cleanup_free_ char *verb = man_entry_name(l + 4);
        _cleanup_free_ char *in_help = verb ? xasprintf("\n  %s", verb) : NULL;
        CHECK_MSG(verb && strstr(help, in_help), "--help lacks the command \"%s\" of mcpctl(1)",
                  verb ? verb : l + 4);
    }
    for (const char *o = help; (o = strstr(o, " --")); o += 3) {
        StrBuf want = STRBUF_INIT;
        for (const char *c = o + 1; *c == '-' || (*c >= 'a' && *c <= 'z'); c++)
            strbuf_puts(&want, *c == '-' ? "\\-" : (char[]){*c, '\0'});
        CHECK_MSG(strstr(man, strbuf_str(&want)), "mcpctl(1) does not document %s",
                  strbuf_str(&want));
        strbuf_deinit(&want);
    }
}

int main(void)
{
    Harness h;

    h_setup(&h, "mcpctl");
    write_servers(&h);
    test_without_daemon(&h);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "control");
    h_settle(&h, c, "alpha", NULL);
    test_version_and_usage(&h);
    test_config_same(&h);
    test_status_codes(&h);
    test_json_everywhere(&h);
    CHECK(h_wait_state(c, "alpha", "connected", H_WAIT_MS));
    test_option_forms(&h);
    test_timeout(&h);
    test_colour(&h);
    test_controls_shown(&h);
    test_tables(&h);
    test_calls_columns(&h);
    test_help_matches_man(&h);
    CHECK(h_wait_state(c, "alpha", "connected", H_WAIT_MS));
    h_check_healthy(&h, "mcpctl verbs, timeouts and bridges", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("mcpctl");
}
