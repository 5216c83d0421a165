// SPDX-License-Identifier: MIT
// workspace: a project root (or the user's) and what its agents see: its server set from discovery,
// the start-up gate of its tools/list, and the agents attached to it (its tool view is view.c).
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/hash.h"
#include "common/idmap.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/tokens.h"
#include "daemon/config/config.h"
#include "daemon/config/discover-async.h"
#include "daemon/config/profiles.h"
#include "daemon/core/agent.h"
#include "daemon/core/server.h"
#include "daemon/core/session.h"
#include "daemon/core/toolset.h"
#include "daemon/downstream/peer.h"

typedef struct WorkspaceRegistry WorkspaceRegistry;

/* A string node that takes (and frees) a malloc'd string. */
static inline yajl_val json_string_new_take(char *text)
{
    yajl_val v = json_string_new(text);

    free(text);
    return v;
}

/*
 * What a workspace asks of its tool view, which lies above it (view.c, and wssearch.c for an
 * agent in search mode, both use the workspace): given by whoever sets up the registry
 * (manager.c: WORKSPACE_VIEWS of wssearch.h).
 */
typedef struct Workspace Workspace;
typedef struct WorkspaceViews {
    /** Answer a tools/list of peer p from the workspace's tools. */
    void (*send)(Workspace *ws, Peer *p, yajl_val id);
    /** The SHA-256 (hex) of the view's JSON: whether it changed since agents were told. */
    const char *(*hash)(Workspace *ws);
    /** The workspace goes: free its view and what is built on it. */
    void (*deinit)(Workspace *ws);
} WorkspaceViews;

/* One exposed tool in a workspace's view. */
typedef struct ViewTool {
    char *name;
    uint64_t server_id;
    const char *tool; /* borrowed from the server's tool list; valid until the view rebuilds */
    size_t tool_len;  /* strlen(tool) */
    bool tool_plain;  /* tool needs no JSON escapes: a call copies it as it is */
} ViewTool;

/* A tools/list waiting for a workspace's start-up gate. */
typedef struct ListWaiter {
    uint64_t peer_id;
    yajl_val id;
    struct ListWaiter *next;

    int kind;        /* -1: tools/list; else the SurfaceKind of a prompts or resources list */
    yajl_val params; /* that list's params (its cursor), or NULL */
} ListWaiter;

/*
 * A project root (or the user workspace): the servers its agents see and its tool view.
 * Servers are shared between workspaces by identity (name, config hash, start directory).
 */
/*
 * The view's JSON ({"tools":[...]}), built once per change and shared by reference: the
 * workspace holds one reference, and each agent's output queue one until it has been written.
 * The view's functions (ws_view_*) are in view.c.
 */
typedef SharedText ViewText;

typedef struct Workspace {
    uint64_t id;
    WorkspaceRegistry *reg;
    char *root;       /* realpath; NULL: the user workspace */
    Server **servers; /* in priority order; each holds a reference */
    size_t n_servers;
    ConfigSet problems; /* discovery problems of its last load */
    uint64_t connect_started_ms;
    struct event *ev_gate, *ev_notify, *ev_linger;
    struct ListWaiter *waiters;
    bool dirty;
    bool loaded; /* ws_load has run: later loads are changes to announce */
    /* A new project's first discovery, on a thread (discover-async.h): lists wait for it. */
    struct DiscoverJob *discovering;
    struct WsDiscoveredHook *on_discovered; /* called once that discovery is applied */
    struct WsReloadWaiter *reload_waiters;  /* ws_reload's askers, told once it is applied */
    ViewTool *view;
    size_t n_view;
    uint32_t *view_index; /* hash of a name -> 1 + its entry in view (0: empty), for calls */
    size_t view_index_mask;
    ViewText *view_text; /* {"tools":[...]} ready to send, shared */
    uint64_t n_view_builds, n_view_sends;
    TokenCost view_cost;      /* what the view costs an agent's model (core/toolcost.c) */
    uint64_t view_cost_build; /* n_view_builds + 1 when view_cost was counted; 0: never */
    void *search;             /* the search index of the view (core/wssearch.c), or NULL */
    char view_hash[2 * SHA256_DIGEST_SIZE + 1];     /* of view_text; empty until needed */
    char notified_hash[2 * SHA256_DIGEST_SIZE + 1]; /* of the view last announced */
    unsigned n_collisions;
    unsigned n_agents;

    struct WsSurface *surface; /* prompts and resources notifications (surface.h), or NULL */
} Workspace;

/*
 * What the surface (prompts, resources, passthrough agents: surface.c, a layer above) adds to
 * workspaces, their views and the calls routed through them. Installed once; ud is ext_ud.
 */
typedef struct WorkspaceExt {
    /** The URI agents of ws see for uri as server s names it (new string). */
    char *(*expose_uri)(Workspace *ws, Server *s, const char *uri);
    /** Rewrite the URIs in a result of s for ws. */
    void (*rewrite_result)(Workspace *ws, Server *s, yajl_val result);
    /** Whether a raw result may hold URIs to rewrite (cheap: the tools/call hot path). */
    bool (*raw_has_uris)(const char *raw, size_t len);
    /** Whether p sees one server as itself; *sp is then that server, or NULL when gone. */
    bool (*passthrough)(void *ud, const Peer *p, Server **sp);
    /** Answer a prompts or resources list (kind: a SurfaceKind) once the gate is open. */
    void (*list)(void *ud, Peer *p, yajl_val id, int kind, yajl_val params);
    /**
     * The workspace's server set changed; first: it was just created, and what it offers now
     * is what its agents start from (nothing to announce).
     */
    void (*changed)(Workspace *ws, bool first);
    /** The workspace is being freed. */
    void (*freed)(Workspace *ws);
} WorkspaceExt;

/* Every workspace, and the sessions of the agents in them. */
struct WorkspaceRegistry {
    struct event_base *base;
    const Settings *settings;
    const char *config_file;
    const char *home;
    PeerRegistry *peers;
    AgentRegistry *agents;
    ServerRegistry *servers;
    IdMap by_id; /* id -> Workspace */
    Workspace *user_ws;
    uint64_t next_id;
    SessionRegistry sessions;
    const WorkspaceExt *ext; /* never NULL once the surface is set up */
    void *ext_ud;
    const WorkspaceViews *views; /* set by the layer above, with ws_registry_init */
    IdMap search_agents;      /* peer id -> what an agent in search mode found (core/wssearch.c) */
    const Profiles *profiles; /* mcpd.json's profiles (the daemon's, reloaded in place) */
    IdMap profile_agents;     /* peer id -> the profile an agent was given (core/wsprofile.c) */
};

/* Outcomes of ws_attach() the caller must handle (STYLE.md 5); *whyp says what to do. */
enum {
    WS_E_NO_SESSION = 1, /* the token names no live session of this user */
    WS_E_GONE,           /* the session's workspace has gone */
    WS_E_BAD_CWD,        /* the agent's cwd is not an absolute path to a directory */
};

/** Set up an empty registry; nothing is discovered until ws_new() and ws_load(). */
void ws_registry_init(WorkspaceRegistry *wr, ServerRegistry *servers, PeerRegistry *peers,
                      AgentRegistry *agents, const Settings *settings, const char *config_file,
                      const char *home);
/** Empty every workspace of its servers (daemon exit): agents may still ask, and get nothing. */
void ws_registry_shutdown(WorkspaceRegistry *wr);
/** Free every workspace and session. */
void ws_registry_deinit(WorkspaceRegistry *wr);
/** A new workspace of root (NULL: the user workspace), empty until ws_load(). */
Workspace *ws_new(WorkspaceRegistry *wr, const char *root);
/** Discover a workspace's servers on the loop and connect them (start-up's user workspace). */
void ws_load(Workspace *ws, yajl_val results);
/*
 * Called once a reload of ws is applied, with results (name -> "added", "changed", "removed",
 * "kept"; borrowed); ws NULL when the workspace went away first.
 */
typedef void (*WsReloadedFn)(void *ud, Workspace *ws, yajl_val results);
/**
 * Rediscover ws's servers on discovery's thread, then apply what changed on the loop and call
 * fn: reading a project's files takes up to a few hundred ms (4 MiB files), which every agent
 * waited through when a reload read on the loop. A reload asked while one reads starts the read
 * again (the files may have changed since), and every asker hears of the outcome.
 */
void ws_reload(Workspace *ws, WsReloadedFn fn, void *ud);
/** Free a workspace: its waiting lists are dropped, its servers released. */
void ws_free(Workspace *ws);
/** Whether s is one of the workspace's servers. */
bool ws_has_server(const Workspace *ws, const Server *s);
/** Append the problems of ws's last discovery to the JSON array arr, each naming ws's root. */
void ws_problems_into(yajl_val arr, const Workspace *ws);
/** The workspace of a peer (the user workspace for one not attached). */
Workspace *ws_of_peer(WorkspaceRegistry *wr, const Peer *p);
/** The workspace of an agent (NULL or not attached: the user workspace). */
Workspace *ws_of_agent(WorkspaceRegistry *wr, const Agent *a);
/** AgentFilter for agent_broadcast: the agents attached to workspace ws. */
bool ws_agent_attached(const Agent *a, void *ws);
/**
 * A request that needs ws's servers now (a call, a server named in _meta) and cannot wait like
 * a list: a first discovery still on its thread is waited for, as it was on the loop before.
 */
void ws_wait_discovered(Workspace *ws);
/* Called with its peer's id once a workspace's first discovery is applied. */
typedef void (*WsDiscoveredFn)(void *ud, uint64_t peer_id);
/**
 * Whether ws's first discovery is still running; if it is, fn(ud, peer_id) is called once it
 * has been applied (never when ws goes first: its agents are gone then).
 */
bool ws_defer_until_discovered(Workspace *ws, WsDiscoveredFn fn, void *ud, uint64_t peer_id);
/** A server's tools or state changed: every workspace that sees it rebuilds and is told. */
void server_views_changed(WorkspaceRegistry *wr, Server *s);
/** tools/list for a peer: answered now or once the start-up gate opens. */
void ws_list_tools(WorkspaceRegistry *wr, Peer *p, yajl_val id);
/** A prompts or resources list (kind: a SurfaceKind) behind the same gate. */
void ws_list_gated(WorkspaceRegistry *wr, Peer *p, yajl_val id, int kind, yajl_val params);
/**
 * initialize: place a peer in a workspace and a session. With a token it joins that session
 * (its workspace); otherwise cwd (or NULL: the user workspace) selects the workspace and a new
 * session starts. Returns 0, a WS_E_* outcome, or -errno (no randomness); *whyp set unless 0.
 */
int ws_attach(WorkspaceRegistry *wr, Peer *p, const char *cwd, const char *token, char **whyp);
/** The session token a peer hands to its subagents. */
const char *ws_peer_token(WorkspaceRegistry *wr, Peer *p);
/** A peer went away: it leaves its session and workspace. */
void ws_peer_left(WorkspaceRegistry *wr, Peer *p);
