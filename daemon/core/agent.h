// SPDX-License-Identifier: MIT
// agent: what mcpd says to an agent, keyed by its id (replies, errors, notifications); an agent
// that has gone is skipped quietly, so async work never holds a Peer pointer.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "common/idmap.h"
#include "common/strbuf.h"
#include "daemon/downstream/peer.h"

/*
 * The MCP side of one connection, kept by the id of its peer: what the core owns of an agent
 * beyond its socket. The connection (fd, framing, output queue, reaping) stays in peer.c.
 */
typedef struct Agent {
    uint64_t id; /* its peer's id */
    /* The calls it has in flight, by its own request id: the key is agent_request_key() of the
     * id's JSON text, the value the first Call with that key (call.c chains the others). */
    IdMap calls;
} Agent;

/* Every agent that has had a call, by id. */
typedef struct AgentRegistry {
    IdMap by_id; /* peer id -> Agent */
} AgentRegistry;

/** An agent by its peer's id, or NULL. */
Agent *agent_get(AgentRegistry *ar, uint64_t id);
/** The agent of peer id, created when it has none yet. */
Agent *agent_ensure(AgentRegistry *ar, uint64_t id);
/** Forget an agent (its peer went away); its calls must be gone or no longer point to it. */
void agent_remove(AgentRegistry *ar, uint64_t id);
/** Free every agent. */
void agent_registry_deinit(AgentRegistry *ar);
/** The key of an agent's request id (its JSON text) in Agent.calls; never 0. */
uint64_t agent_request_key(const char *id_text);

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
/** An error reply to an id given as JSON text. */
void agent_reply_error_text(PeerRegistry *peers, StrBuf *scratch, uint64_t agent_id, const char *id,
                            int code, const char *message);
/** An error reply (code, message). */
void agent_reply_error(PeerRegistry *peers, uint64_t agent_id, yajl_val id, int code,
                       const char *message);
/** A notification (params may be NULL). */
void agent_notify(PeerRegistry *peers, uint64_t agent_id, const char *method, yajl_val params);
