// SPDX-License-Identifier: MIT
// oauth-login-fallback: sign-in methods for a build without libcurl (no remote servers to sign in
// to).

#include "daemon/core/agent.h"
#include "daemon/core/oauth-login.h"

static void no_http(Manager *mgr, Peer *p, JsonrpcMsg *m)
{
    agent_reply_error(
        mgr->peers, p->id, m->id, JSONRPC_INVALID_PARAMS,
        "this mcpd was built without libcurl: it has no remote servers to sign in to");
}

void oauth_m_login(Manager *mgr, Peer *p, JsonrpcMsg *m)
{
    no_http(mgr, p, m);
}

void oauth_m_login_wait(Manager *mgr, Peer *p, JsonrpcMsg *m)
{
    no_http(mgr, p, m);
}

void oauth_m_logout(Manager *mgr, Peer *p, JsonrpcMsg *m)
{
    no_http(mgr, p, m);
}

bool oauth_login_refresh(Server *s)
{
    (void)s;
    return false;
}

bool oauth_login_refresh_ending(Server *s, int64_t within_ms,
                                void (*done_fn)(void *, int, const char *), void *userdata)
{
    (void)s, (void)within_ms, (void)done_fn, (void)userdata;
    return false;
}

void oauth_login_shutdown(void)
{
}
