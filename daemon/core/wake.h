// SPDX-License-Identifier: MIT
// wake: what mcpd does when the machine resumes from sleep (sys/sleepwatch.c hears it): every
// running stdio server pinged (a dead one restarted, a live one's subscriptions sent again),
// HTTP and SSE servers reconnected (their streams reopened, subscriptions sent again), OAuth
// tokens that ended or end soon refreshed first; and when that last happened, for status.
#pragma once

#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "daemon/core/manager.h"
#include "daemon/sys/sleepwatch.h"

/*
 * A stdio server that does not answer a ping within this time of the resume is restarted. A
 * ping is answered at once by a server whose process runs (the spec asks servers to answer it
 * promptly), and a server frozen by the sleep thaws with the machine, so one second tells a
 * hung one from a live one, and the whole resume is over within two.
 */
#define WAKE_PING_TIMEOUT_MS 1000
/*
 * Tokens that ended while the machine slept, or end within this time, are refreshed at once:
 * the refresh timers ran on the monotonic clock, which stood still while the machine slept,
 * and a token that ends in the next minutes would otherwise meet the first call with a 401.
 */
#define WAKE_TOKEN_MARGIN_MS (5 * 60 * 1000)

/* What the last resume did, for status. */
typedef struct WakeCounts {
    unsigned pinged;       /* running stdio servers pinged */
    unsigned restarted;    /* ... of them that did not answer, restarted */
    unsigned reopened;     /* HTTP and SSE servers reconnected */
    unsigned refreshed;    /* OAuth tokens refreshed */
    unsigned resubscribed; /* resource subscriptions sent again to live stdio servers */
} WakeCounts;

typedef struct Wake {
    Manager *m;
    SleepWatch watch;
    unsigned resumes;        /* since mcpd started */
    int64_t last_wall_ms;    /* when the last resume was heard, 0: none yet */
    int64_t last_slept_ms;   /* how long the machine slept then, -1: unknown */
    const char *last_source; /* "logind" or "clock" */
    WakeCounts last;
} Wake;

/** Start watching for resumes (sleepwatch); servers are m's. */
void wake_init(Wake *w, Manager *m);
/** Stop watching; safe on a zeroed value. */
void wake_deinit(Wake *w);
/** A resume (also what sleepwatch calls): ping, reconnect, refresh, resubscribe. */
void wake_resumed(Wake *w, const char *source, int64_t slept_ms);
/** {resumes, watching, lastAt?, source?, sleptMs?, pinged, restarted, ...} for mcpd/status. */
yajl_val wake_describe(const Wake *w);
