// SPDX-License-Identifier: MIT
// manager: the core as one piece for the layers above: its registries (servers, workspaces,
// calls, waiters) built and wired to each other's events (a server's, a peer leaving), and
// started, reloaded and shut down.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/idmap.h"
#include "common/jsonscan.h"
#include "common/strbuf.h"
#include "daemon/config/config.h"
#include "daemon/core/agent.h"
#include "daemon/core/call.h"
#include "daemon/core/server.h"
#include "daemon/core/waiter.h"
#include "daemon/core/workspace.h"
#include "daemon/downstream/peer.h"

typedef struct Manager Manager;

/*
 * What the layers above (surface.c: prompts, resources; oauth-login) add to servers and agents.
 * Members are filled in once by those layers (surface_init, oauth-login); each may be NULL.
 */
typedef struct ManagerExt {
    void (*server_created)(Server *s);   /* its last known surface from the cache */
    void (*server_connected)(Server *s); /* lists fetched, subscriptions renewed */
    void (*server_cleared)(Server *s);   /* its lists leave every view */
    void (*server_removed)(Server *s);   /* free its part */
    /** An upstream notification of the surface; false when it is not one. */
    bool (*server_notification)(Server *s, const char *method, yajl_val params);
    void (*server_status)(Server *s, yajl_val o);
    void (*server_signed_out)(Server *s); /* 401: refresh stored credentials (oauth-login) */
    bool (*server_busy)(Server *s);       /* it holds what needs the server up (subscriptions) */
    void (*peer_gone)(Manager *m, Peer *p);
    void (*deinit)(Manager *m);
} ManagerExt;

/* The core: servers, the workspaces that see them, and the calls routed through them. */
struct Manager {
    struct event_base *base;
    PeerRegistry *peers;
    Settings settings;
    const char *config_file;
    char *home;
    char *cache_dir;
    AgentRegistry agents;
    ServerRegistry servers;
    WorkspaceRegistry workspaces;
    CallRegistry calls;
    WaiterRegistry waiters; /* mcpd/wait requests (manager-control.h) */
    int64_t started_wall_ms;
    void (*on_change)(void *userdata); /* a server changed state (for sd_notify STATUS=) */
    void *on_change_ud;
    ManagerExt ext;

    IdMap passthrough; /* peer id -> name of the one server it sees as itself (surface.h) */
};

/** The manager a server belongs to (its registry is the manager's). */
static inline Manager *server_manager(const Server *s)
{
    return (Manager *)((char *)s->reg - offsetof(Manager, servers));
}

/** Set up; nothing connects until manager_load(). */
void manager_init(Manager *m, struct event_base *base, PeerRegistry *peers, const Settings *s,
                  const char *config_file);
/** Release everything (after manager_shutdown and the transports are gone). */
void manager_deinit(Manager *m);
/** Start-up: the user workspace discovers and connects its servers in parallel. */
void manager_start(Manager *m);
/* A reload's outcome: {"servers": {name: what}, "problems": [...], "workspaces": N} (borrowed). */
typedef void (*ManagerReloadedFn)(yajl_val result, void *ud);
/**
 * Reload: rediscover every workspace (or only the one of root, when set) off the loop, then
 * disconnect what changed or went away, connect what is new (servers whose config did not
 * change stay), and call done (also when a workspace went away meanwhile, or there was none).
 */
void manager_reload(Manager *m, const char *root, ManagerReloadedFn done, void *ud);
/** Disconnect everything (daemon exit); transports finish in the background. */
void manager_shutdown(Manager *m);

/**
 * A peer went away (or its initialize is undone): cancel its calls upstream, leave its workspace
 * and session, forget its agent.
 */
void manager_peer_gone(Manager *m, Peer *p);
/**
 * Undo a peer's placing (a 2026-07-28 agent moving to another workspace or session): its calls
 * cancelled upstream, its workspace, session and subscriptions left, its agent as if new but
 * kept (agent_reset: its era and the era's state stay).
 */
void manager_peer_unplace(Manager *m, Peer *p);
