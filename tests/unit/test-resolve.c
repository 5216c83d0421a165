// SPDX-License-Identifier: MIT
// test-resolve: !command values (ok, failing, hanging, silent), variable names, trust, credentials.

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/server-entry.h"
#include "daemon/sys/child.h"
#include "daemon/config/config.h"
#include "daemon/config/resolve.h"
#include "tests/unit/test.h"

static struct event_base *base;
static char *tmp, *cfg_path, *cred_path;

typedef struct Outcome {
    bool called;
    ServerConfig *resolved;
    char *error;
    bool retryable;
} Outcome;

static void on_done(void *userdata, ServerConfig *resolved, const char *error, bool retryable)
{
    Outcome *o = userdata;

    CHECK(!o->called); /* exactly once */
    o->called = true;
    o->resolved = resolved;
    o->error = error ? xstrdup(error) : NULL;
    o->retryable = retryable;
    event_base_loopbreak(base);
}

static void on_sigchld(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    child_reap();
}

static ServerConfig *config(const char *text)
{
    _cleanup_json_ yajl_val obj = json_parse(text, NULL);
    SourceMeta src = {"mcpd", "mcpd (user)", cfg_path, CONFIG_LEVEL_USER, 0};
    ConfigSet set = {.quiet = true};
    Settings s;
    ServerConfig *c;

    if (!obj)
        abort();
    settings_init(&s);
    c = server_config_from_json("s", obj, &src, &s, &set);
    if (!c) {
        fprintf(stderr, "bad test config: %s\n", set.n_problems ? set.problems[0].message : "?");
        abort();
    }
    config_set_deinit(&set);
    return c;
}

/* Resolve text (a server entry) with the given command timeout; wait for the outcome. */
static void run(const char *text, int64_t timeout_ms, Outcome *o)
{
    ServerConfig *c = config(text);
    _cleanup_free_ char *before = json_to_string(c->env ? c->env : c->headers);
    ResolveOptions opt = {timeout_ms, cred_path};
    Resolve *r = NULL;

    memset(o, 0, sizeof(*o));
    CHECK_INTEQ(resolve_start(&r, base, c, &opt, on_done, o), 0);
    CHECK(!o->called); /* never from resolve_start itself */
    event_base_dispatch(base);
    CHECK(o->called);
    /* The input is never changed: it is what status, cache and discover see. */
    _cleanup_free_ char *after = json_to_string(c->env ? c->env : c->headers);
    CHECK_STREQ(before, after);
    server_config_free(c);
    /* Every command has been reaped, whatever happened. */
    CHECK_INTEQ(child_count(), 0);
}

static void outcome_deinit(Outcome *o)
{
    server_config_free(o->resolved);
    free(o->error);
}

static const char *env_of(const Outcome *o, const char *key)
{
    return o->resolved ? json_get_string(o->resolved->env, key) : NULL;
}

static void test_command_succeeds(void)
{
    Outcome o;

    run("{\"command\":\"x\",\"env\":{\"TOKEN\":\"!printf '  s3cret \\\\n\\\\n'\","
        "\"SECOND\":\"!echo two; echo lines\",\"PLAIN\":\"kept\"}}",
        0, &o);
    CHECK(o.resolved && !o.error);
    CHECK_STREQ(env_of(&o, "TOKEN"), "s3cret");
    CHECK_STREQ(env_of(&o, "SECOND"), "two\nlines");
    CHECK_STREQ(env_of(&o, "PLAIN"), "kept");
    outcome_deinit(&o);

    /* http and sse resolve headers; env is left alone there. */
    run("{\"type\":\"http\",\"url\":\"https://h/mcp\",\"headers\":{\"Authorization\":"
        "\"!echo Bearer abc\"}}",
        0, &o);
    CHECK(o.resolved && streq(json_get_string(o.resolved->headers, "Authorization"), "Bearer abc"));
    outcome_deinit(&o);

    /* A background grandchild holding stdout does not hold the value up: the group goes. */
    run("{\"command\":\"x\",\"env\":{\"T\":\"!sleep 30 & echo fast\"}}", 0, &o);
    CHECK_STREQ(env_of(&o, "T"), "fast");
    outcome_deinit(&o);
}

static void test_command_fails(void)
{
    Outcome o, o2;

    /* What it prints may be the secret itself: never quoted, the status and what to do are. */
    run("{\"command\":\"x\",\"env\":{\"TOKEN\":\"!echo tok-4711 >&2; exit 3\"}}", 0, &o);
    CHECK(!o.resolved && o.retryable);
    CHECK_STREQ(o.error, "Server \"s\": env.TOKEN: `!echo tok-4711 >&2; exit 3` exited with "
                         "status 3; its output is not shown (it may hold secrets): run the "
                         "command yourself to see why it fails");
    run("{\"command\":\"x\",\"env\":{\"TOKEN\":\"!cat /proc/self/environ >&2; false\"}}", 0, &o2);
    CHECK(o2.error && strstr(o2.error, "exited with status 1") && !strstr(o2.error, "PATH="));
    outcome_deinit(&o2);
    outcome_deinit(&o);

    run("{\"command\":\"x\",\"env\":{\"K\":\"!kill -9 $$\"}}", 0, &o);
    CHECK(o.error && strstr(o.error, "env.K: `!kill -9 $$` killed by signal 9"));
    outcome_deinit(&o);

    run("{\"command\":\"x\",\"env\":{\"K\":\"!head -c 70000 /dev/zero | tr '\\\\0' a\"}}", 0, &o);
    CHECK(o.error && strstr(o.error, "printed more than 65536 bytes"));
    outcome_deinit(&o);
}

static void test_command_hangs(void)
{
    Outcome o;

    /* A short timeout, so the test is quick; the real 10 s bound is checked below. */
    run("{\"command\":\"x\",\"env\":{\"OK\":\"!echo fine\",\"SLOW\":\"!sleep 60\"}}", 300, &o);
    CHECK(!o.resolved && o.retryable);
    CHECK_STREQ(o.error,
                "Server \"s\": env.SLOW: `!sleep 60` did not finish within 300 ms; it was stopped");
    outcome_deinit(&o);

    /* One hang past the real default (10 s): killed, reaped, reported. */
    run("{\"command\":\"x\",\"env\":{\"SLOW\":\"!exec sleep 60\"}}", 0, &o);
    CHECK_STREQ(
        o.error,
        "Server \"s\": env.SLOW: `!exec sleep 60` did not finish within 10000 ms; it was stopped");
    outcome_deinit(&o);
}

/*
 * A !command that prints nothing drops its key (B14); a value written empty, or a variable name
 * set to "", is passed as "" (Claude Code, Codex, VS Code pass "FOO": "" to the server as set
 * and empty, which servers read as "set": --flag=, NO_COLOR=).
 */
static void test_empty_values(void)
{
    Outcome o;

    setenv("MCPD_RT_EMPTY", "", 1);
    run("{\"command\":\"x\",\"env\":{\"NOTHING\":\"!true\",\"BLANK\":\"!printf '  \\\\n'\","
        "\"LITERAL\":\"\",\"VAR\":\"MCPD_RT_EMPTY\",\"KEEP\":\"k\"}}",
        0, &o);
    CHECK(o.resolved && !o.error);
    if (o.resolved) {
        CHECK_INTEQ(o.resolved->env->u.object.len, 3);
        CHECK_STREQ(env_of(&o, "KEEP"), "k");
        CHECK_STREQ(env_of(&o, "LITERAL"), "");
        CHECK_STREQ(env_of(&o, "VAR"), "");
        CHECK(!env_of(&o, "NOTHING") && !env_of(&o, "BLANK"));
    }
    outcome_deinit(&o);
}

static void test_variable_names(void)
{
    Outcome o;

    /* A "!" that came from ${VAR} expansion, not from the file, is never run. */
    {
        _cleanup_json_ yajl_val written = json_parse("{\"command\":\"x\",\"env\":{\"T\":"
                                                     "\"${MCPD_RT_BANG}\"}}",
                                                     NULL);
        _cleanup_json_ yajl_val expanded = json_parse("{\"command\":\"x\",\"env\":{\"T\":"
                                                      "\"!echo ran\"}}",
                                                      NULL);
        SourceMeta src = {"mcpd", "mcpd (user)", cfg_path, CONFIG_LEVEL_USER, 0};
        ConfigSet set = {.quiet = true};
        Settings s;
        Resolve *r = NULL;
        settings_init(&s);
        ServerConfig *c = server_config_build("s", written, expanded, &src, &s, &set);
        memset(&o, 0, sizeof(o));
        CHECK(c && resolve_start(&r, base, c, NULL, on_done, &o) == 0);
        event_base_dispatch(base);
        CHECK_STREQ(env_of(&o, "T"), "!echo ran");
        CHECK_INTEQ(child_count(), 0);
        outcome_deinit(&o);
        server_config_free(c);
        config_set_deinit(&set);
    }

    setenv("MCPD_RT_TOKEN", "from-env", 1);
    unsetenv("MCPD_RT_UNSET");
    run("{\"command\":\"x\",\"env\":{\"A\":\"MCPD_RT_TOKEN\",\"B\":\"MCPD_RT_UNSET\","
        "\"C\":\"not a name\",\"D\":\"MCPD_RT_TOKEN-x\"}}",
        0, &o);
    CHECK_STREQ(env_of(&o, "A"), "from-env");
    CHECK_STREQ(env_of(&o, "B"), "MCPD_RT_UNSET");
    CHECK_STREQ(env_of(&o, "C"), "not a name");
    CHECK_STREQ(env_of(&o, "D"), "MCPD_RT_TOKEN-x");
    outcome_deinit(&o);

    /*
     * Only in mcpd's own files: Claude Code (like every agent) passes a value that happens to name
     * a set variable as written ("LOG_LEVEL": "DEBUG" with DEBUG set stays "DEBUG").
     */
    {
        _cleanup_json_ yajl_val obj = json_parse("{\"command\":\"x\",\"env\":{\"A\":"
                                                 "\"MCPD_RT_TOKEN\"}}",
                                                 NULL);
        SourceMeta src = {"claude", "Claude Code", cfg_path, CONFIG_LEVEL_USER, 0};
        ConfigSet set = {.quiet = true};
        Settings s;
        Resolve *r = NULL;
        settings_init(&s);
        ServerConfig *c = server_config_from_json("s", obj, &src, &s, &set);
        memset(&o, 0, sizeof(o));
        CHECK(c && resolve_start(&r, base, c, NULL, on_done, &o) == 0);
        event_base_dispatch(base);
        CHECK_STREQ(env_of(&o, "A"), "MCPD_RT_TOKEN");
        outcome_deinit(&o);
        server_config_free(c);
        config_set_deinit(&set);
    }
}

static void test_untrusted_file_refused(void)
{
    Outcome o;

    chmod(cfg_path, 0666);
    run("{\"command\":\"x\",\"env\":{\"T\":\"!echo never\",\"PLAIN\":\"p\"}}", 0, &o);
    chmod(cfg_path, 0600);
    CHECK(!o.resolved && !o.retryable);
    _cleanup_free_ char *want = xasprintf("Server \"s\": env.T: refusing to run a !command: %s is "
                                          "writable by others (mode 0666); run chmod go-w %s",
                                          cfg_path, cfg_path);
    CHECK_STREQ(o.error, want);
    outcome_deinit(&o);

    chmod(cfg_path, 0620);
    run("{\"command\":\"x\",\"env\":{\"T\":\"!echo never\"}}", 0, &o);
    chmod(cfg_path, 0600);
    CHECK(o.error && strstr(o.error, "is writable by its group (mode 0620)"));
    outcome_deinit(&o);

    /* A file owned by someone else (root's, unless the test runs as root). */
    char *why = NULL;
    if (geteuid() != 0) {
        CHECK_INTEQ(resolve_check_file("/etc/passwd", &why), -EPERM);
        CHECK(why && strstr(why, "/etc/passwd is owned by uid 0, not by you"));
        free(why);
        why = NULL;
    }
    CHECK(resolve_check_file("/nonexistent/mcp.json", &why) < 0 && why);
    free(why);
    why = NULL;
    CHECK_INTEQ(resolve_check_file(cfg_path, &why), 0);
    CHECK(why == NULL);
}

static void test_cancel(void)
{
    ServerConfig *c = config("{\"command\":\"x\",\"env\":{\"T\":\"!sleep 60\"}}");
    Resolve *r = NULL;
    Outcome o = {0};

    CHECK_INTEQ(resolve_start(&r, base, c, NULL, on_done, &o), 0);
    CHECK_INTEQ(child_count(), 1);
    resolve_cancel(r);
    CHECK_INTEQ(child_count(), 0);
    event_base_loop(base, EVLOOP_NONBLOCK);
    CHECK(!o.called);
    resolve_cancel(NULL);
    server_config_free(c);
}

static void test_oauth_credentials(void)
{
    Outcome o;

    test_write_file(cred_path, "{\"cred-1\":{\"accessToken\":\"oauth-tok\"},"
                               "\"old\":{\"accessToken\":\"x\",\"expiresAt\":1000},"
                               "\"empty\":{\"accessToken\":\"\"}}");
    chmod(cred_path, 0600);
    run("{\"type\":\"sse\",\"url\":\"https://h/sse\",\"headers\":{\"Authorization\":\"old\"},"
        "\"auth\":{\"type\":\"oauth\",\"credentialId\":\"cred-1\"}}",
        0, &o);
    CHECK(o.resolved &&
          streq(json_get_string(o.resolved->headers, "Authorization"), "Bearer oauth-tok"));
    outcome_deinit(&o);
    run("{\"command\":\"x\",\"auth\":{\"type\":\"oauth\",\"credentialId\":\"cred-1\"}}", 0, &o);
    CHECK_STREQ(env_of(&o, "OAUTH_ACCESS_TOKEN"), "oauth-tok");
    outcome_deinit(&o);
    /* apikey is the caller's business: nothing added. */
    run("{\"command\":\"x\",\"auth\":{\"type\":\"apikey\",\"credentialId\":\"cred-1\"}}", 0, &o);
    CHECK(o.resolved && !o.resolved->env);
    outcome_deinit(&o);

    static const struct {
        const char *id, *want;
    } bad[] = {
        {"nope", "credential \"nope\" is not in "},
        {"old", "credential \"old\" in "},
        {"empty", "has no \"accessToken\" string"},
    };
    for (size_t i = 0; i < N_ELEMENTS(bad); i++) {
        _cleanup_free_ char *text = xasprintf(
            "{\"command\":\"x\",\"auth\":{\"type\":\"oauth\",\"credentialId\":\"%s\"}}", bad[i].id);
        run(text, 0, &o);
        CHECK(!o.resolved && !o.retryable && o.error && strstr(o.error, bad[i].want) &&
              startswith(o.error, "Server \"s\": auth: "));
        outcome_deinit(&o);
    }

    /* A store others can read is refused with the fix in the message. */
    chmod(cred_path, 0644);
    run("{\"command\":\"x\",\"auth\":{\"type\":\"oauth\",\"credentialId\":\"cred-1\"}}", 0, &o);
    CHECK(o.error && strstr(o.error, "readable by you only (mode 0644); run chmod 600"));
    outcome_deinit(&o);
    unlink(cred_path);
    run("{\"command\":\"x\",\"auth\":{\"type\":\"oauth\",\"credentialId\":\"cred-1\"}}", 0, &o);
    CHECK(o.error && strstr(o.error, "does not exist"));
    outcome_deinit(&o);
    /* A FIFO or a link in its place: refused at once, never waited on or followed. */
    CHECK(mkfifo(cred_path, 0600) == 0);
    run("{\"command\":\"x\",\"auth\":{\"type\":\"oauth\",\"credentialId\":\"cred-1\"}}", 0, &o);
    CHECK(o.error && strstr(o.error, "FIFO") && strstr(o.error, cred_path));
    outcome_deinit(&o);
    unlink(cred_path);
    CHECK(symlink(cfg_path, cred_path) == 0);
    run("{\"command\":\"x\",\"auth\":{\"type\":\"oauth\",\"credentialId\":\"cred-1\"}}", 0, &o);
    CHECK(o.error && strstr(o.error, "symbolic link"));
    outcome_deinit(&o);
    unlink(cred_path);
}

int main(void)
{
    struct event *ev_chld;

    log_set_level(LOG_ERR);
    signal(SIGPIPE, SIG_IGN);
    tmp = test_tmpdir();
    /* The credential store is the file here: no session bus, so no Secret Service of the user's. */
    unsetenv("DBUS_SESSION_BUS_ADDRESS");
    setenv("XDG_RUNTIME_DIR", tmp, 1);
    cfg_path = paths_join(tmp, "mcp.json");
    cred_path = paths_join(tmp, "credentials.json");
    test_write_file(cfg_path, "{}");
    chmod(cfg_path, 0600);
    base = event_base_new();
    ev_chld = evsignal_new(base, SIGCHLD, on_sigchld, NULL);
    event_add(ev_chld, NULL);
    RUN(test_command_succeeds);
    RUN(test_command_fails);
    RUN(test_empty_values);
    RUN(test_variable_names);
    RUN(test_untrusted_file_refused);
    RUN(test_cancel);
    RUN(test_oauth_credentials);
    RUN(test_command_hangs);
    event_free(ev_chld);
    event_base_free(base);
    test_rm_rf(tmp);
    free(tmp);
    free(cfg_path);
    free(cred_path);
    return test_main_result();
}
