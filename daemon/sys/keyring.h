// SPDX-License-Identifier: MIT
// keyring: secrets in the session's Secret Service (org.freedesktop.secrets), each call bounded.
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * keyring.c speaks the Secret Service API over the session bus with libsystemd's sd-bus;
 * keyring-fallback.c, for -Dsystemd=disabled, says there is none, so secrets stay in files.
 *
 * Every call is synchronous and bounded by KEYRING_CALL_TIMEOUT_MS (the connection and its
 * handshake included): the callers are the token store, the credential lookup and the config
 * readers, which answer at once. A local Secret Service answers in about a millisecond; one that
 * does not answer in time is given up for KEYRING_RETRY_MS, so a wedged service costs the loop
 * one bounded wait, not one per request.
 */

/* The longest one exchange with the Secret Service may hold the caller (ms). */
#define KEYRING_CALL_TIMEOUT_MS 1000
/* After a failed or timed-out exchange, the keyring is not asked again for this long (ms). */
#define KEYRING_RETRY_MS 30000
/* A secret mcpd keeps is a token entry of a few KiB; a larger one is not one of ours. */
#define KEYRING_SECRET_MAX (256u * 1024u)
/* Items one search may return: one per sign-in or credential; more is not ours to read. */
#define KEYRING_ITEMS_MAX 1024

/*
 * -ENOENT: the session has no Secret Service (or no unlocked default collection), and *whyp
 * says which. KEYRING_E_NOTFOUND: the service answered, and no item matches.
 */
#define KEYRING_E_NOTFOUND 2

/* One attribute of an item: what a search matches exactly. */
typedef struct KeyringAttr {
    const char *name, *value;
} KeyringAttr;

/* Called for each matching item's secret (bytes, not terminated; wiped after the call). */
typedef void (*KeyringEachFn)(void *userdata, const char *secret, size_t len);

/**
 * Whether the session has a Secret Service mcpd can store in: the session bus answers, the name
 * org.freedesktop.secrets is owned (mcpd never starts one through bus activation, which would
 * ask a person for a password nobody sees), and its default collection is unlocked. The answer
 * is kept until keyring_reset(); *whyp (may be NULL) says why not, to free.
 */
bool keyring_available(char **whyp);
/** The secret of the first unlocked item with these attributes: 0, KEYRING_E_NOTFOUND, -errno. */
int keyring_lookup(const KeyringAttr *attrs, size_t n, char **secretp, size_t *lenp, char **whyp);
/** Each unlocked item with these attributes (at most KEYRING_ITEMS_MAX): 0 or -errno. */
int keyring_search(const KeyringAttr *attrs, size_t n, KeyringEachFn fn, void *userdata,
                   char **whyp);
/** Create or replace the item with exactly these attributes in the default collection. */
int keyring_store(const char *label, const KeyringAttr *attrs, size_t n, const char *secret,
                  size_t len, char **whyp);
/** Delete every item with these attributes: 0, KEYRING_E_NOTFOUND, or -errno. */
int keyring_delete(const KeyringAttr *attrs, size_t n, char **whyp);
/** Close the connection and forget what was learnt (daemon exit, tests). */
void keyring_reset(void);
