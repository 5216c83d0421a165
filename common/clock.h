// SPDX-License-Identifier: MIT
// clock: the time now, on the monotonic clock (for intervals) and the wall clock (for people).
#pragma once

#include <stdint.h>

/** Monotonic clock in milliseconds. */
uint64_t now_ms(void);
/** Monotonic clock in microseconds. */
uint64_t now_us(void);
/** Wall clock in milliseconds since the epoch. */
int64_t wall_ms(void);
