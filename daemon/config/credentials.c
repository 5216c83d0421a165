// SPDX-License-Identifier: MIT
// credentials: the store of auth.credentialId credentials: the Secret Service when the session
// has one (the file's entries moved in once), else $XDG_CONFIG_HOME/mcpd/credentials.json.
//
// The file is {"<id>": {"accessToken": "...", "expiresAt": ms?}, ...} (docs/configuration.md).
// In the Secret Service each credential is one item, {xdg:schema: CREDENTIALS_KEYRING_SCHEMA,
// application: "mcpd", credential: <id>}, whose secret is its entry as the file held it (or,
// written by hand with secret-tool, the bare token). People keep writing new credentials into
// the file; each lookup moves what it finds there, so the file never keeps one for long.

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/durable.h"
#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/credentials.h"
#include "daemon/sys/keyring.h"

/* The credential store is a small JSON file; anything larger is not one. */
#define CREDENTIALS_MAX_BYTES (1u << 20)
/*
 * Credentials moved from the file in one go: a person writes a handful; the keyring's own
 * bound on the items of one search (KEYRING_ITEMS_MAX) is the most mcpd would ever read back.
 */
#define CREDENTIALS_MAX_ENTRIES KEYRING_ITEMS_MAX

/* The attributes of credential id's item (docs/secrets.md shows them). */
#define CREDENTIAL_ATTRS(id)                                                                       \
    {                                                                                              \
        {"xdg:schema", CREDENTIALS_KEYRING_SCHEMA}, {"application", "mcpd"},                       \
        {                                                                                          \
            "credential", (id)                                                                     \
        }                                                                                          \
    }

static void wipe_free(char *s, size_t len)
{
    if (s)
        explicit_bzero(s, len);
    free(s);
}

/*
 * Read the store, refusing one that others could read or replace. It is not read through a
 * link, and never blocks: a FIFO or device in its place is refused unread.
 */
static int read_store(const char *path, yajl_val *outp, char **whyp)
{
    _cleanup_free_ char *err = NULL, *why = NULL;
    char *text = NULL;
    size_t len = 0;
    struct stat st;
    int r = paths_read_regular(path, false, CREDENTIALS_MAX_BYTES, &st, &text, &len, &why);

    if (r == -ENOENT || r == -ENOTDIR) {
        *whyp = xasprintf("the credential store %s does not exist", path);
        return r;
    }
    if (r < 0) {
        *whyp = xasprintf("cannot use the credential store %s: %s", path, why);
        return r;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077)) {
        *whyp = xasprintf("refusing the credential store %s: it must be owned by you and "
                          "readable by you only (mode %04o); run chmod 600 %s",
                          path, (unsigned)(st.st_mode & 07777), path);
        r = -EPERM;
    } else if (!(*outp = json_parse(text, &err))) {
        *whyp = xasprintf("the credential store %s is not valid JSON: %s", path, err);
        r = -EINVAL;
    }
    wipe_free(text, len);
    return r;
}

/* The token of an entry ({"accessToken", "expiresAt"?}) found in where: checked, copied. */
static int entry_token(yajl_val cred, const char *id, const char *where, char **tokenp, char **whyp)
{
    const char *token = json_get_string(cred, "accessToken");
    int64_t expires = 0;

    if (!token || !token[0]) {
        *whyp = xasprintf("credential \"%s\" in %s has no \"accessToken\" string", id, where);
        return -EINVAL;
    }
    if (json_get_int(cred, "expiresAt", &expires) == 0 && expires > 0 && expires <= wall_ms()) {
        *whyp = xasprintf("credential \"%s\" in %s expired (expiresAt %lld); sign in again", id,
                          where, (long long)expires);
        return -EKEYEXPIRED;
    }
    *tokenp = xstrdup(token);
    return 0;
}

static int file_lookup(const char *path, const char *id, char **tokenp, char **whyp)
{
    _cleanup_json_ yajl_val store = NULL;
    yajl_val cred;
    int r = read_store(path, &store, whyp);

    if (r < 0)
        return r;
    cred = json_get(store, id);
    if (!YAJL_IS_OBJECT(cred)) {
        *whyp = xasprintf("credential \"%s\" is not in %s", id, path);
        return -ENOENT;
    }
    return entry_token(cred, id, path, tokenp, whyp);
}

static int item_put(const char *id, yajl_val entry, char **whyp)
{
    const KeyringAttr attrs[] = CREDENTIAL_ATTRS(id);
    _cleanup_free_ char *label = xasprintf("mcpd credential %s", id);
    char *text = json_to_string(entry);
    int r = keyring_store(label, attrs, N_ELEMENTS(attrs), text, strlen(text), whyp);

    wipe_free(text, strlen(text));
    return r;
}

/*
 * The file's credentials move into the Secret Service: every one written there first, and
 * only when all were is the file removed (unlink, fsync of its directory). Anything the move
 * cannot carry (an entry without a token, a refusal of the keyring) leaves the whole file as
 * it is, with a warning naming the credential and the reason.
 */
static void take_over(const char *path)
{
    _cleanup_json_ yajl_val store = NULL;
    _cleanup_free_ char *why = NULL, *dir = NULL;
    size_t n;

    if (access(path, F_OK) < 0)
        return;
    if (read_store(path, &store, &why) < 0 || !YAJL_IS_OBJECT(store)) {
        log_full(LOG_WARNING, NULL, "credentials", "not moving %s into the Secret Service: %s",
                 path, why ? why : "its top level is not an object");
        return;
    }
    n = store->u.object.len;
    for (size_t i = 0; i < n; i++) {
        const char *id = store->u.object.keys[i];
        int r = -EINVAL;
        if (i >= CREDENTIALS_MAX_ENTRIES ||
            !json_get_string(store->u.object.values[i], "accessToken"))
            why = xasprintf(i >= CREDENTIALS_MAX_ENTRIES ? "more than %d credentials"
                                                         : "it has no \"accessToken\" string",
                            CREDENTIALS_MAX_ENTRIES);
        else
            r = item_put(id, store->u.object.values[i], &why);
        if (r < 0) {
            log_full(LOG_WARNING, NULL, "credentials",
                     "cannot move credential \"%s\" into the Secret Service (%s); the "
                     "credentials stay in %s",
                     id, why ? why : "refused", path);
            return;
        }
    }
    dir = paths_dirname(path);
    if (durable_remove(dir, path, &why) < 0)
        log_full(LOG_WARNING, NULL, "credentials",
                 "moved %zu credentials into the Secret Service but cannot remove %s: %s; "
                 "remove it yourself",
                 n, path, why);
    else
        log_full(LOG_INFO, NULL, "credentials",
                 "moved %zu credentials from %s into the Secret Service; the file is removed", n,
                 path);
}

/* The credential's item: 0, KEYRING_E_NOTFOUND or -errno (the service failed). */
static int keyring_token(const char *id, char **tokenp, char **whyp)
{
    const KeyringAttr attrs[] = CREDENTIAL_ATTRS(id);
    _cleanup_free_ char *why = NULL;
    char *secret = NULL;
    size_t len = 0;
    int r = keyring_lookup(attrs, N_ELEMENTS(attrs), &secret, &len, &why);

    if (r < 0)
        *whyp = xasprintf("credential \"%s\": %s", id, why ? why : "the Secret Service failed");
    if (r != 0)
        return r;
    if (len && secret[0] == '{') {
        _cleanup_json_ yajl_val entry = json_parse(secret, NULL);
        r = entry_token(entry, id, "the Secret Service", tokenp, whyp);
    } else {
        /* A bare token, as `secret-tool store` takes one from a terminal (its newline cut). */
        size_t n = len;
        while (n && (secret[n - 1] == '\n' || secret[n - 1] == '\r'))
            n--;
        if (n == 0) {
            *whyp = xasprintf("credential \"%s\" in the Secret Service is empty", id);
            r = -EINVAL;
        } else {
            *tokenp = xstrndup(secret, n);
        }
    }
    wipe_free(secret, len);
    return r;
}

int credentials_lookup(const char *path, const char *id, char **tokenp, char **whyp)
{
    _cleanup_free_ char *why = NULL;
    int r;

    if (!keyring_available(NULL))
        return file_lookup(path, id, tokenp, whyp);
    take_over(path);
    r = keyring_token(id, tokenp, &why);
    if (r == 0)
        return 0;
    /* A file the move had to leave (it says why in the log) may hold it still. */
    if (access(path, F_OK) == 0)
        return file_lookup(path, id, tokenp, whyp);
    if (r < 0) {
        *whyp = why; /* names the credential */
        why = NULL;
        return r;
    }
    *whyp = xasprintf("credential \"%s\" is not in the Secret Service (nor in %s): write it "
                      "into %s (mcpd moves it into the Secret Service), or store it: "
                      "secret-tool store --label='mcpd credential %s' xdg:schema %s "
                      "application mcpd credential %s",
                      id, path, path, id, CREDENTIALS_KEYRING_SCHEMA, id);
    return -ENOENT;
}
