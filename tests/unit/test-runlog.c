// SPDX-License-Identifier: MIT
// test-runlog: the per-server run record: serials, the ring of runs, stderr tails, exits, JSON.

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/sys/runlog.h"
#include "tests/unit/test.h"

/* A waitpid() status as the kernel builds it. */
#define EXITED(code)  ((code) << 8)
#define SIGNALED(sig) (sig)

static void test_runs_and_exits(void)
{
    RunLog *rl = runlog_get("srv", "/home/u");
    uint64_t k1, k2;
    StrBuf sb = STRBUF_INIT;
    _cleanup_free_ char *how = NULL;

    CHECK(runlog_find("srv", "/home/u") == rl);
    CHECK(runlog_find("srv", "/elsewhere") == NULL);
    k1 = runlog_begin(rl, 100);
    runlog_append(rl, k1, "fatal: no db\n", 13);
    runlog_end(rl, k1, EXITED(3));
    k2 = runlog_begin(rl, 101);
    runlog_append(rl, k2, "starting\n", 9);
    CHECK_INTEQ(k1, 1);
    CHECK_INTEQ(k2, 2);
    CHECK_INTEQ(runlog_spawns(rl), 2);
    CHECK(runlog_last_ended(rl) && runlog_last_ended(rl)->serial == 1);
    how = runlog_describe(runlog_last_ended(rl));
    CHECK_STREQ(how, "exited with status 3");
    runlog_tail(rl, k1, &sb);
    CHECK_STREQ(strbuf_str(&sb), "fatal: no db\n");
    strbuf_deinit(&sb);

    /* JSON: oldest first; the running one says so; since skips older runs. */
    _cleanup_json_ yajl_val all = runlog_json(rl, 0), later = runlog_json(rl, 2);
    int64_t code = -1;
    CHECK_INTEQ(json_array_len(all), 2);
    CHECK(json_get_int(json_array_at(all, 0), "exitCode", &code) == 0 && code == 3);
    CHECK(YAJL_IS_TRUE(json_get(json_array_at(all, 1), "running")));
    CHECK_INTEQ(json_array_len(later), 1);
    runlog_end(rl, k2, SIGNALED(SIGKILL));
    _cleanup_json_ yajl_val killed = runlog_json(rl, 2);
    int64_t sig = 0;
    CHECK(json_get_int(json_array_at(killed, 0), "signal", &sig) == 0 && sig == SIGKILL);

    runlog_spawn_failed(rl, "No such file or directory");
    _cleanup_free_ char *failed = runlog_describe(runlog_last_ended(rl));
    CHECK_STREQ(failed, "did not start: No such file or directory");
    runlog_unref(rl);
    runlog_clear();
}

/* Only the last RUNLOG_MAX_RUNS runs stay; serials keep counting. */
static void test_ring_of_runs(void)
{
    RunLog *rl = runlog_get("loop", "");

    for (int i = 0; i < RUNLOG_MAX_RUNS + 5; i++) {
        uint64_t k = runlog_begin(rl, 200 + i);
        runlog_append(rl, k, "x\n", 2);
        runlog_end(rl, k, EXITED(1));
    }
    _cleanup_json_ yajl_val runs = runlog_json(rl, 0);
    int64_t first = 0, last = 0;
    CHECK_INTEQ(json_array_len(runs), RUNLOG_MAX_RUNS);
    json_get_int(json_array_at(runs, 0), "run", &first);
    json_get_int(json_array_at(runs, RUNLOG_MAX_RUNS - 1), "run", &last);
    CHECK_INTEQ(first, 6);
    CHECK_INTEQ(last, RUNLOG_MAX_RUNS + 5);
    CHECK_INTEQ(runlog_spawns(rl), RUNLOG_MAX_RUNS + 5);
    /* Output for a run pushed out is dropped, never written over a newer one. */
    runlog_append(rl, 1, "late\n", 5);
    StrBuf sb = STRBUF_INIT;
    runlog_tail(rl, RUNLOG_MAX_RUNS + 5, &sb);
    CHECK_STREQ(strbuf_str(&sb), "x\n");
    strbuf_deinit(&sb);
    runlog_unref(rl);
    runlog_clear();
}

/* A flood keeps the end of stderr, and an ended run keeps less of it. */
static void test_tail_bounds(void)
{
    RunLog *rl = runlog_get("flood", "");
    uint64_t k = runlog_begin(rl, 300);
    char chunk[1000];
    StrBuf sb = STRBUF_INIT;
    int64_t bytes = 0;

    memset(chunk, 'a', sizeof(chunk));
    for (int i = 0; i < 200; i++)
        runlog_append(rl, k, chunk, sizeof(chunk));
    runlog_append(rl, k, "the end\n", 8);
    runlog_tail(rl, k, &sb);
    CHECK(sb.len <= 64 * 1024 && sb.len > 8 * 1024);
    CHECK(sb.len >= 8 && memcmp(sb.data + sb.len - 8, "the end\n", 8) == 0);
    runlog_end(rl, k, EXITED(0));
    strbuf_reset(&sb);
    runlog_tail(rl, k, &sb);
    CHECK(sb.len <= 8 * 1024 && sb.len >= 8 && memcmp(sb.data + sb.len - 8, "the end\n", 8) == 0);
    _cleanup_json_ yajl_val runs = runlog_json(rl, 0);
    CHECK(json_get_int(json_array_at(runs, 0), "stderrBytes", &bytes) == 0 &&
          bytes == 200 * 1000 + 8);
    strbuf_deinit(&sb);
    runlog_unref(rl);
    runlog_clear();
}

/* With a state dir, records outlive the daemon: a new one reads them back and counts on. */
static void test_persisted(void)
{
    _cleanup_free_ char *dir = test_tmpdir(), *runs = xasprintf("%s/state/runs", dir);
    _cleanup_free_ char *why = NULL;
    RunLog *rl;
    uint64_t k;

    CHECK_INTEQ(runlog_set_dir(runs, &why), 0);
    rl = runlog_get("kept", "/home/u");
    k = runlog_begin(rl, 400);
    runlog_append(rl, k, "fatal: gone\n", 12);
    runlog_end(rl, k, EXITED(2));
    runlog_unref(rl);
    runlog_clear(); /* mcpd exits */

    CHECK_INTEQ(runlog_set_dir(runs, &why), 0);
    rl = runlog_get("kept", "/home/u");
    CHECK_INTEQ(runlog_spawns(rl), 1);
    _cleanup_free_ char *how = runlog_describe(runlog_last_ended(rl));
    CHECK_STREQ(how, "exited with status 2");
    StrBuf sb = STRBUF_INIT;
    runlog_tail(rl, 1, &sb);
    CHECK_STREQ(strbuf_str(&sb), "fatal: gone\n");
    strbuf_deinit(&sb);
    CHECK_INTEQ(runlog_begin(rl, 401), 2);
    runlog_unref(rl);
    /* Another start dir is another server. */
    rl = runlog_get("kept", "/elsewhere");
    CHECK_INTEQ(runlog_spawns(rl), 0);
    runlog_unref(rl);
    runlog_clear();
    test_rm_rf(dir);
}

int main(void)
{
    RUN(test_runs_and_exits);
    RUN(test_ring_of_runs);
    RUN(test_tail_bounds);
    RUN(test_persisted);
    return test_main_result();
}
