// SPDX-License-Identifier: MIT
// transport-stdio: an MCP server as a child process, NDJSON over its stdin and stdout.
#pragma once

#include <event2/event.h>

#include "daemon/config/config.h"
#include "daemon/upstream/transport.h"

/* Create a transport for a server; return 0 or -errno with *whyp set. */
int transport_stdio_new(Transport **tp, struct event_base *base, const ServerConfig *cfg,
                        const char *default_cwd, const TransportCallbacks *cb, void *userdata,
                        char **whyp);
/** Stdio transports still running or shutting down, for a bounded daemon exit. */
unsigned transport_stdio_live_count(void);
/** Kill everything still running at once (daemon exit past its grace period). */
void transport_stdio_kill_all(void);
