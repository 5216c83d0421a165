// SPDX-License-Identifier: MIT
// test-faults: crashing, hanging and noisy servers; garbage, oversized and foreign clients.

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

static int raw_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read until EOF (or 10 s); return what came. */
static char *read_to_eof(int fd)
{
    StrBuf sb = STRBUF_INIT;
    char buf[4096];
    struct timeval tv = {10, 0};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0)
            break;
        strbuf_append(&sb, buf, (size_t)n);
    }
    return strbuf_detach(&sb, NULL);
}

/* A server that crashes mid-call: the caller gets an MCP error, the other server is fine. */
static void test_crash_mid_call(Harness *h, mcpc_client *c)
{
    int is_error;
    char *t;

    CHECK(h_wait_state(c, "crashy", "connected", H_WAIT_MS));
    t = h_call_text(c, "mcp_crashy_crash", NULL, &is_error);
    CHECK_MSG(is_error == 1 && startswith(t, "MCP error: ") && strstr(t, "crashy"), "crash gave %s",
              t);
    free(t);
    /* Status leaves "connected" at once: the exit was seen. */
    yajl_val st = h_status(c);
    CHECK(!streq(json_get_string(h_server(st, "crashy"), "state"), "connected"));
    json_free(st);
    t = h_call_text(c, "mcp_steady_echo", "{\"text\":\"still here\"}", &is_error);
    CHECK(streq(t, "still here"));
    free(t);
    /* It comes back by itself (backoff), and its tools work again. */
    CHECK(h_wait_state(c, "crashy", "connected", H_WAIT_MS));
    st = h_status(c);
    int64_t restarts = 0;
    json_get_int(h_server(st, "crashy"), "restarts", &restarts);
    CHECK(restarts == 1);
    json_free(st);
    t = h_call_text(c, "mcp_crashy_echo", "{\"text\":\"back\"}", &is_error);
    CHECK(streq(t, "back"));
    free(t);
}

/* A server that never answers initialize: absent from the list, error in status. */
static void test_hang_init(Harness *h, mcpc_client *c)
{
    bool found;
    int n;

    (void)h;
    n = h_list_count(c, "mcp_hangs_echo", &found);
    CHECK(n > 0 && !found);
    h_list_count(c, "mcp_steady_echo", &found);
    CHECK(found);
    yajl_val st = h_status(c);
    const char *err = json_get_string(h_server(st, "hangs"), "lastError");
    CHECK_MSG(err && strstr(err, "timed out after 1500ms"), "hangs error: %s", err ? err : "-");
    json_free(st);
}

/* Non-JSON lines on a server's stdout are skipped, not fatal (B9). */
static void test_garbage_server(Harness *h, mcpc_client *c)
{
    char *t;

    (void)h;
    CHECK(h_wait_state(c, "noisy", "connected", H_WAIT_MS));
    t = h_call_text(c, "mcp_noisy_echo", "{\"text\":\"through the noise\"}", NULL);
    CHECK(streq(t, "through the noise"));
    free(t);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "not JSON-RPC"));
    CHECK(log && strstr(log, "[noisy] stderr: "));
}

/* A client sending garbage is dropped with a parse error; others are unaffected. */
static void test_garbage_client(Harness *h, mcpc_client *c)
{
    int fd = raw_connect(h->socket);
    const char junk[] = "this is not json\n";
    char *out;

    CHECK(fd >= 0);
    CHECK(write(fd, junk, sizeof(junk) - 1) == (ssize_t)sizeof(junk) - 1);
    out = read_to_eof(fd);
    CHECK_MSG(strstr(out, "-32700") != NULL, "got %s", out);
    free(out);
    close(fd);

    /* A batch gets -32600 and the connection stays. */
    fd = raw_connect(h->socket);
    const char batch[] = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n"
                         "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n";
    CHECK(write(fd, batch, sizeof(batch) - 1) == (ssize_t)sizeof(batch) - 1);
    shutdown(fd, SHUT_WR);
    out = read_to_eof(fd);
    CHECK_MSG(strstr(out, "-32600") && strstr(out, "\"id\":2,\"result\":{}"), "got %s", out);
    free(out);
    close(fd);

    /* Requests before initialize are refused; unknown methods are -32601. */
    fd = raw_connect(h->socket);
    const char early[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no/such\"}\n";
    CHECK(write(fd, early, sizeof(early) - 1) == (ssize_t)sizeof(early) - 1);
    shutdown(fd, SHUT_WR);
    out = read_to_eof(fd);
    CHECK_MSG(strstr(out, "\"id\":\"a\",\"error\""), "got %s", out);
    CHECK_MSG(strstr(out, "\"protocolVersion\":\"2025-06-18\""), "got %s", out);
    CHECK_MSG(strstr(out, "\"mcpd/session\":\""), "got %s", out);
    CHECK_MSG(strstr(out, "\"id\":2,\"error\":{\"code\":-32601"), "got %s", out);
    free(out);
    close(fd);

    /* A line over maxMessageBytes (64 KiB here) drops that client. */
    fd = raw_connect(h->socket);
    size_t big = 200000;
    char *line = xmalloc(big);
    memset(line, 'a', big);
    ssize_t w = 0;
    for (size_t off = 0; off < big; off += (size_t)w)
        if ((w = write(fd, line + off, big - off)) <= 0)
            break;
    free(line);
    out = read_to_eof(fd);
    CHECK_MSG(strstr(out, "maxMessageBytes") != NULL, "got %s", out);
    free(out);
    close(fd);

    /* Half a line, then gone. */
    fd = raw_connect(h->socket);
    CHECK(write(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,", 24) == 24);
    close(fd);

    char *t = h_call_text(c, "mcp_steady_echo", "{\"text\":\"unaffected\"}", NULL);
    CHECK(streq(t, "unaffected"));
    free(t);
}

/* A peer of another uid is refused by SO_PEERCRED even when file permissions would let it in. */
static void test_other_uid(Harness *h)
{
    struct passwd *pw = getpwnam("nobody");
    char dir[400];
    pid_t pid;
    int st;

    if (getuid() != 0 || !pw) {
        printf("test-faults: other-uid check skipped (needs root and user nobody)\n");
        return;
    }
    snprintf(dir, sizeof(dir), "%s/run/mcpd", h->dir);
    /* Open the way on purpose: the dirs and socket become reachable for everyone. */
    chmod(h->dir, 0755);
    snprintf(dir, sizeof(dir), "%s/run", h->dir);
    chmod(dir, 0755);
    snprintf(dir, sizeof(dir), "%s/run/mcpd", h->dir);
    chmod(dir, 0755);
    chmod(h->socket, 0666);
    pid = fork();
    if (pid == 0) {
        signal(SIGPIPE, SIG_IGN); /* mcpd may hang up before our write */
        if (setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
            _exit(10);
        int fd = raw_connect(h->socket);
        if (fd < 0)
            _exit(11);
        const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        (void)!write(fd, init, sizeof(init) - 1);
        char *out = read_to_eof(fd);
        _exit(strstr(out, "refuses connections from uid") && !strstr(out, "\"result\"") ? 0 : 12);
    }
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "foreign client status 0x%x", st);
    chmod(dir, 0700);
    chmod(h->socket, 0600);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "refused a connection from uid"));
}

int main(void)
{
    Harness h;
    mcpc_client *c;
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\": {"
        "\"steady\": {\"command\": \"%1$s\"},"
        "\"crashy\": {\"command\": \"%1$s\", \"args\": [\"--name\", \"crashy\"]},"
        "\"hangs\": {\"command\": \"%1$s\", \"args\": [\"--hang-init\"], \"timeout\": 1500,"
        " \"reconnect\": false},"
        "\"noisy\": {\"command\": \"%1$s\", \"args\": [\"--garbage\", \"--stderr-noise\", \"5\"]}"
        "}}",
        h_fake());

    h_setup(&h, "faults");
    h_write_config(&h, cfg);
    h_write_settings(&h, "{\"maxMessageBytes\": 65536}");
    h_start(&h, NULL);
    c = h_client(&h, "faults");
    test_hang_init(&h, c);
    test_crash_mid_call(&h, c);
    test_garbage_server(&h, c);
    test_garbage_client(&h, c);
    test_other_uid(&h);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-faults");
}
