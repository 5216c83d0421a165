// SPDX-License-Identifier: MIT
// oauth-fallback: sign-in for a build without libcurl: no remote servers, so nothing to refresh
// (the mcpd/login methods' twin is daemon/methods/methods-login-fallback.c).

#include "daemon/upstream/oauth-login.h"

bool oauth_login_refresh(Server *s)
{
    (void)s;
    return false;
}

void oauth_login_shutdown(void)
{
}
