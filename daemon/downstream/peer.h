// SPDX-License-Identifier: MIT
// peer: one downstream connection on the socket (framing, bounded output, identity).
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "common/idmap.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"

typedef struct Peer Peer;
typedef struct PeerRegistry PeerRegistry;

/* Handles one parsed message from a peer. */
typedef void (*PeerDispatchFn)(Peer *p, JsonrpcMsg *m, void *userdata);
/* Tried first on every line: return true when it handled the line (the hot path). */
typedef bool (*PeerFastFn)(Peer *p, const char *line, size_t len, void *userdata);
/* Told when a peer goes away (after its last message), so its work can be cancelled. */
typedef void (*PeerGoneFn)(Peer *p, void *userdata);
/* Sees what goes to a modern (2026-07-28) peer; it sends with peer_send_unfiltered. */
typedef void (*PeerFilterFn)(Peer *p, const char *data, size_t n, void *userdata);

#define SESSION_TOKEN_BYTES 16

/*
 * How long a line may stay unfinished (bytes with no newline yet). An agent writes a message
 * in one go: even a maximal 16 MiB line crosses a local socket in well under a second, and a
 * line that has not ended after 30 s is a peer that stopped mid-message (hung, or holding our
 * memory on purpose), whose buffer would otherwise be kept for as long as it stays connected.
 * The hidden setting partialLineTimeoutMs overrides it (tests make it short).
 */
#define PEER_PARTIAL_LINE_TIMEOUT_MS 30000

/* The MCP era of a peer, fixed by its first message (docs/modern.md). */
typedef enum PeerEra {
    PEER_ERA_UNKNOWN, /* nothing but server/discover yet */
    PEER_ERA_LEGACY,  /* 2024-11-05 .. 2025-11-25: initialize first */
    PEER_ERA_MODERN,  /* 2026-07-28: every request carries its own _meta */
} PeerEra;

/* Client capabilities an agent declared in initialize: which server requests it can answer. */
enum {
    PEER_CAP_SAMPLING = 1 << 0,
    PEER_CAP_ELICITATION = 1 << 1,
    PEER_CAP_ROOTS = 1 << 2,
};

struct Peer {
    uint64_t id;
    PeerRegistry *reg;
    int fd;
    uid_t uid;
    pid_t pid;
    struct event *ev_read, *ev_write;
    Framer in;
    struct evbuffer *out;
    bool initialized, dead;
    char *client_name, *client_version, *protocol_version;
    char *cwd;
    char *close_reason;        /* set by peer_send: closed from the loop, never inside a send */
    struct event *ev_partial;  /* fires when an unfinished line has waited too long */
    size_t partial_bytes;      /* bytes of the unfinished line held in in */
    uint64_t partial_since_us; /* monotonic time that line started arriving, or 0 */
    uint64_t workspace_id;
    uint64_t session_id;     /* the session it opened or joined */
    uint64_t parent_peer_id; /* for a subagent: the agent whose session it joined */
    unsigned caps;           /* PEER_CAP_* */
    int log_level;           /* logging/setLevel, or -1 */
    unsigned calls_in_flight;
    PeerEra era;
    void *modern; /* a modern peer's state (methods-modern.c), or NULL */
    int64_t connected_wall_ms;
    uint64_t n_requests;
    Peer *next, *prev;
};

struct PeerRegistry {
    struct event_base *base;
    IdMap by_id;
    Peer *first;
    size_t n;
    uint64_t next_id;
    size_t max_line;
    size_t max_queue;           /* output bytes beyond which a peer that does not read is dropped */
    int64_t partial_timeout_ms; /* an unfinished line older than this closes its peer */
    size_t partial_max;         /* bytes of unfinished lines held across all peers, at most */
    size_t partial_bytes;       /* bytes of unfinished lines held now */
    PeerDispatchFn dispatch;
    PeerFastFn fast; /* may be NULL */
    PeerGoneFn gone;
    PeerFilterFn filter; /* may be NULL: what goes to modern peers */
    void *userdata;
    Peer *reap; /* dead peers waiting for the loop to free them */
    struct event *ev_reap;
};

/** Set up an empty registry. */
void peer_registry_init(PeerRegistry *reg, struct event_base *base, size_t max_line,
                        PeerDispatchFn dispatch, PeerGoneFn gone, void *userdata);
/** Close every peer and release the registry. */
void peer_registry_deinit(PeerRegistry *reg);
/** A live peer by id, or NULL (gone or dead). */
Peer *peer_get(PeerRegistry *reg, uint64_t id);
/** Adopt an accepted connection (fd consumed). */
Peer *peer_new(PeerRegistry *reg, int fd, uid_t uid, pid_t pid);
/** Queue bytes (whole lines) to a peer; a peer whose queue overflows is dropped. */
void peer_send(Peer *p, const char *data, size_t n);
/** peer_send without the modern filter (for the filter itself). */
void peer_send_unfiltered(Peer *p, const char *data, size_t n);
/** Queue the contents of sb. */
static inline void peer_send_sb(Peer *p, const StrBuf *sb)
{
    peer_send(p, sb->data, sb->len);
}
/** Drop a peer (logged with reason); freed from the loop. Safe inside callbacks. */
void peer_close(Peer *p, const char *reason);
/** Bytes waiting in a peer's output queue. */
size_t peer_queued(const Peer *p);
