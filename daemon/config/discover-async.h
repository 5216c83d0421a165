// SPDX-License-Identifier: MIT
// discover-async: discovery on a thread of its own, its result handed back to the loop.
#pragma once

#include <event2/event.h>

#include "daemon/config/configset.h"

/* The set discovery made (the callee takes it: config_set_deinit when done). */
typedef void (*DiscoverDoneFn)(ConfigSet *set, void *userdata);

typedef struct DiscoverJob DiscoverJob;

/**
 * Run config_discover for opt (copied, as are settings) on a thread; done runs on the loop of
 * base once it is over, with the files it read already passed to the read hook there. Reading a
 * project's files costs up to a few hundred ms (4 MiB files, issue 39 item 7): on the loop,
 * every other agent would wait that long.
 */
DiscoverJob *discover_async(struct event_base *base, const DiscoverOptions *opt,
                            const Settings *settings, DiscoverDoneFn done, void *userdata);
/** Wait for a job's thread and call its done now (a request that cannot wait for the loop). */
void discover_async_finish(DiscoverJob *j);
/** Give up a job: wait for its thread, drop its set; done is not called. Returns NULL. */
DiscoverJob *discover_async_cancel(DiscoverJob *j);
