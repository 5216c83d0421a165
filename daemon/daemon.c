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
#include "common/version.h"
#include "daemon/sys/child.h"
#include "daemon/daemon.h"
#include "daemon/core/manager-status.h"
#include "daemon/core/oauth-login.h"
#include "daemon/config/claude-json.h"
#include "daemon/config/config-read.h"
#include "daemon/config/sandbox-policy.h"
#include "daemon/config/source.h"
#include "daemon/core/surface.h"
#include "daemon/methods/dispatch.h"
#include "daemon/methods/methods-mcp.h"
#include "daemon/methods/methods-modern.h"
#include "daemon/methods/methods.h"
#include "daemon/sys/proctree.h"
#include "daemon/sys/procs.h"
#include "daemon/sys/runlog.h"
#include "daemon/sys/systemd.h"
#include "daemon/sys/turn.h"
#include "daemon/upstream/transport-http.h"
#include "daemon/upstream/transport-stdio.h"

/*
 * Shutdown bound: the stdio recipe takes up to 4 s (2 s to SIGTERM, 2 s to SIGKILL); past
 * this, everything left is killed and the daemon exits regardless.
 */
#define STOP_GRACE_MS 4500
#define STOP_HARD_MS  6000
#define STOP_TICK_MS  50

static void on_peer_gone(Peer *p, void *userdata)
{
    Daemon *d = ((MethodsCtx *)userdata)->ud;

    methods_peer_gone(p->id);
    manager_peer_gone(&d->manager, p);
}

/* A server got 401 and failed: a stored refresh token may bring it back (oauth-login). */
static void on_server_signed_out(Server *s)
{
    oauth_login_refresh(s);
}

static void methods_reload(void *ud, const char *root, ManagerReloadedFn done, void *done_ud)
{
    daemon_reload(ud, root, done, done_ud);
}

/*
 * Streamable HTTP: connections on the socket whose first byte is HTTP's go to the HTTP server;
 * with --listen or the listen setting, a loopback port too, its token next to the socket.
 */
static int start_http(Daemon *d)
{
    const char *spec = d->listen ? d->listen : d->settings.listen;
    _cleanup_free_ char *dir = paths_dirname(d->listener.path), *token = NULL, *why = NULL;
    int r;

    http_server_init(&d->http, d->base, &d->peers, (size_t)d->settings.max_message_bytes);
    d->http.request_timeout_ms = d->settings.partial_line_timeout_ms;
    d->peers.handoff = http_server_adopt;
    d->peers.handoff_ud = &d->http;
    if (!spec || !*spec)
        return 0;
    token = paths_join(dir, "http-token");
    if ((r = http_server_listen(&d->http, spec, token, &why)) < 0)
        log_error("%s", why);
    return r;
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

/*
 * Run records outlive mcpd in $XDG_STATE_HOME/mcpd/runs (~/.local/state by default); without
 * that directory they are kept in memory only.
 */
static void set_runlog_dir(void)
{
    _cleanup_free_ char *state = paths_state_home(), *why = NULL;
    _cleanup_free_ char *dir = paths_join(state, "mcpd/runs");

    if (runlog_set_dir(dir, &why) < 0)
        log_warning("server run records kept in memory only: %s", why ? why : dir);
}

/* Problems are logged by settings_load and kept for mcpd/status and mcpd/discover. */
static void load_settings(Daemon *d)
{
    config_set_deinit(&d->settings_problems);
    settings_init(&d->settings);
    settings_load(&d->settings, d->settings_path, &d->settings_problems);
    profiles_load(&d->profiles, d->settings_path, &d->settings_problems);
}

/* "2/3 servers connected, 41 tools": what `systemctl --user status mcpd` shows. */
static char *status_line(Daemon *d)
{
    unsigned connected, total, tools;

    manager_counts(&d->manager, &connected, &total, &tools);
    return xasprintf("%u/%u servers connected, %u tools, %zu agents", connected, total, tools,
                     d->peers.n);
}

static void on_status(evutil_socket_t fd, short what, void *arg)
{
    Daemon *d = arg;
    char *s = status_line(d);

    (void)fd, (void)what;
    if (streq(s, d->last_status)) {
        free(s);
        return;
    }
    systemd_notify_status(s);
    free(d->last_status);
    d->last_status = s;
}

/* Server states changed: refresh STATUS= soon (many changes make one message). */
static void on_manager_change(void *userdata)
{
    Daemon *d = userdata;
    struct timeval tv = {0, 100000};

    if (!d->stopping && !evtimer_pending(d->ev_status, NULL))
        evtimer_add(d->ev_status, &tv);
}

typedef struct DaemonReload {
    Daemon *d;
    ManagerReloadedFn done;
    void *ud;
} DaemonReload;

static void on_reloaded(yajl_val r, void *ud)
{
    DaemonReload *x = ud;
    Daemon *d = x->d;

    if (--d->reloading == 0 && !d->stopping) {
        free(d->last_status);
        d->last_status = status_line(d);
        systemd_notify_ready(d->last_status);
    }
    if (x->done)
        x->done(r, x->ud);
    free(x);
}

void daemon_reload(Daemon *d, const char *root, ManagerReloadedFn done, void *ud)
{
    DaemonReload *x = xcalloc(1, sizeof(*x));

    *x = (DaemonReload){d, done, ud};
    log_notice("reloading configuration");
    if (d->reloading++ == 0)
        systemd_notify_reloading();
    load_settings(d);
    d->manager.settings = d->settings;
    manager_reload(&d->manager, root, on_reloaded, x);
}

/* The outcome of a hot reload, for the log: what changed and what was refused (why: taken). */
static void log_reload_outcome(yajl_val r, void *ud)
{
    _cleanup_free_ char *why = ud;
    yajl_val servers = json_get_object(r, "servers"), problems = json_get_array(r, "problems");
    StrBuf sb = STRBUF_INIT;

    for (size_t i = 0; servers && i < servers->u.object.len; i++) {
        const char *what = YAJL_IS_STRING(servers->u.object.values[i])
                               ? servers->u.object.values[i]->u.string
                               : "?";
        if (!streq(what, "kept"))
            strbuf_printf(&sb, "%s%s %s", sb.len ? ", " : "", servers->u.object.keys[i], what);
    }
    log_notice("hot reload after %s changed: %s; %zu problem%s", why,
               sb.len ? strbuf_str(&sb) : "no server changed", json_array_len(problems),
               json_array_len(problems) == 1 ? "" : "s");
    strbuf_deinit(&sb);
}

/* A watched config file changed: reload the workspace it feeds (all for a user file). */
static void on_watch_apply(const char *root, const char *why, void *userdata)
{
    Daemon *d = userdata;

    if (d->stopping)
        return;
    /* Off: only a change of mcpd.json itself (which may turn it back on) is applied. */
    if (!d->settings.hot_reload && !streq(why, d->settings_path)) {
        log_full(LOG_DEBUG, NULL, "watch", "%s changed; hotReload is off", why);
        return;
    }
    daemon_reload(d, root, log_reload_outcome, xstrdup(why));
}

static bool on_watch_root_live(const char *root, void *userdata)
{
    Daemon *d = userdata;
    size_t pos = 0;
    void *v;

    while (idmap_next(&d->manager.workspaces.by_id, &pos, NULL, &v))
        if (((Workspace *)v)->root && streq(((Workspace *)v)->root, root))
            return true;
    return false;
}

/* ~/.claude.json changed: reload only the workspaces whose part of it changed. */
static void on_claude_json_changed(const char *path, char ***rootsp, size_t *np, void *userdata)
{
    (void)userdata;
    claude_json_changes(path, rootsp, np);
    if (*np == 0)
        log_full(LOG_DEBUG, NULL, "watch", "%s changed: nothing discovery reads", path);
}

static void on_config_read(const char *path, const char *root, void *userdata)
{
    Daemon *d = userdata;

    watch_note(&d->watch, path, root);
}

/* From the loop itself, so a stuck loop stops the pings and systemd restarts us. */
static void on_watchdog(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    systemd_notify_watchdog();
}

/* Upstream transports still running or ending (processes, HTTP sessions' DELETE). */
static unsigned transports_live(void)
{
    return transport_stdio_live_count() + transport_http_live_count();
}

static void on_stop_tick(evutil_socket_t fd, short what, void *arg)
{
    Daemon *d = arg;
    uint64_t elapsed = now_ms() - d->stop_started_ms;
    struct timeval tv = {0, STOP_TICK_MS * 1000};

    (void)fd, (void)what;
    if (transports_live() == 0 || elapsed >= STOP_HARD_MS) {
        if (transports_live())
            log_warning("%u upstream processes did not exit in time", transports_live());
        turn_loop_exit(d->base);
        return;
    }
    if (elapsed >= STOP_GRACE_MS) {
        transport_stdio_kill_all();
        transport_http_kill_all();
    }
    evtimer_add(d->ev_stop_tick, &tv);
}

void daemon_stop(Daemon *d, const char *why)
{
    if (d->stopping)
        return;
    d->stopping = true;
    d->stop_started_ms = now_ms();
    log_notice("stopping: %s", why);
    systemd_notify_stopping();
    if (d->ev_watchdog)
        event_del(d->ev_watchdog);
    listener_deinit(&d->listener);
    methods_modern_shutdown(&d->methods);
    while (d->peers.first)
        peer_close(d->peers.first, NULL);
    wake_deinit(&d->wake); /* no resume is handled while servers stop */
    manager_shutdown(&d->manager);
    on_stop_tick(-1, 0, d);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    Daemon *d = arg;

    (void)what;
    switch (sig) {
    case SIGCHLD:
        child_reap();
        break;
    case SIGHUP:
        daemon_reload(d, NULL, NULL, NULL);
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
    int ret;

    memset(d, 0, sizeof(*d));
    d->started_wall_ms = wall_ms();
    d->config_file = opt->config_file;
    d->listen = opt->listen;
    d->settings_path = paths_join(conf, "mcpd/mcpd.json");
    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    set_runlog_dir();
    /* Before anything is spawned: end what a crashed mcpd left, then record what we start. */
    procs_init();
    load_settings(d);
    d->base = turn_base_new();
    if (!d->base) {
        log_error("cannot create the event loop");
        return -ENOMEM;
    }
    if (systemd_stderr_is_journal())
        systemd_use_journal();
    int lfd = systemd_listen_fd();
    if (lfd >= 0) {
        listener_adopt(&d->listener, lfd, sock);
        log_info("using the socket passed by systemd (fd %d)", lfd);
    } else if ((ret = listener_bind(&d->listener, sock, &why)) < 0) {
        log_error("%s", why);
        return ret;
    }
    d->ev_term = evsignal_new(d->base, SIGTERM, on_signal, d);
    d->ev_int = evsignal_new(d->base, SIGINT, on_signal, d);
    d->ev_hup = evsignal_new(d->base, SIGHUP, on_signal, d);
    d->ev_chld = evsignal_new(d->base, SIGCHLD, on_signal, d);
    proctree_start(d->base);
    d->ev_stop_tick = evtimer_new(d->base, on_stop_tick, d);
    d->ev_status = evtimer_new(d->base, on_status, d);
    event_add(d->ev_term, NULL);
    event_add(d->ev_int, NULL);
    event_add(d->ev_hup, NULL);
    event_add(d->ev_chld, NULL);
    d->methods = (MethodsCtx){
        .manager = &d->manager,
        .settings = &d->settings,
        .settings_problems = &d->settings_problems,
        .settings_path = d->settings_path,
        .config_file = d->config_file,
        .listener = &d->listener,
        .started_wall_ms = d->started_wall_ms,
        .reload = methods_reload,
        .wake = &d->wake,
        .ud = d,
    };
    peer_registry_init(&d->peers, d->base, (size_t)d->settings.max_message_bytes, methods_dispatch,
                       on_peer_gone, &d->methods);
    d->peers.fast = methods_fast;
    d->peers.takes_batches = methods_takes_batches;
    handoff_registry_init(&d->handoffs, &d->peers);
    if ((ret = start_http(d)) < 0)
        return ret;
    d->peers.partial_timeout_ms = d->settings.partial_line_timeout_ms;
    manager_init(&d->manager, d->base, &d->peers, &d->settings, d->config_file);
    d->manager.workspaces.profiles = &d->profiles;
    surface_init(&d->manager);
    d->manager.ext.server_signed_out = on_server_signed_out;
    wake_init(&d->wake, &d->manager);
    if ((ret = watch_init(&d->watch, d->base, on_watch_apply, on_watch_root_live, d)) < 0)
        return ret;
    /* From now on, every file discovery reads or looks for is watched. */
    config_set_read_hook(on_config_read, d);
    _cleanup_free_ char *claude_json = source_claude_json_path();
    watch_judge(&d->watch, claude_json, on_claude_json_changed);
    watch_note(&d->watch, d->settings_path, NULL); /* read before the hook was in place */
    d->manager.on_change = on_manager_change;
    d->manager.on_change_ud = d;
    listener_start(&d->listener, d->base, on_accept, d);
    log_notice("mcpd %s listening on %s", mcpd_version, d->listener.path);
    manager_start(&d->manager);
    /* Ready once the listener serves: agents that connect now meet the start-up gate. */
    d->last_status = status_line(d);
    systemd_notify_ready(d->last_status);
    uint64_t wd = systemd_watchdog_usec();
    if (wd) {
        struct timeval tv = {(time_t)(wd / 2 / 1000000), (suseconds_t)(wd / 2 % 1000000)};
        d->ev_watchdog = event_new(d->base, -1, EV_PERSIST, on_watchdog, d);
        event_add(d->ev_watchdog, &tv);
        systemd_notify_watchdog();
    }
    return 0;
}

int daemon_run(Daemon *d)
{
    /* The loop that runs deferred writes at the end of each turn without an event (turn.h). */
    turn_loop(d->base);
    return 0;
}

void daemon_deinit(Daemon *d)
{
    if (d->manager.base) {
        wake_deinit(&d->wake);
        http_server_deinit(&d->http);
        manager_deinit(&d->manager);
        peer_registry_deinit(&d->peers);
        handoff_registry_deinit(&d->handoffs);
        /* Run the loop once more so deferred frees (upstreams, transports) complete. */
        event_base_loop(d->base, EVLOOP_NONBLOCK);
        oauth_login_shutdown(); /* sign-ins and refreshes end while http still runs */
        transport_http_shutdown();
        runlog_clear();
    }
    config_set_read_hook(NULL, NULL);
    watch_deinit(&d->watch);
    config_forget_good();
    listener_deinit(&d->listener);
    if (d->ev_term) {
        event_free(d->ev_term);
        event_free(d->ev_int);
        event_free(d->ev_hup);
        event_free(d->ev_chld);
        event_free(d->ev_stop_tick);
        event_free(d->ev_status);
    }
    if (d->ev_watchdog)
        event_free(d->ev_watchdog);
    free(d->last_status);
    proctree_stop();
    if (d->base)
        turn_base_free(d->base);
    free(d->settings_path);
    config_set_deinit(&d->settings_problems);
    profiles_deinit(&d->profiles);
    sandbox_profiles_free_all();
    /* Last: nothing this daemon started outlives it, not even what escaped its groups. */
    procs_shutdown();
}
