// SPDX-License-Identifier: MIT
// oauth-listener: the loopback listener a browser sign-in's redirect comes back to.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

/*
 * What the owner makes of one redirect to the listener's path: query is its query string (NULL
 * when it has none). It sets *textp to the sentence the page shows and returns the page's HTTP
 * status. The owner closes the listener (oauth_listener_close) from its loop, never from here.
 */
typedef int (*OAuthRedirectFn)(void *userdata, const char *query, const char **textp);

typedef struct OAuthListener OAuthListener;

/**
 * Listen on 127.0.0.1:port (0: any free port) for GET path, and with localhost (a redirect URI
 * naming "localhost") on [::1]:port too, which must not be held by anyone else; *portp gets
 * the port. Returns NULL with *whyp when the port cannot be had. server names the sign-in in
 * log lines.
 */
OAuthListener *oauth_listener_new(struct event_base *base, const char *server, uint16_t port,
                                  bool localhost, const char *path, OAuthRedirectFn fn,
                                  void *userdata, uint16_t *portp, char **whyp);
/**
 * Stop accepting and never call fn again; answers being written still go out (bounded by the
 * I/O timeout), then it frees itself. NULL is accepted. Returns NULL.
 */
OAuthListener *oauth_listener_close(OAuthListener *l);
/** Daemon exit: free the listeners still finishing their answers. */
void oauth_listener_shutdown(void);
