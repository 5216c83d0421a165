// SPDX-License-Identifier: MIT
// session: agent sessions, opened by an agent and joined by its subagents through its token.
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "common/idmap.h"
#include "daemon/downstream/peer.h"

/* Random bytes of a session token (hex-encoded to twice as many characters): 128 bits cannot be
 * guessed. */
#define SESSION_TOKEN_BYTES 16

/* An agent session: the agent that opened it and the subagents that joined by its token. */
typedef struct Session {
    uint64_t id;
    char token[2 * SESSION_TOKEN_BYTES + 1];
    uid_t uid;
    uint64_t owner_peer_id;
    uint64_t workspace_id;
    unsigned n_members;
} Session;

/* Every live session, by id. */
typedef struct SessionRegistry {
    IdMap by_id; /* id -> Session */
    uint64_t next_id;
} SessionRegistry;

/** A session by id, or NULL. */
Session *session_get(SessionRegistry *sr, uint64_t id);
/**
 * Open a session for agent p of workspace workspace_id, with a fresh random token. Returns 0, or
 * -EIO when the system has no randomness (*whyp set).
 */
int session_open(SessionRegistry *sr, const Peer *p, uint64_t workspace_id, Session **sep,
                 char **whyp);
/** The session of token that an agent of uid may join, or NULL (compared in constant time). */
Session *session_find_token(SessionRegistry *sr, const char *token, uid_t uid);
/** Agent p leaves session id; the owner leaving ends it (its token dies with it). */
void session_leave(SessionRegistry *sr, uint64_t id, const Peer *p);
/** Free every session. */
void session_registry_deinit(SessionRegistry *sr);
