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

#include <stdlib.h>

#include "common/hash.h"
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

/* The first table, grown by doubling while at most half full. */
#define PROGRESS_MEMO_MIN 16

uint64_t progress_memo_key(const char *name, size_t len)
{
    uint64_t k = hash_fnv1a(name, len);

    return k ? k : 1; /* 0 marks a free slot */
}

/* The slot of key, or the free slot where it would go. */
static size_t slot_of(const ProgressMemo *m, uint64_t key)
{
    size_t i = (size_t)key & (m->cap - 1);

    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

bool progress_memo_ask(const ProgressMemo *m, uint64_t key)
{
    if (!m->cap)
        return true;
    size_t i = slot_of(m, key);
    return !m->keys[i] || m->slow[i];
}

static void grow(ProgressMemo *m)
{
    ProgressMemo old = *m;

    m->cap = old.cap ? 2 * old.cap : PROGRESS_MEMO_MIN;
    m->keys = xcalloc(m->cap, sizeof(*m->keys));
    m->slow = xcalloc(m->cap, sizeof(*m->slow));
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i]) {
            size_t j = slot_of(m, old.keys[i]);
            m->keys[j] = old.keys[i];
            m->slow[j] = old.slow[i];
        }
    free(old.keys);
    free(old.slow);
}

void progress_memo_note(ProgressMemo *m, uint64_t key, uint64_t took_ms, bool long_running,
                        bool result)
{
    bool slow = long_running || took_ms >= PROGRESS_SLOW_MS;
    size_t i;

    if (!slow && !result)
        return; /* a quick error says nothing of how long the tool's work may take */
    if (m->cap) {
        i = slot_of(m, key);
        if (m->keys[i]) {
            m->slow[i] = m->slow[i] || slow;
            return;
        }
    }
    if (m->n >= PROGRESS_MEMO_MAX)
        return;
    if (2 * (m->n + 1) > m->cap)
        grow(m);
    i = slot_of(m, key);
    m->keys[i] = key;
    m->slow[i] = slow;
    m->n++;
}

void progress_memo_deinit(ProgressMemo *m)
{
    free(m->keys);
    free(m->slow);
    *m = (ProgressMemo){0};
}
