// SPDX-License-Identifier: MIT
// peer: one downstream connection on the socket (framing, bounded output, reaping); what the
// agent on it is and does is the core's (daemon/core/agent.h).
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/idmap.h"
#include "common/jsonrpc.h"
#include "common/outbuf.h"
#include "common/strbuf.h"
#include "daemon/sys/turn.h"

typedef struct Peer Peer;
typedef struct PeerRegistry PeerRegistry;

/* Handles one parsed message from a peer. */
typedef void (*PeerDispatchFn)(Peer *p, JsonrpcMsg *m, void *userdata);
/* Tried first on every line: return true when it handled the line (the hot path). */
typedef bool (*PeerFastFn)(Peer *p, const char *line, size_t len, void *userdata);
/* Told when a peer goes away (after its last message), so its work can be cancelled. */
typedef void (*PeerGoneFn)(Peer *p, void *userdata);
/*
 * Takes a connection whose first byte cannot start a line of the line protocol (an HTTP
 * request: downstream/http-server.c): fd and the n bytes already read from it are the callee's.
 */
typedef void (*PeerHandoffFn)(int fd, uid_t uid, pid_t pid, const char *data, size_t n,
                              void *userdata);
/* Where a transport's peer (peer_new_sink) writes: its output, in order, in pieces of lines. */
typedef void (*PeerSinkFn)(Peer *p, const char *data, size_t n, void *ctx);

/*
 * What a peer whose host reaches mcpd by another way than its own connection (a host's pipes
 * that its bridge handed over, downstream/handoff.c) asks of its owner, with arg; each may be
 * NULL. Output goes through `out` first: it sees what is queued for the peer (whole lines, or
 * pieces of them; ref: a piece sent by reference, inside a line) and returns true when it took
 * the bytes (to queue what it makes of them with peer_send_unhooked). With take_all, every byte
 * goes to `out` (none built in place, references copied).
 */
typedef struct PeerHooks {
    /* A line read, before it is handled: false to handle it as it is; true when it was
     * replaced by the lines in *out (each with its newline; none: skipped). */
    bool (*line_in)(Peer *p, void *arg, const char *line, size_t len, StrBuf *out);
    bool (*out)(Peer *p, void *arg, const char *data, size_t n, bool ref);
    /* The host closed its input: true when the owner keeps the peer open (to answer what is
     * in flight) or has closed it; false: closed now. */
    bool (*input_closed)(Peer *p, void *arg);
    /* The peer is closing (reason as given to peer_close, NULL: a plain end). */
    void (*closed)(Peer *p, void *arg, const char *reason);
    bool take_all;
} PeerHooks;

/*
 * How long a line may stay unfinished (bytes with no newline yet). An agent writes a message
 * in one go: even a maximal 16 MiB line crosses a local socket in well under a second, and a
 * line that has not ended after 30 s is a peer that stopped mid-message (hung, or holding our
 * memory on purpose), whose buffer would otherwise be kept for as long as it stays connected.
 * The hidden setting partialLineTimeoutMs overrides it (tests make it short).
 */
#define PEER_PARTIAL_LINE_TIMEOUT_MS 30000

/*
 * Connections open at once. Each costs an fd and about 33 KiB (its framer, output buffers,
 * events and the agent's state): 10 000 idle ones held 330 MiB. A person's agents, their
 * subagents and the mcpctl commands they run are tens, a few hundred on a busy day; past 2048 a
 * per-user daemon is facing a runaway or hostile process, and refusing it keeps the others
 * served with 66 MiB at most spent on connections.
 */
#define PEER_MAX 2048
/*
 * At PEER_MAX, a connection that has sent not one byte for this long is closed to make room for
 * the new one: a host writes its initialize as soon as it has started its bridge, so a silent
 * connection this old is one held open to take a place (a slowloris), and it must not lock the
 * real agents out. Younger silent ones are spared: a burst of connects cannot evict an agent
 * just starting.
 */
#define PEER_SILENT_EVICT_MS 10000

struct Peer {
    uint64_t id;
    PeerRegistry *reg;
    int fd;     /* what it reads (and writes, but for a host's pipes) */
    int out_fd; /* what it writes: fd, or a host's stdout handed over */
    uid_t uid;
    pid_t pid;
    TurnFd io; /* in the loop's own epoll set (turn.h): reads, and writes once the socket is full */
    TurnFd out_io;          /* out_fd's writes when it is not fd */
    bool out_sock;          /* out_fd is a socket (else a pipe: write, not send) */
    bool close_flushed;     /* closed once its queue is written (peer_close_flushed) */
    const PeerHooks *hooks; /* NULL but for a host's pipes */
    void *hooks_arg;
    Framer in;
    /*
     * Output in two stores, written in this order: plain bytes (a buffer that stays allocated,
     * so a reply costs no allocation), then what must stay zero-copy (peer_send_ref) and every
     * byte queued after it. Plain bytes go to out_plain only while out is empty, so bytes
     * queued earlier are always written earlier.
     */
    OutBuf out_plain;
    struct evbuffer *out;
    bool dead;
    char *label;               /* how logs name it (the agent's clientInfo.name), or NULL */
    char *close_reason;        /* set by peer_send: closed from the loop, never inside a send */
    struct event *ev_partial;  /* fires when an unfinished line has waited too long */
    size_t partial_bytes;      /* bytes of the unfinished line held in in */
    uint64_t partial_since_us; /* monotonic time that line started arriving, or 0 */
    /* How the layer above writes to this peer when not as plain JSON-RPC lines (a 2026-07-28
     * agent's AgentWriter, core/agent.h), or NULL; peer.c never reads it. */
    void *writer;
    /* A transport's peer (peer_new_sink): no fd; what is sent to it goes to sink, or NULL. */
    PeerSinkFn sink;
    void *sink_ctx;
    bool read_more;    /* stopped reading at PEER_READS_PER_WAKE: resumed by ev_more */
    bool lines_left;   /* stopped at PEER_LINES_PER_WAKE with lines read: ev_more takes them */
    bool flush_queued; /* on the registry's flush list */
    bool rdhup;        /* the agent shut down its sending side: read to the EOF */
    bool spoke;        /* has sent at least one byte */
    bool had_line;     /* has sent at least one line */
    bool in_batch;     /* handling the messages of a batch */
    size_t ref_bytes;  /* bytes of out queued by reference (peer_send_ref), not yet released */
    size_t copied;     /* queued bytes that are copies, as last added to the registry's total */
    Peer *flush_next;
    int64_t connected_wall_ms;
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
    size_t max_queue_total;     /* copied output bytes all peers together may have queued */
    size_t queued_total;        /* copied output bytes queued now (the sum of Peer.copied) */
    int64_t partial_timeout_ms; /* an unfinished line older than this closes its peer */
    size_t partial_max;         /* bytes of unfinished lines held across all peers, at most */
    size_t partial_bytes;       /* bytes of unfinished lines held now */
    bool full;                  /* at PEER_MAX: refusing until a place frees up */
    uint64_t n_refused_full;    /* connections refused in this full spell, logged at its end */
    PeerDispatchFn dispatch;
    PeerFastFn fast; /* may be NULL */
    /* Tried on a connection's first line, before anything else (a bridge's hand-off); may be
     * NULL. When it returns true it took the line, and the peer is closed. */
    PeerFastFn first_line;
    void *first_line_arg;
    /* Whether a peer's protocol accepts JSON-RPC batches (2025-03-26 only); NULL: none does. */
    bool (*takes_batches)(Peer *p, void *userdata);
    PeerGoneFn gone;
    void *userdata;
    PeerHandoffFn handoff; /* may be NULL: every connection speaks the line protocol */
    void *handoff_ud;
    OutBufPool out_pool; /* the drained out_plain buffers, shared: an idle peer holds none */
    Peer *reap;          /* dead peers waiting for the loop to free them */
    struct event *ev_reap;
    /*
     * A peer that used up its share of a wake-up (reads, or lines already read) is flagged
     * (read_more) and taken again from this zero timer, after the loop has polled everyone else:
     * lines already in its buffer wake no epoll (its socket may be empty by then).
     */
    struct event *ev_more;
    size_t n_read_more;
    /*
     * Peers with output queued in this turn of the loop, written by one callback once the loop
     * has handled everything ready now: the replies made in one batch leave in one write per
     * peer, with one event activated per turn rather than one per peer.
     */
    Peer *flush;
    TurnTask flush_turn;
    /* Where io_uring is there: the turn's writes to two or more peers go in one system call. */
    struct SendBatch *batch;
};

/** Set up an empty registry. */
void peer_registry_init(PeerRegistry *reg, struct event_base *base, size_t max_line,
                        PeerDispatchFn dispatch, PeerGoneFn gone, void *userdata);
/** Close every peer and release the registry. */
void peer_registry_deinit(PeerRegistry *reg);
/** A live peer by id, or NULL (gone or dead). */
Peer *peer_get(PeerRegistry *reg, uint64_t id);
/**
 * Adopt an accepted connection (fd consumed). At PEER_MAX it makes room by closing a long
 * silent connection, or refuses this one with a JSON-RPC error and returns NULL.
 */
Peer *peer_new(PeerRegistry *reg, int fd, uid_t uid, pid_t pid);
/**
 * Adopt a host's pipes (in_fd read, out_fd written; both consumed, and may be one socket twice)
 * as a peer served through hooks (arg theirs). NULL at PEER_MAX (nothing written: the caller
 * says why); the fds are closed then.
 */
Peer *peer_new_piped(PeerRegistry *reg, int in_fd, int out_fd, uid_t uid, pid_t pid,
                     const PeerHooks *hooks, void *arg);
/** Queue bytes (whole lines) as peer_send, but not through the peer's hooks (their own output). */
void peer_send_unhooked(Peer *p, const char *data, size_t n);
/** Close p, without a reason, once its queue is written (from the loop, never inside this). */
void peer_close_flushed(Peer *p);
/**
 * A peer for an agent on another transport (HTTP): in the registry like any other, so the core
 * writes to it by id, but with no fd; its output goes to sink. Its messages come in through
 * peer_deliver. NULL at PEER_MAX.
 */
Peer *peer_new_sink(PeerRegistry *reg, uid_t uid, pid_t pid, PeerSinkFn sink, void *ctx);
/** Handle one message (a line without its newline) as if p had sent it; false: p is gone. */
bool peer_deliver(Peer *p, char *line, size_t len);
/** Queue bytes (whole lines) to a peer; a peer whose queue overflows is dropped. */
void peer_send(Peer *p, const char *data, size_t n);
/**
 * Room for an n-byte message (whole lines) built in place at the end of p's queue, or NULL
 * where peer_send must take it instead (a closing peer, bytes in the zero-copy
 * store, a big message, a full queue): write it there, then peer_send_commit.
 */
char *peer_send_reserve(Peer *p, size_t n);
/** Queue the n bytes written at what peer_send_reserve returned. */
void peer_send_commit(Peer *p, size_t n);
/**
 * Queue n bytes that stay owned by the caller (sent without a copy); done(data, n, arg) runs
 * once the peer no longer needs them: sent, dropped, or at once when the peer refuses them.
 */
void peer_send_ref(Peer *p, const void *data, size_t n, evbuffer_ref_cleanup_cb done, void *arg);
/** Queue the contents of sb. */
static inline void peer_send_sb(Peer *p, const StrBuf *sb)
{
    peer_send(p, sb->data, sb->len);
}
/** Drop a peer (logged with reason); freed from the loop. Safe inside callbacks. */
void peer_close(Peer *p, const char *reason);
/** Bytes waiting in a peer's output queue. */
size_t peer_queued(const Peer *p);
