// SPDX-License-Identifier: MIT
// test-reload: a typo plus reload keeps every server and names file:line:column; unknown fields
// are warnings; editing a watched file (user file, a live workspace's project file, an agent's
// file created after start) changes the servers without any command.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_alpha_echo"

/* mcpctl against h's daemon, stderr included; its output (to free). */
#define CTL(h, st, args, ...)                                                                      \
    h_shell(st, "'%s' --socket '%s' " args " 2>&1", getenv("MCPCTL_BINARY"), (h)->socket,          \
            ##__VA_ARGS__)

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    CHECK_MSG(f, "cannot write %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The user config with alpha, beta and extra (a JSON fragment of more entries, or ""). */
static char *user_config(const char *extra)
{
    return xasprintf("{\n  \"mcpServers\": {\n"
                     "    \"alpha\": {\"command\": \"%1$s\", \"args\": [\"--name\", \"alpha\"]},\n"
                     "    \"beta\": {\"command\": \"%1$s\", \"args\": [\"--name\", \"beta\"]}%2$s\n"
                     "  }\n}\n",
                     h_fake(), extra);
}

static bool server_shown(mcpc_client *c, const char *name, const char *state)
{
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val s = h_server(st, name);

    return s && (!state || streq(json_get_string(s, "state") ?: "", state));
}

/* A trailing comma: reload refuses the file, says where, and every server stays connected. */
static void test_typo_keeps_servers(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *good = user_config("");
    _cleanup_free_ char *bad = user_config(",");
    _cleanup_free_ char *where = xasprintf("%s:5:3", h->config);
    int st;

    write_text(h->config, bad);
    _cleanup_free_ char *out = CTL(h, &st, "reload");
    CHECK_MSG(st == 1, "reload of a broken file: exit %d\n%s", st, out);
    CHECK_MSG(strstr(out, where), "no %s in:\n%s", where, out);
    CHECK_MSG(strstr(out, "kept its servers"), "reload output:\n%s", out);
    CHECK_MSG(!strstr(out, "removed"), "reload output:\n%s", out);
    CHECK(server_shown(c, "alpha", "connected") && server_shown(c, "beta", "connected"));
    /* Fixed again: nothing refused. */
    write_text(h->config, good);
    _cleanup_free_ char *fixed = CTL(h, &st, "reload");
    CHECK_MSG(st == 0, "reload of the fixed file: exit %d\n%s", st, fixed);
}

/* "comand": a warning naming the field and the likely one; the reload refuses nothing else. */
static void test_unknown_field(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *extra = xasprintf(",\n    \"gamma\": {\"command\": \"%s\", \"args\": "
                                           "[\"--name\", \"gamma\"], \"comand\": \"x\","
                                           " \"timeout\": \"soon\"}",
                                           h_fake());
    _cleanup_free_ char *cfg = user_config(extra);
    int st;

    write_text(h->config, cfg);
    _cleanup_free_ char *out = CTL(h, &st, "reload");
    CHECK_MSG(st == 0, "warnings only: exit %d\n%s", st, out);
    CHECK_MSG(strstr(out, "warning:") && strstr(out, "unknown field \"comand\"") &&
                  strstr(out, "did you mean \"command\""),
              "reload output:\n%s", out);
    CHECK_MSG(strstr(out, "\"timeout\" must be a non-negative number"), "reload output:\n%s", out);
    CHECK(h_wait_state(c, "gamma", "connected", H_WAIT_MS));
}

/* Wait for a server to appear (and connect) with no command given. */
static bool wait_shown(mcpc_client *c, const char *name, bool present)
{
    for (int waited = 0; waited < H_WAIT_MS; waited += 100) {
        if (server_shown(c, name, present ? "connected" : NULL) == present)
            return true;
        h_sleep_ms(100);
    }
    return false;
}

static void test_hot_user_file(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *extra = xasprintf(
        ",\n    \"delta\": {\"command\": \"%s\", \"args\": [\"--name\", \"delta\"]}", h_fake());
    _cleanup_free_ char *cfg = user_config(extra);

    write_text(h->config, cfg);
    CHECK_MSG(wait_shown(c, "delta", true), "delta never appeared after editing %s", h->config);
    CHECK_MSG(wait_shown(c, "gamma", false), "gamma still there after its removal");
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "hot reload after"));
}

/* A project's own file, written while an agent works there (Claude Code's .mcp.json). */
static void test_hot_project_file(Harness *h)
{
    _cleanup_free_ char *proj = xasprintf("%s/home/proj", h->dir);
    _cleanup_free_ char *file = xasprintf("%s/.mcp.json", proj);
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"local\": {\"command\": \"%s\", \"args\": [\"--name\", \"local\"]}}}",
        h_fake());
    mcpc_options o = {
        .socket_path = h->socket, .client_name = "in-proj", .cwd = proj, .timeout_ms = 60000};
    mcpc_client *pc;
    _cleanup_free_ char *tools = NULL;

    mkdir(proj, 0700);
    /*
     * The user trusted the folder in Claude Code and told it to run every server of this
     * project's .mcp.json (its own approval, which mcpd follows): a server added there later
     * needs no new approval.
     */
    _cleanup_free_ char *claude = xasprintf("%s/home/.claude.json", h->dir);
    _cleanup_free_ char *approval =
        xasprintf("{\"projects\": {\"%s\": {\"hasTrustDialogAccepted\": "
                  "true, \"enableAllProjectMcpServers\": true}}}",
                  proj);
    write_text(claude, approval);
    pc = mcpc_new(&o);
    CHECK(mcpc_connect(pc) == 0);
    write_text(file, cfg);
    bool found = false;
    for (int waited = 0; waited < H_WAIT_MS && !found; waited += 100) {
        free(tools);
        tools = NULL;
        found = mcpc_list_tools(pc, &tools) == 0 && strstr(tools, "mcp_local_echo");
        if (!found)
            h_sleep_ms(100);
    }
    CHECK_MSG(found, "the project's server never reached its agent: %s", tools ?: "");
    mcpc_free(pc);
}

/* An agent installed after mcpd started: its directory and file did not exist. */
static void test_hot_new_agent_file(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *dir = xasprintf("%s/home/.gemini", h->dir);
    _cleanup_free_ char *file = xasprintf("%s/settings.json", dir);
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"gem\": {\"command\": \"%s\", \"args\": [\"--name\", \"gem\"]}}}",
        h_fake());
    struct stat sb;

    CHECK(stat(dir, &sb) < 0);
    mkdir(dir, 0700);
    write_text(file, cfg);
    CHECK_MSG(wait_shown(c, "gem", true), "gem never appeared after creating %s", file);
}

/* Undoing the edits removes those servers again, still without a command. */
static void test_hot_removal(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *cfg = user_config("");
    _cleanup_free_ char *gem = xasprintf("%s/home/.gemini/settings.json", h->dir);
    _cleanup_free_ char *proj = xasprintf("%s/home/proj/.mcp.json", h->dir);

    write_text(h->config, cfg);
    CHECK(unlink(gem) == 0 && unlink(proj) == 0);
    CHECK_MSG(wait_shown(c, "delta", false), "delta still there");
    CHECK_MSG(wait_shown(c, "gem", false), "gem still there after %s was deleted", gem);
    CHECK_MSG(wait_shown(c, "local", false), "local still there after %s was deleted", proj);
}

/* hotReload off: edits wait for `mcpctl reload`; mcpd.json itself is still applied at once. */
static void test_hot_reload_off(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *extra = xasprintf(
        ",\n    \"epsilon\": {\"command\": \"%s\", \"args\": [\"--name\", \"epsilon\"]}", h_fake());
    _cleanup_free_ char *with = user_config(extra), *without = user_config("");
    _cleanup_free_ char *log = NULL;
    int st;

    write_text(h->settings, "{\"hotReload\": false}");
    /* The settings change is applied: wait for its reload in the log before editing. */
    for (int waited = 0; waited < H_WAIT_MS; waited += 100) {
        free(log);
        log = h_read_file(h->log);
        if (log && strstr(log, "mcpd.json changed"))
            break;
        h_sleep_ms(100);
    }
    CHECK_MSG(log && strstr(log, "mcpd.json changed"), "the settings change was not applied");
    write_text(h->config, with);
    /* Four debounce periods: ample for a reload that must not come. */
    h_sleep_ms(2000);
    CHECK_MSG(!server_shown(c, "epsilon", NULL), "hotReload false, yet epsilon was added");
    _cleanup_free_ char *out = CTL(h, &st, "reload");
    CHECK_MSG(st == 0 && strstr(out, "epsilon") && strstr(out, "added"), "reload: %s", out);
    CHECK(h_wait_state(c, "epsilon", "connected", H_WAIT_MS));
    write_text(h->config, without);
    write_text(h->settings, "{}");
    /* Whichever comes first, the automatic reload (mcpd.json) or this one: epsilon goes. */
    _cleanup_free_ char *back = CTL(h, &st, "reload");
    CHECK_MSG(st == 0, "reload: %s", back);
    CHECK_MSG(wait_shown(c, "epsilon", false), "epsilon still there");
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg = user_config("");

    h_setup(&h, "reload");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "reload");
    h_settle(&h, c, "alpha", "beta", NULL);
    test_typo_keeps_servers(&h, c);
    test_unknown_field(&h, c);
    test_hot_user_file(&h, c);
    test_hot_project_file(&h);
    test_hot_new_agent_file(&h, c);
    test_hot_removal(&h, c);
    test_hot_reload_off(&h, c);
    h_check_healthy(&h, "typo, warnings and hot reloads", CONTROL);
    mcpc_free(c);
    h_teardown(&h);
    return h_finish("test-reload");
}
