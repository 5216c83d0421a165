// SPDX-License-Identifier: MIT
// test-systemd: sd_notify messages in order, and socket activation with systemd-socket-activate.

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

static int notify_socket(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (strlen(path) >= sizeof(sa.sun_path))
        exit(99);
    memcpy(sa.sun_path, path, strlen(path) + 1);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        perror("bind notify socket");
        exit(99);
    }
    return fd;
}

/* Collect datagrams for up to ms, appending "<msg>|" to sb; stop early once want is seen. */
static void collect(int fd, StrBuf *sb, int ms, const char *want)
{
    char buf[4096];

    for (int waited = 0; waited < ms; waited += 10) {
        ssize_t n;
        while ((n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
            buf[n] = '\0';
            for (char *p = buf; *p; p++)
                if (*p == '\n')
                    *p = ';';
            strbuf_puts(sb, buf);
            strbuf_putc(sb, '|');
        }
        if (want && strstr(strbuf_str(sb), want))
            return;
        h_sleep_ms(10);
    }
}

static void test_notify(Harness *h)
{
    char path[400];
    StrBuf sb = STRBUF_INIT;
    int fd;

    snprintf(path, sizeof(path), "%s/notify.sock", h->dir);
    fd = notify_socket(path);
    setenv("NOTIFY_SOCKET", path, 1);
    setenv("WATCHDOG_USEC", "400000", 1);
    h_start(h, NULL);
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    collect(fd, &sb, H_WAIT_MS, "READY=1");
    collect(fd, &sb, H_WAIT_MS, "WATCHDOG=1");
    const char *s = strbuf_str(&sb);
    CHECK_MSG(strstr(s, "READY=1;STATUS=") != NULL, "got %s", s);
    CHECK_MSG(strstr(s, "WATCHDOG=1") > strstr(s, "READY=1"), "got %s", s);
    /* Wait for the server to connect: STATUS= follows state changes. */
    collect(fd, &sb, H_WAIT_MS, "1/1 servers connected");
    CHECK_MSG(strstr(strbuf_str(&sb), "STATUS=1/1 servers connected, 10 tools"), "got %s",
              strbuf_str(&sb));
    strbuf_reset(&sb);
    kill(h->pid, SIGHUP);
    collect(fd, &sb, H_WAIT_MS, "READY=1");
    s = strbuf_str(&sb);
    CHECK_MSG(strstr(s, "RELOADING=1;MONOTONIC_USEC=") != NULL, "got %s", s);
    CHECK_MSG(strstr(s, "READY=1") > strstr(s, "RELOADING=1"), "got %s", s);
    strbuf_reset(&sb);
    kill(h->pid, SIGTERM);
    collect(fd, &sb, H_WAIT_MS, "STOPPING=1");
    CHECK_MSG(strstr(strbuf_str(&sb), "STOPPING=1") != NULL, "got %s", strbuf_str(&sb));
    int st = h_stop(h);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
    strbuf_deinit(&sb);
    close(fd);
}

/* The first client connects before mcpd runs at all, and is answered. */
static void test_socket_activation(Harness *h)
{
    const char *activate = "/usr/bin/systemd-socket-activate";
    char sock[400];
    pid_t pid;

    if (access(activate, X_OK) != 0) {
        printf("test-systemd: socket activation skipped: %s missing\n", activate);
        return;
    }
    snprintf(sock, sizeof(sock), "%s/activated.sock", h->dir);
    pid = fork();
    if (pid == 0) {
        int fd = open(h->log, O_WRONLY | O_APPEND | O_CREAT, 0600);
        dup2(fd, 2);
        /* It passes on only the environment it is told to. */
        execl(activate, activate, "-l", sock, "--fdname=mcpd", "-E", "XDG_CONFIG_HOME", "-E",
              "XDG_CACHE_HOME", "-E", "XDG_RUNTIME_DIR", "-E", "HOME", "-E", "PATH", "-E",
              "MCPD_TEST_TAG", getenv("MCPD_BINARY"), "--log-level", "debug", (char *)NULL);
        _exit(127);
    }
    mcpc_options o = {.socket_path = sock, .client_name = "early", .timeout_ms = 60000};
    mcpc_client *c = mcpc_new(&o);
    /* The socket file appears at bind(), before listen(): until then a connect is refused. */
    int r = -1;
    for (int i = 0; i < 3000 && (r = mcpc_connect(c)) != 0; i++) {
        mcpc_free(c);
        h_sleep_ms(10);
        c = mcpc_new(&o);
    }
    CHECK_MSG(r == 0, "connect: %s", mcpc_errmsg(c));
    bool found = false;
    CHECK(h_list_count(c, "mcp_one_echo", &found) == 10 && found);
    mcpc_free(c);
    h->pid = pid; /* systemd-socket-activate execs mcpd in place */
    int st = h_stop(h);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "using the socket passed by systemd"));
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"one\": {\"command\": \"%s\"}}}", h_fake());

    h_setup(&h, "systemd");
    h_write_config(&h, cfg);
    test_notify(&h);
    test_socket_activation(&h);
    h_teardown(&h);
    return h_finish("test-systemd");
}
