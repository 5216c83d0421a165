// SPDX-License-Identifier: MIT
// test-trust: a cloned repository runs nothing until the user approves it, and an edit revokes.

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Long enough for a started server to have touched its marker on a loaded machine. */
#define SETTLE_MS 1500

static const char *const cloned[] = {"cloned-claude", "cloned-vscode", "cloned-codex",
                                     "cloned-gemini", "cloned-native"};
static const char *const marks[] = {"claude", "vscode", "codex", "gemini", "bang"};

static char *run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run a shell command; its stdout (to free). */
static char *run(const char *fmt, ...)
{
    StrBuf cmd = STRBUF_INIT, out = STRBUF_INIT;
    char buf[4096];
    va_list ap;
    size_t n;

    va_start(ap, fmt);
    strbuf_vprintf(&cmd, fmt, ap);
    va_end(ap);
    FILE *f = popen(strbuf_str(&cmd), "r");
    if (!f)
        abort();
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(&out, buf, n);
    pclose(f);
    strbuf_deinit(&cmd);
    return strbuf_detach(&out, NULL);
}

static bool marked(const char *dir, const char *name)
{
    _cleanup_free_ char *p = paths_join(dir, name);

    return access(p, F_OK) == 0;
}

/* The status problem about server, or NULL. */
static const char *problem_of(yajl_val st, const char *server)
{
    yajl_val probs = json_get_array(st, "problems");

    for (size_t i = 0; i < json_array_len(probs); i++) {
        const char *s = json_get_string(json_array_at(probs, i), "server");
        if (s && streq(s, server))
            return json_get_string(json_array_at(probs, i), "error");
    }
    return NULL;
}

static void reload(mcpc_client *c, const char *root)
{
    _cleanup_free_ char *params = xasprintf("{\"cwd\": \"%s\"}", root), *out = NULL;

    CHECK(mcpc_request(c, "mcpd/reload", params, &out) == 0);
}

/* Before approval: no marker, no tools, each server named untrusted with what it would run. */
static void check_nothing_ran(Harness *h, mcpc_client *agent, const char *root, const char *md)
{
    _cleanup_json_ yajl_val st = NULL;
    bool found = false;

    h_sleep_ms(SETTLE_MS);
    for (size_t i = 0; i < N_ELEMENTS(marks); i++)
        CHECK_MSG(!marked(md, marks[i]), "%s ran before it was approved", marks[i]);
    h_list_count(agent, "mcp_cloned-claude_echo", &found);
    CHECK(!found);
    st = h_status(agent);
    for (size_t i = 0; i < N_ELEMENTS(cloned); i++) {
        const char *p = problem_of(st, cloned[i]);
        _cleanup_free_ char *approve = xasprintf("mcpctl trust %s", root);
        CHECK_MSG(p && strstr(p, "untrusted") && strstr(p, approve) && strstr(p, "sh -c "),
                  "%s: %s", cloned[i], p ? p : "(no problem shown)");
        CHECK(!h_server(st, cloned[i]));
    }
    _cleanup_free_ char *shown =
        run("'%s' --socket '%s' status", getenv("MCPCTL_BINARY"), h->socket);
    CHECK_MSG(strstr(shown, "untrusted") && strstr(shown, "cloned-codex"), "%s", shown);
}

/* A bridge started in the repository is one more agent there: it starts nothing either. */
static void bridge_once(Harness *h, const char *root)
{
    _cleanup_free_ char *init = paths_join(h->dir, "init.jsonl");
    FILE *f = fopen(init, "w");

    fputs(h_raw_initialize, f);
    fclose(f);
    /* stdin stays open a while: the bridge ends at EOF, maybe before the answer comes. */
    _cleanup_free_ char *out =
        run("(cat '%s'; sleep 3) | timeout 20 '%s' --socket '%s' bridge --cwd '%s'", init,
            getenv("MCPCTL_BINARY"), h->socket, root);
    CHECK_MSG(strstr(out, "\"result\""), "bridge: %s", out);
}

/* The fixture repository copied into the tree, a markers dir, and the user's one server. */
static void clone_repo(Harness *h, char **rootp, char **mdp)
{
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());

    *rootp = paths_join(h->dir, "repo");
    *mdp = paths_join(h->dir, "marks");
    free(run("mkdir -p '%s' && cp -a '%s/repo/.' '%s/'", *mdp, getenv("TRUST_FIXTURES"), *rootp));
    setenv("MARKS", *mdp, 1);
    h_write_config(h, cfg);
}

static void test_cloned_repo(void)
{
    Harness h;

    h_setup(&h, "trust");
    _cleanup_free_ char *root = NULL, *md = NULL;
    clone_repo(&h, &root, &md);
    h_start(&h, NULL);
    mcpc_options o = {.socket_path = h.socket, .client_name = "agent-in-repo", .cwd = root};
    mcpc_client *agent = mcpc_new(&o);
    CHECK(agent && mcpc_connect(agent) == 0);
    h_settle(&h, agent, "steady", NULL);

    bridge_once(&h, root);
    check_nothing_ran(&h, agent, root, md);

    /* The user approves: every server runs. */
    _cleanup_free_ char *t =
        run("'%s' --socket '%s' trust '%s'", getenv("MCPCTL_BINARY"), h.socket, root);
    CHECK_MSG(strstr(t, "approved for") && strstr(t, "cloned-gemini"), "%s", t);
    for (size_t i = 0; i < N_ELEMENTS(cloned); i++)
        CHECK_MSG(h_wait_state(agent, cloned[i], "connected", H_WAIT_MS), "%s", cloned[i]);
    for (size_t i = 0; i < N_ELEMENTS(marks); i++)
        CHECK_MSG(marked(md, marks[i]), "%s did not run once approved", marks[i]);
    struct stat st;
    _cleanup_free_ char *store = paths_join(h.dir, "state/mcpd/trust.json");
    CHECK(stat(store, &st) == 0 && (st.st_mode & 0777) == 0600);

    /* Editing one entry makes that one untrusted again; the others keep running. */
    _cleanup_free_ char *dot_mcp = paths_join(root, ".mcp.json");
    FILE *f = fopen(dot_mcp, "w");
    fputs("{\"mcpServers\": {\"cloned-claude\": {\"command\": \"sh\", \"args\": [\"-c\", "
          "\"touch \\\"$MARKS/edited\\\"; exec \\\"$FAKE_SERVER\\\"\"]}}}\n",
          f);
    fclose(f);
    reload(agent, root);
    _cleanup_json_ yajl_val s2 = h_status(agent);
    const char *p = problem_of(s2, "cloned-claude");
    CHECK_MSG(p && strstr(p, "untrusted"), "%s", p ? p : "(none)");
    CHECK(!h_server(s2, "cloned-claude"));
    CHECK(h_server(s2, "cloned-codex") != NULL);
    h_sleep_ms(SETTLE_MS);
    CHECK(!marked(md, "edited"));

    /* A file another user owns runs nothing, approved or not. */
    _cleanup_free_ char *vsc = paths_join(root, ".vscode/mcp.json");
    CHECK(chown(vsc, 4242, 4242) == 0);
    reload(agent, root);
    _cleanup_json_ yajl_val s3 = h_status(agent);
    p = problem_of(s3, "cloned-vscode");
    CHECK_MSG(p && strstr(p, "owned by uid 4242"), "%s", p ? p : "(none)");
    CHECK(!h_server(s3, "cloned-vscode"));
    CHECK(chown(vsc, getuid(), getgid()) == 0);

    /* untrust: back to nothing running; trust --server approves one. */
    _cleanup_free_ char *u =
        run("'%s' --socket '%s' untrust '%s'", getenv("MCPCTL_BINARY"), h.socket, root);
    CHECK_MSG(strstr(u, "removed"), "%s", u);
    _cleanup_json_ yajl_val s4 = h_status(agent);
    CHECK(!h_server(s4, "cloned-codex") && problem_of(s4, "cloned-codex"));
    _cleanup_free_ char *one = run("'%s' --socket '%s' trust --server cloned-codex '%s'",
                                   getenv("MCPCTL_BINARY"), h.socket, root);
    CHECK_MSG(strstr(one, "cloned-codex") && !strstr(one, "cloned-gemini"), "%s", one);
    CHECK(h_wait_state(agent, "cloned-codex", "connected", H_WAIT_MS));
    _cleanup_json_ yajl_val s5 = h_status(agent);
    CHECK(!h_server(s5, "cloned-gemini"));
    _cleanup_free_ char *bad =
        run("'%s' --socket '%s' trust --server no-such '%s' 2>&1; echo rc=$?",
            getenv("MCPCTL_BINARY"), h.socket, root);
    CHECK_MSG(strstr(bad, "no-such") && strstr(bad, "rc=1"), "%s", bad);

    h_settle(&h, agent, "steady", "cloned-codex", NULL);
    mcpc_free(agent);
    h_check_healthy(&h, "cloned repository", CONTROL);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
}

/*
 * The owning agent's own approval counts: Claude Code's enableAllProjectMcpServers. And a value
 * means what that agent makes of it: Claude Code passes "!x" on as written, it runs nothing.
 */
static void test_agent_approval(void)
{
    Harness h;

    h_setup(&h, "trust-agent");
    _cleanup_free_ char *root = NULL, *md = NULL;
    clone_repo(&h, &root, &md);
    _cleanup_free_ char *cj =
        xasprintf("{\"projects\": {\"%s\": {\"enableAllProjectMcpServers\": true,"
                  " \"hasTrustDialogAccepted\": true}}, \"history\": [],"
                  " \"mcpServers\": {\"claudeuser\": {\"command\": \"%s\","
                  " \"env\": {\"K\": \"!touch %s/literal\"}}}}",
                  root, h_fake(), md);
    _cleanup_free_ char *cj_path = paths_join(h.dir, "home/.claude.json");
    FILE *f = fopen(cj_path, "w");
    fputs(cj, f);
    fclose(f);
    h_start(&h, NULL);
    mcpc_options o = {.socket_path = h.socket, .client_name = "claude", .cwd = root};
    mcpc_client *agent = mcpc_new(&o);
    CHECK(agent && mcpc_connect(agent) == 0);
    CHECK(h_wait_state(agent, "cloned-claude", "connected", H_WAIT_MS));
    h_sleep_ms(SETTLE_MS);
    CHECK(marked(md, "claude"));
    CHECK(!marked(md, "codex") && !marked(md, "gemini") && !marked(md, "vscode"));
    _cleanup_json_ yajl_val st = h_status(agent);
    CHECK(problem_of(st, "cloned-codex") && !problem_of(st, "cloned-claude"));
    CHECK(h_wait_state(agent, "claudeuser", "connected", H_WAIT_MS));
    _cleanup_free_ char *k = h_call_text(agent, "mcp_claudeuser_env", "{\"name\":\"K\"}", NULL);
    _cleanup_free_ char *want = xasprintf("!touch %s/literal", md);
    CHECK_MSG(k && streq(k, want), "K = %s", k ? k : "(null)");
    CHECK(!marked(md, "literal"));
    h_settle(&h, agent, "steady", "cloned-claude", "claudeuser", NULL);
    mcpc_free(agent);
    h_check_healthy(&h, "agent approval", CONTROL);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
}

static void write_home_file(const Harness *h, const char *rel, const char *text)
{
    _cleanup_free_ char *home = paths_join(h->dir, "home"), *path = paths_join(home, rel);
    _cleanup_free_ char *dir = paths_dirname(path);

    CHECK(paths_mkdir_p(dir, 0700) == 0);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static bool sees(mcpc_client *c, const char *tool)
{
    bool found = false;

    h_list_count(c, tool, &found);
    return found;
}

/* Tool filters the user already set, in mcpd's and the agents' own words, reach no agent. */
static void test_tool_filters(void)
{
    Harness h;
    int is_error = 0;

    h_setup(&h, "trust-filters");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}, \"own\": {\"command\": \"%s\","
        " \"enabledTools\": [\"e*\", \"add\"], \"disabledTools\": [\"env\"]}}}",
        h_fake(), h_fake());
    h_write_config(&h, cfg);
    _cleanup_free_ char *codex = xasprintf(
        "[mcp_servers.cx]\ncommand = \"%s\"\ndisabled_tools = [\"crash\", \"big\"]\n", h_fake());
    write_home_file(&h, ".codex/config.toml", codex);
    _cleanup_free_ char *gemini = xasprintf(
        "{\"mcpServers\": {\"gm\": {\"command\": \"%s\", \"includeTools\": [\"pid\"]}}}", h_fake());
    write_home_file(&h, ".gemini/settings.json", gemini);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "filters");
    h_settle(&h, c, "steady", "own", "cx", "gm", NULL);

    CHECK(sees(c, "mcp_own_echo") && sees(c, "mcp_own_add"));
    CHECK(!sees(c, "mcp_own_env") && !sees(c, "mcp_own_pid"));
    CHECK(sees(c, "mcp_cx_echo") && !sees(c, "mcp_cx_crash") && !sees(c, "mcp_cx_big"));
    CHECK(sees(c, "mcp_gm_pid") && !sees(c, "mcp_gm_echo"));
    _cleanup_free_ char *t = h_call_text(c, "mcp_cx_crash", NULL, &is_error);
    CHECK_MSG(t && strstr(t, "Unknown tool"), "%s", t ? t : "(null)");
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t shown = -1, hidden = -1;
    json_get_int(h_server(st, "gm"), "tools", &shown);
    json_get_int(h_server(st, "gm"), "toolsFiltered", &hidden);
    CHECK_MSG(shown == 1 && hidden > 1, "gm: %lld shown, %lld filtered", (long long)shown,
              (long long)hidden);
    mcpc_free(c);
    h_check_healthy(&h, "tool filters", CONTROL);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
}

int main(void)
{
    test_cloned_repo();
    test_agent_approval();
    test_tool_filters();
    return h_finish("trust");
}
