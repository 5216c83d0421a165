// SPDX-License-Identifier: MIT
// oauth-store: OAuth tokens for remote servers, in the Secret Service when the session has one,
// else 0600 under $XDG_STATE_HOME/mcpd, and in memory.

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <yajl/yajl_tree.h>

#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/sys/durable.h"
#include "daemon/sys/keyring.h"
#include "daemon/upstream/oauth-keyring.h"
#include "daemon/upstream/oauth-store.h"

/* A few dozen sign-ins fit in a few KiB; a larger file is not one of ours. */
#define STORE_MAX_BYTES (1u << 20)
/* Each entry is one server a person signed in to: more than this is a runaway writer. */
#define STORE_MAX_ENTRIES 1024
/* The latest time a store may name (ms since 1970): the year 2500, far from int64 overflow. */
#define STORE_TIME_MAX_MS 16725225600000LL
/* Bumped when the file's layout changes incompatibly. */
#define STORE_VERSION 1

/* A configured client (oauth.clientId) and the authorization server it was first used with. */
typedef struct ClientBinding {
    char *resource, *client_id, *issuer;
} ClientBinding;

static struct {
    OAuthToken *tokens;
    size_t n_tokens;
    ClientBinding *clients;
    size_t n_clients;
    uint64_t generation; /* the last one handed out */
    bool loaded;
    bool keyring; /* tokens in the Secret Service; the file keeps only the client bindings */
} store;

static void wipe_free(char *s)
{
    if (s)
        explicit_bzero(s, strlen(s));
    free(s);
}

void oauth_token_deinit(OAuthToken *t)
{
    free(t->resource);
    free(t->issuer);
    free(t->token_endpoint);
    free(t->client_id);
    wipe_free(t->client_secret);
    free(t->auth_method);
    wipe_free(t->access_token);
    wipe_free(t->refresh_token);
    free(t->scope);
    free(t->token_resource);
    memset(t, 0, sizeof(*t));
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void oauth_token_copy(OAuthToken *dst, const OAuthToken *src)
{
    dst->resource = dup_or_null(src->resource);
    dst->issuer = dup_or_null(src->issuer);
    dst->token_endpoint = dup_or_null(src->token_endpoint);
    dst->client_id = dup_or_null(src->client_id);
    dst->client_secret = dup_or_null(src->client_secret);
    dst->auth_method = dup_or_null(src->auth_method);
    dst->access_token = dup_or_null(src->access_token);
    dst->refresh_token = dup_or_null(src->refresh_token);
    dst->scope = dup_or_null(src->scope);
    dst->token_resource = dup_or_null(src->token_resource);
    dst->generation = src->generation;
    dst->expires_at_ms = src->expires_at_ms;
    dst->obtained_ms = src->obtained_ms;
}

char *oauth_store_path(void)
{
    const char *state = getenv("XDG_STATE_HOME");
    _cleanup_free_ char *home = NULL, *dir = NULL;

    if (state && state[0] == '/')
        dir = paths_join(state, "mcpd");
    else {
        home = paths_home();
        dir = paths_join(home, ".local/state/mcpd");
    }
    return paths_join(dir, "oauth-tokens.json");
}

static char *take_str(yajl_val o, const char *key)
{
    const char *s = json_get_string(o, key);
    return s && *s ? xstrdup(s) : NULL;
}

static bool entry_from_json(OAuthToken *t, yajl_val o)
{
    memset(t, 0, sizeof(*t));
    t->resource = take_str(o, "resource");
    t->issuer = take_str(o, "issuer");
    t->token_endpoint = take_str(o, "tokenEndpoint");
    t->client_id = take_str(o, "clientId");
    t->client_secret = take_str(o, "clientSecret");
    t->auth_method = take_str(o, "authMethod");
    t->access_token = take_str(o, "accessToken");
    t->refresh_token = take_str(o, "refreshToken");
    t->scope = take_str(o, "scope");
    t->token_resource = take_str(o, "tokenResource");
    (void)json_get_int(o, "expiresAt", &t->expires_at_ms);
    (void)json_get_int(o, "obtainedAt", &t->obtained_ms);
    /* Times no clock shows are as good as none, and would overflow the refresh arithmetic. */
    if (t->expires_at_ms < 0 || t->expires_at_ms > STORE_TIME_MAX_MS)
        t->expires_at_ms = 0;
    if (t->obtained_ms < 0 || t->obtained_ms > STORE_TIME_MAX_MS)
        t->obtained_ms = 0;
    if (t->resource && t->access_token)
        return true;
    oauth_token_deinit(t);
    return false;
}

static void binding_deinit(ClientBinding *b)
{
    free(b->resource);
    free(b->client_id);
    free(b->issuer);
}

/* Read the file once. A broken file is reported and treated as empty: signing in again fixes it. */
static void file_load(void)
{
    _cleanup_free_ char *path = oauth_store_path(), *err = NULL;
    _cleanup_json_ yajl_val root = NULL;
    _cleanup_close_ int fd = -1;
    StrBuf sb = STRBUF_INIT;
    struct stat st;
    char buf[4096];
    ssize_t n;
    yajl_val arr;

    /*
     * Not blocking: a FIFO put under the name would hang open() (and every HTTP server with it,
     * as the store is read on the first request); fstat then refuses it. Not following links: a
     * link could make mcpd send another file's contents as tokens.
     */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno != ENOENT)
            log_full(LOG_WARNING, NULL, "oauth",
                     "ignoring the token store %s: %s; remove it and sign in again", path,
                     errno == ELOOP ? "it is a symbolic link, which mcpd does not follow"
                                    : strerror(errno));
        return;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077) ||
        st.st_size > (off_t)STORE_MAX_BYTES) {
        log_full(LOG_WARNING, NULL, "oauth",
                 "ignoring the token store %s: it must be a regular file of at most %u bytes, "
                 "owned by you, mode 0600; remove it and sign in again",
                 path, STORE_MAX_BYTES);
        return;
    }
    while ((n = read(fd, buf, sizeof(buf))) > 0 && sb.len <= STORE_MAX_BYTES)
        strbuf_append(&sb, buf, (size_t)n);
    if (sb.len > STORE_MAX_BYTES) {
        /* It grew after fstat: somebody else is writing it. */
        log_full(LOG_WARNING, NULL, "oauth",
                 "ignoring the token store %s: it grew past %u bytes while read; remove it and "
                 "sign in again",
                 path, STORE_MAX_BYTES);
        explicit_bzero(sb.data, sb.cap);
        strbuf_deinit(&sb);
        return;
    }
    root = json_parse(strbuf_str(&sb), &err);
    explicit_bzero(buf, sizeof(buf));
    if (sb.data)
        explicit_bzero(sb.data, sb.cap);
    strbuf_deinit(&sb);
    arr = json_get_array(root, "tokens");
    if (!arr) {
        log_full(LOG_WARNING, NULL, "oauth",
                 "ignoring the token store %s: not a JSON object with a \"tokens\" array (%s); "
                 "remove it and sign in again",
                 path, err ? err : "no such array");
        return;
    }
    for (size_t i = 0; i < arr->u.array.len && store.n_tokens < STORE_MAX_ENTRIES; i++) {
        OAuthToken t;
        if (!entry_from_json(&t, arr->u.array.values[i]))
            continue;
        t.generation = ++store.generation;
        store.tokens = xrealloc(store.tokens, (store.n_tokens + 1) * sizeof(*store.tokens));
        store.tokens[store.n_tokens++] = t;
    }
    arr = json_get_array(root, "clients");
    for (size_t i = 0; arr && i < arr->u.array.len && store.n_clients < STORE_MAX_ENTRIES; i++) {
        ClientBinding b = {take_str(arr->u.array.values[i], "resource"),
                           take_str(arr->u.array.values[i], "clientId"),
                           take_str(arr->u.array.values[i], "issuer")};
        if (!b.resource || !b.client_id || !b.issuer) {
            binding_deinit(&b);
            continue;
        }
        store.clients = xrealloc(store.clients, (store.n_clients + 1) * sizeof(*store.clients));
        store.clients[store.n_clients++] = b;
    }
}

static void put_str(StrBuf *sb, const char *key, const char *v, bool *first)
{
    if (!v)
        return;
    strbuf_printf(sb, "%s\"%s\":", *first ? "" : ",", key);
    json_write_string(sb, v, strlen(v));
    *first = false;
}

static void entry_write(StrBuf *sb, const OAuthToken *t)
{
    bool first = true;

    strbuf_putc(sb, '{');
    put_str(sb, "resource", t->resource, &first);
    put_str(sb, "issuer", t->issuer, &first);
    put_str(sb, "tokenEndpoint", t->token_endpoint, &first);
    put_str(sb, "clientId", t->client_id, &first);
    put_str(sb, "clientSecret", t->client_secret, &first);
    put_str(sb, "authMethod", t->auth_method, &first);
    put_str(sb, "accessToken", t->access_token, &first);
    put_str(sb, "refreshToken", t->refresh_token, &first);
    put_str(sb, "scope", t->scope, &first);
    put_str(sb, "tokenResource", t->token_resource, &first);
    strbuf_printf(sb, ",\"expiresAt\":%lld,\"obtainedAt\":%lld}", (long long)t->expires_at_ms,
                  (long long)t->obtained_ms);
}

/* Write tokens[0..n) (skipping index skip) to the file; the memory copy is untouched. */
static int store_write(const OAuthToken *extra, size_t skip, const ClientBinding *bind, char **whyp)
{
    _cleanup_free_ char *path = oauth_store_path(), *dir = paths_dirname(path);
    StrBuf sb = STRBUF_INIT;
    bool first = true;
    int r;

    /*
     * A directory others may write is refused: they could swap the file between mcpd's writes
     * (it is renamed into place) or delete every sign-in. paths_ensure_private_dir says how to fix.
     */
    if ((r = paths_ensure_private_dir(dir, getuid(), 0, whyp)) < 0)
        return r;
    if (store.keyring && !bind && store.n_clients == 0) {
        /* Nothing of the file is left to keep: the tokens are in the Secret Service. */
        r = durable_remove(dir, path, whyp);
        return r == -ENOENT ? 0 : r;
    }
    strbuf_printf(&sb, "{\"version\":%d,\"tokens\":[", STORE_VERSION);
    for (size_t i = 0; i < store.n_tokens && !store.keyring; i++) {
        if (i == skip)
            continue;
        if (!first)
            strbuf_putc(&sb, ',');
        entry_write(&sb, &store.tokens[i]);
        first = false;
    }
    if (extra && !store.keyring) {
        if (!first)
            strbuf_putc(&sb, ',');
        entry_write(&sb, extra);
    }
    strbuf_puts(&sb, "],\"clients\":[");
    for (size_t i = 0; i < store.n_clients + (bind ? 1 : 0); i++) {
        const ClientBinding *b = i < store.n_clients ? &store.clients[i] : bind;
        bool bfirst = true;
        if (bind && b != bind && streq(b->resource, bind->resource) &&
            streq(b->client_id, bind->client_id))
            continue; /* replaced by bind */
        if (sb.data[sb.len - 1] != '[')
            strbuf_putc(&sb, ',');
        strbuf_putc(&sb, '{');
        put_str(&sb, "resource", b->resource, &bfirst);
        put_str(&sb, "clientId", b->client_id, &bfirst);
        put_str(&sb, "issuer", b->issuer, &bfirst);
        strbuf_putc(&sb, '}');
    }
    strbuf_puts(&sb, "]}\n");
    r = durable_write(dir, path, sb.data, sb.len, whyp);
    explicit_bzero(sb.data, sb.cap);
    strbuf_deinit(&sb);
    return r;
}

/* The entry as the file and the Secret Service hold it; it holds secrets: wipe it after use. */
static char *entry_text(const OAuthToken *t, size_t *lenp)
{
    StrBuf sb = STRBUF_INIT;

    entry_write(&sb, t);
    *lenp = sb.len;
    return strbuf_detach(&sb, NULL);
}

static void wipe_text(char *s, size_t len)
{
    if (s)
        explicit_bzero(s, len);
    free(s);
}

/* Keep t (taken over) in memory, in place of the entry of the same resource. */
static void store_add(OAuthToken *t)
{
    size_t i = 0;

    while (i < store.n_tokens && !streq(store.tokens[i].resource, t->resource))
        i++;
    if (i == store.n_tokens) {
        if (store.n_tokens >= STORE_MAX_ENTRIES) {
            oauth_token_deinit(t);
            return;
        }
        store.tokens = xrealloc(store.tokens, (store.n_tokens + 1) * sizeof(*store.tokens));
        store.n_tokens++;
    } else {
        oauth_token_deinit(&store.tokens[i]);
    }
    t->generation = ++store.generation;
    store.tokens[i] = *t;
}

/* One item's secret, the entry's JSON text, into t. */
static bool entry_parse(OAuthToken *t, const char *json, size_t len)
{
    _cleanup_free_ char *err = NULL;
    char *text = xstrndup(json, len);
    _cleanup_json_ yajl_val o = json_parse(text, &err);

    wipe_text(text, len);
    return o && entry_from_json(t, o);
}

static void on_keyring_entry(void *userdata, const char *json, size_t len)
{
    OAuthToken t;

    (void)userdata;
    if (entry_parse(&t, json, len))
        store_add(&t);
    else
        log_full(LOG_WARNING, NULL, "oauth",
                 "ignoring an item of the Secret Service with schema %s: not a sign-in of "
                 "mcpd's; remove it with secret-tool clear xdg:schema %s",
                 OAUTH_KEYRING_SCHEMA, OAUTH_KEYRING_SCHEMA);
}

/*
 * The file's sign-ins move to the Secret Service once: every one written there first, and only
 * then is the file rewritten without them (or removed when it keeps nothing else). A sign-in
 * the keyring refuses leaves everything in the file, as before.
 */
static void keyring_take_over(void)
{
    _cleanup_free_ char *path = oauth_store_path(), *why = NULL;
    size_t moved = store.n_tokens;
    int r;

    for (size_t i = 0; i < store.n_tokens; i++) {
        size_t len;
        char *text = entry_text(&store.tokens[i], &len);
        r = oauth_keyring_put(store.tokens[i].resource, text, len, &why);
        wipe_text(text, len);
        if (r < 0) {
            log_full(LOG_WARNING, NULL, "oauth",
                     "cannot move the sign-in to %s into the Secret Service (%s); sign-ins stay "
                     "in %s",
                     store.tokens[i].resource, why, path);
            store.keyring = false;
            return;
        }
    }
    for (size_t i = 0; i < store.n_tokens; i++)
        oauth_token_deinit(&store.tokens[i]);
    store.n_tokens = 0;
    if ((r = oauth_keyring_each(on_keyring_entry, NULL, &why)) < 0)
        log_full(LOG_WARNING, NULL, "oauth",
                 "cannot read the sign-ins in the Secret Service: %s; servers that need one show "
                 "needs-auth until mcpd reads them (mcpctl reload)",
                 why);
    if (!moved)
        return;
    free(why);
    why = NULL;
    if (store_write(NULL, SIZE_MAX, NULL, &why) < 0)
        log_full(LOG_WARNING, NULL, "oauth",
                 "moved %zu sign-ins into the Secret Service but cannot rewrite %s without them: "
                 "%s; remove the file yourself",
                 moved, path, why);
    else
        log_full(LOG_INFO, NULL, "oauth",
                 "moved %zu sign-ins from %s into the Secret Service; the file holds them no more",
                 moved, path);
}

static void store_load(void)
{
    store.loaded = true;
    file_load();
    if ((store.keyring = oauth_keyring_use()))
        keyring_take_over();
}

static void store_drop(size_t i);

static ssize_t store_index(const char *resource)
{
    if (!store.loaded)
        store_load();
    for (size_t i = 0; resource && i < store.n_tokens; i++)
        if (streq(store.tokens[i].resource, resource))
            return (ssize_t)i;
    return -1;
}

const OAuthToken *oauth_store_find(const char *resource)
{
    ssize_t i = store_index(resource);
    return i < 0 ? NULL : &store.tokens[i];
}

int oauth_store_put(const OAuthToken *tok, char **whyp)
{
    ssize_t i = store_index(tok->resource);
    int r;

    if (i < 0 && store.n_tokens >= STORE_MAX_ENTRIES) {
        *whyp = xasprintf("the token store already holds %d sign-ins; run mcpctl logout on some",
                          STORE_MAX_ENTRIES);
        return -ENOSPC;
    }
    /* The keyring or the file first: a token that cannot be kept durably is not kept at all. */
    if (store.keyring) {
        size_t len;
        char *text = entry_text(tok, &len);
        r = oauth_keyring_put(tok->resource, text, len, whyp);
        wipe_text(text, len);
    } else {
        r = store_write(tok, i < 0 ? SIZE_MAX : (size_t)i, NULL, whyp);
    }
    if (r < 0)
        return r;
    if (i < 0) {
        store.tokens = xrealloc(store.tokens, (store.n_tokens + 1) * sizeof(*store.tokens));
        i = (ssize_t)store.n_tokens++;
    } else {
        oauth_token_deinit(&store.tokens[i]);
    }
    oauth_token_copy(&store.tokens[i], tok);
    store.tokens[i].generation = ++store.generation;
    return 0;
}

uint64_t oauth_store_generation(const char *resource)
{
    const OAuthToken *t = oauth_store_find(resource);
    return t ? t->generation : 0;
}

static ssize_t binding_index(const char *resource, const char *client_id)
{
    if (!store.loaded)
        store_load();
    for (size_t i = 0; i < store.n_clients; i++)
        if (streq(store.clients[i].resource, resource) &&
            streq(store.clients[i].client_id, client_id))
            return (ssize_t)i;
    return -1;
}

const char *oauth_store_client_issuer(const char *resource, const char *client_id)
{
    ssize_t i = binding_index(resource, client_id);
    return i < 0 ? NULL : store.clients[i].issuer;
}

int oauth_store_bind_client(const char *resource, const char *client_id, const char *issuer,
                            char **whyp)
{
    ssize_t i = binding_index(resource, client_id);
    ClientBinding b = {(char *)resource, (char *)client_id, (char *)issuer};
    int r;

    if (i < 0 && store.n_clients >= STORE_MAX_ENTRIES) {
        *whyp = xasprintf("the token store already records %d configured clients; remove "
                          "%s to start afresh",
                          STORE_MAX_ENTRIES, "the token store");
        return -ENOSPC;
    }
    r = store_write(NULL, SIZE_MAX, &b, whyp);
    if (r < 0)
        return r;
    if (i < 0) {
        store.clients = xrealloc(store.clients, (store.n_clients + 1) * sizeof(*store.clients));
        i = (ssize_t)store.n_clients++;
        store.clients[i].resource = xstrdup(resource);
        store.clients[i].client_id = xstrdup(client_id);
    } else {
        free(store.clients[i].issuer);
    }
    store.clients[i].issuer = xstrdup(issuer);
    return 0;
}

int oauth_store_remove(const char *resource, char **whyp)
{
    ssize_t i = store_index(resource);
    int r;

    if (i < 0)
        return OAUTH_STORE_E_NONE;
    /* An item removed by somebody else is as good as removed here. */
    r = store.keyring ? oauth_keyring_remove(resource, whyp)
                      : store_write(NULL, (size_t)i, NULL, whyp);
    if (r < 0)
        return r;
    store_drop((size_t)i);
    return 0;
}

void oauth_store_sync(const char *resource)
{
    _cleanup_free_ char *why = NULL;
    char *text = NULL;
    ssize_t i = store_index(resource);
    OAuthToken t;
    int r;

    if (!store.keyring || !resource)
        return;
    r = oauth_keyring_get(resource, &text, &why);
    if (r == KEYRING_E_NOTFOUND) {
        if (i >= 0) {
            log_full(LOG_INFO, NULL, "oauth",
                     "the sign-in to %s is no longer in the Secret Service: forgotten", resource);
            store_drop((size_t)i);
        }
        return;
    }
    if (r < 0) {
        /* What mcpd holds stays in use: a slow keyring must not sign a person out. */
        log_full(LOG_WARNING, NULL, "oauth", "cannot read the sign-in to %s: %s", resource, why);
        return;
    }
    if (entry_parse(&t, text, strlen(text))) {
        const OAuthToken *cur = i >= 0 ? &store.tokens[i] : NULL;
        if (cur && streq(cur->access_token, t.access_token) &&
            streq(cur->refresh_token, t.refresh_token))
            oauth_token_deinit(&t); /* unchanged: its generation stays */
        else
            store_add(&t);
    }
    wipe_text(text, strlen(text));
}

/* Forget entry i in memory. */
static void store_drop(size_t i)
{
    oauth_token_deinit(&store.tokens[i]);
    memmove(&store.tokens[i], &store.tokens[i + 1],
            (store.n_tokens - i - 1) * sizeof(*store.tokens));
    store.n_tokens--;
    store.generation++; /* a refresh begun before the removal must not bring it back */
}

void oauth_store_reset(void)
{
    uint64_t generation = store.generation;

    for (size_t i = 0; i < store.n_tokens; i++)
        oauth_token_deinit(&store.tokens[i]);
    for (size_t i = 0; i < store.n_clients; i++)
        binding_deinit(&store.clients[i]);
    free(store.tokens);
    free(store.clients);
    memset(&store, 0, sizeof(store));
    store.generation = generation; /* never handed out twice */
    keyring_reset();
}

struct curl_slist *oauth_store_add_bearer(struct curl_slist *l, const char *url, yajl_val headers)
{
    const OAuthToken *t;
    _cleanup_free_ char *h = NULL;

    for (size_t i = 0; YAJL_IS_OBJECT(headers) && i < headers->u.object.len; i++)
        if (strcasecmp(headers->u.object.keys[i], "authorization") == 0)
            return l; /* what the config says wins over a stored sign-in */
    t = oauth_store_find(url);
    if (!t || strpbrk(t->access_token, "\r\n"))
        return l;
    h = xasprintf("Authorization: Bearer %s", t->access_token);
    l = curl_slist_append(l, h);
    explicit_bzero(h, strlen(h));
    return l;
}

yajl_val oauth_store_describe(const char *url)
{
    const OAuthToken *t = oauth_store_find(url);
    yajl_val o;

    if (!t)
        return NULL;
    /* Never a token: only what tells a person whether and how long the sign-in holds. */
    o = json_object_new();
    if (t->issuer)
        json_object_set(o, "issuer", json_string_new(t->issuer));
    if (t->scope)
        json_object_set(o, "scope", json_string_new(t->scope));
    if (t->expires_at_ms)
        json_object_set(o, "expiresAt", json_int_new(t->expires_at_ms));
    json_object_set(o, "refreshable", json_bool_new(t->refresh_token != NULL));
    json_object_set(o, "keptIn", json_string_new(store.keyring ? "Secret Service" : "file"));
    return o;
}
