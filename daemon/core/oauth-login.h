// SPDX-License-Identifier: MIT
// oauth-login: mcpd/login, mcpd/loginWait and mcpd/logout, and what a 401 does to a server.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/jsonrpc.h"
#include "daemon/core/manager.h"
#include "daemon/downstream/peer.h"

/** mcpd/login {server, headless?}: start a sign-in; the reply carries the URL to open. */
void oauth_m_login(Manager *mgr, Peer *p, JsonrpcMsg *m);
/** mcpd/loginWait {server}: answers when that server's sign-in ends (bounded by the flow). */
void oauth_m_login_wait(Manager *mgr, Peer *p, JsonrpcMsg *m);
/** mcpd/logout {server}: forget the stored sign-in. */
void oauth_m_logout(Manager *mgr, Peer *p, JsonrpcMsg *m);
/**
 * Server s got 401 and has failed: refresh its stored token once and reconnect it if that
 * works. Return whether a refresh started.
 */
bool oauth_login_refresh(Server *s);
/**
 * The machine resumed (wake.c): refresh s's stored token now when it has ended or ends within
 * within_ms and a refresh token is stored. Whether a refresh started; then done_fn(userdata, r,
 * why) runs once when it ends (-ECANCELED at daemon exit).
 */
bool oauth_login_refresh_ending(Server *s, int64_t within_ms,
                                void (*done_fn)(void *, int, const char *), void *userdata);
/** Daemon exit: stop sign-ins and refreshes (no replies), free the token store. */
void oauth_login_shutdown(void);
