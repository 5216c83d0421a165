// SPDX-License-Identifier: MIT
// test-idmap: unit tests for the id-to-pointer hash table.

#include <stdint.h>
#include <string.h>

#include "common/idmap.h"
#include "common/util.h"
#include "tests/unit/test.h"

/* Values are fake pointers derived from the id, so no storage is needed. */
static void *val(uint64_t id)
{
    return (void *)(uintptr_t)(id * 8 + 1);
}

static void test_zeroed(void)
{
    IdMap m = IDMAP_INIT;
    size_t pos = 0;

    CHECK(idmap_get(&m, 1) == NULL);
    CHECK(idmap_remove(&m, 1) == NULL);
    CHECK(!idmap_next(&m, &pos, NULL, NULL));
    idmap_deinit(&m);
    idmap_deinit(&m);
    CHECK_INTEQ(m.n, 0);
}

static void test_put_get_remove(void)
{
    IdMap m = IDMAP_INIT;
    int a, b;

    idmap_put(&m, 1, &a);
    idmap_put(&m, 2, &b);
    CHECK(idmap_get(&m, 1) == &a);
    CHECK(idmap_get(&m, 2) == &b);
    CHECK(idmap_get(&m, 3) == NULL);
    CHECK(idmap_get(&m, 0) == NULL);
    CHECK_INTEQ(m.n, 2);

    /* put on an existing id replaces. */
    idmap_put(&m, 1, &b);
    CHECK(idmap_get(&m, 1) == &b);
    CHECK_INTEQ(m.n, 2);

    CHECK(idmap_remove(&m, 1) == &b);
    CHECK(idmap_get(&m, 1) == NULL);
    CHECK(idmap_remove(&m, 1) == NULL);
    CHECK(idmap_remove(&m, 0) == NULL);
    CHECK_INTEQ(m.n, 1);
    CHECK(idmap_get(&m, 2) == &b);

    /* A removed id can come back. */
    idmap_put(&m, 1, &a);
    CHECK(idmap_get(&m, 1) == &a);
    CHECK_INTEQ(m.n, 2);

    /* Large and sparse ids. */
    idmap_put(&m, UINT64_MAX - 1, &a);
    idmap_put(&m, 1ull << 40, &b);
    CHECK(idmap_get(&m, UINT64_MAX - 1) == &a);
    CHECK(idmap_get(&m, 1ull << 40) == &b);
    CHECK_INTEQ(m.n, 4);
    idmap_deinit(&m);
    CHECK(idmap_get(&m, 2) == NULL);
}

static void test_many_with_removals(void)
{
    const uint64_t N = 100000;
    IdMap m = IDMAP_INIT;
    int bad = 0;

    /* Insert in order, removing every third id as we go (as peers come and go). */
    for (uint64_t id = 1; id <= N; id++) {
        idmap_put(&m, id, val(id));
        if (id % 3 == 0 && idmap_remove(&m, id - 1) != val(id - 1))
            bad++;
    }
    CHECK_INTEQ(bad, 0);
    CHECK_INTEQ(m.n, N - N / 3);
    for (uint64_t id = 1; id <= N; id++) {
        void *want = id % 3 == 2 ? NULL : val(id);
        if (idmap_get(&m, id) != want)
            bad++;
    }
    CHECK_INTEQ(bad, 0);

    /* Churn: remove and re-add many, so tombstones pile up and get swept. */
    for (int round = 0; round < 5; round++) {
        for (uint64_t id = 1; id <= N; id += 2)
            idmap_remove(&m, id);
        for (uint64_t id = 1; id <= N; id += 2)
            idmap_put(&m, id + N * (uint64_t)(round + 1), val(id));
    }
    for (uint64_t id = 2; id <= N; id += 2) {
        void *want = id % 3 == 2 ? NULL : val(id);
        if (idmap_get(&m, id) != want)
            bad++;
    }
    for (uint64_t id = 1; id <= N; id += 2)
        if (idmap_get(&m, id) != NULL || idmap_get(&m, id + N * 5) != val(id))
            bad++;
    CHECK_INTEQ(bad, 0);
    /* Tombstones never crowd out empty slots (a lookup of an absent id terminates). */
    CHECK(m.n_used < m.cap);
    CHECK(idmap_get(&m, N * 100) == NULL);
    idmap_deinit(&m);
}

static void test_iteration_visits_each_once(void)
{
    const uint64_t N = 5000;
    IdMap m = IDMAP_INIT;
    unsigned char *seen = xcalloc(N + 1, 1);
    size_t pos = 0, count = 0;
    uint64_t id;
    void *v;
    int bad = 0;

    for (uint64_t i = 1; i <= N; i++)
        idmap_put(&m, i, val(i));
    for (uint64_t i = 1; i <= N; i += 5)
        idmap_remove(&m, i);
    while (idmap_next(&m, &pos, &id, &v)) {
        if (id == 0 || id > N || seen[id] || v != val(id) || id % 5 == 1)
            bad++;
        else
            seen[id] = 1;
        count++;
    }
    CHECK_INTEQ(bad, 0);
    CHECK_INTEQ(count, m.n);
    CHECK_INTEQ(count, N - N / 5);
    /* Out-params are optional. */
    pos = 0;
    count = 0;
    while (idmap_next(&m, &pos, NULL, NULL))
        count++;
    CHECK_INTEQ(count, m.n);
    free(seen);
    idmap_deinit(&m);
}

static void test_remove_during_iteration(void)
{
    const uint64_t N = 3000;
    IdMap m = IDMAP_INIT;
    unsigned char *seen = xcalloc(N + 1, 1);
    size_t pos = 0, visited = 0;
    uint64_t id;
    void *v;
    int bad = 0;

    for (uint64_t i = 1; i <= N; i++)
        idmap_put(&m, i, val(i));
    /* Remove every even entry as it is visited: everything is still visited once. */
    while (idmap_next(&m, &pos, &id, &v)) {
        if (seen[id] || v != val(id))
            bad++;
        seen[id] = 1;
        visited++;
        if (id % 2 == 0 && idmap_remove(&m, id) != v)
            bad++;
    }
    CHECK_INTEQ(bad, 0);
    CHECK_INTEQ(visited, N);
    CHECK_INTEQ(m.n, N / 2);
    for (uint64_t i = 1; i <= N; i++)
        if ((idmap_get(&m, i) != NULL) != (i % 2 == 1))
            bad++;
    CHECK_INTEQ(bad, 0);

    /* Removing everything while iterating empties the map. */
    pos = 0;
    while (idmap_next(&m, &pos, &id, NULL))
        idmap_remove(&m, id);
    CHECK_INTEQ(m.n, 0);
    pos = 0;
    CHECK(!idmap_next(&m, &pos, NULL, NULL));
    free(seen);
    idmap_deinit(&m);
}

/*
 * A put and a remove per request, a hundred in flight (the call and pending maps): entries stay
 * found, the table does not grow, and once empty it holds no tombstones.
 */
static void test_churn(void)
{
    IdMap m = IDMAP_INIT;
    const uint64_t live = 100, rounds = 100000;
    size_t cap;

    for (uint64_t id = 1; id <= live; id++)
        idmap_put(&m, id, val(id));
    cap = 0;
    for (uint64_t id = live + 1; id <= rounds; id++) {
        if (id == 10 * live)
            cap = m.cap; /* settled: the live entries fill at most a quarter */
        idmap_put(&m, id, val(id));
        CHECK(idmap_remove(&m, id - live) == val(id - live));
        if (id % 997 == 0)
            for (uint64_t k = id - live + 1; k <= id; k++)
                CHECK(idmap_get(&m, k) == val(k));
    }
    CHECK_INTEQ(m.n, live);
    CHECK_INTEQ(m.cap, cap);
    CHECK(m.n_used * 2 < m.cap);
    for (uint64_t k = rounds - live + 1; k <= rounds; k++)
        CHECK(idmap_remove(&m, k) == val(k));
    CHECK_INTEQ(m.n, 0);
    CHECK_INTEQ(m.n_used, 0); /* every chain ended: no tombstone is left */
    for (uint64_t k = 1; k <= rounds; k++)
        if (idmap_get(&m, k))
            CHECK(false);
    idmap_deinit(&m);
}

/* Random puts and removes on few ids (long chains, wrap-around) against a plain array. */
static void test_random_against_reference(void)
{
    enum { IDS = 64, OPS = 200000 };
    void *ref[IDS + 1] = {0};
    IdMap m = IDMAP_INIT;
    uint64_t x = 88172645463325252ull; /* xorshift: the same sequence every run */

    for (int op = 0; op < OPS; op++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t id = 1 + x % IDS;
        if ((x >> 32) % 3) {
            idmap_put(&m, id, val(id));
            ref[id] = val(id);
        } else {
            CHECK(idmap_remove(&m, id) == ref[id]);
            ref[id] = NULL;
        }
        CHECK(m.n_used >= m.n);
        if (op % 1000 == 0)
            for (uint64_t k = 1; k <= IDS; k++)
                CHECK(idmap_get(&m, k) == ref[k]);
    }
    for (uint64_t k = 1; k <= IDS; k++) {
        CHECK(idmap_get(&m, k) == ref[k]);
        idmap_remove(&m, k);
    }
    CHECK_INTEQ(m.n, 0);
    CHECK_INTEQ(m.n_used, 0);
    idmap_deinit(&m);
}

int main(void)
{
    RUN(test_random_against_reference);
    RUN(test_churn);
    RUN(test_zeroed);
    RUN(test_put_get_remove);
    RUN(test_many_with_removals);
    RUN(test_iteration_visits_each_once);
    RUN(test_remove_during_iteration);
    return test_main_result();
}
