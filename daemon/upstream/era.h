// SPDX-License-Identifier: MIT
// era: the protocol era each server spoke last, by config hash (learnt, or seeded from the cache).
#pragma once

#include <stdint.h>

/* The era a session speaks; decided by the server/discover probe or the "protocol" field. */
typedef enum UpstreamEra {
    UPSTREAM_ERA_UNKNOWN, /* probing */
    UPSTREAM_ERA_LEGACY,  /* initialize and a session */
    UPSTREAM_ERA_MODERN,  /* 2026-07-28 */
} UpstreamEra;

/** The key of a config hash in the era memory (never 0). */
uint64_t era_key(const char *config_hash);
/** What is remembered under key: UPSTREAM_ERA_UNKNOWN when nothing is. */
UpstreamEra era_recall(uint64_t key);
/** Remember era under key (a key of 0 is ignored; UNKNOWN forgets). */
void era_note(uint64_t key, UpstreamEra era);

/** Forget what was learnt about a server's era (a config change, a failed connect). */
void era_forget(const char *config_hash);
/**
 * Seed the memory with an era read back from the server's cache entry, unless this run has
 * learnt one already (what the server said is newer than what the file says). The next start
 * of the server then skips the probe if it spoke 2025; a wrong guess costs one failed start,
 * after which the era is forgotten and probed again.
 */
void era_seed(const char *config_hash, UpstreamEra era);
/** The era remembered for a config hash (UPSTREAM_ERA_UNKNOWN when none). */
UpstreamEra era_known(const char *config_hash);
