// SPDX-License-Identifier: MIT
// oauth-store: OAuth tokens for remote servers, in the Secret Service when the session has one,
// else 0600 under $XDG_STATE_HOME/mcpd, and in memory.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>
#include <yajl/yajl_tree.h>

/* One sign-in: what the token endpoint gave for a resource, and how to refresh it. */
typedef struct OAuthToken {
    char *resource;       /* the MCP server URL the token is for (RFC 8707) */
    char *issuer;         /* the authorization server, or its origin for 2025-03-26 servers */
    char *token_endpoint; /* where refreshes go */
    char *client_id;
    char *client_secret; /* NULL for public clients */
    char *auth_method;   /* token endpoint auth: none, client_secret_basic, client_secret_post */
    char *access_token;
    char *refresh_token; /* NULL: a new sign-in is needed when the access token ends */
    char *scope;
    char *token_resource;  /* the RFC 8707 "resource" the sign-in sent (refreshes send it too) */
    int64_t expires_at_ms; /* wall clock; 0: the server gave no lifetime */
    int64_t obtained_ms;   /* wall clock of the token response */
    uint64_t generation;   /* set by the store at each put: which sign-in state this is */
} OAuthToken;

/** $XDG_STATE_HOME/mcpd/oauth-tokens.json (or ~/.local/state/...), newly allocated. */
char *oauth_store_path(void);
/** The token for resource, or NULL; loads the file on first use. Borrowed until the next put. */
const OAuthToken *oauth_store_find(const char *resource);
/**
 * Store (replace) the entry for tok->resource durably: temp file, fsync, rename, fsync of the
 * directory. On failure nothing changes in memory and *whyp says why. tok is copied.
 */
int oauth_store_put(const OAuthToken *tok, char **whyp);
/**
 * Which state resource's sign-in is in: a number that changes at every put and remove of its
 * entry (0: none stored). A refresh answers for the state it started from, and only that one.
 */
uint64_t oauth_store_generation(const char *resource);
/**
 * The authorization server the configured client client_id of resource was first used with,
 * or NULL when it never was. Borrowed until the next change of the store.
 */
const char *oauth_store_client_issuer(const char *resource, const char *client_id);
/**
 * Record that the configured client client_id of resource goes to issuer (durably, replacing
 * what was recorded). Kept across mcpctl logout: the binding outlives one sign-in.
 */
int oauth_store_bind_client(const char *resource, const char *client_id, const char *issuer,
                            char **whyp);
/** Forget the entry for resource (durably). Return 0, OAUTH_STORE_E_NONE, or -errno (*whyp). */
int oauth_store_remove(const char *resource, char **whyp);
/**
 * Before a connection to resource: take its sign-in from the Secret Service again (a person may
 * have removed or replaced the item); a no-op with the file. A keyring that does not answer in
 * time (KEYRING_CALL_TIMEOUT_MS) leaves the copy in memory in use.
 */
void oauth_store_sync(const char *resource);
/** Free the in-memory copy (daemon exit, tests). */
void oauth_store_reset(void);
/** Free a token's strings, wiping the secrets first; safe on a zeroed value. */
void oauth_token_deinit(OAuthToken *t);
/** Deep copy. */
void oauth_token_copy(OAuthToken *dst, const OAuthToken *src);

/*
 * The Authorization header for a request to url when a token is stored for it and the
 * configured headers (an object, or NULL) set none. Appended to l, which is returned.
 */
struct curl_slist *oauth_store_add_bearer(struct curl_slist *l, const char *url, yajl_val headers);

/** For status: {"issuer", "scope", "expiresAt", "refreshable"} of url's sign-in, or NULL. */
yajl_val oauth_store_describe(const char *url);

#define OAUTH_STORE_E_NONE 1 /* nothing stored for that resource */
