// SPDX-License-Identifier: MIT
// proctree: each child's whole process tree from one bounded walk of /proc: members and cost.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "daemon/sys/procs.h"

/* A walk runs at most this often on its own; it also keeps the durable record of descendants. */
#define PROCTREE_INTERVAL_MS 10000
/* After a spawn, the walk that sees the new tree (wrappers, helpers) before they scatter. */
#define PROCTREE_AFTER_SPAWN_MS 1000
/* A status older than this walks again; newer ones share the last walk (status can be polled). */
#define PROCTREE_STATUS_MAX_AGE_MS 1000

/* What one tree costs, as the last walk saw it. */
typedef struct ProcCost {
    uint64_t mem_bytes; /* PSS summed over the tree; RSS for a process whose PSS is unreadable */
    unsigned n_rss;     /* processes counted by RSS (smaps_rollup unreadable) */
    uint64_t cpu_ms;    /* user + system time of its live processes and the children they reaped */
    unsigned n_procs;
} ProcCost;

/** Walk periodically on base (and soon after each spawn); safe to call once. */
void proctree_start(struct event_base *base);
/** Stop walking and forget everything (daemon exit). */
void proctree_stop(void);
/** A child was spawned: walk soon, to see its tree while its parts still hang together. */
void proctree_spawned(void);
/** Walk now if the last walk is older than max_age_ms. */
void proctree_refresh(uint64_t max_age_ms);
/** The cost of the tree of the child with this serial from the last walk; false if unseen. */
bool proctree_cost(uint64_t serial, ProcCost *out);
/**
 * The processes the last walk found below the child with this serial (not the child itself),
 * in *idsp (to free), also those adopted by mcpd after their parent died. Return how many.
 */
size_t proctree_members(uint64_t serial, ProcId **idsp);
/**
 * Add the tree of the child with this serial, started at started_ms (monotonic), to a server's
 * status object: processes, memory, CPU, running time.
 */
void proctree_status(uint64_t serial, uint64_t started_ms, yajl_val obj);
/** Adopted processes whose server is unknown (tag cleared before any walk saw their parent). */
void proctree_unattributed(ProcCost *out);
