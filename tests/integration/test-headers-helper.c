// SPDX-License-Identifier: MIT
// test-headers-helper: Claude Code's headersHelper run as Claude Code runs it: a live HTTP server
// sees the headers the helper printed (and the helper its server's name and URL); a slow (60 s)
// and a noisy (100 MB) helper are stopped at their bounds and named in status; a helper of a
// project not yet approved never runs, and runs once the project is.

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"

/* An untagged helper (the remote side, not a process of mcpd's); its pid in *pidp. */
static int start_http(Harness *h, const char *name, char *log, size_t log_size, pid_t *pidp)
{
    char port_file[400], out[400];
    int port;

    snprintf(port_file, sizeof(port_file), "%s/%s.port", h->dir, name);
    snprintf(out, sizeof(out), "%s/%s.out", h->dir, name);
    snprintf(log, log_size, "%s/%s.log", h->dir, name);
    char *argv[] = {getenv("HTTP_SERVER"), "--port-file", port_file, "--log", log, NULL};
    _cleanup_free_ char *tag = xstrdup(getenv("MCPD_TEST_TAG"));
    unsetenv("MCPD_TEST_TAG");
    *pidp = bg_spawn(argv, NULL, out);
    setenv("MCPD_TEST_TAG", tag, 1);
    if ((port = bg_wait_port_file(port_file, H_WAIT_MS)) < 0) {
        fprintf(stderr, "http-server %s did not start\n", name);
        exit(99);
    }
    return port;
}

static void put(const char *dir, const char *rel, const char *text)
{
    _cleanup_free_ char *path = paths_join(dir, rel), *parent = paths_dirname(path);
    FILE *f;

    CHECK(paths_mkdir_p(parent, 0700) == 0);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static bool marked(const Harness *h, const char *name)
{
    _cleanup_free_ char *p = xasprintf("%s/marks/%s", h->dir, name);
    return access(p, F_OK) == 0;
}

/* Wait until server's lastError holds want; return whether it did. */
static bool error_names(mcpc_client *c, const char *server, const char *want, int timeout_ms)
{
    for (int waited = 0; waited <= timeout_ms; waited += 100) {
        _cleanup_json_ yajl_val st = h_status(c);
        const char *e = json_get_string(h_server(st, server), "lastError");
        if (e && strstr(e, want))
            return true;
        h_sleep_ms(100);
    }
    _cleanup_json_ yajl_val st = h_status(c);
    const char *e = json_get_string(h_server(st, server), "lastError");
    fprintf(stderr, "%s: lastError %s\n", server, e ? e : "(none)");
    return false;
}

int main(void)
{
    Harness h;
    char log_user[400], log_repo[400];
    int port_user, port_repo;
    pid_t pid_user, pid_repo;

    if (!getenv("HTTP_SERVER")) {
        fprintf(stderr, "HTTP_SERVER is not set (run through meson test)\n");
        return 99;
    }
    h_setup(&h, "headers-helper");
    _cleanup_free_ char *home = paths_join(h.dir, "home"), *marks = paths_join(h.dir, "marks");
    _cleanup_free_ char *repo_dir = paths_join(h.dir, "repo");
    CHECK(paths_mkdir_p(marks, 0700) == 0 && paths_mkdir_p(repo_dir, 0700) == 0);
    _cleanup_free_ char *repo = realpath(repo_dir, NULL);
    setenv("MARKS", marks, 1);
    port_user = start_http(&h, "user", log_user, sizeof(log_user), &pid_user);
    port_repo = start_http(&h, "repo", log_repo, sizeof(log_repo), &pid_repo);
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    h_write_config(&h, cfg);

    /*
     * User level (~/.claude.json): a helper printing two headers and what it was told, one that
     * sleeps a minute, one that prints 100 MB.
     */
    _cleanup_free_ char *user_servers =
        xasprintf("\"mcpServers\": {"
                  " \"h\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                  "   \"headers\": {\"X-Test-Header\": \"written\"},"
                  "   \"headersHelper\": \"printf '%%s %%s' \\\"$CLAUDE_CODE_MCP_SERVER_NAME\\\" "
                  "\\\"$CLAUDE_CODE_MCP_SERVER_URL\\\" > \\\"$MARKS/h-env\\\"; printf "
                  "'{\\\"Authorization\\\": "
                  "\\\"Bearer from-helper\\\", \\\"X-Test-Header\\\": \\\"helper\\\"}'\"},"
                  " \"slow\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                  "   \"headersHelper\": \"sleep 60; echo {}\"},"
                  " \"noisy\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
                  "   \"headersHelper\": \"head -c 100000000 /dev/zero\"}}",
                  port_user, port_user, port_user);
    _cleanup_free_ char *claude_json =
        xasprintf("{%s, \"projects\": {}, \"history\": []}", user_servers);
    put(home, ".claude.json", claude_json);
    /* The repository's own: Claude Code's .mcp.json, enabled in the user's settings. */
    _cleanup_free_ char *mcp_json = xasprintf(
        "{\"mcpServers\": {\"repo\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
        " \"headersHelper\": \"touch \\\"$MARKS/repo-helper\\\"; echo '{\\\"X-Test-Header\\\": "
        "\\\"repo-helper\\\"}'\"}}}",
        port_repo);
    put(repo, ".mcp.json", mcp_json);
    put(home, ".claude/settings.json", "{\"enabledMcpjsonServers\": [\"repo\"]}");

    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "agent");

    /* 1. The live server sees the helper's headers, the helper's over the written ones. */
    CHECK(h_wait_state(c, "h", "connected", H_WAIT_MS));
    {
        _cleanup_free_ char *log = h_read_file(log_user), *env = NULL;
        _cleanup_free_ char *p = xasprintf("%s/h-env", marks);
        _cleanup_free_ char *want = xasprintf("h http://127.0.0.1:%d/mcp", port_user);
        CHECK_MSG(log && strstr(log, "auth=Bearer from-helper x-test=helper"),
                  "the server did not see the helper's headers: %s", log ? log : "(no log)");
        env = h_read_file(p);
        CHECK_MSG(env && streq(env, want), "the helper was told %s", env ? env : "(nothing)");
    }

    /* 2. A project not yet approved: its helper never runs. */
    mcpc_options o = {.socket_path = h.socket, .client_name = "agent-in-repo", .cwd = repo};
    mcpc_client *in_repo = mcpc_new(&o);
    CHECK(in_repo && mcpc_connect(in_repo) == 0);

    /* 3. The slow and the noisy helper are stopped at their bounds, and named. */
    CHECK(error_names(c, "noisy",
                      "headersHelper `head -c 100000000 /dev/zero` printed more than "
                      "65536 bytes; it was stopped",
                      H_WAIT_MS));
    CHECK(error_names(c, "slow",
                      "headersHelper `sleep 60; echo {}` did not finish within "
                      "10000 ms; it was stopped",
                      20000));
    CHECK_MSG(!marked(&h, "repo-helper"), "the helper of an unapproved project ran");
    {
        _cleanup_json_ yajl_val st = h_status(in_repo);
        CHECK_MSG(h_server(st, "repo") == NULL ||
                      !streq(json_get_string(h_server(st, "repo"), "state"), "connected"),
                  "the unapproved project's server connected");
    }

    /* 4. Approved (Claude Code's trust dialog accepted for the folder), it runs. */
    _cleanup_free_ char *trusted = xasprintf(
        "{%s, \"projects\": {\"%s\": {\"hasTrustDialogAccepted\": true}}, \"history\": []}",
        user_servers, repo);
    put(home, ".claude.json", trusted);
    {
        _cleanup_free_ char *params = xasprintf("{\"cwd\": \"%s\"}", repo), *out = NULL;
        CHECK(mcpc_request(in_repo, "mcpd/reload", params, &out) == 0);
    }
    CHECK(h_wait_state(in_repo, "repo", "connected", H_WAIT_MS));
    CHECK_MSG(marked(&h, "repo-helper"), "the approved project's helper did not run");
    {
        _cleanup_free_ char *log = h_read_file(log_repo);
        CHECK_MSG(log && strstr(log, "x-test=repo-helper"), "the repository's server saw: %s",
                  log ? log : "(no log)");
    }

    /* The two that fail stop retrying; what the others hold is the baseline now. */
    for (const char *const *n = (const char *const[]){"slow", "noisy", NULL}; *n; n++) {
        _cleanup_free_ char *params = xasprintf("{\"server\": \"%s\"}", *n), *out = NULL;
        CHECK(mcpc_request(c, "mcpd/disconnect", params, &out) == 0);
    }
    mcpc_free(in_repo);
    h_settle(&h, c, "steady", NULL);
    h_check_healthy(&h, "headersHelper", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(pid_user);
    bg_stop(pid_repo);
    h_teardown(&h);
    return h_finish("test-headers-helper");
}
