// SPDX-License-Identifier: MIT
// methods: what every method handler shares: its context (MethodsCtx), its table entry, and its
// replies, through the core's reply API.

#include "daemon/core/agent.h"
#include "daemon/methods/methods.h"

void methods_reply(MethodsCtx *d, Peer *p, yajl_val id, yajl_val result)
{
    agent_reply(d->manager->peers, p->id, id, result);
}

void methods_error(MethodsCtx *d, Peer *p, yajl_val id, int code, const char *message)
{
    agent_reply_error(d->manager->peers, p->id, id, code, message);
}
