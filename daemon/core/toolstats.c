// SPDX-License-Identifier: MIT
// toolstats: per tool of a server, calls, errors and a duration histogram for p50 and p99.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/core/toolstats.h"

/* The name of the entry that counts the calls of tools beyond TOOLSTATS_MAX_TOOLS. */
#define OTHER_NAME "(other tools)"

unsigned toolstats_bucket(uint64_t ms)
{
    unsigned msb, idx;

    if (ms < 4)
        return (unsigned)ms;
    msb = 63u - (unsigned)__builtin_clzll(ms);
    /* The bit below the top two selects one of 4 quarters of the doubling. */
    idx = (msb - 1) * 4 + (unsigned)((ms >> (msb - 2)) & 3);
    return idx < TOOLSTATS_BUCKETS ? idx : TOOLSTATS_BUCKETS - 1;
}

/* The first duration of bucket idx (the next bucket's first is its end). */
static uint64_t bucket_low(unsigned idx)
{
    unsigned msb;

    if (idx < 4)
        return idx;
    msb = idx / 4 + 1;
    return (uint64_t)(4 + idx % 4) << (msb - 2);
}

void toolstats_begin(ToolStats *ts, uint64_t key, const char *name, size_t len)
{
    ToolStat *st;

    if (idmap_get(&ts->by_key, key))
        return;
    if (ts->n_tools >= TOOLSTATS_MAX_TOOLS) {
        if (!ts->other) {
            ts->other = xcalloc(1, sizeof(*ts->other));
            ts->other->name = xstrdup(OTHER_NAME);
        }
        return;
    }
    st = xcalloc(1, sizeof(*st));
    st->name = xstrndup(name, len);
    idmap_put(&ts->by_key, key, st);
    ts->n_tools++;
}

void toolstats_note(ToolStats *ts, uint64_t key, uint64_t took_ms, bool error)
{
    ToolStat *st = idmap_get(&ts->by_key, key);

    if (!st && !(st = ts->other))
        return;
    st->calls++;
    st->errors += error;
    st->hist[toolstats_bucket(took_ms)]++;
}

uint64_t toolstats_percentile(const ToolStat *st, unsigned pct)
{
    /* The rank of the call at pct, counted from 1: the smallest with pct% at or below it. */
    uint64_t rank = (st->calls * pct + 99) / 100, seen = 0;

    if (!st->calls)
        return 0;
    if (!rank)
        rank = 1;
    for (unsigned i = 0; i < TOOLSTATS_BUCKETS; i++) {
        seen += st->hist[i];
        if (seen >= rank) {
            uint64_t lo = bucket_low(i), hi = i + 1 < TOOLSTATS_BUCKETS ? bucket_low(i + 1) : lo;
            return lo + (hi - lo) / 2;
        }
    }
    return bucket_low(TOOLSTATS_BUCKETS - 1);
}

static yajl_val stat_json(const ToolStat *st)
{
    yajl_val o = json_object_new();

    json_object_set(o, "calls", json_int_new((int64_t)st->calls));
    json_object_set(o, "errors", json_int_new((int64_t)st->errors));
    json_object_set(o, "p50Ms", json_int_new((int64_t)toolstats_percentile(st, 50)));
    json_object_set(o, "p99Ms", json_int_new((int64_t)toolstats_percentile(st, 99)));
    return o;
}

yajl_val toolstats_json(const ToolStats *ts)
{
    yajl_val o = json_object_new();
    size_t pos = 0;
    uint64_t key;
    void *v;

    while (idmap_next(&ts->by_key, &pos, &key, &v)) {
        const ToolStat *st = v;
        if (st->calls)
            json_object_set(o, st->name, stat_json(st));
    }
    if (ts->other && ts->other->calls)
        json_object_set(o, ts->other->name, stat_json(ts->other));
    return o;
}

void toolstats_deinit(ToolStats *ts)
{
    size_t pos = 0;
    uint64_t key;
    void *v;

    while (idmap_next(&ts->by_key, &pos, &key, &v)) {
        ToolStat *st = v;
        free(st->name);
        free(st);
    }
    idmap_deinit(&ts->by_key);
    if (ts->other) {
        free(ts->other->name);
        free(ts->other);
    }
    *ts = (ToolStats){0};
}
