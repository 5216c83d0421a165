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
    char *exe;             /* its process's executable, read for its first audit entry */
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

/* What mcpd says to an agent, before it is written in the agent's era's form. */
typedef enum AgentOutKind {
    AGENT_OUT_RESULT,  /* id, result */
    AGENT_OUT_ERROR,   /* id, code, message, data */
    AGENT_OUT_NOTIFY,  /* method, params */
    AGENT_OUT_REQUEST, /* request_id, method, params */
} AgentOutKind;

typedef struct AgentOut {
    AgentOutKind kind;
    yajl_val id;         /* the agent's id as a tree, or NULL when id_text is given */
    const char *id_text; /* ... as JSON text */
    /*
     * A result is a tree (NULL: {}), or JSON text (raw, raw_len) when raw is set: a server's
     * result as it came, or one of mcpd's own (raw_own: an object none of whose members is
     * resultType, ttlMs, cacheScope or _meta, so an era may add them without reading it).
     */
    yajl_val result;
    const char *raw;
    size_t raw_len;
    bool raw_own;
    int code; /* an error's code, message and data (may be NULL) */
    const char *message;
    yajl_val data;
    const char *method; /* a notification's or request's method and params (may be NULL) */
    yajl_val params;
    uint64_t request_id;
} AgentOut;

/*
 * How what mcpd says reaches an agent whose era writes it in another form than the 2025 one
 * agent.c writes itself (a 2026-07-28 agent: methods-modern.c). Set on the agent's peer
 * (Peer.writer) by the era that owns it, and cleared when it goes.
 */
typedef struct AgentWriter {
    /** Write out to p in the era's form. */
    void (*write)(struct AgentWriter *w, Peer *p, const AgentOut *out);
} AgentWriter;

/** out to p in its era's form: through p's writer when it has one, else as 2025 JSON-RPC. */
void agent_write(Peer *p, const AgentOut *out);
/** out to p as one 2025 JSON-RPC line, whatever its era (for an era's writer itself). */
void agent_write_plain(Peer *p, const AgentOut *out);

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
/**
 * An agent as agent_ensure makes it, but for what its era keeps (era, modern state): its
 * placing is undone (manager_peer_unplace), its calls are gone.
 */
void agent_reset(Agent *a);
/** Forget an agent (its peer went away, or its initialize is undone); its calls are gone. */
void agent_remove(AgentRegistry *ar, uint64_t id);
/** Free every agent. */
void agent_registry_deinit(AgentRegistry *ar);

/** {"jsonrpc":"2.0","id":id,"result":result} to agent agent_id, if it is still there. */
void agent_reply(PeerRegistry *peers, uint64_t agent_id, yajl_val id, yajl_val result);
/**
 * The same with result given as JSON text of mcpd's own (AgentOut.raw_own: an object without
 * the members an era adds).
 */
void agent_reply_raw(PeerRegistry *peers, uint64_t agent_id, yajl_val id, const char *result,
                     size_t n);
/**
 * The tools/list view to p: its bytes (mcpd's own, as agent_reply_raw's) are queued by
 * reference, not copied, and done(data, n, arg) runs when nothing holds them any more.
 */
void agent_reply_ref(Peer *p, yajl_val id, const char *result, size_t n,
                     evbuffer_ref_cleanup_cb done, void *arg);
/** A result tree under an id given as JSON text; scratch is reused. */
void agent_reply_tree_text(PeerRegistry *peers, StrBuf *scratch, uint64_t agent_id, const char *id,
                           yajl_val result);
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
