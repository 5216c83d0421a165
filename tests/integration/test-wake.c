// SPDX-License-Identifier: MIT
// test-wake: a resume from sleep (docs/processes.md, "Sleep and wake"), heard through logind's
// PrepareForSleep(false) on a private D-Bus bus (a dbus-daemon and fake-login1 started here) and
// through a faked jump of CLOCK_BOOTTIME (the test knob MCPD_TEST_CLOCK_OFFSET_FILE): every
// running stdio server is pinged, one that does not answer (stopped with SIGSTOP) is restarted,
// an OAuth token that ends within minutes is refreshed and its HTTP server reconnected, and
// status says when and what.

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

/* The access tokens live 200 s: within wake.c's 5 minutes, far from the renewal's own timer. */
#define TOKEN_LIFETIME_S "200"

typedef struct WakeTest {
    Harness h;
    mcpc_client *c;
    char alive_log[400], offset[400], tokens[400];
    pid_t login1;        /* fake-login1, or 0 without the logind part */
    bool oauth;          /* an HTTP server with a sign-in ("o") */
    int64_t resumes;     /* seen so far */
    uint64_t resumed_ms; /* when the last resume was made (monotonic) */
} WakeTest;

static int64_t server_int(mcpc_client *c, const char *server, const char *key)
{
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t v = -1;

    json_get_int(h_server(st, server), key, &v);
    return v;
}

static char *refresh_token(const WakeTest *t)
{
    _cleanup_free_ char *text = h_read_file(t->tokens);
    _cleanup_json_ yajl_val v = text ? json_parse(text, NULL) : NULL;
    const char *rt = json_get_string(json_array_at(json_get_array(v, "tokens"), 0), "refreshToken");

    return rt ? xstrdup(rt) : NULL;
}

/* The daemon's resume object in status (to free). */
static yajl_val resume_status(mcpc_client *c)
{
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val r = json_get_object(json_get_object(st, "daemon"), "resume");

    return r ? json_copy(r) : NULL;
}

/*
 * Stop the "dead" server's process, make mcpd hear a resume (resume() does), and wait until
 * everything is done: a new "dead" process connected, "alive" pinged, the token refreshed.
 */
static void resume_and_check(WakeTest *t, const char *source, void (*resume)(WakeTest *t))
{
    int64_t old_pid = server_int(t->c, "dead", "pid"), new_pid = -1;
    int pings = h_count_in_file(t->alive_log, "\"method\":\"ping\"");
    _cleanup_free_ char *rt_before = t->oauth ? refresh_token(t) : NULL;
    bool resumed = false, restarted = false, pinged = false, refreshed = !t->oauth;
    uint64_t t0, took = 0;

    CHECK_MSG(old_pid > 0 && kill((pid_t)old_pid, SIGSTOP) == 0, "no dead server to stop");
    t0 = t->resumed_ms = now_ms();
    resume(t);
    for (int waited = 0; waited < H_WAIT_MS && !(resumed && restarted && pinged && refreshed);
         waited += 10) {
        _cleanup_json_ yajl_val r = resume_status(t->c);
        int64_t n = 0;
        json_get_int(r, "resumes", &n);
        resumed = n == t->resumes + 1 && streq(json_get_string(r, "source"), source);
        new_pid = server_int(t->c, "dead", "pid");
        restarted = restarted || (new_pid > 0 && new_pid != old_pid);
        pinged = pinged || h_count_in_file(t->alive_log, "\"method\":\"ping\"") > pings;
        if (!refreshed) {
            _cleanup_free_ char *rt = refresh_token(t);
            refreshed = rt && rt_before && !streq(rt, rt_before);
        }
        took = now_ms() - t0;
        h_sleep_ms(10);
    }
    printf("test-wake: resume through %s handled in %llu ms (restart, ping%s)\n", source,
           (unsigned long long)took, t->oauth ? ", token refresh" : "");
    CHECK_MSG(resumed, "%s: no resume in status", source);
    CHECK_MSG(restarted, "%s: the server stopped with SIGSTOP was not restarted", source);
    CHECK_MSG(pinged, "%s: the live server got no ping", source);
    CHECK_MSG(refreshed, "%s: the token ending within minutes was not refreshed", source);
    CHECK(h_wait_state(t->c, "dead", "connected", H_WAIT_MS));
    CHECK(h_wait_state(t->c, "alive", "connected", H_WAIT_MS));
    if (t->oauth)
        CHECK(h_wait_state(t->c, "o", "connected", H_WAIT_MS));
    {
        _cleanup_json_ yajl_val r = resume_status(t->c);
        int64_t pinged_n = 0, restarted_n = 0, refreshed_n = 0;
        json_get_int(r, "pinged", &pinged_n);
        json_get_int(r, "restarted", &restarted_n);
        json_get_int(r, "tokensRefreshed", &refreshed_n);
        CHECK_MSG(pinged_n == 2 && restarted_n == 1 && refreshed_n == (t->oauth ? 1 : 0),
                  "%s: status says %lld pinged, %lld restarted, %lld refreshed", source,
                  (long long)pinged_n, (long long)restarted_n, (long long)refreshed_n);
    }
    /* The stopped process is ended by mcpd's stop sequence (its SIGKILL reaches it stopped). */
    for (int waited = 0; waited < H_WAIT_MS && kill((pid_t)old_pid, 0) == 0; waited += 50)
        h_sleep_ms(50);
    CHECK_MSG(kill((pid_t)old_pid, 0) < 0, "the unresponsive server %lld is still there",
              (long long)old_pid);
    t->resumes++;
}

static void resume_logind(WakeTest *t)
{
    CHECK(kill(t->login1, SIGUSR1) == 0); /* going to sleep */
    h_sleep_ms(50);
    CHECK(kill(t->login1, SIGUSR2) == 0); /* resumed */
}

/* The test knob: CLOCK_BOOTTIME an hour ahead of CLOCK_MONOTONIC, as after an hour asleep. */
static void resume_clock(WakeTest *t)
{
    static long hours;
    _cleanup_free_ char *text = xasprintf("%ld\n", ++hours * 3600000L);

    h_sh("printf '%%s' '%s' > '%s'", text, t->offset);
}

static bool has_dbus_daemon(void)
{
    int status = -1;

    free(h_shell(&status, "command -v dbus-daemon"));
    return status == 0;
}

/* A private bus with logind's stand-in on it; mcpd finds it as its system bus. */
static void start_bus(WakeTest *t)
{
    const char *login1 = getenv("FAKE_LOGIN1");
    char conf[400], sock[400], ready[400], log[400];
    _cleanup_free_ char *tag = xstrdup(getenv("MCPD_TEST_TAG"));
    char *dbus_argv[] = {"dbus-daemon", "--nofork", "--nopidfile", NULL, NULL};
    char *login1_argv[] = {(char *)login1, ready, NULL};
    _cleanup_free_ char *conf_arg = NULL, *addr = NULL;
    struct stat st;

    snprintf(conf, sizeof(conf), "%s/bus.conf", t->h.dir);
    snprintf(sock, sizeof(sock), "%s/system_bus_socket", t->h.dir);
    snprintf(ready, sizeof(ready), "%s/login1.ready", t->h.dir);
    snprintf(log, sizeof(log), "%s/bus.log", t->h.dir);
    h_sh("cat > '%s' <<'EOF'\n"
         "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
         " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
         "<busconfig><type>session</type><listen>unix:path=%s</listen><auth>EXTERNAL</auth>\n"
         "<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>\n"
         "<allow send_destination=\"*\"/><allow receive_sender=\"*\"/></policy></busconfig>\n"
         "EOF",
         conf, sock);
    conf_arg = xasprintf("--config-file=%s", conf);
    dbus_argv[3] = conf_arg;
    addr = xasprintf("unix:path=%s", sock);
    setenv("DBUS_SYSTEM_BUS_ADDRESS", addr, 1);
    /* Untagged: the bus and logind are the machine's, not processes of mcpd's. */
    unsetenv("MCPD_TEST_TAG");
    bg_spawn(dbus_argv, NULL, log);
    for (int waited = 0; waited < H_WAIT_MS && stat(sock, &st) < 0; waited += 20)
        h_sleep_ms(20);
    t->login1 = bg_spawn(login1_argv, NULL, log);
    setenv("MCPD_TEST_TAG", tag, 1);
    for (int waited = 0; waited < H_WAIT_MS && stat(ready, &st) < 0; waited += 20)
        h_sleep_ms(20);
    if (stat(ready, &st) < 0) {
        _cleanup_free_ char *text = h_read_file(log);
        fprintf(stderr, "test-wake: the private bus or fake-login1 did not start:\n%s\n",
                text ? text : "");
        exit(99);
    }
}

/* The OAuth server ("o", tokens living TOKEN_LIFETIME_S) and its headless sign-in. */
static int start_oauth(WakeTest *t)
{
    char port_file[400], log[400];
    _cleanup_free_ char *tag = xstrdup(getenv("MCPD_TEST_TAG"));
    char *argv[] = {getenv("OAUTH_SERVER"), "--port-file",    port_file,
                    "--expires-in",         TOKEN_LIFETIME_S, NULL};
    int port;

    snprintf(port_file, sizeof(port_file), "%s/oauth.port", t->h.dir);
    snprintf(log, sizeof(log), "%s/oauth.log", t->h.dir);
    unsetenv("MCPD_TEST_TAG");
    bg_spawn(argv, NULL, log);
    setenv("MCPD_TEST_TAG", tag, 1);
    port = bg_wait_port_file(port_file, H_WAIT_MS);
    if (port < 0) {
        fprintf(stderr, "test-wake: oauth-server did not start\n");
        exit(99);
    }
    return port;
}

static void sign_in(WakeTest *t)
{
    char *out = NULL;

    CHECK(mcpc_request(t->c, "mcpd/login", "{\"server\":\"o\",\"headless\":true}", &out) == 0);
    free(out);
    out = NULL;
    CHECK(mcpc_request(t->c, "mcpd/loginWait", "{\"server\":\"o\"}", &out) == 0);
    CHECK_MSG(out && strstr(out, "\"signedIn\":true"), "loginWait gave %s", out ? out : "(null)");
    free(out);
    CHECK(h_wait_state(t->c, "o", "connected", H_WAIT_MS));
}

int main(void)
{
    static WakeTest t;
    _cleanup_free_ char *cfg = NULL, *oauth_entry = NULL;

    h_setup(&t.h, "wake");
    snprintf(t.alive_log, sizeof(t.alive_log), "%s/alive.log", t.h.dir);
    snprintf(t.offset, sizeof(t.offset), "%s/clock-offset", t.h.dir);
    snprintf(t.tokens, sizeof(t.tokens), "%s/state/mcpd/oauth-tokens.json", t.h.dir);
    h_sh("echo 0 > '%s'", t.offset);
    setenv("MCPD_TEST_CLOCK_OFFSET_FILE", t.offset, 1);
    if (getenv("FAKE_LOGIN1") && !has_dbus_daemon() && !getenv("CI"))
        fprintf(stderr, "test-wake: no dbus-daemon (bash .ci/deps installs it): the logind part "
                        "is left out\n");
    else if (getenv("FAKE_LOGIN1"))
        start_bus(&t);
    else
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/mcpd-test-wake", 1);
    t.oauth = getenv("OAUTH_SERVER") && getenv("WAKE_OAUTH");
    if (t.oauth)
        oauth_entry = xasprintf(", \"o\": {\"url\": \"http://127.0.0.1:%d/mcp\"}", start_oauth(&t));
    cfg = xasprintf("{\"mcpServers\": {\"alive\": {\"command\": \"%s\", \"args\": [\"--log\", "
                    "\"%s\"]}, \"dead\": {\"command\": \"%s\"}%s}}",
                    h_fake(), t.alive_log, h_fake(), oauth_entry ? oauth_entry : "");
    h_write_config(&t.h, cfg);
    h_start(&t.h, NULL);
    t.c = h_client(&t.h, "control");
    CHECK(h_wait_state(t.c, "alive", "connected", H_WAIT_MS));
    CHECK(h_wait_state(t.c, "dead", "connected", H_WAIT_MS));
    if (t.oauth)
        sign_in(&t);

    {
        _cleanup_json_ yajl_val r = resume_status(t.c);
        int64_t n = -1;
        json_get_int(r, "resumes", &n);
        CHECK_MSG(n == 0, "a resume before any sleep");
        CHECK(streq(json_get_string(r, "watching"), t.login1 ? "logind, clocks" : "clocks"));
    }
    if (t.login1) {
        resume_and_check(&t, "logind", resume_logind);
        /* A report within SLEEPWATCH_COALESCE_MS (5 s) of logind's is the same sleep. */
        while (now_ms() - t.resumed_ms < 5200)
            h_sleep_ms(50);
    }
    resume_and_check(&t, "clock", resume_clock);
    {
        int status = 0;
        _cleanup_free_ char *text = h_shell(&status, "'%s' status", getenv("MCPCTL_BINARY"));
        CHECK_MSG(text && strstr(text, "resumed from sleep") && strstr(text, "(clock, asleep 60m"),
                  "mcpctl status says: %s", text ? text : "(nothing)");
        _cleanup_free_ char *json = h_shell(&status, "'%s' status --json", getenv("MCPCTL_BINARY"));
        CHECK_MSG(json && strstr(json, "\"resume\":{") && strstr(json, "\"lastAt\":"),
                  "mcpctl status --json says: %s", json ? json : "(nothing)");
    }

    mcpc_free(t.c);
    CHECK(h_stop(&t.h) == 0);
    if (h_failures)
        h_dump_log(&t.h);
    h_teardown(&t.h);
    return h_finish("test-wake");
}
