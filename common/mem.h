// SPDX-License-Identifier: MIT
// mem: byte strings compared in a time that tells nothing of where they differ (for secrets).
#pragma once

#include <stdbool.h>
#include <stddef.h>

/** Compare two byte strings in time that depends only on n. */
bool mem_equal_consttime(const void *a, const void *b, size_t n);
