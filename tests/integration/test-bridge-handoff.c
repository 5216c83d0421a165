// SPDX-License-Identifier: MIT
// test-bridge-handoff: `mcpctl bridge` hands its host's pipes to mcpd (issue 36): served as
// on the socket, and every way it can end; where it cannot hand them over, it relays.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Bridges started at once: far more hosts than a person runs, well under PEER_MAX. */
#define N_MANY 200
/* A call still running when its host goes: far longer than the test waits for anything. */
#define LONG_CALL_MS 60000
/* The call running when the host closes stdin: it must still be answered. */
#define LATE_CALL_MS 800
/* partialLineTimeoutMs for this test's mcpd: half a line is dropped after this long (a 17 MiB
 * line crosses a pipe in well under it, even on a loaded machine). */
#define PARTIAL_MS 4000

#define INIT_LINE(id, version)                                                                     \
    "{\"jsonrpc\":\"2.0\",\"id\":" id                                                              \
    ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"                                  \
    "\"" version "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"host\",\"version\":\"1\"}}}\n"
#define INIT     INIT_LINE("1", "2025-06-18")
#define PING(id) "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"ping\"}\n"
#define SLEEP_CALL(id, ms)                                                                         \
    "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"tools/call\",\"params\":{\"name\":"           \
    "\"mcp_steady_sleep\",\"arguments\":{\"ms\":" ms "}}}\n"

/* A host: the bridge it started, the write end of the bridge's stdin, the read end of stdout. */
typedef struct Host {
    pid_t pid;
    int in, out;
    StrBuf got;
    char err[320]; /* the bridge's stderr, a file */
} Host;

static int n_hosts;

/* Start `mcpctl bridge` as a host does; env_kv ("NAME=value") or NULL is set for it. */
static void host_start(Harness *h, Host *x, const char *env_kv)
{
    int in[2], out[2];

    CHECK(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
    *x = (Host){.in = in[1], .out = out[0]};
    snprintf(x->err, sizeof(x->err), "%s/bridge-%d.err", h->dir, n_hosts++);
    x->pid = fork();
    if (x->pid == 0) {
        int err = open(x->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(in[0], STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        setenv("MCPCTL_LOG", "debug", 1);
        if (env_kv)
            putenv((char *)env_kv);
        execl(getenv("MCPCTL_BINARY"), "mcpctl", "--socket", h->socket, "bridge", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
}

static void host_write(Host *x, const char *s)
{
    CHECK(fd_write_all(x->in, s, strlen(s)) == 0);
}

/* Read the bridge's stdout until needle shows (true) or EOF or H_WAIT_MS (false). */
static bool host_wait_for(Host *x, const char *needle)
{
    uint64_t end = now_ms() + H_WAIT_MS;

    while (!(x->got.data && strstr(x->got.data, needle)) && now_ms() < end) {
        struct pollfd pfd = {x->out, POLLIN, 0};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        strbuf_reserve(&x->got, 65536);
        ssize_t n = read(x->out, x->got.data + x->got.len, 65536);
        if (n <= 0)
            return false;
        x->got.len += (size_t)n;
        x->got.data[x->got.len] = '\0';
    }
    return x->got.data && strstr(x->got.data, needle);
}

/* Read stdout to its EOF: true when it came within H_WAIT_MS. */
static bool host_wait_eof(Host *x)
{
    uint64_t end = now_ms() + H_WAIT_MS;

    while (now_ms() < end) {
        struct pollfd pfd = {x->out, POLLIN, 0};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        strbuf_reserve(&x->got, 65536);
        ssize_t n = read(x->out, x->got.data + x->got.len, 65536);
        if (n <= 0)
            return n == 0;
        x->got.len += (size_t)n;
        x->got.data[x->got.len] = '\0';
    }
    return false;
}

/* The bridge's exit status (-1: killed after H_WAIT_MS); the host's fds closed. */
static int host_end(Host *x)
{
    int st = -1;
    uint64_t end = now_ms() + H_WAIT_MS;

    if (x->in >= 0)
        close(x->in);
    x->in = -1;
    while (waitpid(x->pid, &st, WNOHANG) == 0) {
        if (now_ms() > end) {
            kill(x->pid, SIGKILL);
            waitpid(x->pid, &st, 0);
            st = -1;
            break;
        }
        h_sleep_ms(20);
    }
    if (x->out >= 0)
        close(x->out);
    x->out = -1;
    strbuf_deinit(&x->got);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool err_has(const Host *x, const char *needle)
{
    _cleanup_free_ char *e = h_read_file(x->err);
    return e && strstr(e, needle);
}

/* Whether mcpd still lists an agent of pid. */
static bool agent_listed(mcpc_client *c, pid_t pid)
{
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val agents = json_get_array(st, "agents");

    for (size_t i = 0; i < json_array_len(agents); i++) {
        yajl_val p = json_get(json_array_at(agents, i), "pid");
        if (YAJL_IS_INTEGER(p) && p->u.number.i == pid)
            return true;
    }
    return false;
}

static bool agent_gone(mcpc_client *c, pid_t pid)
{
    for (int i = 0; i < H_WAIT_MS / 50; i++) {
        if (!agent_listed(c, pid))
            return true;
        h_sleep_ms(50);
    }
    return false;
}

/* mcpd serves the host itself: with the bridge stopped (SIGSTOP), its host is still answered. */
static void test_served_without_bridge(Harness *h)
{
    Host x;

    host_start(h, &x, NULL);
    host_write(&x, INIT);
    CHECK_MSG(host_wait_for(&x, "\"id\":1,\"result\""), "initialize: %s", x.got.data);
    kill(x.pid, SIGSTOP);
    host_write(&x, PING("2") SLEEP_CALL("3", "10"));
    CHECK_MSG(host_wait_for(&x, "\"id\":2,\"result\":{}") && host_wait_for(&x, "\"id\":3,"),
              "mcpd did not answer with the bridge stopped: %s", x.got.data);
    kill(x.pid, SIGCONT);
    CHECK_MSG(!err_has(&x, "relaying"), "the bridge relayed");
    CHECK_INTEQ(host_end(&x), 0);
}

/* The host closes stdin with a call running: answered, then the bridge exits 0. */
static void test_host_closes_stdin(Harness *h)
{
    Host x;

    host_start(h, &x, NULL);
    host_write(&x, INIT SLEEP_CALL("\"late\"",
                                   "800") "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    close(x.in);
    x.in = -1;
    CHECK_MSG(host_wait_for(&x, "\"id\":\"late\",\"result\""), "late call: %s", x.got.data);
    CHECK_MSG(host_wait_for(&x, "\"id\":2,\"result\""), "unterminated ping: %s", x.got.data);
    CHECK_MSG(host_wait_eof(&x), "no EOF after the answers");
    CHECK_INTEQ(host_end(&x), 0);
    h_check_healthy(h, "host closes stdin", CONTROL);
}

/* The host dies with a call in flight: the agent ends at once, the bridge exits 1. */
static void test_host_killed(Harness *h, mcpc_client *c)
{
    Host x;

    host_start(h, &x, NULL);
    host_write(&x, INIT);
    CHECK(host_wait_for(&x, "\"id\":1,\"result\""));
    host_write(&x, SLEEP_CALL("2", "60000") SLEEP_CALL("3", "60000"));
    h_sleep_ms(200);
    close(x.out); /* the host's end of both pipes goes, as when it dies */
    x.out = -1;
    close(x.in);
    x.in = -1;
    CHECK_MSG(agent_gone(c, x.pid), "mcpd kept the agent of a dead host");
    CHECK_INTEQ(host_end(&x), 1);
    h_check_healthy(h, "host killed with calls in flight", CONTROL);
}

/* The bridge is killed: mcpd ends the agent and closes the host's pipes. */
static void test_bridge_killed(Harness *h, mcpc_client *c)
{
    Host x;

    host_start(h, &x, NULL);
    host_write(&x, INIT SLEEP_CALL("2", "60000"));
    CHECK(host_wait_for(&x, "\"id\":1,\"result\""));
    kill(x.pid, SIGKILL);
    CHECK_MSG(host_wait_eof(&x), "the host's stdout stayed open after its bridge was killed");
    CHECK_MSG(agent_gone(c, x.pid), "mcpd kept the agent of a killed bridge");
    host_end(&x);
    h_check_healthy(h, "bridge killed", CONTROL);
}

/* stdin a regular file: the bridge relays, and says why at debug level. */
static void test_stdin_file(Harness *h)
{
    _cleanup_free_ char *in = xasprintf("%s/host-input", h->dir);
    _cleanup_free_ char *err = xasprintf("%s/file.err", h->dir), *out = NULL, *e = NULL;
    FILE *f = fopen(in, "w");
    int st;

    CHECK(f && fputs(INIT PING("2"), f) >= 0 && fclose(f) == 0);
    out = h_shell(&st, "MCPCTL_LOG=debug '%s' --socket '%s' bridge < '%s' 2>'%s'",
                  getenv("MCPCTL_BINARY"), h->socket, in, err);
    e = h_read_file(err);
    CHECK_MSG(st == 0 && strstr(out, "\"id\":2,\"result\":{}"), "status %d: %s", st, out);
    CHECK_MSG(e && strstr(e, "relaying") && strstr(e, "regular file"), "stderr: %s", e);
}

/* stdin a terminal: relayed too. */
static void test_stdin_terminal(Harness *h)
{
    int master, out[2], st;
    Host x = {.in = -1};

    CHECK(pipe2(out, O_CLOEXEC) == 0);
    snprintf(x.err, sizeof(x.err), "%s/tty.err", h->dir);
    x.pid = forkpty(&master, NULL, NULL, NULL);
    CHECK(x.pid >= 0);
    if (x.pid == 0) {
        int err = open(x.err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(out[1], STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        setenv("MCPCTL_LOG", "debug", 1);
        execl(getenv("MCPCTL_BINARY"), "mcpctl", "--socket", h->socket, "bridge", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    x.out = out[0];
    CHECK(fd_write_all(master, INIT PING("2"), strlen(INIT PING("2"))) == 0);
    CHECK_MSG(host_wait_for(&x, "\"id\":2,\"result\":{}"), "through a terminal: %s", x.got.data);
    CHECK(fd_write_all(master, "\004", 1) == 0); /* ^D at a line's start: EOF */
    st = host_end(&x);
    close(master);
    CHECK_INTEQ(st, 0);
    CHECK_MSG(err_has(&x, "relaying") && err_has(&x, "terminal"), "the bridge did not say why");
}

/* The program pid runs ("" when it cannot be read). */
static void exe_of(pid_t pid, char *buf, size_t size)
{
    char link[64];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
    n = readlink(link, buf, size - 1);
    buf[n > 0 ? n : 0] = '\0';
}

/* Whether pid runs the waiter within H_WAIT_MS (it execs it just after mcpd takes the pipes). */
static bool runs_waiter(pid_t pid)
{
    char exe[PATH_MAX];

    for (int i = 0; i < H_WAIT_MS / 20; i++) {
        exe_of(pid, exe, sizeof(exe));
        if (strstr(exe, "/mcpctl-bridge-wait"))
            return true;
        h_sleep_ms(20);
    }
    return false;
}

/* What pid holds: whether fd 2 is open, and how many fds are pipes and sockets (a sanitizer's
 * runtime may hold files of its own: those are not counted). */
static void fds_of(pid_t pid, bool *stderrp, int *pipesp, int *socketsp)
{
    _cleanup_free_ char *dir = xasprintf("/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    struct dirent *e;

    *stderrp = false;
    *pipesp = *socketsp = 0;
    while (d && (e = readdir(d))) {
        char target[128];
        _cleanup_free_ char *link = xasprintf("%s/%s", dir, e->d_name);
        ssize_t n;
        if (e->d_name[0] == '.')
            continue;
        *stderrp = *stderrp || streq(e->d_name, "2");
        n = readlink(link, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = '\0';
        *socketsp += strncmp(target, "socket:", 7) == 0;
        *pipesp += strncmp(target, "pipe:", 5) == 0;
    }
    if (d)
        closedir(d);
}

/*
 * Once mcpd has the pipes the bridge becomes mcpctl-bridge-wait, same pid, holding stderr and
 * its connection to mcpd and nothing else (not the host's pipes, not an fd the host leaked to
 * it); each ending gives the status it gave before (the other tests end through it too).
 */
static void test_waiter(Harness *h)
{
    Host x;
    int sockets = 0, pipes = 0, leak[2];
    bool has_stderr = false;

    CHECK(pipe(leak) == 0); /* not close-on-exec: the host's own, which the bridge inherits */
    host_start(h, &x, NULL);
    close(leak[0]);
    close(leak[1]);
    host_write(&x, INIT);
    CHECK_MSG(host_wait_for(&x, "\"id\":1,\"result\""), "initialize: %s", x.got.data);
    CHECK_MSG(runs_waiter(x.pid), "the bridge did not become mcpctl-bridge-wait");
    fds_of(x.pid, &has_stderr, &pipes, &sockets);
    CHECK_MSG(has_stderr && pipes == 0 && sockets == 1,
              "the waiter holds %d pipes and %d sockets%s: want no pipe (the host's are mcpd's "
              "now), one socket and stderr",
              pipes, sockets, has_stderr ? "" : ", no stderr");
    host_write(&x, PING("2"));
    CHECK_MSG(host_wait_for(&x, "\"id\":2,\"result\":{}"), "ping: %s", x.got.data);
    CHECK_INTEQ(host_end(&x), 0);
}

/* With no waiter to become ($MCPCTL_BRIDGE_WAIT names none), the bridge waits itself, as well. */
static void test_no_waiter(Harness *h, mcpc_client *c)
{
    Host x;
    char exe[PATH_MAX];

    host_start(h, &x, "MCPCTL_BRIDGE_WAIT=/nonexistent/mcpctl-bridge-wait");
    host_write(&x, INIT PING("2"));
    CHECK_MSG(host_wait_for(&x, "\"id\":2,\"result\":{}"), "ping: %s", x.got.data);
    exe_of(x.pid, exe, sizeof(exe));
    CHECK_MSG(strstr(exe, "/mcpctl") && !strstr(exe, "bridge-wait"), "the bridge runs %s", exe);
    CHECK_INTEQ(host_end(&x), 0);
    _cleanup_free_ char *said = h_read_file(x.err);
    CHECK_MSG(said && strstr(said, "waiting in mcpctl"),
              "the bridge did not say why it waits itself: %s", said);

    host_start(h, &x, "MCPCTL_BRIDGE_WAIT=");
    host_write(&x, INIT SLEEP_CALL("2", "60000"));
    CHECK(host_wait_for(&x, "\"id\":1,\"result\""));
    kill(x.pid, SIGKILL);
    CHECK_MSG(host_wait_eof(&x), "the host's stdout stayed open after its bridge was killed");
    CHECK_MSG(agent_gone(c, x.pid), "mcpd kept the agent of a killed bridge");
    host_end(&x);
}

/* Many bridges at once, each served to its end. */
static void test_many(Harness *h)
{
    Host *x = xcalloc(N_MANY, sizeof(*x));
    int bad = 0;

    for (int i = 0; i < N_MANY; i++)
        host_start(h, &x[i], NULL);
    for (int i = 0; i < N_MANY; i++) {
        host_write(&x[i], INIT PING("2"));
        close(x[i].in);
        x[i].in = -1;
    }
    for (int i = 0; i < N_MANY; i++) {
        bad += !host_wait_for(&x[i], "\"id\":2,\"result\":{}");
        bad += host_end(&x[i]) != 0;
    }
    CHECK_MSG(bad == 0, "%d of %d bridges at once failed", bad, N_MANY);
    free(x);
    h_check_healthy(h, "200 bridges", CONTROL);
}

/* Garbage, a line over maxMessageBytes, half a line: the socket's errors, nobody else hurt. */
static void test_abuse(Harness *h)
{
    Host x;
    size_t big = 17u << 20;
    char *line = xmalloc(big);

    host_start(h, &x, NULL);
    host_write(&x, INIT "garbage\n");
    CHECK_MSG(host_wait_for(&x, "-32700"), "garbage: %s", x.got.data);
    CHECK_INTEQ(host_end(&x), 1);
    h_check_healthy(h, "garbage through a bridge", CONTROL);

    host_start(h, &x, NULL);
    host_write(&x, INIT);
    memset(line, 'x', big);
    line[0] = '"';
    (void)!write(x.in, line, big); /* mcpd closes at its bound: EPIPE then */
    /* The line bound, or on a machine too slow to pass 17 MiB within PARTIAL_MS (valgrind),
     * the time bound for an unfinished line: either is the socket's. */
    CHECK_MSG(host_wait_for(&x, "maxMessageBytes") || strstr(x.got.data, "partialLineTimeoutMs"),
              "16 MiB: %s", x.got.data);
    CHECK_INTEQ(host_end(&x), 1);
    free(line);
    h_check_healthy(h, "16 MiB line through a bridge", CONTROL);

    host_start(h, &x, NULL);
    host_write(&x, INIT "{\"jsonrpc\":\"2.0\",\"id\":9,\"meth");
    CHECK_MSG(host_wait_for(&x, "partialLineTimeoutMs"), "half a line: %s", x.got.data);
    CHECK_INTEQ(host_end(&x), 1);
    h_check_healthy(h, "half a line through a bridge", CONTROL);
}

/* mcpd stops under a live bridge: the host sees its stdout end, the bridge exits 1. */
static void test_mcpd_restarted(Harness *h)
{
    Host x;

    host_start(h, &x, NULL);
    host_write(&x, INIT);
    CHECK(host_wait_for(&x, "\"id\":1,\"result\""));
    CHECK(h_stop(h) == 0);
    CHECK_MSG(host_wait_eof(&x), "the host's stdout stayed open after mcpd stopped");
    CHECK_INTEQ(host_end(&x), 1);
    CHECK_MSG(err_has(&x, "mcpd closed the connection"), "the bridge did not say mcpd went");
    h_start(h, NULL);
    /* The same, waiting in mcpctl. */
    host_start(h, &x, "MCPCTL_BRIDGE_WAIT=");
    host_write(&x, INIT);
    CHECK(host_wait_for(&x, "\"id\":1,\"result\""));
    CHECK(h_stop(h) == 0);
    CHECK_MSG(host_wait_eof(&x), "the host's stdout stayed open after mcpd stopped (no waiter)");
    CHECK_INTEQ(host_end(&x), 1);
    CHECK_MSG(err_has(&x, "mcpd closed the connection"), "no waiter: it did not say mcpd went");
    h_start(h, NULL);
    host_start(h, &x, NULL);
    host_write(&x, INIT PING("2"));
    CHECK(host_wait_for(&x, "\"id\":2,\"result\":{}"));
    CHECK_INTEQ(host_end(&x), 0);
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *settings = xasprintf("{\"partialLineTimeoutMs\": %d}", PARTIAL_MS);
    struct rlimit rl;

    /* N_MANY hosts hold four pipe ends each. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGPIPE, SIG_IGN);
    h_setup(&h, "bridge-handoff");
    h_write_config(&h, cfg);
    h_write_settings(&h, settings);
    h_start(&h, NULL);
    c = h_client(&h, "bridge-handoff");
    h_settle(&h, c, "steady", NULL);

    test_served_without_bridge(&h);
    test_waiter(&h);
    test_no_waiter(&h, c);
    test_host_closes_stdin(&h);
    test_host_killed(&h, c);
    test_bridge_killed(&h, c);
    test_stdin_file(&h);
    test_stdin_terminal(&h);
    test_many(&h);
    test_abuse(&h);
    mcpc_free(c);
    test_mcpd_restarted(&h);

    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-bridge-handoff");
}
