// SPDX-License-Identifier: MIT
// test-hostile-files: FIFOs, devices and links where config files belong, agents that park
// partial lines, and secrets that must not come back out (status, logs, discover).

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"

/* The partial-line scenario: 20 agents, each parking a 3 MiB line (60 MiB in all). */
#define N_PARKERS    20
#define PARKED_BYTES (3u * 1024u * 1024u)
#define WRITE_CHUNK  65536
/*
 * partialLineTimeoutMs for that scenario: long enough that all 20 lines are written (60 MiB,
 * well under a second on an idle box) before the first is closed even on a loaded one.
 */
#define PARTIAL_LIMIT 10000
/* The total bound with maxMessageBytes 1 MiB is 8 MiB: 12 lines of 900 KiB go over it. */
#define N_TOTAL_PEERS 12
#define TOTAL_BYTES   (900u * 1024u)
/* Secrets planted where only redaction or silence keeps them from showing. */
#define STDERR_SECRET "stderr-secret-5150"
#define URL_SECRET    "url-pw-8086"
#define ARG_SECRET    "arg-pw-6502"

static void make_fifo(const char *path)
{
    _cleanup_free_ char *dir = paths_dirname(path);
    CHECK_MSG(paths_mkdir_p(dir, 0700) == 0, "mkdir %s", dir);
    (void)unlink(path); /* the harness's own mcpd.json ({"start": "eager"}) makes way */
    CHECK_MSG(mkfifo(path, 0600) == 0, "mkfifo %s: %s", path, strerror(errno));
}

static void make_link(const char *target, const char *path)
{
    _cleanup_free_ char *dir = paths_dirname(path);
    CHECK_MSG(paths_mkdir_p(dir, 0700) == 0, "mkdir %s", dir);
    CHECK_MSG(symlink(target, path) == 0, "symlink %s: %s", path, strerror(errno));
}

static void write_text(const char *path, const char *text)
{
    _cleanup_free_ char *dir = paths_dirname(path);
    FILE *f;

    CHECK(paths_mkdir_p(dir, 0700) == 0);
    f = fopen(path, "w");
    CHECK_MSG(f != NULL, "open %s: %s", path, strerror(errno));
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The problem filed under path, from a {problems: [...]} result, or NULL (borrowed). */
static const char *problem_for(yajl_val r, const char *path)
{
    yajl_val ps = json_get_array(r, "problems");

    for (size_t i = 0; i < json_array_len(ps); i++)
        if (streq(json_get_string(json_array_at(ps, i), "path"), path))
            return json_get_string(json_array_at(ps, i), "error");
    return NULL;
}

static bool has_server(yajl_val r, const char *name)
{
    yajl_val servers = json_get_array(r, "servers");

    for (size_t i = 0; i < json_array_len(servers); i++)
        if (streq(json_get_string(json_array_at(servers, i), "name"), name))
            return true;
    return false;
}

static void expect_problem(yajl_val r, const char *path, const char *want)
{
    const char *err = problem_for(r, path);
    CHECK_MSG(err && strstr(err, want), "%s: want \"%s\" in %s", path, want, err ? err : "(none)");
}

static yajl_val discover(mcpc_client *c, const char *root)
{
    _cleanup_free_ char *params = root ? xasprintf("{\"cwd\":\"%s\"}", root) : xstrdup("{}");
    _cleanup_free_ char *out = NULL;

    CHECK(mcpc_request(c, "mcpd/discover", params, &out) == 0);
    return out ? json_parse(out, NULL) : NULL;
}

/*
 * FIFOs and devices where every kind of config file belongs, user and project level: none
 * blocks discovery or the daemon, each is a problem naming its path, a user-level link to a
 * real file is followed and a project-level link is not.
 */
static void test_hostile_files(void)
{
    Harness h;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *dotfile =
        xasprintf("{\"mcpServers\": {\"dotfile\": {\"command\": \"%s\"}}}", h_fake());

    h_setup(&h, "hostile-files");
    h_write_config(&h, cfg);
    _cleanup_free_ char *home = paths_join(h.dir, "home");
    _cleanup_free_ char *root = paths_join(h.dir, "project");
    _cleanup_free_ char *claude_json = paths_join(home, ".claude.json");
    _cleanup_free_ char *codex = paths_join(home, ".codex/config.toml");
    _cleanup_free_ char *cursor = paths_join(home, ".cursor/mcp.json");
    _cleanup_free_ char *gemini = paths_join(home, ".gemini/settings.json");
    /* A file mcpd reads (Claude Code's ~/.claude/mcp.json is not one: Claude never read it). */
    _cleanup_free_ char *claude_mcp = paths_join(home, ".codeium/windsurf/mcp_config.json");
    _cleanup_free_ char *dotfiles = paths_join(home, "dotfiles/claude-mcp.json");
    _cleanup_free_ char *mcp_json = paths_join(root, ".mcp.json");
    _cleanup_free_ char *p_cursor = paths_join(root, ".cursor/mcp.json");
    _cleanup_free_ char *p_codex = paths_join(root, ".codex/config.toml");
    _cleanup_free_ char *p_vscode = paths_join(root, ".vscode/mcp.json");
    _cleanup_free_ char *leak = paths_join(home, "private.json");

    make_fifo(h.settings);
    make_fifo(claude_json);
    make_fifo(codex);
    make_link("/dev/zero", cursor);          /* a device, through a dotfile link */
    CHECK(paths_mkdir_p(gemini, 0700) == 0); /* a directory */
    write_text(dotfiles, dotfile);           /* a dotfile manager's link: followed */
    make_link(dotfiles, claude_mcp);
    make_fifo(mcp_json); /* the case */
    make_fifo(p_codex);
    make_link("/dev/zero", p_vscode);
    write_text(leak, "{\"mcpServers\": {\"leaked\": {\"command\": \"/bin/true\"}}}");
    make_link(leak, p_cursor); /* a repository pointing at a user file */

    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "hostile-files");
    h_settle(&h, c, "steady", NULL);

    /* The user workspace: every hostile file a problem naming it; the linked dotfile read. */
    yajl_val st = h_status(c);
    expect_problem(st, h.settings, "FIFO");
    expect_problem(st, claude_json, "FIFO");
    expect_problem(st, codex, "FIFO");
    expect_problem(st, cursor, "character device");
    expect_problem(st, gemini, "directory");
    CHECK_MSG(h_server(st, "dotfile") != NULL, "the server behind a user-level link is missing");
    json_free(st);

    /* The project: its FIFO and device refused, its link to a user file not followed. */
    yajl_val d = discover(c, root);
    expect_problem(d, mcp_json, "FIFO (named pipe), not a regular file");
    expect_problem(d, p_codex, "FIFO");
    expect_problem(d, p_vscode, "symbolic link");
    expect_problem(d, p_cursor, "symbolic link");
    CHECK(!has_server(d, "leaked"));
    CHECK(has_server(d, "dotfile") && has_server(d, "steady"));
    json_free(d);

    /* An agent in that project is served (its discovery did not block on the FIFO). */
    mcpc_options o = {
        .socket_path = h.socket, .client_name = "in-project", .timeout_ms = 60000, .cwd = root};
    mcpc_client *agent = mcpc_new(&o);
    CHECK_MSG(mcpc_connect(agent) == 0, "connect with cwd %s: %s", root, mcpc_errmsg(agent));
    int is_error = -1;
    _cleanup_free_ char *text =
        h_call_text(agent, CONTROL, "{\"text\":\"from the project\"}", &is_error);
    CHECK_MSG(is_error == 0 && streq(text, "from the project"), "got %s", text);
    mcpc_free(agent);

    /* Nothing opened any FIFO for good: the daemon holds no fd on them (h_check_healthy). */
    h_check_healthy(&h, "FIFOs, devices and links as config files", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
}

static void send_partial(int fd, size_t bytes)
{
    static char chunk[WRITE_CHUNK];
    static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":"
                               "{\"pad\":\"";

    memset(chunk, 'a', sizeof(chunk));
    CHECK(h_raw_write(fd, head, sizeof(head) - 1));
    for (size_t sent = 0; sent < bytes;) {
        size_t n = MIN(sizeof(chunk), bytes - sent);
        if (!h_raw_write(fd, chunk, n)) {
            CHECK_MSG(false, "mcpd stopped reading after %zu bytes", sent);
            return;
        }
        sent += n;
    }
}

/* ASan keeps freed memory in quarantine to catch use after free: off, so RSS can fall. */
static void asan_release_freed(void)
{
    const char *was = getenv("ASAN_OPTIONS");
    _cleanup_free_ char *opts =
        xasprintf("%s%squarantine_size_mb=0", was ? was : "", was && was[0] ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
}

/*
 * 20 agents each park 3 MiB of a line with no newline: mcpd holds it (RSS shows it), serves a
 * control agent meanwhile, closes each after partialLineTimeoutMs with a reason, and its RSS
 * falls back.
 */
static void test_partial_lines(void)
{
    Harness h;
    int fds[N_PARKERS];
    uint64_t started[N_PARKERS];
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *settings = xasprintf("{\"partialLineTimeoutMs\": %d}", PARTIAL_LIMIT);

    asan_release_freed();
    h_setup(&h, "hostile-partial");
    h_write_config(&h, cfg);
    h_write_settings(&h, settings);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "partial");
    h_settle(&h, c, "steady", NULL);

    long rss0 = h_rss_kib(h.pid);
    for (int i = 0; i < N_PARKERS; i++) {
        fds[i] = h_raw_connect(&h);
        CHECK(fds[i] >= 0);
        started[i] = now_ms();
        send_partial(fds[i], PARKED_BYTES);
    }
    long rss1 = h_rss_kib(h.pid);
    long parked_kib = (long)(N_PARKERS * (PARKED_BYTES / 1024));
    CHECK_MSG(rss1 - rss0 > parked_kib / 2, "RSS %ld -> %ld KiB: the parked lines are not held",
              rss0, rss1);

    int is_error = -1;
    _cleanup_free_ char *text = h_call_text(c, CONTROL, "{\"text\":\"beside\"}", &is_error);
    CHECK_MSG(is_error == 0 && streq(text, "beside"), "control agent got %s", text);

    for (int i = 0; i < N_PARKERS; i++) {
        _cleanup_free_ char *out = h_raw_read(fds[i], 2 * H_WAIT_MS);
        uint64_t waited = now_ms() - started[i];
        CHECK_MSG(strstr(out, "partialLineTimeoutMs") != NULL, "parker %d got \"%.200s\"", i, out);
        /* The loop times timers from the start of its iteration: a little slack, not more. */
        CHECK_MSG(waited >= PARTIAL_LIMIT * 9 / 10,
                  "parker %d closed after %llu ms, before the limit", i,
                  (unsigned long long)waited);
        close(fds[i]);
    }
    long rss2 = rss1;
    for (int waited = 0; waited < H_WAIT_MS; waited += 200) {
        rss2 = h_rss_kib(h.pid);
        if (rss2 - rss0 < (rss1 - rss0) / 3)
            break;
        h_sleep_ms(200);
    }
    CHECK_MSG(rss2 - rss0 < (rss1 - rss0) / 3, "RSS stayed at %ld KiB (from %ld, peak %ld)", rss2,
              rss0, rss1);
    printf("  partial lines: RSS %ld KiB, %ld with %d x %u KiB parked, %ld after they closed\n",
           rss0, rss1, N_PARKERS, PARKED_BYTES / 1024, rss2);
    h_check_healthy(&h, "20 agents park multi-MiB partial lines", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    _cleanup_free_ char *log = h_read_file(h.log);
    CHECK_MSG(log && strstr(log, "partialLineTimeoutMs"), "the log does not say why");
    h_teardown(&h);
}

/*
 * Over the total for unfinished lines (8 x maxMessageBytes), the biggest holders are closed
 * first (the oldest among equals) and the newest still work: finishing its line gets an answer.
 * An honest client whose small line is older than all of them is never the one dropped.
 */
static void test_partial_total(void)
{
    Harness h;
    int fds[N_TOTAL_PEERS];
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());

    h_setup(&h, "hostile-total");
    h_write_config(&h, cfg);
    h_write_settings(&h, "{\"maxMessageBytes\": 1048576}");
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "total");
    h_settle(&h, c, "steady", NULL);

    int honest = h_raw_connect(&h);
    CHECK(honest >= 0);
    send_partial(honest, 100);
    for (int i = 0; i < N_TOTAL_PEERS; i++) {
        fds[i] = h_raw_connect(&h);
        CHECK(fds[i] >= 0);
        send_partial(fds[i], TOTAL_BYTES);
    }
    _cleanup_free_ char *first = h_raw_read(fds[0], H_WAIT_MS);
    CHECK_MSG(strstr(first, "unfinished messages of all clients"), "oldest got \"%.300s\"", first);
    int last = N_TOTAL_PEERS - 1;
    CHECK(h_raw_write(fds[last], "\"}}\n", 4));
    shutdown(fds[last], SHUT_WR);
    _cleanup_free_ char *answer = h_raw_read(fds[last], H_WAIT_MS);
    CHECK_MSG(strstr(answer, "\"id\":1,\"result\":{}"), "newest got \"%.300s\"", answer);
    CHECK(h_raw_write(honest, "\"}}\n", 4));
    shutdown(honest, SHUT_WR);
    _cleanup_free_ char *honest_answer = h_raw_read(honest, H_WAIT_MS);
    CHECK_MSG(strstr(honest_answer, "\"id\":1,\"result\":{}"), "the small old line got \"%.300s\"",
              honest_answer);
    close(honest);
    for (int i = 0; i < N_TOTAL_PEERS; i++)
        close(fds[i]);
    h_check_healthy(&h, "unfinished lines over the total", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
}

/* Run mcpctl against h's daemon; its stdout (to free). */
static char *mcpctl(Harness *h, const char *args)
{
    _cleanup_free_ char *cmd =
        xasprintf("'%s' --socket '%s' %s", getenv("MCPCTL_BINARY"), h->socket, args);
    FILE *f = popen(cmd, "r");
    StrBuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;

    if (!f)
        abort();
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(&sb, buf, n);
    pclose(f);
    return strbuf_detach(&sb, NULL);
}

/*
 * A failing !command whose stderr holds a secret, and passwords in URLs (a server's url, an
 * argument): none shows in status, discover, mcpctl config, logs or the daemon's log.
 */
static void test_secrets(void)
{
    Harness h;

    h_setup(&h, "hostile-secrets");
    _cleanup_free_ char *secret_file = paths_join(h.dir, "home/vault-error");
    write_text(secret_file, "vault sealed, token " STDERR_SECRET "\n");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"steady\": {\"command\": \"%s\"},"
        " \"vault\": {\"command\": \"%s\", \"env\": {\"TOKEN\": \"!cat %s >&2; exit 7\"}},"
        " \"remote\": {\"type\": \"http\", \"url\": \"http://alice:" URL_SECRET
        "@127.0.0.1:9/mcp\"},"
        " \"proxy\": {\"command\": \"%s\", \"enabled\": false,"
        "  \"args\": [\"--url\", \"https://bob:" ARG_SECRET "@example.invalid/sse\"]}}}",
        h_fake(), h_fake(), secret_file, h_fake());
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "secrets");
    h_settle(&h, c, "steady", NULL);
    CHECK(h_wait_state(c, "vault", "failed", H_WAIT_MS));

    yajl_val st = h_status(c);
    const char *err = json_get_string(h_server(st, "vault"), "lastError");
    CHECK_MSG(err && strstr(err, "exited with status 7") && strstr(err, "run the command yourself"),
              "lastError: %s", err ? err : "(none)");
    json_free(st);

    _cleanup_free_ char *status = mcpctl(&h, "--json status");
    _cleanup_free_ char *status_text = mcpctl(&h, "status");
    _cleanup_free_ char *config = mcpctl(&h, "config");
    _cleanup_free_ char *config_json = mcpctl(&h, "config --json");
    _cleanup_free_ char *logs_vault = mcpctl(&h, "logs vault");
    _cleanup_free_ char *logs_remote = mcpctl(&h, "logs remote");
    const char *outputs[] = {status, status_text, config, config_json, logs_vault, logs_remote};
    const char *names[] = {"status --json", "status",     "config",
                           "config --json", "logs vault", "logs remote"};
    const char *secrets[] = {STDERR_SECRET, URL_SECRET, ARG_SECRET};
    for (size_t i = 0; i < N_ELEMENTS(outputs); i++)
        for (size_t k = 0; k < N_ELEMENTS(secrets); k++)
            CHECK_MSG(!strstr(outputs[i], secrets[k]), "mcpctl %s shows %s", names[i], secrets[k]);
    CHECK_MSG(strstr(config_json, "http://alice:***@127.0.0.1:9/mcp"), "url not shown redacted");
    CHECK_MSG(strstr(config_json, "https://bob:***@example.invalid/sse"), "arg not shown redacted");

    yajl_val d = discover(c, NULL);
    _cleanup_free_ char *dtext = json_to_string(d);
    for (size_t k = 0; k < N_ELEMENTS(secrets); k++)
        CHECK_MSG(!strstr(dtext, secrets[k]), "mcpd/discover shows %s", secrets[k]);
    json_free(d);

    h_check_healthy(&h, "secrets in stderr and URLs", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    _cleanup_free_ char *log = h_read_file(h.log);
    for (size_t k = 0; k < N_ELEMENTS(secrets); k++)
        CHECK_MSG(log && !strstr(log, secrets[k]), "the daemon log shows %s", secrets[k]);
    h_teardown(&h);
}

int main(void)
{
    test_hostile_files();
    test_secrets();
    test_partial_total();
    test_partial_lines();
    return h_finish("test-hostile-files");
}
