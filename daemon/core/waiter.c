// SPDX-License-Identifier: MIT
// waiter: mcpd/wait requests, each answered once its server settles or its time runs out.

#include <stdbool.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/waiter.h"

/* An mcpd/wait request. */
struct ServerWaiter {
    WaiterRegistry *reg;
    uint64_t peer_id;
    yajl_val id;
    uint64_t server_id;
    struct event *timer;
    struct ServerWaiter *next;
};

static void waiter_finish(ServerWaiter *w, Server *s, bool timed_out)
{
    ServerWaiter **pp;
    yajl_val r = json_object_new();

    for (pp = &w->reg->first; *pp && *pp != w; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = w->next;
    json_object_set(r, "state", json_string_new(s ? server_state_word(s) : "removed"));
    json_object_set(r, "connected", json_bool_new(s && s->state == SERVER_CONNECTED));
    json_object_set(r, "timedOut", json_bool_new(timed_out));
    if (s && s->last_error)
        json_object_set(r, "error", json_string_new(s->last_error));
    agent_reply(w->reg->peers, w->peer_id, w->id, r);
    json_free(r);
    event_free(w->timer);
    json_free(w->id);
    free(w);
}

static void on_waiter_timeout(evutil_socket_t fd, short what, void *arg)
{
    ServerWaiter *w = arg;

    (void)fd, (void)what;
    waiter_finish(w, server_get(w->reg->servers, w->server_id), true);
}

void waiters_server_settled(WaiterRegistry *wr, Server *s)
{
    ServerWaiter *w = wr->first, *next;

    for (; w; w = next) {
        next = w->next;
        if (w->server_id == s->id && (s->state == SERVER_CONNECTED || s->state == SERVER_FAILED ||
                                      s->state == SERVER_STOPPED || s->state == SERVER_DISABLED))
            waiter_finish(w, s->state == SERVER_STOPPED && !s->idle_stopped ? NULL : s, false);
    }
}

void waiter_add(WaiterRegistry *wr, uint64_t peer_id, yajl_val id, Server *s, int64_t timeout_ms)
{
    ServerWaiter *w;
    struct timeval tv;

    w = xcalloc(1, sizeof(*w));
    w->reg = wr;
    w->peer_id = peer_id;
    w->id = json_copy(id);
    w->server_id = s->id;
    w->timer = evtimer_new(wr->base, on_waiter_timeout, w);
    w->next = wr->first;
    wr->first = w;
    if (s->state != SERVER_CONNECTING && s->state != SERVER_BACKOFF) {
        waiter_finish(w, s, false);
        return;
    }
    tv_ms(&tv, timeout_ms);
    evtimer_add(w->timer, &tv);
}

void waiter_registry_init(WaiterRegistry *wr, struct event_base *base, PeerRegistry *peers,
                          ServerRegistry *servers)
{
    *wr = (WaiterRegistry){.base = base, .peers = peers, .servers = servers};
}

void waiter_registry_deinit(WaiterRegistry *wr)
{
    while (wr->first)
        waiter_finish(wr->first, NULL, false);
}
