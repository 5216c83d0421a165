// SPDX-License-Identifier: MIT
// agent: what mcpd says to an agent, keyed by its id (replies, errors, notifications); an agent
// that has gone is skipped quietly, so async work never holds a Peer pointer.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "common/hash.h"
#include "common/idmap.h"
#include "common/list.h"
#include "common/strbuf.h"
#include "daemon/downstream/peer.h"

/*
 * The MCP side of one connection, kept by the id of its peer: what the core owns of an agent
 * beyond its socket. The connection (fd, framing, output queue, reaping) stays in peer.c.
 */
/* Client capabilities an agent declared in initialize: which server requests it can answer. */
enum {
    AGENT_CAP_SAMPLING = 1 << 0,
    AGENT_CAP_ELICITATION = 1 << 1, /* form mode (an empty elicitation object means form) */
    AGENT_CAP_ROOTS = 1 << 2,
    AGENT_CAP_ELICITATION_URL = 1 << 3, /* url mode: elicitation.url declared */
};

/* The MCP era of an agent, fixed by its first message (docs/modern.md). */
typedef enum AgentEra {
    AGENT_ERA_UNKNOWN, /* nothing but server/discover yet */
    AGENT_ERA_LEGACY,  /* 2024-11-05 .. 2025-11-25: initialize first */
    AGENT_ERA_MODERN,  /* 2026-07-28: every request carries its own _meta */
} AgentEra;

typedef struct Agent {
    uint64_t id; /* its peer's id */
    bool initialized;
    char *client_name, *client_version, *protocol_version;
    char *cwd;             /* _meta["mcpd/cwd"] of its initialize, or NULL */
    uint64_t workspace_id; /* 0: not attached (the user workspace) */
    uint64_t session_id;   /* the session it opened or joined */
    uint64_t parent_id;    /* for a subagent: the agent whose session it joined */
    unsigned caps;         /* AGENT_CAP_* */
    int log_level;         /* logging/setLevel, or -1 */
    unsigned calls_in_flight;
    uint64_t calls_total; /* tools/call requests it started, for status */
    uint64_t n_requests;
    /* The hash of the tool view it was last sent (empty: none yet), so that a list_changed is
     * not sent to an agent that already has those very bytes (workspace.c). */
    char tools_hash[2 * SHA256_DIGEST_SIZE + 1];
    /* The calls it has in flight (call.c links them): a cancel walks them, at most
     * AGENT_MAX_CALLS_IN_FLIGHT, to match its request id. */
    List calls;
    IdMap requests; /* id it sees -> ServerRequest: what upstreams asked it (call.c) */
    AgentEra era;
    /* A modern agent's state (methods-modern.c), freed by modern_free when the agent goes. */
    void *modern;
    void (*modern_free)(void *modern);
} Agent;

/* Every agent that has said something (created on its first message), by id. */
typedef struct AgentRegistry {
    IdMap by_id; /* peer id -> Agent */
} AgentRegistry;

/** An agent by its peer's id, or NULL. */
static inline Agent *agent_get(AgentRegistry *ar, uint64_t id)
{
    return idmap_get(&ar->by_id, id);
}
/** The agent of peer id, created (fresh: not initialized, log level -1) when it has none yet. */
Agent *agent_ensure(AgentRegistry *ar, uint64_t id);
/**
 * The AGENT_CAP_* bits of an initialize's capabilities object (either era). elicitation: {} is
 * form mode only (the spec's rule for clients older than url mode); {url: {}} alone is url only.
 */
unsigned agent_caps_parse(yajl_val caps);
/** Forget an agent (its peer went away, or its initialize is undone); its calls are gone. */
void agent_remove(AgentRegistry *ar, uint64_t id);
/** Free every agent. */
void agent_registry_deinit(AgentRegistry *ar);

/** {"jsonrpc":"2.0","id":id,"result":result} to agent agent_id, if it is still there. */
void agent_reply(PeerRegistry *peers, uint64_t agent_id, yajl_val id, yajl_val result);
/** The same with result given as JSON text (the tools/list view, ready to send). */
void agent_reply_raw(PeerRegistry *peers, uint64_t agent_id, yajl_val id, const char *result,
                     size_t n);
/**
 * The hot path's reply: id and result are JSON text (the agent's id as it sent it, the
 * upstream's result as it came); scratch is reused so that no reply allocates.
 */
void agent_reply_text(PeerRegistry *peers, StrBuf *scratch, uint64_t agent_id, const char *id,
                      const char *result, size_t n);
/** The same to a peer already looked up. */
void agent_reply_text_to(Peer *p, StrBuf *scratch, const char *id, const char *result, size_t n);
/** An error reply to an id given as JSON text. */
void agent_reply_error_text(PeerRegistry *peers, StrBuf *scratch, uint64_t agent_id, const char *id,
                            int code, const char *message);
/** An error reply (code, message). */
void agent_reply_error(PeerRegistry *peers, uint64_t agent_id, yajl_val id, int code,
                       const char *message);
/** A notification (params may be NULL). */
void agent_notify(PeerRegistry *peers, uint64_t agent_id, const char *method, yajl_val params);
/** Whether an initialized agent is to get a broadcast; ctx is the caller's. */
typedef bool (*AgentFilter)(const Agent *a, void *ctx);
/**
 * A notification (params may be NULL) to every initialized agent that is still connected and that
 * want accepts (want NULL: all of them); the message is built once.
 */
void agent_broadcast(PeerRegistry *peers, AgentRegistry *agents, const char *method,
                     yajl_val params, AgentFilter want, void *ctx);
/**
 * A request mcpd sends agent agent_id under its own id (a server's request it forwards); false
 * when the agent is gone, so the caller can answer the server itself.
 */
bool agent_request(PeerRegistry *peers, uint64_t agent_id, uint64_t id, const char *method,
                   yajl_val params);
