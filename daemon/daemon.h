// SPDX-License-Identifier: MIT
// daemon: the event loop, signals, start-up and a bounded shutdown.
#pragma once

#include <stdbool.h>

#include <event2/event.h>

#include "daemon/config/config.h"
#include "daemon/config/profiles.h"
#include "daemon/downstream/handoff.h"
#include "daemon/downstream/http-server.h"
#include "daemon/downstream/listener.h"
#include "daemon/core/manager.h"
#include "daemon/core/wake.h"
#include "daemon/downstream/peer.h"
#include "daemon/config/watch.h"
#include "daemon/methods/methods.h"

typedef struct DaemonOptions {
    const char *config_file;
    const char *socket_path; /* NULL: paths_socket() */
    const char *listen;      /* --listen: loopback HTTP, over the listen setting; NULL: none */
    int log_level;
} DaemonOptions;

typedef struct Daemon {
    struct event_base *base;
    Settings settings;
    Profiles profiles; /* mcpd.json's profiles (daemon/config/profiles.c) */
    char *settings_path;
    ConfigSet settings_problems; /* of the last settings load, shown in status and discover */
    const char *config_file;
    Listener listener;
    PeerRegistry peers;
    HandoffRegistry handoffs; /* hosts whose bridges handed their pipes over */
    HttpServer http;          /* Streamable HTTP: on the socket, and on loopback when asked */
    Manager manager;
    Wake wake;          /* what a resume from sleep does (core/wake.c) */
    MethodsCtx methods; /* what the methods see of it */
    Watcher watch;      /* hot reload */
    struct event *ev_term, *ev_int, *ev_hup, *ev_chld, *ev_stop_tick, *ev_watchdog, *ev_status;
    char *last_status;
    unsigned reloading; /* reloads still reading: READY=1 once none is */
    const char *listen; /* --listen, or NULL */
    bool stopping;
    uint64_t stop_started_ms;
    int64_t started_wall_ms;
} Daemon;

/** Set up the loop, bind the socket, start connecting; return 0 or -errno (logged). */
int daemon_init(Daemon *d, const DaemonOptions *opt);
/** Run until stopped; return the exit status. */
int daemon_run(Daemon *d);
/** Release everything. */
void daemon_deinit(Daemon *d);
/**
 * Reload: settings now, then discovery of every workspace (or only that of root) off the loop,
 * reconnect what changed; done (may be NULL) gets the per-server results (manager_reload).
 */
void daemon_reload(Daemon *d, const char *root, ManagerReloadedFn done, void *ud);
/** Begin a bounded shutdown. */
void daemon_stop(Daemon *d, const char *why);
