// SPDX-License-Identifier: MIT
// ratelimit: a token bucket for log lines a peer can cause at will (a burst, then a rate).
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct RateLimit {
    double tokens;      /* lines that may be logged now */
    uint64_t refill_ms; /* when tokens were last refilled (0: never: starts full) */
    unsigned dropped;   /* lines refused since the last one logged */
} RateLimit;

/*
 * Whether one more line may be logged at now_ms, with at most burst at once and rate per second
 * after. When it may and lines were refused before, *droppedp gets their count (else 0), so the
 * caller can say how many were left out; the count is then reset.
 */
static inline bool ratelimit_take(RateLimit *r, uint64_t now_ms, unsigned burst, unsigned rate,
                                  unsigned *droppedp)
{
    if (r->refill_ms == 0)
        r->tokens = burst;
    else
        r->tokens += (double)(now_ms - r->refill_ms) * rate / 1000.0;
    if (r->tokens > burst)
        r->tokens = burst;
    r->refill_ms = now_ms ? now_ms : 1;
    if (r->tokens < 1) {
        r->dropped++;
        return false;
    }
    r->tokens -= 1;
    *droppedp = r->dropped;
    r->dropped = 0;
    return true;
}
