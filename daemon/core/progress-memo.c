// SPDX-License-Identifier: MIT
// progress-memo: which of a server's tools may run long, so that only their calls ask the
// server for progress.
//
// mcpd gives an upstream request its own _meta.progressToken so that each progress report
// restarts callTimeout: a long tool that says it is alive is not cut. The token is not free:
// the server parses one more object on every call. On the null-relay benchmark that was a
// tenth of mcpd's added latency: pinned, 20.2-21.9 us with it, 18.0-19.4 us without, the relay
// 17.7-18.9 (mcpd-bench --only 1, four runs of each build in turn).
//
// So a tool is asked on its first call, and after that only if it may run long: a call that
// took PROGRESS_SLOW_MS or more, reported progress, or timed out marks it for good. A tool whose
// calls came back sooner is not asked again, unless the agent asks for progress itself
// (call.c). The one case that loses: a tool quick until now whose next call, with no progress
// asked, runs past callTimeout is cut there, as it would be without any progress; from then on
// its calls ask. Other methods (prompts/get, resources/read) are kept by method the same way.

#include "common/hash.h"
#include "common/idmap.h"
#include "common/util.h"
#include "daemon/core/progress-memo.h"

/*
 * A call this long may be a tool that runs longer another time: well above a quick tool's
 * milliseconds, well under the 60 s callTimeout a report would restart.
 */
#define PROGRESS_SLOW_MS 1000

/*
 * Keys kept per server: more tools than any server lists (methods are a handful). Past it, a
 * new key is not kept, and its calls ask for progress every time, as all calls did before.
 */
#define PROGRESS_MEMO_MAX 4096

/* What a kept key holds (IdMap values are pointers; NULL is "not kept"). */
static char quick_mark, slow_mark;
#define MEMO_QUICK ((void *)&quick_mark)
#define MEMO_SLOW  ((void *)&slow_mark)

uint64_t progress_memo_key(const char *name, size_t len)
{
    uint64_t k = hash_fnv1a(name, len);

    /* IdMap reserves 0 (a free slot) and IDMAP_TOMBSTONE. */
    return k && k != IDMAP_TOMBSTONE ? k : 1;
}

bool progress_memo_ask(const ProgressMemo *m, uint64_t key)
{
    return idmap_get(&m->tools, key) != MEMO_QUICK;
}

void progress_memo_note(ProgressMemo *m, uint64_t key, uint64_t took_ms, bool long_running,
                        bool result)
{
    bool slow = long_running || took_ms >= PROGRESS_SLOW_MS;
    void *was = idmap_get(&m->tools, key);

    if ((!slow && !result) || was == MEMO_SLOW)
        return; /* a quick error says nothing of how long the tool's work may take */
    if (!was && m->tools.n >= PROGRESS_MEMO_MAX)
        return;
    if (slow || !was)
        idmap_put(&m->tools, key, slow ? MEMO_SLOW : MEMO_QUICK);
}

void progress_memo_deinit(ProgressMemo *m)
{
    idmap_deinit(&m->tools);
}
