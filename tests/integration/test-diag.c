// SPDX-License-Identifier: MIT
// test-diag: a server that crashes with a message can be diagnosed: mcpctl logs shows each run's
// stderr and exit status after its restarts; status shows spawns, restarts, last exit, the
// command line with secrets hidden; logs -n, --run K and -f.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_alpha_echo"
/* The message the broken server leaves on stderr before it exits with status 3. */
#define FATAL "fatal: cannot open database /nonexistent/state.db"
/* Literal secrets written on its command line: status must never show them. */
#define SECRET_FLAG "hunter2-flag-value"
#define SECRET_ENV  "s3cr3t-assignment"
/* Restarts the crash loop must have gone through before we look (the "three"). */
#define MIN_RESTARTS 3
/* How long logs -f is left to follow the chatty server; it writes a line every 200 ms. */
#define FOLLOW_MS 3000

/* mcpctl against h's daemon; its stdout (to free). */
#define CTL(h, st, args, ...)                                                                      \
    h_shell(st, "'%s' --socket '%s' " args " 2>&1", getenv("MCPCTL_BINARY"), (h)->socket,          \
            ##__VA_ARGS__)

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Wait until broken has failed for good (the breaker) after its restarts. */
static yajl_val wait_broken(mcpc_client *c)
{
    for (int waited = 0; waited < 2 * H_WAIT_MS; waited += 200) {
        yajl_val st = h_status(c), s = h_server(st, "broken");
        int64_t restarts = 0;
        json_get_int(s, "restarts", &restarts);
        if (s && streq(json_get_string(s, "state") ?: "", "failed") && restarts >= MIN_RESTARTS)
            return st;
        json_free(st);
        h_sleep_ms(200);
    }
    return NULL;
}

static void test_crash_loop_status(mcpc_client *c)
{
    _cleanup_json_ yajl_val st = wait_broken(c);
    yajl_val s = h_server(st, "broken");
    int64_t spawns = 0, restarts = 0, at = 0;
    const char *cmd;

    CHECK_MSG(s, "broken never failed after %d restarts", MIN_RESTARTS);
    if (!s)
        return;
    json_get_int(s, "spawns", &spawns);
    json_get_int(s, "restarts", &restarts);
    /* Every respawn counts, though it never connected once. */
    CHECK_MSG(restarts >= MIN_RESTARTS && spawns == restarts + 1, "spawns %lld restarts %lld",
              (long long)spawns, (long long)restarts);
    CHECK(strstr(json_get_string(s, "lastExit") ?: "", "exited with status 3"));
    /* The error says how it ended and what it said last, not only that a pipe broke. */
    CHECK_MSG(strstr(json_get_string(s, "lastError") ?: "", "exited with status 3: " FATAL),
              "lastError: %s", json_get_string(s, "lastError"));
    CHECK(json_get_int(s, "lastExitAt", &at) == 0 && at > 0);
    CHECK(json_get_int(s, "lastErrorAt", &at) == 0 && at > 0);
    cmd = json_get_string(s, "commandLine") ?: "";
    CHECK_MSG(startswith(cmd, "sh -c "), "commandLine: %s", cmd);
    CHECK_MSG(!strstr(cmd, SECRET_FLAG) && !strstr(cmd, SECRET_ENV), "secret shown: %s", cmd);
    CHECK_MSG(strstr(cmd, "--api-key ***") && strstr(cmd, "API_TOKEN=***"), "commandLine: %s", cmd);
}

static void test_logs_cli(Harness *h)
{
    int st;
    _cleanup_free_ char *all = CTL(h, &st, "logs broken");
    _cleanup_free_ char *last = CTL(h, &st, "logs broken -n 1");
    _cleanup_free_ char *run2 = CTL(h, &st, "logs --run=2 broken");
    _cleanup_free_ char *json = CTL(h, &st, "logs broken --json");
    _cleanup_free_ char *none = CTL(h, &st, "logs broken --run 999");
    _cleanup_json_ yajl_val j = json_parse(json, NULL);
    yajl_val runs = json_get_array(j, "runs");

    /* Each run: its message and how it ended, kept across the restarts. */
    CHECK_MSG(count(all, FATAL) >= MIN_RESTARTS + 1, "logs:\n%s", all);
    CHECK_MSG(count(all, "exited with status 3") >= MIN_RESTARTS + 1, "logs:\n%s", all);
    CHECK_MSG(strstr(all, "-- run 1,") && strstr(all, "-- run 4,"), "logs:\n%s", all);
    CHECK_MSG(count(last, "\n") == 1 && strstr(last, "exited with status 3"), "-n 1: %s", last);
    CHECK_MSG(strstr(run2, "-- run 2,") && !strstr(run2, "-- run 1,") && !strstr(run2, "run 3"),
              "--run 2:\n%s", run2);
    CHECK(json_array_len(runs) >= MIN_RESTARTS + 1);
    for (size_t i = 0; i < json_array_len(runs); i++) {
        yajl_val r = json_array_at(runs, i);
        int64_t code = -1;
        CHECK(json_get_int(r, "exitCode", &code) == 0 && code == 3);
        CHECK(strstr(json_get_string(r, "stderr") ?: "", FATAL));
    }
    CHECK_MSG(strstr(none, "no run 999"), "--run 999: %s", none);
    _cleanup_free_ char *bad = CTL(h, &st, "status --run 2");
    (void)bad; /* only its cleanup is wanted */
    CHECK_MSG(st == 2, "status --run: exit %d", st);
}

/* -f prints what the server writes after mcpctl started, not only what was there. */
static void test_follow(Harness *h, mcpc_client *c)
{
    int st;
    _cleanup_free_ char *before = CTL(h, &st, "logs chatty");
    _cleanup_free_ char *followed = h_shell(&st, "timeout %.1f '%s' --socket '%s' logs chatty -f",
                                            FOLLOW_MS / 1000.0, getenv("MCPCTL_BINARY"), h->socket);
    size_t n_before = count(before, "tick "), n_after = count(followed, "tick ");

    /* 200 ms a line for 3 s: well over five more, even on a loaded machine. */
    CHECK_MSG(n_after >= n_before + 5, "before %zu ticks, followed %zu:\n%s", n_before, n_after,
              followed);
    CHECK_MSG(count(followed, "-- run 1,") == 1, "header repeated:\n%s", followed);
    (void)c;
}

/* The record outlives mcpd: after a restart the old runs are still there, and counting goes on. */
static void test_survives_restart(Harness *h)
{
    int st;

    CHECK(h_stop(h) == 0);
    h_start(h, NULL);
    mcpc_client *c = h_client(h, "after-restart");
    _cleanup_json_ yajl_val stat = wait_broken(c);
    yajl_val s = h_server(stat, "broken");
    int64_t spawns = 0;
    CHECK(json_get_int(s, "spawns", &spawns) == 0 && spawns >= 2 * (MIN_RESTARTS + 1));
    _cleanup_free_ char *all = CTL(h, &st, "logs broken");
    CHECK_MSG(strstr(all, "-- run 1,") && strstr(all, "-- run 8,"), "logs after restart:\n%s", all);
    h_settle(h, c, "alpha", NULL);
    mcpc_free(c);
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        "\"alpha\": {\"command\": \"%s\", \"args\": [\"--name\", \"alpha\"]},"
        "\"broken\": {\"command\": \"sh\", \"args\": [\"-c\", \"echo '" FATAL "' >&2; exit 3\", "
        "\"diag\", \"--api-key\", \"" SECRET_FLAG "\", \"API_TOKEN=" SECRET_ENV "\"]},"
        "\"chatty\": {\"command\": \"sh\", \"timeout\": 600000, \"args\": [\"-c\", "
        "\"i=0; while :; do echo tick $i >&2; i=$((i+1)); sleep 0.2; done\"]}"
        "}}",
        h_fake());

    h_setup(&h, "diag");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "diag");
    test_crash_loop_status(c);
    /* Settled once the crash loop is over, so the fd baseline holds no dying process. */
    h_settle(&h, c, "alpha", NULL);
    test_logs_cli(&h);
    test_follow(&h, c);
    h_check_healthy(&h, "crash loop diagnosed", CONTROL);
    mcpc_free(c);
    test_survives_restart(&h);
    h_check_healthy(&h, "run record read back after a restart", CONTROL);
    h_teardown(&h);
    return h_finish("test-diag");
}
