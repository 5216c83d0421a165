// SPDX-License-Identifier: MIT
// call: agent requests routed to one upstream (tools/call, prompts/get, resources/read,
// completion/complete), and everything routed back to exactly the agent it belongs to (results,
// progress, log messages, server-to-client requests).
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
/** Free every call and forwarded request without replying (daemon exit). */
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
/** A response from a peer to a request mcpd forwarded to it (sampling, elicitation, roots). */
void call_peer_response(CallRegistry *cr, Peer *p, JsonrpcMsg *msg);
/**
 * The agent's id (JSON text, to free) of the call that caused request_id, a request mcpd
 * forwarded to that agent; NULL when none is known. For MRTR toward 2026-07-28 agents.
 */
char *call_cause_of_request(CallRegistry *cr, uint64_t request_id);
/** logging/setLevel from a peer (level already checked); upstream levels follow. */
void call_set_log_level(CallRegistry *cr, Peer *p, int level);

/** The server settled: its waiting calls run or fail. */
void calls_server_settled(CallRegistry *cr, Server *s);
/** The server is going away: its calls fail, its forwarded requests are dropped. */
void calls_server_removed(CallRegistry *cr, Server *s);
/** The server's session ended: requests it forwarded to agents are withdrawn. */
void calls_upstream_closed(CallRegistry *cr, Server *s, uint64_t upstream_id);
/** A peer went away: its calls are cancelled upstream, requests to it fail. */
void calls_peer_gone(CallRegistry *cr, Peer *p);
/** Upstream notifications and requests that concern agents. */
void route_notification(CallRegistry *cr, Server *s, const char *method, yajl_val params);
void route_request(CallRegistry *cr, Server *s, yajl_val id, const char *method, yajl_val params);
/** Set the upstream log level to the most verbose any of its agents asked for. */
void logging_update(CallRegistry *cr, Server *s);
