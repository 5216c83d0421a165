// SPDX-License-Identifier: MIT
// toolstats: per tool of a server, calls, errors and a duration histogram for p50 and p99.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "common/idmap.h"

/*
 * Durations are counted in log buckets, 4 per doubling of milliseconds (0, 1, 2, 3, 4-4, 5-5,
 * ..., 8-9, 10-11, ...): 80 of them reach 2^20 ms (17 minutes, above the 600 s call cap; longer
 * ones go in the last). A percentile is the middle of its bucket: within 12.5% of the truth.
 * 80 x 4 bytes per tool.
 */
#define TOOLSTATS_BUCKETS 80
/*
 * Tools with their own figures per server: a server lists at most this many in practice (a
 * server lists a few hundred at most); calls of more go to one "(other tools)" entry, so a
 * server inventing names cannot grow mcpd's memory.
 */
#define TOOLSTATS_MAX_TOOLS 1024

typedef struct ToolStat {
    char *name;
    uint64_t calls, errors;
    uint32_t hist[TOOLSTATS_BUCKETS];
} ToolStat;

/* One server's figures, by tool key (progress_memo_key of the upstream name). Zeroed: empty. */
typedef struct ToolStats {
    IdMap by_key;
    size_t n_tools;
    ToolStat *other; /* past TOOLSTATS_MAX_TOOLS, or NULL */
} ToolStats;

/** A call of this tool begins: its entry is made the first time (the only allocation). */
void toolstats_begin(ToolStats *ts, uint64_t key, const char *name, size_t len);
/** A call under key ended after took_ms, failed or not: a few arithmetic operations. */
void toolstats_note(ToolStats *ts, uint64_t key, uint64_t took_ms, bool error);
/** The bucket a duration goes in. */
unsigned toolstats_bucket(uint64_t ms);
/** The duration a percentile (0-100) of st's calls stays under, in ms (the bucket's middle). */
uint64_t toolstats_percentile(const ToolStat *st, unsigned pct);
/** {name: {calls, errors, p50Ms, p99Ms}} of every tool called so far. */
yajl_val toolstats_json(const ToolStats *ts);
/** Free everything (a zeroed ToolStats is fine). */
void toolstats_deinit(ToolStats *ts);
