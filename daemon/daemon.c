// SPDX-License-Identifier: MIT
// daemon: the event loop, signals, start-up and a bounded shutdown.

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/child.h"
#include "daemon/daemon.h"
#include "daemon/methods.h"
#include "daemon/transport.h"

/*
 * Shutdown bound: the stdio recipe takes up to 4 s (2 s to SIGTERM, 2 s to SIGKILL); past
 * this, everything left is killed and the daemon exits regardless.
 */
#define STOP_GRACE_MS 4500
#define STOP_HARD_MS  6000
#define STOP_TICK_MS  50

static void on_peer_gone(Peer *p, void *userdata)
{
    Daemon *d = userdata;

    manager_peer_gone(&d->manager, p);
}

static void on_accept(int fd, uid_t uid, pid_t pid, void *userdata)
{
    Daemon *d = userdata;

    if (d->stopping) {
        close(fd);
        return;
    }
    peer_new(&d->peers, fd, uid, pid);
}

static void load_settings(Daemon *d)
{
    ConfigSet problems = {0};

    settings_init(&d->settings);
    settings_load(&d->settings, d->settings_path, &problems);
    config_set_deinit(&problems);
}

yajl_val daemon_reload(Daemon *d)
{
    log_notice("reloading configuration");
    load_settings(d);
    d->manager.settings = d->settings;
    return manager_load(&d->manager);
}

static void on_stop_tick(evutil_socket_t fd, short what, void *arg)
{
    Daemon *d = arg;
    uint64_t elapsed = now_ms() - d->stop_started_ms;
    struct timeval tv = {0, STOP_TICK_MS * 1000};

    (void)fd, (void)what;
    if (transport_live_count() == 0 || elapsed >= STOP_HARD_MS) {
        if (transport_live_count())
            log_warning("%u upstream processes did not exit in time", transport_live_count());
        event_base_loopexit(d->base, NULL);
        return;
    }
    if (elapsed >= STOP_GRACE_MS)
        transport_stdio_kill_all();
    evtimer_add(d->ev_stop_tick, &tv);
}

void daemon_stop(Daemon *d, const char *why)
{
    if (d->stopping)
        return;
    d->stopping = true;
    d->stop_started_ms = now_ms();
    log_notice("stopping: %s", why);
    listener_deinit(&d->listener);
    while (d->peers.first)
        peer_close(d->peers.first, NULL);
    manager_shutdown(&d->manager);
    on_stop_tick(-1, 0, d);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    Daemon *d = arg;
    yajl_val r;

    (void)what;
    switch (sig) {
    case SIGCHLD:
        child_reap();
        break;
    case SIGHUP:
        r = daemon_reload(d);
        json_free(r);
        break;
    default:
        daemon_stop(d, sig == SIGTERM ? "SIGTERM" : "SIGINT");
    }
}

/* Agents and servers are fds: raise the soft limit to the hard one. */
static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int daemon_init(Daemon *d, const DaemonOptions *opt)
{
    _cleanup_free_ char *conf = paths_config_home();
    _cleanup_free_ char *sock = opt->socket_path ? xstrdup(opt->socket_path) : paths_socket();
    _cleanup_free_ char *why = NULL;
    yajl_val r;
    int ret;

    memset(d, 0, sizeof(*d));
    d->started_wall_ms = wall_ms();
    d->config_file = opt->config_file;
    d->settings_path = paths_join(conf, "mcpd/mcpd.json");
    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    load_settings(d);
    d->base = event_base_new();
    if (!d->base) {
        log_error("cannot create the event loop");
        return -ENOMEM;
    }
    ret = listener_bind(&d->listener, sock, &why);
    if (ret < 0) {
        log_error("%s", why);
        return ret;
    }
    d->ev_term = evsignal_new(d->base, SIGTERM, on_signal, d);
    d->ev_int = evsignal_new(d->base, SIGINT, on_signal, d);
    d->ev_hup = evsignal_new(d->base, SIGHUP, on_signal, d);
    d->ev_chld = evsignal_new(d->base, SIGCHLD, on_signal, d);
    d->ev_stop_tick = evtimer_new(d->base, on_stop_tick, d);
    event_add(d->ev_term, NULL);
    event_add(d->ev_int, NULL);
    event_add(d->ev_hup, NULL);
    event_add(d->ev_chld, NULL);
    peer_registry_init(&d->peers, d->base, (size_t)d->settings.max_message_bytes,
                       methods_dispatch, on_peer_gone, d);
    manager_init(&d->manager, d->base, &d->peers, &d->settings, d->config_file);
    listener_start(&d->listener, d->base, on_accept, d);
    log_notice("mcpd %s listening on %s", MCPD_VERSION, d->listener.path);
    r = manager_load(&d->manager);
    json_free(r);
    return 0;
}

int daemon_run(Daemon *d)
{
    event_base_dispatch(d->base);
    return 0;
}

void daemon_deinit(Daemon *d)
{
    if (d->manager.base) {
        manager_deinit(&d->manager);
        peer_registry_deinit(&d->peers);
        /* Run the loop once more so deferred frees (upstreams, transports) complete. */
        event_base_loop(d->base, EVLOOP_NONBLOCK);
    }
    listener_deinit(&d->listener);
    if (d->ev_term) {
        event_free(d->ev_term);
        event_free(d->ev_int);
        event_free(d->ev_hup);
        event_free(d->ev_chld);
        event_free(d->ev_stop_tick);
    }
    if (d->base)
        event_base_free(d->base);
    free(d->settings_path);
}
