// SPDX-License-Identifier: MIT
// oauth-fetch: one bounded HTTP exchange (metadata, registration, token) on the daemon's multi.
#pragma once

#include <stdbool.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/strbuf.h"

/* Each metadata, registration or token request must answer within this. */
#define OAUTH_FETCH_TIMEOUT_MS 30000
/* Metadata and token responses are small JSON documents; larger bodies are refused. */
#define OAUTH_BODY_MAX (256u * 1024u)

typedef struct Fetch Fetch;
/* The exchange ended (x->res, x->status, x->body); the callee frees x (maybe later). */
typedef void (*FetchFn)(void *owner, Fetch *x);

struct Fetch {
    CURL *easy;
    struct curl_slist *hdrs;
    char *url;
    char *post; /* form or JSON body, wiped at free (it may carry secrets) */
    CURLcode res;
    long status;
    bool too_big;
    StrBuf body;
    StrBuf www_auth;
    char *location;
    char refused_addr[64]; /* the address the loopback guard refused ("" when none) */
    FetchFn fn;
    void *owner;
};

/**
 * GET url, or POST body (content type ctype) when body is non-NULL, for a sign-in to resource;
 * extra_header (or NULL) is one more "Name: value" line. Redirects are not followed. url must
 * pass oauth_url_verdict for resource; plain http to a name other than the resource's host is
 * connected only to the loopback addresses it resolves to (checked on the very address curl
 * connects to, so no later answer of the resolver can move it), never through a proxy. Return
 * the fetch, or NULL with *whyp when it cannot start.
 */
Fetch *fetch_start(struct event_base *base, const char *resource, const char *url, const char *body,
                   const char *ctype, const char *extra_header, FetchFn fn, void *owner,
                   char **whyp);
/** Stop and free (no callback); returns NULL. */
Fetch *fetch_free(Fetch *x);
/** The body as a JSON object when the status is 2xx and it parses; else NULL with *whyp. */
yajl_val fetch_json(Fetch *x, char **whyp);
/** "HTTP 404", "timed out", ...: what went wrong with x, for messages (newly allocated). */
char *fetch_describe(Fetch *x);
/** application/x-www-form-urlencoded: append key=value (value escaped) to sb. */
void fetch_form_add(StrBuf *sb, const char *key, const char *value);
