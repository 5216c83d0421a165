// SPDX-License-Identifier: MIT
// test-http-resume: a 2025 SSE stream's replay: event ids written and parsed back, foreign ids
// refused, and the ring's bounds (events, bytes) dropping the oldest while keeping the newest.

#include <string.h>

#include "daemon/downstream/http-resume.h"
#include "tests/unit/test.h"

static void test_ids(void)
{
    HttpReplay *r = http_replay_new(7);
    char id[HTTP_EVENT_ID_LEN];
    uint32_t stream;
    uint64_t seq;

    http_replay_id(r, 42, id);
    CHECK_STREQ(id, "7-42");
    CHECK(http_replay_parse_id(id, strlen(id), &stream, &seq) && stream == 7 && seq == 42);
    static const char *const bad[] = {
        "",     "7", "7-", "-1", "a-1", "7-1x", "7--1", "4294967296-1", "1-18446744073709551616",
        "1-2-3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_MSG(!http_replay_parse_id(bad[i], strlen(bad[i]), &stream, &seq), "%s", bad[i]);
    http_replay_free(r);
}

static size_t seen;
static uint64_t first_seen;

static void count(void *ctx, uint64_t seq, const char *data, size_t n)
{
    (void)ctx, (void)data, (void)n;
    if (!seen++)
        first_seen = seq;
}

static void test_bounds(void)
{
    HttpReplay *r = http_replay_new(1);
    static char big[HTTP_REPLAY_BYTES / 2 + 1];

    for (int i = 0; i < HTTP_REPLAY_EVENTS + 10; i++)
        CHECK_INTEQ(http_replay_add(r, "{}", 2), (uint64_t)i + 1);
    seen = 0;
    http_replay_after(r, 0, count, NULL);
    CHECK_INTEQ(seen, HTTP_REPLAY_EVENTS); /* the oldest ten dropped */
    CHECK_INTEQ(first_seen, 11);
    seen = 0;
    http_replay_after(r, HTTP_REPLAY_EVENTS + 8, count, NULL);
    CHECK_INTEQ(seen, 2); /* only what came after the id */
    /* Bytes: two halves of the bound do not fit with the rest; an event past it alone is kept. */
    memset(big, 'x', sizeof(big));
    http_replay_add(r, big, sizeof(big));
    http_replay_add(r, big, sizeof(big));
    CHECK(r->bytes <= HTTP_REPLAY_BYTES + sizeof(big));
    CHECK_INTEQ(r->count, 1);
    static char huge[HTTP_REPLAY_BYTES + 1];
    http_replay_add(r, huge, sizeof(huge));
    CHECK_INTEQ(r->count, 1);
    CHECK_INTEQ(r->bytes, sizeof(huge));
    http_replay_free(r);
}

int main(void)
{
    RUN(test_ids);
    RUN(test_bounds);
    return test_main_result();
}
