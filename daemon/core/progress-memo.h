// SPDX-License-Identifier: MIT
// progress-memo: which of a server's tools may run long, so that only their calls ask the
// server for progress (see progress-memo.c for why).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/idmap.h"

/* One server's memo: the tool keys seen, each quick or slow. Zeroed: empty. */
typedef struct ProgressMemo {
    IdMap tools;
} ProgressMemo;

/** The key of a tool (by its upstream name), or of a method for the calls that are not tools. */
uint64_t progress_memo_key(const char *name, size_t len);
/** Whether a call under key should ask for progress: a key never seen, or one that ran long. */
bool progress_memo_ask(const ProgressMemo *m, uint64_t key);
/**
 * A call under key ended after took_ms; long_running when it reported progress or timed out;
 * result when it ended with its result (not an error). A call that ran long marks its key for
 * good; the first quick result marks it quick; a quick error leaves it as it was.
 */
void progress_memo_note(ProgressMemo *m, uint64_t key, uint64_t took_ms, bool long_running,
                        bool result);
/** Free the memo (a zeroed one is fine). */
void progress_memo_deinit(ProgressMemo *m);
