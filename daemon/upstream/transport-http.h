// SPDX-License-Identifier: MIT
// transport-http: MCP over Streamable HTTP (and the auto probe that falls back to legacy HTTP+SSE,
// transport-sse.c), on libcurl: the top of the HTTP transport (transport-http-fallback.c without
// libcurl).
#pragma once

#include <stdint.h>

#include <event2/event.h>

#include "daemon/config/config.h"
#include "daemon/upstream/transport.h"

/**
 * Create an HTTP transport (cfg->type http: Streamable HTTP, sse: legacy HTTP+SSE, auto: probe).
 * max_call_timeout_ms bounds a tools/call response stream that progress keeps alive.
 */
int transport_http_new(Transport **tp, struct event_base *base, const ServerConfig *cfg,
                       int64_t max_call_timeout_ms, const TransportCallbacks *cb, void *userdata,
                       char **whyp);

/** HTTP transports still ending their sessions (DELETE in flight). */
unsigned transport_http_live_count(void);
/** Abort every HTTP transfer still running (daemon exit past its grace period). */
void transport_http_kill_all(void);
/** At daemon exit: free what is left and release libcurl. */
void transport_http_shutdown(void);
