// SPDX-License-Identifier: MIT
// http: the daemon's one libcurl multi handle, driven by the libevent loop (sockets and timer).
#pragma once

#include <stdbool.h>

#include <curl/curl.h>
#include <event2/event.h>

/*
 * Every HTTP transfer of the daemon runs on one multi handle, so connections (and HTTP/2
 * streams) are reused across requests and upstreams and nothing ever blocks the loop. curl's
 * callbacks (write, header) run inside curl: they must not call back into the multi handle
 * (adding or removing transfers); the done callback runs outside curl and may.
 */

/* A transfer finished (result is CURLE_OK or the failure); the caller then removes it. */
typedef void (*HttpDoneFn)(void *userdata, CURL *easy, CURLcode result);

/** A new easy handle with the daemon's defaults for url (TLS verified, no signals). */
CURL *http_easy_new(const char *url);
/** Start a transfer on the loop's multi handle (created on first use). Return 0 or -errno. */
int http_start(struct event_base *base, CURL *easy, HttpDoneFn done, void *userdata);
/** Stop a transfer (finished or not); done is not called for it. The caller frees easy. */
void http_stop(CURL *easy);
/** Transfers running. */
unsigned http_n_running(void);
/** At daemon exit, after every transfer was stopped: release the multi handle. */
void http_shutdown(void);

/* ---- URL helpers (curl's URL parser) ---- */

/** The URL without user:password@ (for status and logs); NULL if it does not parse. */
char *http_url_redact(const char *url);
/** Resolve ref against base; NULL if either does not parse. */
char *http_url_resolve(const char *base, const char *ref);
/** Whether two URLs have the same origin (scheme, host, port). */
bool http_same_origin(const char *a, const char *b);
