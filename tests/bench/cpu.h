// SPDX-License-Identifier: MIT
// cpu: a process's time on CPU, for the benchmarks' figures per call.
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Time on CPU of a process in ns (/proc/PID/schedstat, the scheduler's own clock): the ticks
 * of /proc/PID/stat are 10 ms, too coarse for a second or two of load. 0 when unreadable.
 */
static inline uint64_t cpu_ns(pid_t pid)
{
    char path[64];
    unsigned long long ns = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    if (fscanf(f, "%llu", &ns) != 1)
        ns = 0;
    fclose(f);
    return ns;
}
