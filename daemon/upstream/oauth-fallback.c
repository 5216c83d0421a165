// SPDX-License-Identifier: MIT
// oauth-fallback: sign-in methods for a build without libcurl (no remote servers to sign in to).

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

bool oauth_login_refresh(Server *s)
{
    (void)s;
    return false;
}

void oauth_login_shutdown(void)
{
}
