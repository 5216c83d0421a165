// SPDX-License-Identifier: MIT
// listener: the Unix socket (bind or inherit), its permissions, and SO_PEERCRED checks.

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/downstream/listener.h"
#include "daemon/config/selfref.h"

/* Connections waiting for accept(2); agents start in bursts (a parent and its subagents). */
#define LISTEN_BACKLOG 512
/* Out of fds: stop accepting this long rather than spin on EMFILE. */
#define EMFILE_PAUSE_MS 100

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa->sun_path))
        return -ENAMETOOLONG;
    strcpy(sa->sun_path, path);
    return 0;
}

/* Is something answering on path? -ECONNREFUSED means a stale file. */
static int probe(const struct sockaddr_un *sa)
{
    _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -errno;
    if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
        return -errno;
    return 0;
}

static int check_dir(const char *path, char **whyp)
{
    _cleanup_free_ char *dir = paths_dirname(path);
    _cleanup_free_ char *runtime = paths_runtime_dir();

    /* Our own runtime dir must be private; a dir named by MCPD_SOCKET must not be writable. */
    return paths_ensure_private_dir(dir, getuid(), streq(dir, runtime), whyp);
}

int listener_bind(Listener *l, const char *path, char **whyp)
{
    struct sockaddr_un sa;
    mode_t old;
    int fd, r;

    memset(l, 0, sizeof(*l));
    l->fd = -1;
    if ((r = fill_addr(&sa, path)) < 0) {
        *whyp = xasprintf("socket path %s is too long", path);
        return r;
    }
    if ((r = check_dir(path, whyp)) < 0)
        return r;
    r = probe(&sa);
    if (r == 0) {
        *whyp = xasprintf("another mcpd is already serving %s; stop it first or set MCPD_SOCKET "
                          "to another path",
                          path);
        return -EADDRINUSE;
    }
    if (r == -ECONNREFUSED) {
        log_notice("removing stale socket %s", path);
        unlink(path);
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        r = -errno;
        *whyp = xasprintf("socket: %s", strerror(-r));
        return r;
    }
    /* Create it 0600 from the start: no window where another uid could connect. */
    old = umask(0177);
    r = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
    umask(old);
    if (r == 0 && listen(fd, LISTEN_BACKLOG) < 0)
        r = -errno;
    if (r < 0) {
        *whyp = xasprintf("cannot listen on %s: %s", path, strerror(-r));
        close(fd);
        return r;
    }
    l->fd = fd;
    l->path = xstrdup(path);
    l->owns_path = true;
    return 0;
}

int listener_adopt(Listener *l, int fd, const char *path)
{
    struct sockaddr_un sa;
    socklen_t len = sizeof(sa);

    memset(l, 0, sizeof(*l));
    l->fd = fd;
    /* Report where the socket really is, whatever path the environment suggests. */
    if (getsockname(fd, (struct sockaddr *)&sa, &len) == 0 && len > sizeof(sa_family_t) &&
        sa.sun_path[0])
        l->path = xstrndup(sa.sun_path, strnlen(sa.sun_path, len - sizeof(sa_family_t)));
    else
        l->path = xstrdup(path ? path : "(socket activation)");
    return fd_set_nonblock(fd);
}

static void refuse(Listener *l, int fd, uid_t uid)
{
    StrBuf sb = STRBUF_INIT;
    _cleanup_free_ char *msg =
        xasprintf("mcpd refuses connections from uid %u: it serves uid %u only", (unsigned)uid,
                  (unsigned)getuid());

    /* Logged first: whoever sees the refusal can already find it in the log. */
    log_warning("refused a connection from uid %u (only uid %u may connect)", (unsigned)uid,
                (unsigned)getuid());
    l->n_refused++;
    jsonrpc_write_error(&sb, NULL, JSONRPC_INVALID_REQUEST, msg, NULL);
    (void)!write(fd, sb.data, sb.len);
    strbuf_deinit(&sb);
    close(fd);
}

/*
 * A server mcpd started (or its child) connecting back to mcpd: an agent's bridge entry that
 * discovery did not recognise. Serving it would make mcpd wait for itself; the error ends its
 * handshake at once instead.
 */
static void refuse_self(int fd, pid_t pid)
{
    StrBuf sb = STRBUF_INIT;

    log_warning("refused a connection from pid %d: it was started by mcpd itself (a server entry "
                "that runs mcpctl bridge or another mcpd client); remove that entry",
                (int)pid);
    jsonrpc_write_error(&sb, NULL, JSONRPC_INVALID_REQUEST,
                        "this process was started by mcpd: mcpd does not serve itself (remove "
                        "the entry that starts it from the config)",
                        NULL);
    (void)!write(fd, sb.data, sb.len);
    strbuf_deinit(&sb);
    close(fd);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
    Listener *l = arg;

    (void)fd, (void)what;
    event_add(l->ev_accept, NULL);
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
    Listener *l = arg;

    (void)what;
    for (int i = 0; i < 64; i++) {
        struct ucred cred;
        socklen_t len = sizeof(cred);
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                struct timeval tv = {0, EMFILE_PAUSE_MS * 1000};
                log_warning("out of file descriptors; pausing accept for %d ms", EMFILE_PAUSE_MS);
                event_del(l->ev_accept);
                evtimer_add(l->ev_resume, &tv);
            }
            return;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
            log_warning("SO_PEERCRED failed: %s; dropping the connection", strerror(errno));
            close(fd);
            continue;
        }
        if (cred.uid != getuid()) {
            refuse(l, fd, cred.uid);
            continue;
        }
        if (selfref_pid_is_descendant(cred.pid)) {
            refuse_self(fd, cred.pid);
            continue;
        }
        l->accept_fn(fd, cred.uid, cred.pid, l->userdata);
    }
}

void listener_start(Listener *l, struct event_base *base, ListenerAcceptFn fn, void *userdata)
{
    l->accept_fn = fn;
    l->userdata = userdata;
    l->ev_accept = event_new(base, l->fd, EV_READ | EV_PERSIST, on_accept, l);
    l->ev_resume = evtimer_new(base, on_resume, l);
    event_add(l->ev_accept, NULL);
}

void listener_deinit(Listener *l)
{
    if (l->ev_accept)
        event_free(l->ev_accept);
    if (l->ev_resume)
        event_free(l->ev_resume);
    if (l->fd >= 0)
        close(l->fd);
    if (l->owns_path && l->path)
        unlink(l->path);
    free(l->path);
    memset(l, 0, sizeof(*l));
    l->fd = -1;
}
