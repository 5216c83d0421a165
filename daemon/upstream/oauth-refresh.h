// SPDX-License-Identifier: MIT
// oauth-refresh: keeping a sign-in's access token current: the refreshes in flight.
#pragma once

#include <event2/event.h>

/* Called once when a sign-in or a refresh ends: r 0 (token stored) or < 0 with why. */
typedef void (*OAuthDoneFn)(void *userdata, int r, const char *why);

#define OAUTH_E_NO_REFRESH 1
#define OAUTH_E_BUSY       2 /* a refresh for that resource is already running */

/**
 * Refresh the stored token for resource. Return 0 (done_fn will run), OAUTH_E_NO_REFRESH
 * when there is no refresh token (a person must sign in again), or OAUTH_E_BUSY. A refresh that the
 * authorization server refuses removes the stored sign-in. An answer that comes after the entry
 * changed (a new sign-in, a logout) is dropped: done_fn gets -ESTALE.
 */
int oauth_refresh_start(struct event_base *base, const char *server, const char *resource,
                        OAuthDoneFn done_fn, void *userdata);
/**
 * A new sign-in for resource begins: stop its refreshes in flight (their answers are never
 * read); each done_fn gets -ESTALE with why.
 */
void oauth_refresh_cancel(const char *resource, const char *why);
/** Daemon exit: every refresh in flight ends (its owner told -ECANCELED, to free its context). */
void oauth_refresh_shutdown(void);
