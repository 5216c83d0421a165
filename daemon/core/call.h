// SPDX-License-Identifier: MIT
// call: agent requests routed to one upstream (tools/call, prompts/get, resources/read,
// completion/complete), from the agent's line to the upstream and back to that agent with its
// result and progress. What else an upstream sends toward agents is route.c's.
#pragma once

#include <stdint.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/idmap.h"
#include "common/list.h"
#include "common/pool.h"
#include "common/jsonrpc.h"
#include "common/jsonscan.h"
#include "common/strbuf.h"
#include "daemon/core/agent.h"
#include "daemon/core/audit.h"
#include "daemon/core/server.h"
#include "daemon/core/tasks.h"
#include "daemon/core/workspace.h"
#include "daemon/downstream/peer.h"

/* Per-agent limit of tools/call requests in flight; beyond it calls get MCPD_ERROR_TOO_MANY_CALLS.
 */
#define AGENT_MAX_CALLS_IN_FLIGHT 256

/* Every call in flight and every request an upstream forwarded to an agent. */
typedef struct CallRegistry {
    struct event_base *base;
    PeerRegistry *peers;
    ServerRegistry *servers;
    WorkspaceRegistry *workspaces; /* its ext reaches the surface (URIs, passthrough) */
    IdMap calls;                   /* id -> Call: every call, for the daemon's exit */
    AgentRegistry *agents;         /* each agent's calls by its request ids */
    IdMap server_requests;         /* downstream id -> ServerRequest */
    uint64_t next_call_id;
    uint64_t next_request_id;
    StrBuf scratch;     /* reused for replies on the hot path */
    Pool pool;          /* freed Calls, made again by the next ones */
    TaskRegistry tasks; /* tasks created by agents' calls (tasks.c) */
    Audit audit;        /* an entry per tool call (audit.c) */
} CallRegistry;

/** Set up an empty registry. */
void call_registry_init(CallRegistry *cr, WorkspaceRegistry *workspaces);
/** Free every call without replying (daemon exit; route_deinit first). */
void call_registry_deinit(CallRegistry *cr);

/** tools/call for a peer (params already checked to have a string name). */
void call_tool(CallRegistry *cr, Peer *p, yajl_val id, yajl_val params);
/**
 * The same from scanned text (the hot path): id an integer or a string without escapes, name a
 * string without escapes, args an object or absent, token absent or the only member of _meta.
 */
void call_tool_fast(CallRegistry *cr, Peer *p, Agent *a, JsonSpan id, JsonSpan name, JsonSpan args,
                    JsonSpan token);
/** Route an agent request to server s: params are sent as given (owned by the caller). */
void call_route(CallRegistry *cr, Peer *p, yajl_val id, Server *s, const char *method,
                yajl_val params);
/** notifications/cancelled from a peer. */
void call_cancel(CallRegistry *cr, Peer *p, yajl_val request_id);
/** The agent's id (JSON text, to free) of its latest call still at server s, or NULL. */
char *call_latest_at(Server *s, uint64_t peer_id);

/** The server settled: its waiting calls run or fail. */
void calls_server_settled(CallRegistry *cr, Server *s);
/** The server is going away: its calls fail (its requests to agents: route_server_removed). */
void calls_server_removed(CallRegistry *cr, Server *s);
/** A peer went away: its calls are cancelled upstream (requests to it: route_peer_gone). */
void calls_peer_gone(CallRegistry *cr, Peer *p);
/**
 * The agent whose call caused a request from server s: over stdio nothing names the call, so it
 * is the agent with the most recent call in flight on that server among those with capability
 * cap; *anyp is the one with the most recent call of all (NULL when none).
 */
Peer *call_causing_peer(CallRegistry *cr, Server *s, unsigned cap, Peer **anyp);
/** notifications/progress from server s: to the agent whose call it names, under its token. */
void call_progress(CallRegistry *cr, Server *s, yajl_val params);
