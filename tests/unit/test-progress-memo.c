// SPDX-License-Identifier: MIT
// test-progress-memo: which tools' calls ask for progress (daemon/core/progress-memo.c).

#include <stdio.h>
#include <string.h>

#include "daemon/core/progress-memo.h"
#include "tests/unit/test.h"

static uint64_t key_of(const char *name)
{
    return progress_memo_key(name, strlen(name));
}

static void test_first_quick_then_not(void)
{
    ProgressMemo m = {0};
    uint64_t echo = key_of("echo"), build = key_of("build");

    CHECK(progress_memo_ask(&m, echo)); /* never seen: asked */
    progress_memo_note(&m, echo, 3, false, true);
    CHECK(!progress_memo_ask(&m, echo));
    CHECK(progress_memo_ask(&m, build));
    progress_memo_note(&m, build, 2500, false, true); /* ran long */
    CHECK(progress_memo_ask(&m, build));
    progress_memo_note(&m, build, 1, false, true); /* quick again: still may run long */
    CHECK(progress_memo_ask(&m, build));
    progress_memo_note(&m, echo, 5, true, true); /* reported progress, or timed out */
    CHECK(progress_memo_ask(&m, echo));
    uint64_t bad = key_of("bad");
    progress_memo_note(&m, bad, 2, false, false); /* a quick error says nothing */
    CHECK(progress_memo_ask(&m, bad));
    progress_memo_note(&m, bad, 4, false, true);
    CHECK(!progress_memo_ask(&m, bad));
    progress_memo_note(&m, bad, 1200, false, false); /* a slow error: may run long */
    CHECK(progress_memo_ask(&m, bad));
    progress_memo_deinit(&m);
    progress_memo_deinit(&m); /* safe twice */
}

/* Growth keeps what it knew; past the bound, a new key is not kept and keeps asking. */
static void test_grows_and_is_bounded(void)
{
    ProgressMemo m = {0};
    char name[32];

    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "tool-%d", i);
        progress_memo_note(&m, key_of(name), i % 2 ? 1500 : 1, false, true);
    }
    CHECK_INTEQ((long long)m.tools.n, 4096);
    int wrong = 0;
    for (int i = 0; i < 4096; i++) {
        snprintf(name, sizeof(name), "tool-%d", i);
        wrong += progress_memo_ask(&m, key_of(name)) != (i % 2 == 1);
    }
    CHECK_INTEQ(wrong, 0);
    snprintf(name, sizeof(name), "tool-%d", 4999);
    CHECK(progress_memo_ask(&m, key_of(name)));
    progress_memo_deinit(&m);
}

int main(void)
{
    RUN(test_first_quick_then_not);
    RUN(test_grows_and_is_bounded);
    return test_main_result();
}
