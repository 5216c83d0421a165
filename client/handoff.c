// SPDX-License-Identifier: MIT
// handoff: `mcpctl bridge` hands its host's stdin and stdout to mcpd, then waits for the end.

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "client/handoff-wait.h"
#include "client/handoff.h"
#include "common/handoff.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"

/* Why fd (0 or 1) cannot be handed over, or NULL: only a pipe or a socket can be. */
static const char *unfit(int fd)
{
    struct stat st;

    if (fstat(fd, &st) < 0)
        return "it is not open";
    if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
        return NULL;
    if (isatty(fd))
        return "it is a terminal";
    if (S_ISREG(st.st_mode))
        return "it is a regular file";
    return "it is neither a pipe nor a socket";
}

bool handoff_possible(char **whyp)
{
    const char *env = getenv(HANDOFF_ENV), *why;

    if (env && streq(env, "0")) {
        *whyp = xstrdup("turned off by " HANDOFF_ENV "=0");
        return false;
    }
    if ((why = unfit(STDIN_FILENO))) {
        *whyp = xasprintf("stdin cannot be handed to mcpd: %s", why);
        return false;
    }
    if ((why = unfit(STDOUT_FILENO))) {
        *whyp = xasprintf("stdout cannot be handed to mcpd: %s", why);
        return false;
    }
    return true;
}

/*
 * The next line from mcpd (a tree, to free), waiting at most timeout_ms (-1: as long as it
 * takes); NULL at EOF, on an error or timeout, or for a line that is not JSON.
 */
static yajl_val read_line(int sock, StrBuf *buf, int timeout_ms)
{
    uint64_t deadline = timeout_ms < 0 ? 0 : now_ms() + (uint64_t)timeout_ms;
    char *nl;

    while (!(nl = memchr(buf->data ? buf->data : "", '\n', buf->len))) {
        int left = -1;
        if (timeout_ms >= 0) {
            uint64_t now = now_ms();
            if (now >= deadline)
                return NULL;
            left = (int)(deadline - now);
        }
        struct pollfd pfd = {sock, POLLIN, 0};
        int r = poll(&pfd, 1, left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || buf->len >= HANDOFF_LINE_MAX)
            return NULL;
        strbuf_reserve(buf, 4096);
        ssize_t n = read(sock, buf->data + buf->len, 4096);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return NULL;
        buf->len += (size_t)n;
        buf->data[buf->len] = '\0';
    }
    *nl = '\0';
    yajl_val v = json_parse(buf->data, NULL);
    size_t used = (size_t)(nl - buf->data) + 1;
    memmove(buf->data, nl + 1, buf->len - used + 1);
    buf->len -= used;
    return v;
}

/* A message's text for the user: params.message or error.message, or what fallback says. */
static const char *message_of(yajl_val v, const char *fallback)
{
    const char *m = json_get_string(json_get_object(v, "params"), "message");

    if (!m)
        m = json_get_string(json_get_object(v, "error"), "message");
    return m ? m : fallback;
}

/* The hand-off request: what the bridge knows of its host, for mcpd to serve it the same way. */
static void write_request(StrBuf *sb, const HostLine *h, const char *host_prefix)
{
    yajl_val params = json_object_new();

    json_object_set(params, "version", json_int_new(HANDOFF_VERSION));
    json_object_set(params, "identity", h->identity ? json_copy(h->identity) : json_object_new());
    if (host_prefix)
        json_object_set(params, "hostPrefix", json_string_new(host_prefix));
    if (h->names.left)
        json_object_set(params, "leaveOut", json_copy(h->names.left));
    strbuf_printf(sb,
                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":", HANDOFF_METHOD);
    json_write(sb, params);
    strbuf_puts(sb, "}\n");
    json_free(params);
}

/* stdin and stdout to mcpd in one byte's ancillary data. */
static int send_fds(int sock)
{
    int fds[2] = {STDIN_FILENO, STDOUT_FILENO};
    char byte = '\n';
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(fds))];
    } u;
    struct iovec iov = {&byte, 1};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

    memset(&u, 0, sizeof(u));
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(fds));
    memcpy(CMSG_DATA(c), fds, sizeof(fds));
    for (;;) {
        ssize_t w = sendmsg(sock, &mh, MSG_NOSIGNAL);
        if (w == 1)
            return 0;
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = {sock, POLLOUT, 0};
            if (poll(&pfd, 1, HANDOFF_STEP_MS) > 0)
                continue;
        }
        return w < 0 ? -errno : -EIO;
    }
}

/* The waiter's file name, where it is looked for. */
#define HANDOFF_WAITER "mcpctl-bridge-wait"
/*
 * Without close_range(2) (kernels before 5.11), fds below this are marked close-on-exec one by
 * one: the bridge itself opens a handful, and a host passes its stdio (and rarely tens more).
 */
#define HANDOFF_FD_SCAN 1024
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Mark fds lo..hi close-on-exec at once; -1 where the kernel cannot. */
static int cloexec_from(unsigned lo, unsigned hi)
{
#ifdef SYS_close_range
    return lo > hi ? 0 : (int)syscall(SYS_close_range, lo, hi, CLOSE_RANGE_CLOEXEC);
#else
    (void)lo, (void)hi;
    return -1;
#endif
}

/*
 * Where mcpctl-bridge-wait is: $MCPCTL_BRIDGE_WAIT when set ("" for none: wait in mcpctl), else
 * next to this mcpctl (the build tree), else where meson installs it. NULL: none found.
 */
static const char *waiter_path(char *buf, size_t size)
{
    static const char installed[] = MCPD_LIBEXECDIR "/" HANDOFF_WAITER;
    const char *env = getenv(HANDOFF_WAITER_ENV);
    ssize_t n;
    char *slash;

    if (env)
        return *env && access(env, X_OK) == 0 ? env : NULL;
    n = readlink("/proc/self/exe", buf, size - 1);
    if (n > 0) {
        buf[n] = '\0';
        if ((slash = strrchr(buf, '/')) &&
            (size_t)(slash + 1 - buf) + sizeof(HANDOFF_WAITER) <= size) {
            memcpy(slash + 1, HANDOFF_WAITER, sizeof(HANDOFF_WAITER));
            if (access(buf, X_OK) == 0)
                return buf;
        }
    }
    return access(installed, X_OK) == 0 ? installed : NULL;
}

/*
 * Become mcpctl-bridge-wait (same pid: the host still supervises it) with sock as its only fd
 * besides stderr. Returns only when that cannot be (then mcpctl waits itself), sock still open.
 */
static void become_waiter(int sock)
{
    char path_buf[PATH_MAX], fd_text[16];
    const char *path = waiter_path(path_buf, sizeof(path_buf));
    int fd;

    if (!path) {
        log_debug("waiting in mcpctl: no %s found (%s)", HANDOFF_WAITER,
                  getenv(HANDOFF_WAITER_ENV) ? "$" HANDOFF_WAITER_ENV : MCPD_LIBEXECDIR);
        return;
    }
    if ((fd = fcntl(sock, F_DUPFD, 3)) < 0)
        return;
    snprintf(fd_text, sizeof(fd_text), "%d", fd);
    /* Nothing else goes with it: fds from the host or libraries close at the exec. */
    if (cloexec_from(3, (unsigned)fd - 1) < 0 || cloexec_from((unsigned)fd + 1, ~0U) < 0)
        for (int i = 3; i < HANDOFF_FD_SCAN; i++)
            if (i != fd)
                (void)fcntl(i, F_SETFD, FD_CLOEXEC);
    execv(path, (char *[]){(char *)HANDOFF_WAITER, fd_text, NULL});
    log_debug("waiting in mcpctl: cannot run %s: %s", path, strerror(errno));
    close(fd);
}

/*
 * mcpd has the host's pipes: the bridge lets go of its own copies (so that the host sees its
 * end of them close when mcpd closes them) and becomes a small waiter, or waits itself, until
 * mcpd says how it ended (client/handoff-wait.c).
 */
static int sleep_until_ended(int sock, StrBuf *buf)
{
    close(STDIN_FILENO);
    close(STDOUT_FILENO);
    if (!buf->len)
        become_waiter(sock);
    else /* the host was quick: mcpd's last line came with the one that took the pipes */
        log_debug("waiting in mcpctl: mcpd has already said how the host's session ended");
    return handoff_wait(sock, buf->data, buf->len);
}

int handoff_run(int sock, const HostLine *h, const char *host_prefix, char **whyp)
{
    StrBuf req = STRBUF_INIT, buf = STRBUF_INIT;
    _cleanup_json_ yajl_val answer = NULL, taken = NULL;
    int ret = -1;

    write_request(&req, h, host_prefix);
    if (fd_write_all(sock, req.data, req.len) < 0) {
        *whyp = xasprintf("cannot write to mcpd: %s", strerror(errno));
        goto out;
    }
    answer = read_line(sock, &buf, HANDOFF_STEP_MS);
    if (!json_get_object(answer, "result")) {
        *whyp = xasprintf("mcpd does not take a host's pipes (an mcpd from before the "
                          "hand-off?): %s",
                          message_of(answer, "no answer"));
        goto out;
    }
    if (send_fds(sock) < 0) {
        *whyp = xasprintf("cannot pass stdin and stdout to mcpd: %s", strerror(errno));
        goto out;
    }
    taken = read_line(sock, &buf, HANDOFF_STEP_MS);
    const char *method = json_get_string(taken, "method");
    if (!method || !streq(method, HANDOFF_TAKEN)) {
        *whyp = xasprintf("mcpd refused the host's pipes: %s", message_of(taken, "no answer"));
        goto out;
    }
    strbuf_deinit(&req);
    answer = json_free(answer);
    taken = json_free(taken);
    ret = sleep_until_ended(sock, &buf);
out:
    strbuf_deinit(&req);
    strbuf_deinit(&buf);
    close(sock);
    return ret;
}
