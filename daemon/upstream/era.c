// SPDX-License-Identifier: MIT
// era: the protocol era each server spoke last, by config hash (learnt, or seeded from the cache).

#include <stdint.h>
#include <string.h>

#include "common/hash.h"
#include "common/idmap.h"
#include "daemon/upstream/era.h"

/*
 * The era each server spoke last, by config hash: a legacy server is not probed again. One entry
 * per config hash this run has seen, so it is bounded by the servers configured (and their
 * edits); the process's lifetime is its lifetime.
 */
static IdMap era_memory;

uint64_t era_key(const char *config_hash)
{
    return hash_fnv1a(config_hash, strlen(config_hash)) | 1; /* never 0, which IdMap refuses */
}

UpstreamEra era_recall(uint64_t key)
{
    return key ? (UpstreamEra)(uintptr_t)idmap_get(&era_memory, key) : UPSTREAM_ERA_UNKNOWN;
}

void era_note(uint64_t key, UpstreamEra era)
{
    if (!key)
        return;
    if (era == UPSTREAM_ERA_UNKNOWN)
        idmap_remove(&era_memory, key);
    else
        idmap_put(&era_memory, key, (void *)(uintptr_t)era);
}

void era_forget(const char *config_hash)
{
    era_note(era_key(config_hash), UPSTREAM_ERA_UNKNOWN);
}

void era_seed(const char *config_hash, UpstreamEra era)
{
    uint64_t key = era_key(config_hash);

    if (era_recall(key) == UPSTREAM_ERA_UNKNOWN)
        era_note(key, era);
}

UpstreamEra era_known(const char *config_hash)
{
    return era_recall(era_key(config_hash));
}
