// SPDX-License-Identifier: MIT
// loglimit: log lines a peer can cause at will, limited to a burst and a rate, with the count
// of the lines left out always logged, also when the flood stops and nothing follows it.
#pragma once

#include <stdbool.h>

#include "common/ratelimit.h"

struct event_base;
struct event;

typedef struct LogLimit {
    RateLimit bucket;
    unsigned burst, rate;   /* lines at once, then lines a second */
    struct event *ev_flush; /* logs the count once a line could be logged again (made lazily) */
    struct event_base *base;
    char *server; /* the MCPD_SERVER field of the count's line */
    char *event;  /* its MCPD_EVENT field */
    char *what;   /* what was left out, plural: "stderr lines" */
} LogLimit;

/* Safe to deinit when zeroed. */
void loglimit_init(LogLimit *l, struct event_base *base, const char *server, const char *event,
                   const char *what, unsigned burst, unsigned rate);
/* Logs the count still owed, then frees the timer. */
void loglimit_deinit(LogLimit *l);
/*
 * Whether one more line may be logged now. Lines refused before it are counted in a line of
 * their own, logged first; when lines are refused and none follows, the count is logged as soon
 * as the bucket holds a line again.
 */
bool loglimit_take(LogLimit *l);
