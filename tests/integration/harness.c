// SPDX-License-Identifier: MIT
// harness: start the real mcpd on a private runtime dir and socket, and check what it leaves.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

void h_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "harness: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(99);
}

/* ---- helpers ended on every exit path ---- */

/*
 * Processes a test started (mcpd, HTTP and OAuth helpers) that must not outlive it: a failed
 * h_sh() or die() exits at once, and a test killed at its timeout never reaches its clean-up,
 * which left helpers listening (and zombies under them) for the rest of the suite. 64 is far
 * more than any test starts at once; a slot is taken again once its process was reaped.
 */
#define H_HELPERS_MAX 64
/* How long helpers get to end on SIGTERM (mcpd ends its servers) before SIGKILL. */
#define H_HELPERS_TERM_MS 3000

static pid_t helpers[H_HELPERS_MAX];
static pid_t helpers_owner; /* the process that registered them: a forked child never acts */

/* Whether pid is still an unreaped child of this process (without reaping it). */
static bool is_my_child(pid_t pid)
{
    siginfo_t si = {0};

    return pid > 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/* End every registered helper and its process group: SIGTERM, then SIGKILL, then reap. */
static void helpers_end(void)
{
    int status;

    if (getpid() != helpers_owner)
        return;
    for (int i = 0; i < H_HELPERS_MAX; i++)
        if (!is_my_child(helpers[i]))
            helpers[i] = 0;
        else if (kill(-helpers[i], SIGTERM) < 0)
            kill(helpers[i], SIGTERM); /* not a group leader (mcpd) */
    for (int waited = 0; waited < H_HELPERS_TERM_MS; waited += 20) {
        bool left = false;
        for (int i = 0; i < H_HELPERS_MAX; i++) {
            if (helpers[i] && waitpid(helpers[i], &status, WNOHANG) == helpers[i]) {
                kill(-helpers[i], SIGKILL); /* what its group left behind */
                helpers[i] = 0;
            }
            left |= helpers[i] != 0;
        }
        if (!left)
            return;
        h_sleep_ms(20);
    }
    for (int i = 0; i < H_HELPERS_MAX; i++)
        if (helpers[i]) {
            kill(-helpers[i], SIGKILL);
            kill(helpers[i], SIGKILL);
            waitpid(helpers[i], &status, 0);
            helpers[i] = 0;
        }
}

/* The test was told to stop (a timeout): helpers end first, then the test as it was told. */
static void on_stop_signal(int sig)
{
    helpers_end();
    signal(sig, SIG_DFL);
    raise(sig);
}

void h_helper_add(pid_t pid)
{
    static bool installed;

    if (!installed) {
        installed = true;
        helpers_owner = getpid();
        atexit(helpers_end);
        signal(SIGTERM, on_stop_signal);
        signal(SIGINT, on_stop_signal);
        signal(SIGHUP, on_stop_signal);
    }
    for (int i = 0; i < H_HELPERS_MAX; i++)
        if (!is_my_child(helpers[i])) {
            helpers[i] = pid;
            return;
        }
    fprintf(stderr, "harness: more than %d helper processes at once; %d is not ended at exit\n",
            H_HELPERS_MAX, (int)pid);
}

const char *h_fake(void)
{
    const char *p = getenv("FAKE_SERVER");
    if (!p)
        die("FAKE_SERVER is not set (run through meson test)");
    return p;
}

static void mkdir_or_die(const char *path, mode_t mode)
{
    if (paths_mkdir_p(path, mode) < 0)
        die("mkdir %s: %s", path, strerror(errno));
    chmod(path, mode);
}

void h_setup(Harness *h, const char *name)
{
    char buf[512];

    memset(h, 0, sizeof(*h));
    snprintf(h->dir, sizeof(h->dir), "/tmp/mcpd-it-%s-XXXXXX", name);
    if (!mkdtemp(h->dir))
        die("mkdtemp: %s", strerror(errno));
    snprintf(buf, sizeof(buf), "%s/run", h->dir);
    mkdir_or_die(buf, 0700);
    setenv("XDG_RUNTIME_DIR", buf, 1);
    snprintf(buf, sizeof(buf), "%s/config/mcpd", h->dir);
    mkdir_or_die(buf, 0700);
    snprintf(buf, sizeof(buf), "%s/config", h->dir);
    setenv("XDG_CONFIG_HOME", buf, 1);
    snprintf(buf, sizeof(buf), "%s/cache", h->dir);
    mkdir_or_die(buf, 0700);
    setenv("XDG_CACHE_HOME", buf, 1);
    snprintf(buf, sizeof(buf), "%s/home", h->dir);
    mkdir_or_die(buf, 0700);
    setenv("HOME", buf, 1);
    snprintf(buf, sizeof(buf), "%s/state", h->dir);
    setenv("XDG_STATE_HOME", buf, 1); /* approvals (trust.json), run records stay in the tree */
    snprintf(h->socket, sizeof(h->socket), "%s/run/mcpd/mcpd.sock", h->dir);
    unsetenv("MCPD_SOCKET");
    unsetenv("MCPD_SESSION");
    /* The person's own Secret Service stays out of the tests; test-secret-service runs one. */
    unsetenv("DBUS_SESSION_BUS_ADDRESS");
    snprintf(h->config, sizeof(h->config), "%s/config/mcpd/mcp.json", h->dir);
    snprintf(h->settings, sizeof(h->settings), "%s/config/mcpd/mcpd.json", h->dir);
    snprintf(h->log, sizeof(h->log), "%s/mcpd.log", h->dir);
    /* Servers start with mcpd, as the tests written before lazy start expect (a test that
     * writes its own settings says what it wants; test-ondemand asks for lazy). */
    FILE *settings = fopen(h->settings, "w");
    if (!settings)
        die("open %s: %s", h->settings, strerror(errno));
    fputs("{\"start\": \"eager\"}", settings);
    fclose(settings);
    /* Every process started from here carries the tag, so leaks can be found in /proc. */
    setenv("MCPD_TEST_TAG", h->dir, 1);
    h->pid = -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (!f)
        die("open %s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

void h_write_text(const char *path, const char *text)
{
    _cleanup_free_ char *dir = paths_dirname(path);
    FILE *f;

    if (paths_mkdir_p(dir, 0700) < 0 || !(f = fopen(path, "w"))) {
        fprintf(stderr, "harness: cannot write %s: %s\n", path, strerror(errno));
        exit(99);
    }
    fputs(text, f);
    fclose(f);
}

void h_write_config(Harness *h, const char *json)
{
    write_file(h->config, json);
}

void h_write_settings(Harness *h, const char *json)
{
    write_file(h->settings, json);
}

static pid_t spawn_mcpd(Harness *h, va_list ap)
{
    const char *bin = getenv("MCPD_BINARY");
    const char *argv[32];
    int n = 0, fd;
    pid_t pid;

    if (!bin)
        die("MCPD_BINARY is not set (run through meson test)");
    /* MCPD_WRAPPER (the valgrind test setup) runs mcpd under a tool: words split on spaces. */
    static char wrapper[512];
    const char *w = getenv("MCPD_WRAPPER");
    if (w && *w) {
        snprintf(wrapper, sizeof(wrapper), "%s", w);
        for (char *tok = strtok(wrapper, " "); tok && n < 16; tok = strtok(NULL, " "))
            argv[n++] = tok;
    }
    argv[n++] = bin;
    argv[n++] = "--log-level";
    argv[n++] = "debug";
    for (const char *a; n < 30 && (a = va_arg(ap, const char *));)
        argv[n++] = a;
    argv[n] = NULL;
    fd = open(h->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    pid = fork();
    if (pid == 0) {
        /* A test that dies of a signal or crashes takes its mcpd along (exit: h_helper_add). */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(fd, 2);
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fd);
    h_helper_add(pid);
    return pid;
}

static bool socket_answers(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool ok;

    if (strlen(path) >= sizeof(sa.sun_path))
        die("socket path too long: %s", path);
    memcpy(sa.sun_path, path, strlen(path) + 1);
    ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    close(fd);
    return ok;
}

void h_start(Harness *h, ...)
{
    va_list ap;
    int status;

    va_start(ap, h);
    h->pid = spawn_mcpd(h, ap);
    va_end(ap);
    /* Polled every 2 ms: start-up is measured through this (bench workload 4), so the poll
     * must not add more than a few ms to it. */
    for (int waited = 0; waited < H_START_TIMEOUT_MS; waited += 2) {
        if (waitpid(h->pid, &status, WNOHANG) == h->pid) {
            h_dump_log(h);
            die("mcpd exited during start-up (status 0x%x)", status);
        }
        if (socket_answers(h->socket)) {
            h->baseline_fds = h_mcpd_fds(h);
            return;
        }
        h_sleep_ms(2);
    }
    h_dump_log(h);
    die("mcpd did not open %s", h->socket);
}

static int wait_exit(pid_t pid, int timeout_ms)
{
    int status;

    for (int waited = 0; waited < timeout_ms; waited += 10) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        h_sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

int h_run_expect_exit(Harness *h, int timeout_ms, ...)
{
    va_list ap;
    pid_t pid;

    va_start(ap, timeout_ms);
    pid = spawn_mcpd(h, ap);
    va_end(ap);
    return wait_exit(pid, timeout_ms);
}

int h_stop(Harness *h)
{
    int status;

    if (h->pid <= 0)
        return 0;
    kill(h->pid, SIGTERM);
    status = wait_exit(h->pid, H_WAIT_MS);
    h->pid = -1;
    return status;
}

/* Does /proc/<pid>/environ carry MCPD_TEST_TAG=<dir>? */
static bool has_tag(const char *pid, const char *tag)
{
    char path[64], buf[65536];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%s/environ", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    for (char *p = buf; p < buf + n; p += strlen(p) + 1)
        if (startswith(p, "MCPD_TEST_TAG=") && streq(p + 14, tag))
            return true;
    return false;
}

/* The first line of /proc/<pid>/stat ("" when it is gone). */
static void read_stat(pid_t pid, char *buf, size_t size)
{
    char path[64];
    FILE *f;

    buf[0] = '\0';
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((f = fopen(path, "r"))) {
        if (!fgets(buf, (int)size, f))
            buf[0] = '\0';
        fclose(f);
    }
}

/*
 * Call fn for every live (non-zombie) process carrying this harness's tag, other than the test
 * itself (and mcpd unless include_mcpd); count those for which it returns true.
 */
typedef bool TaggedFn(pid_t pid, const char *stat, void *ctx);

static int for_each_tagged(const Harness *h, bool include_mcpd, TaggedFn *fn, void *ctx)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        char stat[1024];
        if (pid <= 0 || pid == getpid() || (!include_mcpd && pid == h->pid) ||
            !has_tag(e->d_name, h->dir))
            continue;
        read_stat(pid, stat, sizeof(stat));
        /* A zombie of ours (not yet reaped by the test) is not a leak of mcpd's. */
        if (!stat[0] || strstr(stat, ") Z "))
            continue;
        n += fn(pid, stat, ctx);
    }
    closedir(d);
    return n;
}

typedef struct ScanCtx {
    bool kill_them, quiet;
} ScanCtx;

static bool scan_one(pid_t pid, const char *stat, void *ctx)
{
    const ScanCtx *sc = ctx;

    if (sc->kill_them)
        kill(pid, SIGKILL);
    else if (!sc->quiet)
        fprintf(stderr, "harness: process still running: %s", stat);
    return true;
}

static int scan_tagged(const Harness *h, bool include_mcpd, bool kill_them, bool quiet)
{
    ScanCtx sc = {kill_them, quiet};
    return for_each_tagged(h, include_mcpd, scan_one, &sc);
}

int h_tagged_processes(const Harness *h, bool include_mcpd)
{
    return scan_tagged(h, include_mcpd, false, false);
}

int h_count_tagged(const Harness *h)
{
    return scan_tagged(h, false, false, true);
}

void h_kill_tagged(const Harness *h)
{
    if (scan_tagged(h, false, true, true))
        h_sleep_ms(100);
}

int h_wait_ms(void)
{
    return getenv("MCPD_WRAPPER") ? 4 * 30000 : 30000;
}

bool h_measurable(const char *what)
{
    if (!getenv("MCPD_WRAPPER"))
        return true;
    fprintf(stderr, "  %s: not checked under %s\n", what, getenv("MCPD_WRAPPER"));
    return false;
}

int h_mcpd_fds(const Harness *h)
{
    char path[64];
    DIR *d;
    int n = 0;

    snprintf(path, sizeof(path), "/proc/%d/fd", (int)h->pid);
    if (!(d = opendir(path)))
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 2;
}

/* The "<key> N kB" line of /proc/PID/<file>, in KiB (-1 when unreadable). */
static long proc_kib(pid_t pid, const char *file, const char *fmt)
{
    char path[64], line[256];
    long kib = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, fmt, &kib) == 1)
            break;
    fclose(f);
    return kib;
}

long h_rss_kib(pid_t pid)
{
    return proc_kib(pid, "status", "VmRSS: %ld kB");
}

long h_pss_kib(pid_t pid)
{
    return proc_kib(pid, "smaps_rollup", "Pss: %ld kB");
}

static void rm_rf(const char *path)
{
    char cmd[600];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "harness: could not remove %s\n", path);
}

void h_teardown(Harness *h)
{
    int left;

    if (h->pid > 0) {
        int st = h_stop(h);
        CHECK_MSG(st == 0, "mcpd exit status 0x%x", st);
    }
    /* Children are gone by the time mcpd has exited; allow the kernel a moment to reap. */
    for (int i = 0; i < 100 && (left = scan_tagged(h, true, false, true)) > 0; i++)
        h_sleep_ms(50);
    if (left)
        h_tagged_processes(h, true);
    CHECK_MSG(left == 0, "%d processes outlived mcpd", left);
    if (h_failures)
        h_dump_log(h);
    rm_rf(h->dir);
}

mcpc_client *h_client(Harness *h, const char *name)
{
    mcpc_options o = {.socket_path = h->socket, .client_name = name, .timeout_ms = 60000};
    mcpc_client *c = mcpc_new(&o);

    if (mcpc_connect(c) != 0) {
        h_dump_log(h);
        die("connect: %s", mcpc_errmsg(c));
    }
    return c;
}

char *h_call_text(mcpc_client *c, const char *tool, const char *args, int *is_errorp)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val content;
    int is_error = 0;

    if (mcpc_call_tool(c, tool, args, &out, &is_error) != 0) {
        if (is_errorp)
            *is_errorp = -1;
        return xasprintf("(request failed: %s)", mcpc_errmsg(c));
    }
    if (is_errorp)
        *is_errorp = is_error;
    r = json_parse(out, NULL);
    content = json_get_array(r, "content");
    if (!json_array_len(content) || !json_get_string(json_array_at(content, 0), "text"))
        return xstrdup("");
    return xstrdup(json_get_string(json_array_at(content, 0), "text"));
}

yajl_val h_status(mcpc_client *c)
{
    _cleanup_free_ char *out = NULL;

    if (mcpc_status(c, &out) != 0)
        return NULL;
    return json_parse(out, NULL);
}

yajl_val h_server(yajl_val st, const char *name)
{
    yajl_val servers = json_get_array(st, "servers");

    for (size_t i = 0; i < json_array_len(servers); i++)
        if (streq(json_get_string(json_array_at(servers, i), "name"), name))
            return json_array_at(servers, i);
    return NULL;
}

int64_t h_server_int(mcpc_client *c, const char *server, const char *key)
{
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t v = -1;

    json_get_int(h_server(st, server), key, &v);
    return v;
}

char *h_server_str(mcpc_client *c, const char *server, const char *key)
{
    _cleanup_json_ yajl_val st = h_status(c);
    const char *v = json_get_string(h_server(st, server), key);

    return xstrdup(v ? v : "");
}

/* The waits below end at a time on the clock, not after a count of sleeps: under valgrind a
 * status call takes longer than the sleep between two, and a 2-minute wait counted in sleeps
 * lasted 20 minutes. */
static uint64_t deadline_in(int timeout_ms)
{
    return now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
}

bool h_wait_state(mcpc_client *c, const char *server, const char *state, int timeout_ms)
{
    for (uint64_t end = deadline_in(timeout_ms);;) {
        _cleanup_json_ yajl_val st = h_status(c);
        if (streq(json_get_string(h_server(st, server), "state"), state))
            return true;
        if (now_ms() > end)
            return false;
        h_sleep_ms(20);
    }
}

bool h_wait_needs_auth(mcpc_client *c, const char *server, int timeout_ms)
{
    for (uint64_t end = deadline_in(timeout_ms);;) {
        _cleanup_json_ yajl_val st = h_status(c);
        yajl_val s = h_server(st, server);
        if (YAJL_IS_TRUE(json_get(s, "needsAuthorization")) &&
            streq(json_get_string(s, "state"), "failed"))
            return true;
        if (now_ms() > end)
            return false;
        h_sleep_ms(100);
    }
}

int h_list_count(mcpc_client *c, const char *name, bool *foundp)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val tools;

    if (foundp)
        *foundp = false;
    if (mcpc_list_tools(c, &out) != 0)
        return -1;
    r = json_parse(out, NULL);
    tools = json_get_array(r, "tools");
    for (size_t i = 0; foundp && name && i < json_array_len(tools); i++)
        if (streq(json_get_string(json_array_at(tools, i), "name"), name))
            *foundp = true;
    return (int)json_array_len(tools);
}

char *h_read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    StrBuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;

    if (!f)
        return NULL;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(&sb, buf, n);
    fclose(f);
    return strbuf_detach(&sb, NULL);
}

bool h_wait_log(const Harness *h, const char *needle, int timeout_ms)
{
    for (uint64_t end = deadline_in(timeout_ms);;) {
        _cleanup_free_ char *log = h_read_file(h->log);
        if (log && strstr(log, needle))
            return true;
        if (now_ms() > end)
            return false;
        h_sleep_ms(50);
    }
}

int h_count_in_file(const char *path, const char *needle)
{
    _cleanup_free_ char *text = h_read_file(path);
    int n = 0;

    for (const char *p = text; p && (p = strstr(p, needle)); p++)
        n++;
    return n;
}

bool h_line_has(const char *text, const char *a, const char *b)
{
    for (const char *p = text; p && (p = strstr(p, a)); p += strlen(a)) {
        const char *eol = strchr(p, '\n');
        const char *q = strstr(p, b);
        if (q && (!eol || q < eol))
            return true;
    }
    return false;
}

char *h_npm_modules(const char *folder, int *exitp)
{
    const char *root = getenv("MCPD_SOURCE_ROOT");
    int status = 0;
    char *modules;

    if (!root) {
        fprintf(stderr, "MCPD_SOURCE_ROOT is not set: run it through meson\n");
        *exitp = 1;
        return NULL;
    }
    modules = h_shell(&status, "bash '%s/tests/interop/npm-setup.sh' '%s/%s'", root, root, folder);
    if (status != 0) {
        free(modules);
        *exitp = status == 77 ? 77 : 1;
        return NULL;
    }
    modules[strcspn(modules, "\n")] = '\0';
    return modules;
}

long h_connect_ms(const char *log, const char *name)
{
    _cleanup_free_ char *needle = xasprintf("[%s] connected in ", name);
    long ms = -1;

    for (const char *p = log; p && (p = strstr(p, needle)); p += strlen(needle))
        ms = strtol(p + strlen(needle), NULL, 10);
    return ms;
}

void h_dump_log(const Harness *h)
{
    _cleanup_free_ char *text = h_read_file(h->log);
    size_t n = text ? strlen(text) : 0;

    fprintf(stderr, "---- mcpd log (%s) ----\n%s---- end of log ----\n", h->log,
            text ? (n > 20000 ? text + n - 20000 : text) : "(none)\n");
}

int h_finish(const char *name)
{
    if (h_failures) {
        fprintf(stderr, "%s: %d checks failed\n", name, h_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

/* ---------------------------------------------------------------- fault-suite checks */

static bool is_settled(const Harness *h, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = h->settled; (p = strstr(p, name)); p += n)
        if ((p == h->settled || p[-1] == '\n') && p[n] == '\n')
            return true;
    return false;
}

void h_settle(Harness *h, mcpc_client *c, ...)
{
    va_list ap;
    size_t off = 0;

    h->settled[0] = '\0';
    va_start(ap, c);
    for (const char *name; (name = va_arg(ap, const char *));) {
        CHECK_MSG(h_wait_state(c, name, "connected", H_WAIT_MS), "%s never connected", name);
        off += (size_t)snprintf(h->settled + off, sizeof(h->settled) - off, "%s\n", name);
        if (off >= sizeof(h->settled))
            die("too many settled servers");
    }
    va_end(ap);
    /* Servers that failed may still be finishing their stop: wait for a steady count. */
    h->baseline_fds = h_mcpd_fds(h);
    for (int waited = 0, steady = 0; waited < H_WAIT_MS && steady < 3000; waited += 100) {
        h_sleep_ms(100);
        int n = h_mcpd_fds(h);
        steady = n == h->baseline_fds ? steady + 100 : 0;
        h->baseline_fds = n;
    }
}

/* The process group leaders mcpd supervises: the pid of every server in status. */
static size_t live_server_pids(mcpc_client *c, pid_t *pids, size_t max)
{
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val servers = json_get_array(st, "servers");
    size_t n = 0;

    for (size_t i = 0; i < json_array_len(servers) && n < max; i++) {
        int64_t pid = 0;
        if (json_get_int(json_array_at(servers, i), "pid", &pid) == 0 && pid > 0)
            pids[n++] = (pid_t)pid;
    }
    return n;
}

typedef struct StrayCtx {
    pid_t live[64];
    size_t n_live;
    bool print;
} StrayCtx;

static bool stray_one(pid_t pid, const char *stat, void *ctx)
{
    const StrayCtx *sc = ctx;
    pid_t pgid = getpgid(pid);

    for (size_t i = 0; i < sc->n_live; i++)
        if (sc->live[i] == pid || sc->live[i] == pgid)
            return false;
    if (sc->print)
        fprintf(stderr, "harness: stray process (pgid %d): %s", (int)pgid, stat);
    return true;
}

int h_stray_processes(const Harness *h, mcpc_client *c, bool print)
{
    StrayCtx sc = {.print = print};

    sc.n_live = live_server_pids(c, sc.live, 64);
    return for_each_tagged(h, false, stray_one, &sc);
}

/* Are all settled servers connected again? */
static bool settled_connected(const Harness *h, mcpc_client *c)
{
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val servers = json_get_array(st, "servers");
    size_t want = 0, have = 0;

    for (const char *p = h->settled; *p; p = strchr(p, '\n') + 1)
        want++;
    for (size_t i = 0; i < json_array_len(servers); i++) {
        yajl_val s = json_array_at(servers, i);
        if (is_settled(h, json_get_string(s, "name")) &&
            streq(json_get_string(s, "state"), "connected"))
            have++;
    }
    return have == want;
}

bool h_check_healthy(Harness *h, const char *scenario, const char *echo_tool)
{
    int before = h_failures, fds = -1, stray = -1;
    bool servers = false;

    /* A fresh connection: accepting still works, not just an old session. */
    mcpc_client *c = h_client(h, "control");
    int is_error = -1;
    _cleanup_free_ char *t = h_call_text(c, echo_tool, "{\"text\":\"healthy\"}", &is_error);
    CHECK_MSG(streq(t, "healthy") && is_error == 0, "%s: control call gave %s", scenario, t);
    for (uint64_t end = deadline_in(H_WAIT_MS); now_ms() <= end;) {
        servers = settled_connected(h, c);
        stray = h_stray_processes(h, c, false);
        /* The control client holds one fd of its own. */
        fds = h_mcpd_fds(h) - 1;
        if (servers && stray == 0 && fds <= h->baseline_fds)
            break;
        h_sleep_ms(50);
    }
    CHECK_MSG(servers, "%s: settled servers not all connected again", scenario);
    CHECK_MSG(fds <= h->baseline_fds, "%s: mcpd has %d fds, baseline %d", scenario, fds,
              h->baseline_fds);
    if (stray)
        h_stray_processes(h, c, true);
    CHECK_MSG(stray == 0, "%s: %d stray processes", scenario, stray);
    mcpc_free(c);
    if (h_failures == before)
        printf("  %s: ok (fds %d <= %d, no stray process)\n", scenario, fds, h->baseline_fds);
    return h_failures == before;
}

/* ---------------------------------------------------------------- raw clients */

const char h_raw_initialize[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n";

int h_raw_connect(const Harness *h)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (strlen(h->socket) >= sizeof(sa.sun_path))
        die("socket path too long: %s", h->socket);
    memcpy(sa.sun_path, h->socket, strlen(h->socket) + 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

bool h_raw_write(int fd, const void *data, size_t n)
{
    const char *p = data;

    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

char *h_raw_read(int fd, int timeout_ms)
{
    StrBuf sb = STRBUF_INIT;
    char buf[65536];
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        strbuf_append(&sb, buf, (size_t)n);
    }
    strbuf_putc(&sb, '\0');
    sb.len--;
    return strbuf_detach(&sb, NULL);
}

void h_sh(const char *fmt, ...)
{
    va_list ap;
    char *cmd;

    va_start(ap, fmt);
    if (vasprintf(&cmd, fmt, ap) < 0)
        abort();
    va_end(ap);
    if (system(cmd) != 0) {
        fprintf(stderr, "command failed: %s\n", cmd);
        exit(99);
    }
    free(cmd);
}

char *h_vshell(int *statusp, const char *fmt, va_list ap)
{
    _cleanup_free_ char *cmd = NULL;
    StrBuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    FILE *f;
    int st;

    if (vasprintf(&cmd, fmt, ap) < 0)
        abort();
    if (!(f = popen(cmd, "r")))
        die("popen %s: %s", cmd, strerror(errno));
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(&sb, buf, n);
    st = pclose(f);
    *statusp = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return strbuf_detach(&sb, NULL);
}

char *h_shell(int *statusp, const char *fmt, ...)
{
    va_list ap;
    char *out;

    va_start(ap, fmt);
    out = h_vshell(statusp, fmt, ap);
    va_end(ap);
    return out;
}
