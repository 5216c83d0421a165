// SPDX-License-Identifier: MIT
// transport-http-fallback: the HTTP transport entry points of a build without libcurl.

#include <errno.h>

#include "common/util.h"
#include "daemon/upstream/transport-http.h"
#include "daemon/upstream/transport.h"

int transport_http_new(Transport **tp, struct event_base *base, const ServerConfig *cfg,
                       int64_t max_call_timeout_ms, const TransportCallbacks *cb, void *userdata,
                       char **whyp)
{
    (void)tp, (void)base, (void)max_call_timeout_ms, (void)cb, (void)userdata;
    *whyp = xasprintf("%s transport is not available in this build of mcpd",
                      transport_type_name(cfg->type));
    return -EPROTONOSUPPORT;
}

unsigned transport_http_live_count(void)
{
    return 0;
}

void transport_http_kill_all(void)
{
}

void transport_http_shutdown(void)
{
}
