// SPDX-License-Identifier: MIT
// handoff: a bridge's host served on the pipes the bridge handed over (SCM_RIGHTS), as if it
// had connected itself, and the bridge told how it ended (common/handoff.h).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <event2/event.h>

#include "common/hostline.h"
#include "common/strbuf.h"
#include "daemon/downstream/peer.h"

typedef struct Handoff Handoff;

/* The bridges whose hosts mcpd serves, or that are handing them over. */
typedef struct HandoffRegistry {
    PeerRegistry *peers;
    Handoff *first;
    size_t n;
    Handoff *reap; /* ended, freed from the loop */
    struct event *ev_reap;
} HandoffRegistry;

/** Set up hr, taking the first line of every peer of peers that asks for a hand-off. */
void handoff_registry_init(HandoffRegistry *hr, PeerRegistry *peers);
/** End every hand-off; after peer_registry_deinit (whose peers it may still be told about). */
void handoff_registry_deinit(HandoffRegistry *hr);
