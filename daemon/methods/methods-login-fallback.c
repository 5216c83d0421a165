// SPDX-License-Identifier: MIT
// methods-login-fallback: mcpd/login, loginWait and logout in a build without libcurl (no remote
// servers to sign in to); with libcurl they are daemon/upstream/oauth-login.c's.

#include "daemon/methods/methods.h"
#include "daemon/upstream/oauth-login.h"

static void no_http(Peer *p, JsonrpcMsg *m)
{
    methods_error(p, m->id, JSONRPC_INVALID_PARAMS,
                  "this mcpd was built without libcurl: it has no remote servers to sign in to");
}

void oauth_m_login(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    (void)d;
    no_http(p, m);
}

void oauth_m_login_wait(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    (void)d;
    no_http(p, m);
}

void oauth_m_logout(Daemon *d, Peer *p, JsonrpcMsg *m)
{
    (void)d;
    no_http(p, m);
}
