// SPDX-License-Identifier: MIT
// procset: the processes a test tracks by identity (pid and start time), and crashing mcpd.
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/wait.h>

#include "daemon/sys/procs.h"
#include "tests/integration/harness.h"

/* Processes a test tracks at once: several generations of servers' trees and the decoys. */
#define PROCSET_MAX 256

typedef struct Procs {
    ProcId p[PROCSET_MAX];
    size_t n;
} Procs;

/* Is this very process (pid and start time) still running? */
static inline bool procset_alive(const ProcId *id)
{
    ProcInfo pi;
    return procs_read_info(id->pid, &pi) == 0 && pi.start == id->start && pi.state != 'Z';
}

static inline size_t procset_count_alive(const Procs *ps)
{
    size_t n = 0;
    for (size_t i = 0; i < ps->n; i++)
        n += procset_alive(&ps->p[i]);
    return n;
}

/* Wait until every process of ps is gone; return how many are left. */
static inline size_t procset_wait_gone(const Procs *ps)
{
    size_t n = procset_count_alive(ps);
    for (int waited = 0; n && waited < H_WAIT_MS; waited += 50) {
        h_sleep_ms(50);
        n = procset_count_alive(ps);
    }
    return n;
}

/* kill -9 of mcpd, reaped; return how many of ps outlive it once PDEATHSIG has had its moment. */
static inline size_t procset_crash_mcpd(Harness *h, const Procs *ps)
{
    kill(h->pid, SIGKILL);
    waitpid(h->pid, NULL, 0);
    h->pid = -1;
    /* What PDEATHSIG cannot reach (it reaches mcpd's own children only) is still there. */
    h_sleep_ms(500);
    return procset_count_alive(ps);
}
