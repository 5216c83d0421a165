// SPDX-License-Identifier: MIT
// test-toolstats: per tool calls, errors and percentiles (daemon/core/toolstats.c).

#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "daemon/core/progress-memo.h"
#include "daemon/core/toolstats.h"
#include "tests/unit/test.h"

static uint64_t key_of(const char *name)
{
    return progress_memo_key(name, strlen(name));
}

/* Buckets grow with the duration, never skip back, and a percentile lands near the truth. */
static void test_buckets(void)
{
    unsigned last = 0;

    for (uint64_t ms = 0; ms < (1u << 21); ms += 1 + ms / 64) {
        unsigned b = toolstats_bucket(ms);
        CHECK(b >= last && b < TOOLSTATS_BUCKETS);
        last = b;
    }
    CHECK(toolstats_bucket(0) == 0 && toolstats_bucket(3) == 3 && toolstats_bucket(4) == 4);
    CHECK(toolstats_bucket(UINT64_MAX) == TOOLSTATS_BUCKETS - 1);
    for (uint64_t ms = 1; ms < 600000; ms = ms * 3 / 2 + 1) {
        ToolStat st = {.calls = 1};
        st.hist[toolstats_bucket(ms)] = 1;
        uint64_t p = toolstats_percentile(&st, 50);
        CHECK_MSG(p * 1000 >= ms * 875 && p * 1000 <= ms * 1125, "%llu ms reads as %llu",
                  (unsigned long long)ms, (unsigned long long)p);
    }
}

static void test_percentiles(void)
{
    ToolStats ts = {0};
    uint64_t echo = key_of("echo"), slow = key_of("slow");
    _cleanup_json_ yajl_val j = NULL;
    int64_t v = 0;

    toolstats_begin(&ts, echo, "echo", 4);
    toolstats_begin(&ts, slow, "slow", 4);
    toolstats_begin(&ts, echo, "echo", 4); /* again: the same entry */
    /* 98 quick calls, one error, two slow: p50 is quick, p99 is slow. */
    for (int i = 0; i < 98; i++)
        toolstats_note(&ts, echo, 2, i == 0);
    toolstats_note(&ts, echo, 1000, false);
    toolstats_note(&ts, echo, 1000, false);
    toolstats_note(&ts, key_of("unknown"), 5, false); /* never begun: not counted */
    j = toolstats_json(&ts);
    yajl_val e = json_get_object(j, "echo");
    CHECK(json_get_int(e, "calls", &v) == 0 && v == 100);
    CHECK(json_get_int(e, "errors", &v) == 0 && v == 1);
    CHECK(json_get_int(e, "p50Ms", &v) == 0 && v == 2);
    CHECK(json_get_int(e, "p99Ms", &v) == 0 && v >= 875 && v <= 1125);
    CHECK(!json_get(j, "slow")); /* begun, never ended: not listed */
    CHECK(!json_get(j, "unknown"));
    toolstats_deinit(&ts);
    toolstats_deinit(&ts);
}

/* Past the bound, new names share one entry: a server inventing names cannot grow memory. */
static void test_bound(void)
{
    ToolStats ts = {0};
    _cleanup_json_ yajl_val j = NULL;
    char name[32];
    int64_t v = 0;

    for (int i = 0; i < TOOLSTATS_MAX_TOOLS + 50; i++) {
        snprintf(name, sizeof(name), "t%d", i);
        toolstats_begin(&ts, key_of(name), name, strlen(name));
        toolstats_note(&ts, key_of(name), 1, false);
    }
    CHECK(ts.n_tools == TOOLSTATS_MAX_TOOLS);
    j = toolstats_json(&ts);
    CHECK(json_get_int(json_get_object(j, "(other tools)"), "calls", &v) == 0 && v == 50);
    toolstats_deinit(&ts);
}

int main(void)
{
    RUN(test_buckets);
    RUN(test_percentiles);
    RUN(test_bound);
    return test_main_result();
}
