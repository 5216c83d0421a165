// SPDX-License-Identifier: MIT
// test-security: other uids refused, runtime and socket dirs checked, the socket kept private.

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Put in env and headers: it must never come back out. */
#define SECRET "s3cret-4711-value"

static char runtime[400];

/* Start mcpd expecting it to refuse; its status and log must say why (want). */
static void expect_refusal(Harness *h, const char *what, const char *want)
{
    if (truncate(h->log, 0) < 0 && errno != ENOENT)
        fprintf(stderr, "truncate %s: %s\n", h->log, strerror(errno));
    int st = h_run_expect_exit(h, H_WAIT_MS, NULL);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK_MSG(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) != 0, "%s: mcpd status 0x%x", what, st);
    CHECK_MSG(log && strstr(log, want), "%s: log lacks \"%s\":\n%s", what, want,
              log ? log : "(none)");
    CHECK_MSG(access(h->socket, F_OK) < 0, "%s: a socket was created", what);
    printf("  %s: refused\n", what);
}

static void reset_runtime(void)
{
    _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", runtime);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", runtime);
}

/* A runtime dir others could write to, enter, or that belongs to someone else is refused. */
static void test_runtime_dir(Harness *h)
{
    reset_runtime();
    CHECK(mkdir(runtime, 0700) == 0 && chmod(runtime, 0777) == 0);
    expect_refusal(h, "world-writable runtime dir", "has mode 0777");
    _cleanup_free_ char *fix = xasprintf("chmod 0700 %s", runtime);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, fix));

    CHECK(chmod(runtime, 0755) == 0);
    expect_refusal(h, "runtime dir readable by others", "must not be accessible by others");

    reset_runtime();
    _cleanup_free_ char *elsewhere = xasprintf("%s/elsewhere", h->dir);
    CHECK(mkdir(elsewhere, 0700) == 0 && symlink(elsewhere, runtime) == 0);
    expect_refusal(h, "runtime dir is a symlink", "is not a directory");
    unlink(runtime);
    rmdir(elsewhere);

    if (getuid() == 0) {
        CHECK(mkdir(runtime, 0700) == 0 && chown(runtime, 65534, 65534) == 0);
        expect_refusal(h, "runtime dir owned by another uid", "is owned by uid 65534");
    } else {
        printf("  wrong-owner runtime dir: skipped (needs root to chown)\n");
    }
    reset_runtime();

    /* MCPD_SOCKET in a dir everyone may write to (a sticky /tmp-like dir) is refused too. */
    _cleanup_free_ char *shared = xasprintf("%s/shared", h->dir);
    _cleanup_free_ char *sock = xasprintf("%s/mcpd.sock", shared);
    CHECK(mkdir(shared, 0700) == 0 && chmod(shared, 01777) == 0);
    setenv("MCPD_SOCKET", sock, 1);
    expect_refusal(h, "MCPD_SOCKET in a world-writable dir", "must not be writable by others");
    unsetenv("MCPD_SOCKET");
    rmdir(shared);
}

/* A started mcpd keeps its runtime dir 0700 and the socket 0600, owned by us. */
static void test_modes(Harness *h)
{
    struct stat d, s;

    CHECK(lstat(runtime, &d) == 0 && S_ISDIR(d.st_mode) && (d.st_mode & 07777) == 0700 &&
          d.st_uid == getuid());
    CHECK(lstat(h->socket, &s) == 0 && S_ISSOCK(s.st_mode) && (s.st_mode & 0777) == 0600 &&
          s.st_uid == getuid());
}

/* In a child as uid: connect and ping; exit 0 if refused as expected, else a code saying how. */
static int foreign_client(Harness *h, const struct passwd *pw, bool expect_connect)
{
    pid_t pid = fork();
    int st;

    if (pid == 0) {
        signal(SIGPIPE, SIG_IGN); /* mcpd may hang up before our write */
        if (setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
            _exit(10);
        int fd = h_raw_connect(h);
        if (fd < 0)
            _exit(expect_connect ? 11 : (errno == EACCES ? 0 : 13));
        if (!expect_connect)
            _exit(14);
        const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        (void)h_raw_write(fd, ping, sizeof(ping) - 1);
        char *out = h_raw_read(fd, 10000);
        _exit(strstr(out, "refuses connections from uid") && !strstr(out, "\"result\"") ? 0 : 12);
    }
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * A peer of another uid. With the default modes the filesystem stops it (EACCES). Then the
 * way is opened on purpose (dirs 0755, socket 0666), so connect() succeeds and only
 * SO_PEERCRED in mcpd stands between it and the tools: it must be refused with a message.
 */
static void test_other_uid(Harness *h)
{
    struct passwd *pw = getpwnam("nobody");
    _cleanup_free_ char *run = xasprintf("%s/run", h->dir);
    int r;

    if (getuid() != 0 || !pw) {
        printf("test-security: other-uid checks skipped (need root and user nobody)\n");
        return;
    }
    r = foreign_client(h, pw, false);
    CHECK_MSG(r == 0, "uid %u reached the socket through private dirs (code %d)",
              (unsigned)pw->pw_uid, r);
    chmod(h->dir, 0755);
    chmod(run, 0755);
    chmod(runtime, 0755);
    chmod(h->socket, 0666);
    r = foreign_client(h, pw, true);
    CHECK_MSG(r == 0, "foreign client of uid %u: code %d", (unsigned)pw->pw_uid, r);
    chmod(runtime, 0700);
    chmod(run, 0700);
    chmod(h->dir, 0700);
    chmod(h->socket, 0600);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "refused a connection from uid"));
    printf("  uid %u: refused by the filesystem, then by SO_PEERCRED\n", (unsigned)pw->pw_uid);
}

/* Secrets in env and headers appear nowhere an agent or the log can see them. */
static void test_secrets(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *status = NULL, *list = NULL, *logs = NULL;

    CHECK(mcpc_status(c, &status) == 0);
    CHECK(mcpc_list_tools(c, &list) == 0);
    CHECK(mcpc_request(c, "mcpd/logs", "{\"server\":\"steady\"}", &logs) == 0);
    _cleanup_free_ char *log = h_read_file(h->log);
    const char *where[] = {"mcpd/status", "tools/list", "mcpd/logs", "the log"};
    const char *text[] = {status, list, logs, log};
    for (size_t i = 0; i < 4; i++)
        CHECK_MSG(text[i] && !strstr(text[i], SECRET), "a secret shows in %s", where[i]);
    /* It did reach the server: its absence above means something. */
    _cleanup_free_ char *t = h_call_text(c, "mcp_steady_env", "{\"name\":\"API_TOKEN\"}", NULL);
    CHECK_MSG(streq(t, SECRET), "env gave %s", t);
    /* Status names the file that defined each server, and its level. */
    _cleanup_json_ yajl_val st = json_parse(status, NULL);
    yajl_val src = json_get_object(h_server(st, "steady"), "source");
    CHECK_MSG(streq(json_get_string(src, "path"), h->config), "source %s",
              json_get_string(src, "path"));
    CHECK(streq(json_get_string(src, "level"), "user"));
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {\"steady\": {\"command\": \"%s\", \"env\": {\"API_TOKEN\": \"%s\"}},"
        "\"remote\": {\"url\": \"http://127.0.0.1:1/mcp\", \"headers\": {\"Authorization\": "
        "\"Bearer %s\"}, \"reconnect\": false}}}",
        h_fake(), SECRET, SECRET);

    h_setup(&h, "security");
    snprintf(runtime, sizeof(runtime), "%s/run/mcpd", h.dir);
    h_write_config(&h, cfg);
    test_runtime_dir(&h);
    h_start(&h, NULL);
    c = h_client(&h, "security");
    h_settle(&h, c, "steady", NULL);
    test_modes(&h);
    test_other_uid(&h);
    test_secrets(&h, c);
    h_check_healthy(&h, "foreign peers", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-security");
}
