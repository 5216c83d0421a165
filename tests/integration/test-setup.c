// SPDX-License-Identifier: MIT
// test-setup: `mcpctl setup --all` over a home of real-shaped agent files, its undo, and mcpd
// never starting (or waiting for) its own bridge.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/toml.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/*
 * The issue's bound for the first tools/list of an agent whose config holds mcpd's own bridge:
 * waiting for the bridge would take the 30 s startup timeout, so this is far from both, and
 * wide enough for a loaded two-core box running ASan builds.
 */
#define SELF_LIST_BOUND_MS 5000
/* The bound the issue states; the figure is printed, and only the one above is checked. */
#define SELF_LIST_GOAL_MS 1000

/*
 * How long a refused self-connection may keep being retried: the backoff steps before the
 * breaker trips add up to about 15 s; twice that leaves room for a loaded machine.
 */
#define SNEAKY_GIVE_UP_MS 45000

static const char *fixtures; /* argv[1]: tests/fixtures/setup */

/* The agents' user-level files, as the fixture home holds them. */
static const char *const agent_files[] = {
    ".claude.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".cursor/mcp.json",
    ".codeium/windsurf/mcp_config.json",
    "../config/Claude/claude_desktop_config.json", /* under XDG_CONFIG_HOME, beside home */
    ".cline/data/settings/cline_mcp_settings.json",
    "../config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
    ".kiro/settings/mcp.json",
    ".gemini/antigravity/mcp_config.json",
    ".gemini/config/mcp_config.json",
    NULL,
};
#define N_AGENT_FILES 16 /* room for agent_files */
_Static_assert(sizeof(agent_files) / sizeof(*agent_files) <= N_AGENT_FILES, "N_AGENT_FILES");
/*
 * The servers those files define, one each but Claude Code's three (user and local scope in
 * ~/.claude.json, and prj in the project's .mcp.json, which the user approved).
 */
static const char *const servers[] = {"cla", "cll", "cdx", "gem", "cur", "wsf", "prj",
                                      "cdk", "cln", "roo", "kro", "agv", "agy", NULL};

static char *replace_all(const char *s, const char *from, const char *to)
{
    StrBuf sb = STRBUF_INIT;
    const char *p;

    while ((p = strstr(s, from))) {
        strbuf_append(&sb, s, (size_t)(p - s));
        strbuf_puts(&sb, to);
        s = p + strlen(from);
    }
    strbuf_puts(&sb, s);
    return strbuf_detach(&sb, NULL);
}

static void write_file(const char *path, const char *text)
{
    _cleanup_free_ char *dir = paths_dirname(path);
    FILE *f;

    paths_mkdir_p(dir, 0700);
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* Copy each fixture into home with @FAKE@ and @PROJECT@ filled in. */
static void install_fixtures(const char *home, const char *project)
{
    for (const char *const *rel = agent_files; *rel; rel++) {
        _cleanup_free_ char *src = xasprintf("%s/home/%s.in", fixtures, *rel);
        _cleanup_free_ char *dst = paths_join(home, *rel);
        _cleanup_free_ char *text = h_read_file(src);
        _cleanup_free_ char *a = text ? replace_all(text, "@FAKE@", h_fake()) : NULL;
        _cleanup_free_ char *b = a ? replace_all(a, "@PROJECT@", project) : NULL;
        if (!b) {
            fprintf(stderr, "missing fixture %s\n", src);
            exit(1);
        }
        write_file(dst, b);
    }
    _cleanup_free_ char *src = xasprintf("%s/project/.mcp.json.in", fixtures);
    _cleanup_free_ char *dst = paths_join(project, ".mcp.json");
    _cleanup_free_ char *text = h_read_file(src);
    _cleanup_free_ char *filled = text ? replace_all(text, "@FAKE@", h_fake()) : NULL;
    if (!filled) {
        fprintf(stderr, "missing fixture %s\n", src);
        exit(1);
    }
    write_file(dst, filled);
}

static bool listed(yajl_val arr, const char *name)
{
    for (size_t i = 0; i < json_array_len(arr); i++)
        if (YAJL_IS_STRING(json_array_at(arr, i)) && streq(json_array_at(arr, i)->u.string, name))
            return true;
    return false;
}

/* Claude Code starts the project's .mcp.json servers it was told to (approved, not disabled). */
static void add_approved_project_servers(yajl_val proj, const char *project, yajl_val out)
{
    _cleanup_free_ char *path = paths_join(project, ".mcp.json"), *text = h_read_file(path);
    _cleanup_json_ yajl_val v = text ? json_parse(text, NULL) : NULL;
    yajl_val entries = json_get(v, "mcpServers");

    for (size_t i = 0; YAJL_IS_OBJECT(entries) && i < entries->u.object.len; i++) {
        const char *name = entries->u.object.keys[i];
        if (listed(json_get(proj, "disabledMcpjsonServers"), name) ||
            !listed(json_get(proj, "enabledMcpjsonServers"), name))
            continue;
        json_object_set(out, name, json_copy(entries->u.object.values[i]));
    }
}

/*
 * What an agent starts from its file: the stdio entries (with a command) at user level, and
 * for Claude Code those of the project it runs in.
 */
static yajl_val agent_stdio_entries(const char *home, const char *rel, const char *project)
{
    _cleanup_free_ char *path = paths_join(home, rel), *text = h_read_file(path);
    _cleanup_json_ yajl_val root = NULL;
    yajl_val out = json_object_new();
    yajl_val sets[2] = {NULL, NULL};

    if (!text)
        return out;
    root = strstr(rel, ".toml") ? toml_parse(text, strlen(text), NULL) : json_parse(text, NULL);
    sets[0] = json_get(root, strstr(rel, ".toml") ? "mcp_servers" : "mcpServers");
    if (streq(rel, ".claude.json"))
        sets[1] = json_get(json_get(json_get(root, "projects"), project), "mcpServers");
    if (streq(rel, ".claude.json"))
        add_approved_project_servers(json_get(json_get(root, "projects"), project), project, out);
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; YAJL_IS_OBJECT(sets[s]) && i < sets[s]->u.object.len; i++)
            if (json_get_string(sets[s]->u.object.values[i], "command"))
                json_object_set(out, sets[s]->u.object.keys[i],
                                json_copy(sets[s]->u.object.values[i]));
    return out;
}

/* A stdio MCP server started the way a host starts one: pipes, in the project directory. */
typedef struct HostProc {
    pid_t pid;
    int in, out;
    StrBuf buf;
} HostProc;

static bool host_start_env(HostProc *p, yajl_val entry, const char *cwd, char **envp);

static bool host_start(HostProc *p, yajl_val entry, const char *cwd)
{
    return host_start_env(p, entry, cwd, NULL);
}

/* As host_start, with the environment envp (NULL: this process's). */
static bool host_start_env(HostProc *p, yajl_val entry, const char *cwd, char **envp)
{
    yajl_val args = json_get_array(entry, "args");
    size_t n = json_array_len(args);
    char **argv = xcalloc(n + 2, sizeof(char *));
    int to_child[2], from_child[2];

    argv[0] = (char *)json_get_string(entry, "command");
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = json_array_at(args, i)->u.string;
    if (pipe2(to_child, O_CLOEXEC) < 0 || pipe2(from_child, O_CLOEXEC) < 0)
        return false;
    memset(p, 0, sizeof(*p));
    p->pid = fork();
    if (p->pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        if (chdir(cwd) < 0)
            _exit(127);
        if (envp)
            execve(argv[0], argv, envp);
        else
            execvp(argv[0], argv);
        _exit(127);
    }
    free(argv);
    close(to_child[0]);
    close(from_child[1]);
    p->in = to_child[1];
    p->out = from_child[0];
    return p->pid > 0;
}

/* The response with this id (to free), or NULL after H_WAIT_MS without one. */
static yajl_val host_rpc(HostProc *p, int id, const char *method, const char *params)
{
    _cleanup_free_ char *line = xasprintf(
        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}\n", id, method, params);
    uint64_t deadline = now_ms() + H_WAIT_MS;

    if (fd_write_all(p->in, line, strlen(line)) < 0)
        return NULL;
    while (now_ms() < deadline) {
        char *nl;
        while ((nl = p->buf.data ? memchr(p->buf.data, '\n', p->buf.len) : NULL)) {
            _cleanup_free_ char *one = xstrndup(p->buf.data, (size_t)(nl - p->buf.data));
            size_t rest = p->buf.len - (size_t)(nl + 1 - p->buf.data);
            memmove(p->buf.data, nl + 1, rest);
            p->buf.len = rest;
            yajl_val v = json_parse(one, NULL);
            yajl_val vid = json_get(v, "id");
            if (vid && YAJL_IS_INTEGER(vid) && vid->u.number.i == id)
                return v;
            json_free(v);
        }
        struct pollfd pfd = {p->out, POLLIN, 0};
        char chunk[65536];
        if (poll(&pfd, 1, 200) <= 0)
            continue;
        ssize_t n = read(p->out, chunk, sizeof(chunk));
        if (n <= 0)
            return NULL;
        strbuf_append(&p->buf, chunk, (size_t)n);
    }
    return NULL;
}

static void host_stop(HostProc *p)
{
    int status;

    close(p->in);
    for (int i = 0; i < 100 && waitpid(p->pid, &status, WNOHANG) == 0; i++)
        h_sleep_ms(50);
    if (waitpid(p->pid, &status, WNOHANG) == 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &status, 0);
    }
    close(p->out);
    strbuf_deinit(&p->buf);
}

/* Start every entry as the host would, list its tools (all pages); names go to tools. */
static void host_list(yajl_val entries, const char *cwd, yajl_val tools, yajl_val names)
{
    for (size_t i = 0; i < entries->u.object.len; i++) {
        HostProc p;
        _cleanup_json_ yajl_val init = NULL;
        _cleanup_free_ char *cursor = NULL;
        if (!host_start(&p, entries->u.object.values[i], cwd)) {
            CHECK_MSG(false, "cannot start %s", entries->u.object.keys[i]);
            continue;
        }
        json_array_push(names, json_string_new(entries->u.object.keys[i]));
        init = host_rpc(&p, 1, "initialize",
                        "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                        "\"clientInfo\":{\"name\":\"host-stand-in\",\"version\":\"1\"}}");
        CHECK_MSG(json_get(init, "result"), "%s: no initialize result", entries->u.object.keys[i]);
        static const char initialized[] =
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
        fd_write_all(p.in, initialized, sizeof(initialized) - 1);
        for (int page = 0; init && page < 100; page++) {
            _cleanup_free_ char *params =
                cursor ? xasprintf("{\"cursor\":\"%s\"}", cursor) : xstrdup("{}");
            _cleanup_json_ yajl_val r = host_rpc(&p, 2 + page, "tools/list", params);
            yajl_val list = json_get_array(json_get(r, "result"), "tools");
            CHECK_MSG(r && json_get(r, "result"), "%s: tools/list failed",
                      entries->u.object.keys[i]);
            for (size_t t = 0; t < json_array_len(list); t++)
                json_array_push(
                    tools, json_string_new(json_get_string(json_array_at(list, t), "name") ?: "?"));
            free(cursor);
            cursor = json_get_string(json_get(r, "result"), "nextCursor")
                         ? xstrdup(json_get_string(json_get(r, "result"), "nextCursor"))
                         : NULL;
            if (!cursor)
                break;
        }
        host_stop(&p);
    }
}

static int count_in(yajl_val arr, const char *s)
{
    int n = 0;

    for (size_t i = 0; i < json_array_len(arr); i++)
        n += streq(json_array_at(arr, i)->u.string, s);
    return n;
}

/* Processes running the fake server as `--name NAME`. */
static int fake_processes(const char *name)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d))) {
        char path[300], buf[4096];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t len = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (len <= 0 || !streq(buf, h_fake()))
            continue;
        buf[len] = '\0';
        for (ssize_t i = 0; i + 1 < len; i += (ssize_t)strlen(buf + i) + 1)
            if (streq(buf + i, "--name") && streq(buf + i + strlen(buf + i) + 1, name))
                n++;
    }
    if (d)
        closedir(d);
    return n;
}

static char *run_mcpctl_out(int *statusp, const char *const *args, bool with_stderr);

/* Run mcpctl with args; its stdout (to free) and exit status. */
static char *run_mcpctl(int *statusp, const char *const *args)
{
    return run_mcpctl_out(statusp, args, false);
}

/* As run_mcpctl; with_stderr: its stderr too, in the same text. */
static char *run_mcpctl_out(int *statusp, const char *const *args, bool with_stderr)
{
    int fds[2], status;
    StrBuf sb = STRBUF_INIT;
    char buf[4096];
    ssize_t n;
    pid_t pid;

    if (pipe2(fds, O_CLOEXEC) < 0)
        return NULL;
    pid = fork();
    if (pid == 0) {
        const char *argv[16] = {getenv("MCPCTL_BINARY")};
        for (int i = 0; args[i] && i < 14; i++)
            argv[i + 1] = args[i];
        dup2(fds[1], 1);
        if (with_stderr)
            dup2(fds[1], 2);
        execv(argv[0], (char **)argv);
        _exit(127);
    }
    close(fds[1]);
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
        strbuf_append(&sb, buf, (size_t)n);
    close(fds[0]);
    waitpid(pid, &status, 0);
    *statusp = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return strbuf_detach(&sb, NULL);
}

/* The tools each original server exposes, listed by starting it as the agent did. */
static yajl_val original_tools(const char *home, const char *project, yajl_val *per_serverp)
{
    yajl_val per_server = json_object_new();

    for (const char *const *rel = agent_files; *rel; rel++) {
        _cleanup_json_ yajl_val entries = agent_stdio_entries(home, *rel, project);
        for (size_t i = 0; i < entries->u.object.len; i++) {
            _cleanup_json_ yajl_val one = json_object_new(), names = json_array_new();
            yajl_val tools = json_array_new();
            json_object_set(one, entries->u.object.keys[i], json_copy(entries->u.object.values[i]));
            host_list(one, project, tools, names);
            json_object_set(per_server, entries->u.object.keys[i], tools);
        }
    }
    *per_serverp = per_server;
    return per_server;
}

static void test_setup_all(void)
{
    Harness h;
    mcpc_client *c;
    yajl_val before = NULL;
    char project[512];

    h_setup(&h, "setup");
    snprintf(project, sizeof(project), "%s/project", h.dir);
    mkdir(project, 0700);
    _cleanup_free_ char *home = xstrdup(getenv("HOME"));
    install_fixtures(home, project);
    char *originals[N_AGENT_FILES] = {NULL};
    for (int i = 0; agent_files[i]; i++) {
        _cleanup_free_ char *path = paths_join(home, agent_files[i]);
        originals[i] = h_read_file(path);
    }
    original_tools(home, project, &before);
    for (const char *const *s = servers; *s; s++)
        CHECK_MSG(json_array_len(json_get(before, *s)) > 0, "%s: no tools before setup", *s);

    /* A dry run changes nothing. */
    int status;
    _cleanup_free_ char *dry =
        run_mcpctl(&status, (const char *[]){"setup", "--all", "--dry-run", NULL});
    CHECK_MSG(status == 0, "setup --dry-run exited %d", status);
    CHECK(dry && strstr(dry, "+++") && strstr(dry, "\"mcpd\""));
    for (int i = 0; agent_files[i]; i++) {
        _cleanup_free_ char *path = paths_join(home, agent_files[i]), *now = h_read_file(path);
        CHECK_MSG(now && streq(now, originals[i]), "--dry-run changed %s", agent_files[i]);
    }

    _cleanup_free_ char *out = run_mcpctl(&status, (const char *[]){"setup", "--all", NULL});
    CHECK_MSG(status == 0, "setup --all exited %d: %s", status, out ? out : "");
    char *after_setup[N_AGENT_FILES] = {NULL};
    for (int i = 0; agent_files[i]; i++) {
        _cleanup_free_ char *path = paths_join(home, agent_files[i]);
        after_setup[i] = h_read_file(path);
    }

    _cleanup_free_ char *mcpjson = paths_join(project, ".mcp.json"),
                        *mcpjson_now = h_read_file(mcpjson);
    _cleanup_free_ char *mcpjson_src = xasprintf("%s/project/.mcp.json.in", fixtures);
    _cleanup_free_ char *mcpjson_in = h_read_file(mcpjson_src);
    _cleanup_free_ char *mcpjson_want =
        mcpjson_in ? replace_all(mcpjson_in, "@FAKE@", h_fake()) : NULL;
    CHECK_MSG(mcpjson_now && mcpjson_want && streq(mcpjson_now, mcpjson_want),
              "setup changed the project's .mcp.json");

    /* The switch setup made is recorded as setup's, with what Claude Code had said before. */
    _cleanup_free_ char *rec_path = xasprintf("%s/config/mcpd/imported/claude.json", h.dir);
    _cleanup_free_ char *rec = h_read_file(rec_path);
    CHECK_MSG(rec && strstr(rec, "\"claudeProjectSwitches\"") &&
                  strstr(rec, "\"prj\": \"approved\""),
              "no record of the Claude Code switch: %s", rec ? rec : "(no file)");

    h_start(&h, NULL);
    setenv("MCPD_SOCKET", h.socket, 1);
    /* The host stand-in: each agent starts what its file now says, and lists through it. */
    for (const char *const *rel = agent_files; *rel; rel++) {
        _cleanup_json_ yajl_val entries = agent_stdio_entries(home, *rel, project),
                                tools = json_array_new(), started = json_array_new();
        host_list(entries, project, tools, started);
        CHECK_MSG(json_array_len(started) == 1 && count_in(started, "mcpd") == 1,
                  "%s: the agent starts %zu processes, not only the bridge", *rel,
                  json_array_len(started));
        for (const char *const *s = servers; *s; s++) {
            yajl_val orig = json_get(before, *s);
            for (size_t t = 0; t < json_array_len(orig); t++) {
                /* Setup's bridge lists short names for the agent's prefix: no "mcp_". */
                _cleanup_free_ char *want =
                    xasprintf("%s_%s", *s, json_array_at(orig, t)->u.string);
                CHECK_MSG(count_in(tools, want) == 1, "%s: %s listed %d times", *rel, want,
                          count_in(tools, want));
            }
        }
    }
    for (const char *const *s = servers; *s; s++)
        CHECK_MSG(fake_processes(*s) == 1, "server %s runs %d times", *s, fake_processes(*s));

    /* mcpctl config shows where the moved servers now come from. */
    _cleanup_free_ char *cfg =
        run_mcpctl(&status, (const char *[]){"--json", "config", "--cwd", project, NULL});
    CHECK_MSG(cfg && strstr(cfg, "Claude Code (moved here by mcpctl setup)") &&
                  strstr(cfg, "imported/codex.json"),
              "config does not show the imported servers: %s", cfg ? cfg : "");

    c = h_client(&h, "setup-check");
    h_settle(&h, c, "cla", "cdx", "gem", "cur", "wsf", "cdk", "cln", "roo", "kro", "agv", "agy",
             NULL);
    CHECK(h_check_healthy(&h, "after mcpctl setup --all", "mcp_cla_echo"));
    mcpc_free(c);
    h_stop(&h);
    unsetenv("MCPD_SOCKET");

    /* Setting up twice changes nothing and says so: setup is idempotent. */
    _cleanup_free_ char *again = run_mcpctl(&status, (const char *[]){"setup", "--all", NULL});
    CHECK_MSG(status == 0 && again && strstr(again, "already set up; nothing to change"),
              "a second setup exited %d: %s", status, again ? again : "");
    for (int i = 0; agent_files[i]; i++) {
        _cleanup_free_ char *path = paths_join(home, agent_files[i]), *now = h_read_file(path);
        CHECK_MSG(now && after_setup[i] && streq(now, after_setup[i]), "a second setup changed %s",
                  agent_files[i]);
        free(after_setup[i]);
    }

    _cleanup_free_ char *undo =
        run_mcpctl(&status, (const char *[]){"setup", "--undo", "--all", NULL});
    (void)undo; /* only its cleanup is wanted */
    CHECK_MSG(status == 0, "setup --undo exited %d", status);
    for (int i = 0; agent_files[i]; i++) {
        _cleanup_free_ char *path = paths_join(home, agent_files[i]), *now = h_read_file(path);
        CHECK_MSG(now && streq(now, originals[i]), "--undo did not restore %s byte for byte",
                  agent_files[i]);
    }
    _cleanup_free_ char *imported = xasprintf("%s/config/mcpd/imported", h.dir);
    CHECK_MSG(access(imported, F_OK) < 0, "undo left %s", imported);
    for (int i = 0; agent_files[i]; i++)
        free(originals[i]);
    json_free(before);
    h_teardown(&h);
}

/* A harness whose home holds the fixtures; project gets the project directory. */
static char *fixture_home(Harness *h, const char *name, char *project, size_t n)
{
    char *home;

    h_setup(h, name);
    snprintf(project, n, "%s/project", h->dir);
    home = xstrdup(getenv("HOME"));
    install_fixtures(home, project);
    return home;
}

/* Bad input: a file that does not parse, a symlink into another tree: nothing changes at all. */
static void test_setup_refuses(void)
{
    Harness h;
    int status;
    char project[512];

    _cleanup_free_ char *home = fixture_home(&h, "setup-bad", project, sizeof(project));
    _cleanup_free_ char *gem = paths_join(home, ".gemini/settings.json");
    _cleanup_free_ char *cur = paths_join(home, ".cursor/mcp.json"), *cur_before = h_read_file(cur);
    write_file(gem, "{\"mcpServers\": {\"gem\": ");
    _cleanup_free_ char *out = run_mcpctl(&status, (const char *[]){"setup", "--all", NULL});
    (void)out; /* only its cleanup is wanted */
    CHECK_MSG(status == 1, "setup over a broken file exited %d", status);
    _cleanup_free_ char *cur_after = h_read_file(cur);
    CHECK_MSG(cur_after && streq(cur_after, cur_before),
              "a refused setup still changed Cursor's file");

    /* A symlink out of the home directory. */
    _cleanup_free_ char *outside = xasprintf("%s/elsewhere.json", h.dir);
    write_file(outside, "{\"mcpServers\": {}}\n");
    unlink(gem);
    CHECK(symlink(outside, gem) == 0);
    _cleanup_free_ char *out2 = run_mcpctl(&status, (const char *[]){"setup", "gemini", NULL});
    (void)out2; /* only its cleanup is wanted */
    CHECK_MSG(status == 1, "setup through a symlink into another tree exited %d", status);
    _cleanup_free_ char *after = h_read_file(outside);
    CHECK(after && streq(after, "{\"mcpServers\": {}}\n"));
    h_teardown(&h);
}

/*
 * Claude Code rewrites ~/.claude.json as it runs: undo then puts the servers back into the file
 * as the agent left it. A file whose servers changed too is left alone, with the backup named.
 */
static void test_undo_after_agent_wrote(void)
{
    Harness h;
    int status;
    char project[512];

    _cleanup_free_ char *home = fixture_home(&h, "setup-undo", project, sizeof(project));
    _cleanup_free_ char *claude = paths_join(home, ".claude.json"), *orig = h_read_file(claude);
    _cleanup_free_ char *out = run_mcpctl(&status, (const char *[]){"setup", "claude", NULL});
    (void)out; /* only its cleanup is wanted */
    CHECK_MSG(status == 0, "setup claude exited %d", status);
    _cleanup_free_ char *set_up = h_read_file(claude);
    _cleanup_free_ char *changed =
        replace_all(set_up, "\"numStartups\": 42", "\"numStartups\": 43");
    write_file(claude, changed);
    _cleanup_free_ char *undo =
        run_mcpctl(&status, (const char *[]){"setup", "--undo", "claude", NULL});
    (void)undo; /* only its cleanup is wanted */
    CHECK_MSG(status == 0, "undo after the agent wrote its file exited %d", status);
    _cleanup_free_ char *now = h_read_file(claude);
    _cleanup_free_ char *want = replace_all(orig, "\"numStartups\": 42", "\"numStartups\": 43");
    CHECK_MSG(now && streq(now, want),
              "undo did not keep the agent's change and restore the servers:\n%s", now ? now : "");

    /* The user added a server next to the bridge: undo refuses and writes nothing. */
    _cleanup_free_ char *out2 = run_mcpctl(&status, (const char *[]){"setup", "claude", NULL});
    (void)out2; /* only its cleanup is wanted */
    _cleanup_free_ char *set_up2 = h_read_file(claude);
    _cleanup_free_ char *added =
        replace_all(set_up2, "\"mcpd\": {", "\"new\": {\"command\": \"x\"}, \"mcpd\": {");
    write_file(claude, added);
    _cleanup_free_ char *undo2 =
        run_mcpctl(&status, (const char *[]){"setup", "--undo", "claude", NULL});
    (void)undo2; /* only its cleanup is wanted */
    CHECK_MSG(status == 1, "undo over changed servers exited %d", status);
    _cleanup_free_ char *after = h_read_file(claude);
    CHECK(after && streq(after, added));
    h_teardown(&h);
}

/* Processes whose parent is pid and whose program is mcpctl. */
static int mcpctl_children(pid_t parent)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d))) {
        char path[300], buf[512];
        int ppid = -1;
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        char *rp = strrchr(buf, ')');
        if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == parent &&
            strstr(buf, "(mcpctl)"))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/*
 * An agent in project connects and asks for its first tools/list: the client (to free) and
 * whether alpha's echo came back; the time it took is printed and checked against the bound.
 */
static mcpc_client *first_list(Harness *h, const char *project, const char *what, bool *foundp)
{
    mcpc_options o = {
        .socket_path = h->socket, .client_name = what, .cwd = project, .timeout_ms = 60000};
    mcpc_client *c = mcpc_new(&o);
    uint64_t t0, took;
    int n;

    CHECK(mcpc_connect(c) == 0);
    t0 = now_ms();
    n = h_list_count(c, "mcp_alpha_echo", foundp);
    took = now_ms() - t0;
    fprintf(stderr, "%s: first tools/list %llu ms (goal %d ms, bound %d ms)\n", what,
            (unsigned long long)took, SELF_LIST_GOAL_MS, SELF_LIST_BOUND_MS);
    CHECK_MSG(n > 0 && *foundp, "%s: alpha's tools missing (%d)", what, n);
    CHECK_MSG(took < SELF_LIST_BOUND_MS, "%s: first tools/list took %llu ms", what,
              (unsigned long long)took);
    return c;
}

static void test_never_itself(void)
{
    Harness h;
    char project[512];
    int status;
    const char *mcpctl = getenv("MCPCTL_BINARY");

    h_setup(&h, "selfref");
    snprintf(project, sizeof(project), "%s/project", h.dir);
    mkdir(project, 0700);
    _cleanup_free_ char *home = xstrdup(getenv("HOME"));
    _cleanup_free_ char *claude = paths_join(home, ".claude.json");
    _cleanup_free_ char *claude_text = xasprintf(
        "{\"mcpServers\": {\"mcpd\": {\"command\": \"%s\", \"args\": [\"bridge\"]}}}\n", mcpctl);
    _cleanup_free_ char *mcpjson = xasprintf("%s/.mcp.json", project);
    write_file(claude, claude_text);
    write_file(mcpjson, "{\"mcpServers\": {\"mcpd\": {\"command\": \"mcpctl\", \"args\": "
                        "[\"bridge\", \"--cwd\", \".\"]}}}\n");
    _cleanup_free_ char *own = xasprintf(
        "{\"mcpServers\": {\"self\": {\"command\": \"%s\", \"args\": [\"--timeout\", \"5000\", "
        "\"bridge\"]}, \"alpha\": {\"command\": \"%s\", \"args\": [\"--name\", \"alpha\"]}}}",
        mcpctl, h_fake());
    h_write_config(&h, own);
    h_start(&h, NULL);

    bool found = false;
    mcpc_client *c = first_list(&h, project, "three bridge entries", &found);
    CHECK_MSG(mcpctl_children(h.pid) == 0, "mcpd started %d bridge processes",
              mcpctl_children(h.pid));
    _cleanup_json_ yajl_val st = h_status(c);
    CHECK(!h_server(st, "mcpd") && !h_server(st, "self"));

    _cleanup_free_ char *cfg =
        run_mcpctl(&status, (const char *[]){"--json", "config", "--cwd", project, NULL});
    _cleanup_json_ yajl_val cv = cfg ? json_parse(cfg, NULL) : NULL;
    yajl_val skipped = json_get_array(cv, "skipped");
    int own_entries = 0;
    for (size_t i = 0; i < json_array_len(skipped); i++) {
        const char *reason = json_get_string(json_array_at(skipped, i), "reason");
        own_entries += reason && strstr(reason, "mcpd's own bridge") != NULL;
    }
    CHECK_MSG(own_entries == 3, "%d of 3 bridge entries listed as mcpd's own: %s", own_entries,
              cfg ? cfg : "");

    h_settle(&h, c, "alpha", NULL);
    CHECK(h_check_healthy(&h, "bridge entries in every file", "mcp_alpha_echo"));
    mcpc_free(c);
    h_stop(&h);
    h_teardown(&h);
}

/* A bridge hidden behind a shell is not seen in the config, but its connection is refused. */
static void test_self_connection_refused(void)
{
    Harness h;
    char project[512];
    const char *mcpctl = getenv("MCPCTL_BINARY");

    h_setup(&h, "selfconn");
    snprintf(project, sizeof(project), "%s/project", h.dir);
    mkdir(project, 0700);
    _cleanup_free_ char *own = xasprintf(
        "{\"mcpServers\": {\"sneaky\": {\"command\": \"/bin/sh\", \"args\": [\"-c\", \"exec %s "
        "bridge\"]}, \"alpha\": {\"command\": \"%s\", \"args\": [\"--name\", \"alpha\"]}}}",
        mcpctl, h_fake());
    h_write_config(&h, own);
    h_start(&h, NULL);
    bool found = false;
    mcpc_client *c = first_list(&h, project, "a shell-wrapped bridge", &found);
    _cleanup_free_ char *log = h_read_file(h.log);
    CHECK_MSG(log && strstr(log, "started by mcpd itself"), "no refusal in the log");
    /*
     * Each refusal is an immediate failure, so the retry breaker (BREAKER_FAILURES within
     * BREAKER_WINDOW_MS) stops it after its backoff steps instead of retrying forever.
     */
    CHECK_MSG(h_wait_state(c, "sneaky", "failed", SNEAKY_GIVE_UP_MS),
              "the shell-wrapped bridge is still being restarted");
    h_settle(&h, c, "alpha", NULL);
    CHECK(h_check_healthy(&h, "a shell-wrapped bridge entry", "mcp_alpha_echo"));
    mcpc_free(c);
    h_stop(&h);
    h_teardown(&h);
}

/* The tool names a host sees through an entry started in cwd (a JSON array text, to free). */
static char *entry_tools(yajl_val entry, const char *cwd)
{
    HostProc p;
    StrBuf sb = STRBUF_INIT;

    if (!host_start(&p, entry, cwd))
        return xstrdup("(not started)");
    _cleanup_json_ yajl_val init =
        host_rpc(&p, 1, "initialize",
                 "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                 "\"clientInfo\":{\"name\":\"claude-stand-in\",\"version\":\"1\"}}");
    _cleanup_json_ yajl_val list = init ? host_rpc(&p, 2, "tools/list", "{}") : NULL;
    yajl_val tools = json_get_array(json_get(list, "result"), "tools");
    for (size_t i = 0; i < json_array_len(tools); i++)
        strbuf_printf(&sb, "\"%s\" ", json_get_string(json_array_at(tools, i), "name") ?: "?");
    host_stop(&p);
    return sb.data ? strbuf_detach(&sb, NULL) : xstrdup("");
}

/*
 * No tool twice: Claude Code starts the .mcp.json servers it approved itself, so its bridge
 * (--host claude, as setup writes it) leaves them out, even once the project is trusted in mcpd;
 * those setup handed to mcpd (Claude Code's switch) come through the bridge.
 */
static void test_no_tool_twice(void)
{
    Harness h;
    int status;
    char project[512];

    _cleanup_free_ char *home = fixture_home(&h, "setup-twice", project, sizeof(project));
    _cleanup_free_ char *later = xasprintf("%s/later", h.dir), *later_mcp = NULL;
    later_mcp = paths_join(later, ".mcp.json");
    _cleanup_free_ char *later_text = xasprintf(
        "{\"mcpServers\": {\"own\": {\"command\": \"%s\", \"args\": [\"--name\", \"own\"]}}}\n",
        h_fake());
    write_file(later_mcp, later_text);
    _cleanup_free_ char *out = run_mcpctl(&status, (const char *[]){"setup", "claude", NULL});
    CHECK_MSG(status == 0, "setup claude exited %d: %s", status, out);
    _cleanup_free_ char *path = paths_join(home, ".claude.json"), *text = h_read_file(path);
    _cleanup_json_ yajl_val root = text ? json_parse(text, NULL) : NULL;
    yajl_val entry = json_get(json_get(root, "mcpServers"), "mcpd");
    CHECK_MSG(entry, "no mcpd entry in ~/.claude.json: %s", text);

    h_start(&h, NULL);
    setenv("MCPD_SOCKET", h.socket, 1);
    mcpc_client *c = h_client(&h, "trust");
    _cleanup_free_ char *params = xasprintf("{\"cwd\": \"%s\"}", later), *res = NULL;
    CHECK(mcpc_request(c, "mcpd/trust", params, &res) == 0);
    mcpc_options o = {
        .socket_path = h.socket, .client_name = "later", .cwd = later, .timeout_ms = 60000};
    mcpc_client *agent = mcpc_new(&o);
    char *tools = NULL;
    CHECK(agent && mcpc_connect(agent) == 0 && mcpc_list_tools(agent, &tools) == 0);
    CHECK_MSG(tools && strstr(tools, "\"mcp_own_echo\""), "mcpd does not serve own: %s", tools);
    free(tools);
    mcpc_free(agent);

    _cleanup_free_ char *in_later = entry_tools(entry, later);
    CHECK_MSG(!strstr(in_later, "own_echo") && strstr(in_later, "\"cla_echo\""),
              "Claude Code's bridge in a project whose server it runs: %s", in_later);
    _cleanup_free_ char *in_project = entry_tools(entry, project);
    CHECK_MSG(strstr(in_project, "\"prj_echo\""),
              "Claude Code's bridge lacks the server setup gave to mcpd: %s", in_project);
    mcpc_free(c);
    unsetenv("MCPD_SOCKET");
    h_stop(&h);
    h_teardown(&h);
}

/*
 * Claude Code 2.1.x moves a project's non-empty enabledMcpjsonServers/disabledMcpjsonServers
 * out of ~/.claude.json into <project>/.claude/settings.local.json as it runs. After it moved
 * setup's switch there, undo takes the switch back there and gives the approval back, and
 * ~/.claude.json gets the lists it held before setup.
 */
static void test_undo_after_claude_moved(void)
{
    Harness h;
    int status;
    char project[512];

    _cleanup_free_ char *home = fixture_home(&h, "setup-moved", project, sizeof(project));
    _cleanup_free_ char *claude = paths_join(home, ".claude.json");
    _cleanup_free_ char *out = run_mcpctl(&status, (const char *[]){"setup", "claude", NULL});
    CHECK_MSG(status == 0, "setup claude exited %d: %s", status, out);

    /* Claude Code runs in the project: the non-empty switch moves out (the emptied list stays). */
    _cleanup_free_ char *text = h_read_file(claude);
    _cleanup_json_ yajl_val root = text ? json_parse(text, NULL) : NULL;
    yajl_val proj = json_get(json_get(root, "projects"), project);
    yajl_val moved = json_object_take(proj, "disabledMcpjsonServers");
    _cleanup_free_ char *moved_text = moved ? json_to_string(moved) : NULL;
    CHECK_MSG(moved_text && strstr(moved_text, "\"prj\""), "setup did not switch prj off: %s",
              text);
    json_free(moved);
    _cleanup_free_ char *rewritten = json_to_string(root);
    write_file(claude, rewritten);
    _cleanup_free_ char *local = xasprintf("%s/.claude/settings.local.json", project);
    _cleanup_free_ char *local_text =
        xasprintf("{\n  \"permissions\": {\"allow\": []},\n  \"disabledMcpjsonServers\": %s\n}\n",
                  moved_text);
    write_file(local, local_text);

    _cleanup_free_ char *undo =
        run_mcpctl(&status, (const char *[]){"setup", "--undo", "claude", NULL});
    CHECK_MSG(status == 0, "undo after Claude Code moved the switch exited %d: %s", status, undo);
    _cleanup_free_ char *now_local = h_read_file(local);
    _cleanup_json_ yajl_val lv = now_local ? json_parse(now_local, NULL) : NULL;
    CHECK_MSG(lv && !listed(json_get(lv, "disabledMcpjsonServers"), "prj") &&
                  listed(json_get(lv, "enabledMcpjsonServers"), "prj") &&
                  json_get(lv, "permissions"),
              "settings.local.json after undo: %s", now_local ? now_local : "(gone)");
    _cleanup_free_ char *now = h_read_file(claude);
    _cleanup_json_ yajl_val cv = now ? json_parse(now, NULL) : NULL;
    yajl_val cp = json_get(json_get(cv, "projects"), project);
    CHECK_MSG(cp && listed(json_get(cp, "enabledMcpjsonServers"), "prj") &&
                  YAJL_IS_ARRAY(json_get(cp, "disabledMcpjsonServers")) &&
                  !listed(json_get(cp, "disabledMcpjsonServers"), "prj"),
              "~/.claude.json after undo: %s", now ? now : "(gone)");
    h_teardown(&h);
}

/*
 * The agents mcpd reads but setup leaves to the user: --all names every one of them and gives
 * the entry for each whose file exists, leaving the file as it was; naming one alone fails
 * with the reason and the entry.
 */
static void test_by_hand(void)
{
    static const char *const skipped[] = {"opencode", "zed", "copilot", "goose", "continue"};
    Harness h;
    int status;
    char project[512];

    _cleanup_free_ char *home = fixture_home(&h, "setup-by-hand", project, sizeof(project));
    (void)home; /* only its cleanup is wanted */
    _cleanup_free_ char *opencode = xasprintf("%s/config/opencode/opencode.json", h.dir);
    static const char opencode_text[] =
        "{\n  // OpenCode\n  \"mcp\": {\"opc\": {\"type\": \"local\", \"command\": [\"x\"]}}\n}\n";
    write_file(opencode, opencode_text);
    _cleanup_free_ char *out =
        run_mcpctl_out(&status, (const char *[]){"setup", "--all", NULL}, true);
    CHECK_MSG(status == 0, "setup --all exited %d: %s", status, out);
    const char *line = out ? strstr(out, "Skipped (") : NULL;
    for (size_t i = 0; i < N_ELEMENTS(skipped); i++)
        CHECK_MSG(line && strstr(line, skipped[i]), "setup --all does not name %s: %s", skipped[i],
                  out);
    CHECK_MSG(out && strstr(out, "OpenCode: ") &&
                  strstr(out, "\"mcp\": {\"mcpd\": {\"type\": "
                              "\"local\", \"command\": [\""),
              "no OpenCode entry to add by hand: %s", out);
    _cleanup_free_ char *now = h_read_file(opencode);
    CHECK_MSG(now && streq(now, opencode_text), "setup --all changed OpenCode's file");
    _cleanup_free_ char *zed =
        run_mcpctl_out(&status, (const char *[]){"setup", "zed", NULL}, true);
    CHECK_MSG(status == 1 && zed && strstr(zed, "not set up: ") &&
                  strstr(zed, "\"context_servers\": {\"mcpd\": {"),
              "setup zed exited %d: %s", status, zed ? zed : "");
    _cleanup_free_ char *undo =
        run_mcpctl(&status, (const char *[]){"setup", "--undo", "--all", NULL});
    CHECK_MSG(status == 0, "undo exited %d: %s", status, undo);
    h_teardown(&h);
}

/*
 * The variables Codex gives a stdio server besides the entry's env and env_vars (codex-rs
 * rmcp-client, DEFAULT_ENV_VARS on Unix): XDG_RUNTIME_DIR is not among them.
 */
static const char *const codex_default_env[] = {"HOME", "LOGNAME", "PATH", "SHELL",  "USER",
                                                "LANG", "LC_ALL",  "TERM", "TMPDIR", "TZ"};

/* name=value of this process's variable name into env (when set). */
static void env_keep(char **env, size_t *n, const char *name)
{
    const char *v = getenv(name);

    if (v)
        env[(*n)++] = xasprintf("%s=%s", name, v);
}

/*
 * Setup without mcpd running says so and how to start it; Codex, which starts the bridge with
 * its short environment, reaches mcpd once it runs (the entry's env_vars carry the runtime dir).
 */
static void test_codex_env(void)
{
    Harness h;
    int status;
    char project[512];

    _cleanup_free_ char *home = fixture_home(&h, "setup-codex-env", project, sizeof(project));
    _cleanup_free_ char *out =
        run_mcpctl_out(&status, (const char *[]){"setup", "codex", NULL}, true);
    CHECK_MSG(status == 0, "setup codex exited %d: %s", status, out);
    CHECK_MSG(out && strstr(out, "mcpd is not running") &&
                  strstr(out, "systemctl --user enable --now mcpd.socket"),
              "setup without mcpd running did not say so: %s", out ? out : "");

    _cleanup_free_ char *path = paths_join(home, ".codex/config.toml"), *text = h_read_file(path);
    _cleanup_json_ yajl_val root = text ? toml_parse(text, strlen(text), NULL) : NULL;
    yajl_val entry = json_get(json_get(root, "mcp_servers"), "mcpd");
    yajl_val vars = json_get_array(entry, "env_vars");
    CHECK_MSG(entry && json_array_len(vars), "no env_vars in Codex's mcpd entry:\n%s", text);

    h_start(&h, NULL);
    char *env[N_ELEMENTS(codex_default_env) + 8] = {NULL};
    size_t n = 0;
    for (size_t i = 0; i < N_ELEMENTS(codex_default_env); i++)
        env_keep(env, &n, codex_default_env[i]);
    for (size_t i = 0; i < json_array_len(vars) && n + 1 < N_ELEMENTS(env); i++)
        if (YAJL_IS_STRING(json_array_at(vars, i)))
            env_keep(env, &n, json_array_at(vars, i)->u.string);
    HostProc p;
    CHECK(host_start_env(&p, entry, project, env));
    _cleanup_json_ yajl_val init =
        host_rpc(&p, 1, "initialize",
                 "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                 "\"clientInfo\":{\"name\":\"codex-stand-in\",\"version\":\"1\"}}");
    CHECK_MSG(json_get(init, "result"), "Codex's environment did not reach mcpd");
    _cleanup_json_ yajl_val list = host_rpc(&p, 2, "tools/list", "{}");
    _cleanup_free_ char *listed = list ? json_to_string(list) : NULL;
    CHECK_MSG(listed && strstr(listed, "\"cdx_echo\""), "tools through Codex's entry: %s",
              listed ? listed : "(none)");
    host_stop(&p);
    for (size_t i = 0; i < n; i++)
        free(env[i]);

    /* With mcpd running, setup has nothing to warn about. */
    _cleanup_free_ char *again =
        run_mcpctl_out(&status, (const char *[]){"setup", "codex", NULL}, true);
    CHECK_MSG(status == 0 && again && !strstr(again, "not running"),
              "setup with mcpd running exited %d: %s", status, again ? again : "");
    h_stop(&h);
    h_teardown(&h);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    fixtures = argv[1];
    test_setup_all();
    test_setup_refuses();
    test_undo_after_agent_wrote();
    test_codex_env();
    test_by_hand();
    test_undo_after_claude_moved();
    test_no_tool_twice();
    test_never_itself();
    test_self_connection_refused();
    return h_finish("integration-setup");
}
