// SPDX-License-Identifier: MIT
// keyring: secrets in the session's Secret Service (org.freedesktop.secrets), each call bounded.
//
// The Secret Service API (https://specifications.freedesktop.org/secret-service-spec/) over
// sd-bus: one "plain" session (the session bus is the user's own socket; libsecret encrypts
// against other processes on the bus, which can already read the user's files), the default
// collection, SearchItems/GetSecrets to read, CreateItem (replace) to write, Item.Delete.

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/sys/keyring.h"

#define SS_NAME      "org.freedesktop.secrets"
#define SS_PATH      "/org/freedesktop/secrets"
#define SS_SERVICE   "org.freedesktop.Secret.Service"
#define SS_ITEM      "org.freedesktop.Secret.Item"
#define SS_COLL      "org.freedesktop.Secret.Collection"
#define SS_NO_PROMPT "/"

typedef enum { KR_UNKNOWN, KR_YES, KR_NO } KrState;

/* Inside this file: no usable Secret Service (the public calls say -ENOENT). */
#define KEYRING_E_NONE 1

/* One connection for the daemon; discovery threads use it too, one at a time. */
static struct {
    pthread_mutex_t lock;
    sd_bus *bus;
    char *session, *collection;
    KrState state;
    char *why_not;
    uint64_t retry_at_us; /* after a failure: no exchange before this */
} kr = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* What is left of the deadline, at least 1 µs (0 would mean sd-bus's default). */
static uint64_t left_us(uint64_t deadline)
{
    uint64_t n = now_us();
    return n < deadline ? deadline - n : 1;
}

static void drop_bus(void)
{
    kr.bus = sd_bus_flush_close_unref(kr.bus);
    free(kr.session);
    free(kr.collection);
    kr.session = kr.collection = NULL;
}

static int fail(int r, const sd_bus_error *e, const char *what, char **whyp)
{
    if (whyp && !*whyp)
        *whyp = xasprintf("the Secret Service: %s: %s", what,
                          e && sd_bus_error_is_set(e) ? e->message : strerror(-r));
    if (r == -ETIMEDOUT || r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE) {
        /* The connection is no longer trusted to answer: drop it and rest a while. */
        drop_bus();
        kr.retry_at_us = now_us() + (uint64_t)KEYRING_RETRY_MS * 1000u;
    }
    return r < 0 ? r : -EIO;
}

/* Connect and finish the handshake before the deadline: sd-bus's own waits are unbounded. */
static int bus_connect(uint64_t deadline, char **whyp)
{
    int r = sd_bus_open_user(&kr.bus);

    if (r < 0)
        return fail(r, NULL, "cannot reach the session bus", whyp);
    (void)sd_bus_set_method_call_timeout(kr.bus, (uint64_t)KEYRING_CALL_TIMEOUT_MS * 1000u);
    for (;;) {
        if ((r = sd_bus_is_ready(kr.bus)) > 0)
            return 0;
        if (r < 0 || (r = sd_bus_process(kr.bus, NULL)) < 0)
            return fail(r, NULL, "the session bus refused the connection", whyp);
        if (r > 0)
            continue;
        if (now_us() >= deadline)
            return fail(-ETIMEDOUT, NULL, "the session bus did not answer in time", whyp);
        /* A signal (SIGCHLD) ends the wait early: the loop waits again (call, below). */
        if ((r = sd_bus_wait(kr.bus, left_us(deadline))) < 0 && r != -EINTR)
            return fail(r, NULL, "waiting for the session bus", whyp);
    }
}

/* The answer to one call, filled in by on_reply. */
typedef struct Pending {
    sd_bus_message *reply;
    bool done;
} Pending;

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
    Pending *p = userdata;

    (void)ret_error;
    p->reply = sd_bus_message_ref(m);
    p->done = true;
    return 1;
}

/*
 * One method call, its wait bounded by the deadline. Not sd_bus_call: a signal to mcpd
 * (SIGCHLD, as its servers start and end) cuts its wait short with EINTR in libsystemd 252, and
 * the message cannot be sent again (the bus refuses a serial still awaiting its answer). Here
 * the wait is simply resumed. A timeout is sd-bus's own error answer (NoReply: ETIMEDOUT).
 */
static int call(uint64_t deadline, sd_bus_message *m, sd_bus_message **replyp, const char *what,
                char **whyp)
{
    sd_bus_error e = SD_BUS_ERROR_NULL;
    sd_bus_slot *slot = NULL;
    Pending p = {0};
    int r = sd_bus_call_async(kr.bus, &slot, m, on_reply, &p, left_us(deadline));

    while (r >= 0 && !p.done) {
        if ((r = sd_bus_process(kr.bus, NULL)) != 0)
            continue; /* one message handled (maybe the answer), or a failure */
        if (now_us() >= deadline)
            r = -ETIMEDOUT;
        else if ((r = sd_bus_wait(kr.bus, left_us(deadline))) == -EINTR)
            r = 0;
    }
    sd_bus_slot_unref(slot);
    if (r >= 0 && sd_bus_message_is_method_error(p.reply, NULL)) {
        sd_bus_error_copy(&e, sd_bus_message_get_error(p.reply));
        r = -sd_bus_error_get_errno(&e);
    }
    if (r < 0) {
        fail(r, &e, what, whyp);
        sd_bus_message_unref(p.reply);
    } else {
        *replyp = p.reply;
    }
    sd_bus_error_free(&e);
    return r;
}

static int new_call(sd_bus_message **mp, const char *path, const char *iface, const char *member)
{
    return sd_bus_message_new_method_call(kr.bus, mp, SS_NAME, path, iface, member);
}

/* Whether the Secret Service's name is owned now (no activation: see keyring_available). */
static int has_owner(uint64_t deadline, char **whyp)
{
    sd_bus_message *m = NULL, *reply = NULL;
    int owned = 0, r;

    r = sd_bus_message_new_method_call(kr.bus, &m, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "NameHasOwner");
    if (r >= 0)
        r = sd_bus_message_append(m, "s", SS_NAME);
    if (r >= 0 && (r = call(deadline, m, &reply, "NameHasOwner", whyp)) >= 0)
        r = sd_bus_message_read(reply, "b", &owned);
    sd_bus_message_unref(m);
    sd_bus_message_unref(reply);
    return r < 0 ? r : owned;
}

/* OpenSession("plain") and the default collection, which must be unlocked. */
static int open_session(uint64_t deadline, char **whyp)
{
    sd_bus_message *m = NULL, *reply = NULL;
    sd_bus_error e = SD_BUS_ERROR_NULL;
    const char *path = NULL;
    int r, locked = 0;

    if ((r = new_call(&m, SS_PATH, SS_SERVICE, "OpenSession")) >= 0 &&
        (r = sd_bus_message_append(m, "sv", "plain", "s", "")) >= 0 &&
        (r = call(deadline, m, &reply, "OpenSession", whyp)) >= 0 &&
        (r = sd_bus_message_skip(reply, "v")) >= 0 &&
        (r = sd_bus_message_read(reply, "o", &path)) >= 0)
        kr.session = xstrdup(path);
    m = sd_bus_message_unref(m);
    reply = sd_bus_message_unref(reply);
    if (r < 0)
        return r;
    if ((r = new_call(&m, SS_PATH, SS_SERVICE, "ReadAlias")) >= 0 &&
        (r = sd_bus_message_append(m, "s", "default")) >= 0 &&
        (r = call(deadline, m, &reply, "ReadAlias", whyp)) >= 0 &&
        (r = sd_bus_message_read(reply, "o", &path)) >= 0)
        kr.collection = streq(path, "/") ? NULL : xstrdup(path);
    sd_bus_message_unref(m);
    sd_bus_message_unref(reply);
    if (r < 0)
        return r;
    if (!kr.collection) {
        if (whyp)
            *whyp = xstrdup("the Secret Service has no default collection");
        return KEYRING_E_NONE;
    }
    r = sd_bus_get_property_trivial(kr.bus, SS_NAME, kr.collection, SS_COLL, "Locked", &e, 'b',
                                    &locked);
    if (r < 0) {
        fail(r, &e, "reading whether the default collection is locked", whyp);
        sd_bus_error_free(&e);
        return r;
    }
    if (locked) {
        /* Unlocking asks a person through a prompt mcpd cannot show. */
        if (whyp)
            *whyp = xasprintf("the Secret Service's default collection %s is locked; unlock it "
                              "(log in to the desktop, or gnome-keyring-daemon --unlock)",
                              kr.collection);
        return KEYRING_E_NONE;
    }
    return 0;
}

/* The connection and session, made on first use; 0, KEYRING_E_NONE or -errno. Locked. */
static int ensure(uint64_t deadline, char **whyp)
{
    int r;

    if (kr.state == KR_NO) {
        if (whyp && kr.why_not)
            *whyp = xstrdup(kr.why_not);
        return -ENOENT;
    }
    if (kr.bus && kr.session)
        return 0;
    if (kr.retry_at_us && now_us() < kr.retry_at_us) {
        if (whyp)
            *whyp = xstrdup("the Secret Service failed a moment ago; mcpd asks again later");
        return -EAGAIN;
    }
    kr.retry_at_us = 0;
    if ((r = bus_connect(deadline, whyp)) < 0)
        goto none;
    if ((r = has_owner(deadline, whyp)) < 0)
        goto none;
    if (r == 0) {
        if (whyp)
            *whyp = xstrdup("no Secret Service runs in this session (org.freedesktop.secrets "
                            "has no owner on the session bus)");
        r = KEYRING_E_NONE;
        goto none;
    }
    if ((r = open_session(deadline, whyp)) != 0)
        goto none;
    kr.state = KR_YES;
    return 0;
none:
    /* A session without a reachable Secret Service keeps its files: decided once. */
    if (kr.state == KR_UNKNOWN) {
        kr.state = KR_NO;
        free(kr.why_not);
        kr.why_not = whyp && *whyp ? xstrdup(*whyp) : NULL;
    }
    drop_bus();
    return r < 0 && kr.state != KR_NO ? r : -ENOENT;
}

bool keyring_available(char **whyp)
{
    uint64_t deadline = now_us() + (uint64_t)KEYRING_CALL_TIMEOUT_MS * 1000u;
    int r;

    pthread_mutex_lock(&kr.lock);
    r = ensure(deadline, whyp);
    pthread_mutex_unlock(&kr.lock);
    return r == 0;
}

static int append_attrs(sd_bus_message *m, const KeyringAttr *attrs, size_t n)
{
    int r = sd_bus_message_open_container(m, 'a', "{ss}");

    for (size_t i = 0; r >= 0 && i < n; i++)
        r = sd_bus_message_append(m, "{ss}", attrs[i].name, attrs[i].value);
    return r < 0 ? r : sd_bus_message_close_container(m);
}

/* SearchItems: the unlocked items' paths, newly allocated (NULL-terminated). */
static int search_items(uint64_t deadline, const KeyringAttr *attrs, size_t n, char ***itemsp,
                        char **whyp)
{
    sd_bus_message *m = NULL, *reply = NULL;
    char **items = NULL;
    const char *p;
    size_t k = 0;
    int r;

    if ((r = new_call(&m, SS_PATH, SS_SERVICE, "SearchItems")) >= 0 &&
        (r = append_attrs(m, attrs, n)) >= 0 &&
        (r = call(deadline, m, &reply, "SearchItems", whyp)) >= 0)
        r = sd_bus_message_enter_container(reply, 'a', "o");
    items = xcalloc(1, sizeof(*items));
    while (r >= 0 && (r = sd_bus_message_read(reply, "o", &p)) > 0 && k < KEYRING_ITEMS_MAX) {
        items = xrealloc(items, (k + 2) * sizeof(*items));
        items[k++] = xstrdup(p);
        items[k] = NULL;
    }
    sd_bus_message_unref(m);
    sd_bus_message_unref(reply);
    if (r < 0) {
        for (size_t i = 0; i < k; i++)
            free(items[i]);
        free(items);
        return fail(r, NULL, "reading the SearchItems answer", whyp);
    }
    *itemsp = items;
    return 0;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* Item.GetSecret for one item; fn gets the value. */
static int get_secret(uint64_t deadline, const char *item, KeyringEachFn fn, void *userdata,
                      char **whyp)
{
    sd_bus_message *m = NULL, *reply = NULL;
    const void *value = NULL;
    size_t len = 0;
    int r;

    if ((r = new_call(&m, item, SS_ITEM, "GetSecret")) >= 0 &&
        (r = sd_bus_message_append(m, "o", kr.session)) >= 0 &&
        (r = call(deadline, m, &reply, "GetSecret", whyp)) >= 0 &&
        (r = sd_bus_message_enter_container(reply, 'r', "oayays")) >= 0 &&
        (r = sd_bus_message_skip(reply, "oay")) >= 0)
        r = sd_bus_message_read_array(reply, 'y', &value, &len);
    if (r >= 0 && len > KEYRING_SECRET_MAX) {
        if (whyp)
            *whyp = xasprintf("the Secret Service item %s holds %zu bytes, more than the %u a "
                              "secret of mcpd's may have",
                              item, len, KEYRING_SECRET_MAX);
        r = -EFBIG;
    } else if (r >= 0) {
        fn(userdata, value, len);
    } else {
        fail(r, NULL, "reading a secret", whyp);
    }
    sd_bus_message_unref(m);
    sd_bus_message_unref(reply);
    return r < 0 ? r : 0;
}

int keyring_search(const KeyringAttr *attrs, size_t n, KeyringEachFn fn, void *userdata,
                   char **whyp)
{
    uint64_t deadline = now_us() + (uint64_t)KEYRING_CALL_TIMEOUT_MS * 1000u;
    char **items = NULL;
    int r;

    pthread_mutex_lock(&kr.lock);
    if ((r = ensure(deadline, whyp)) == 0 &&
        (r = search_items(deadline, attrs, n, &items, whyp)) >= 0)
        for (size_t i = 0; items[i] && r >= 0; i++)
            r = get_secret(deadline, items[i], fn, userdata, whyp);
    pthread_mutex_unlock(&kr.lock);
    strv_free(items);
    return r < 0 ? r : 0;
}

typedef struct Found {
    char *secret;
    size_t len;
    bool seen;
} Found;

static void take_first(void *userdata, const char *secret, size_t len)
{
    Found *f = userdata;

    if (f->seen)
        return;
    f->seen = true;
    f->secret = xmalloc(len + 1);
    memcpy(f->secret, secret, len);
    f->secret[len] = '\0';
    f->len = len;
}

int keyring_lookup(const KeyringAttr *attrs, size_t n, char **secretp, size_t *lenp, char **whyp)
{
    uint64_t deadline = now_us() + (uint64_t)KEYRING_CALL_TIMEOUT_MS * 1000u;
    char **items = NULL;
    Found f = {0};
    int r;

    pthread_mutex_lock(&kr.lock);
    if ((r = ensure(deadline, whyp)) == 0 &&
        (r = search_items(deadline, attrs, n, &items, whyp)) >= 0)
        r = items[0] ? get_secret(deadline, items[0], take_first, &f, whyp) : -ENOKEY;
    pthread_mutex_unlock(&kr.lock);
    strv_free(items);
    if (r >= 0 && f.seen) {
        *secretp = f.secret;
        if (lenp)
            *lenp = f.len;
        return 0;
    }
    free(f.secret);
    return r == -ENOKEY ? KEYRING_E_NOTFOUND : r < 0 ? r : -EIO;
}

/* Properties of a new item: its label and attributes. */
static int append_props(sd_bus_message *m, const char *label, const KeyringAttr *attrs, size_t n)
{
    int r;

    if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
        (r = sd_bus_message_append(m, "{sv}", SS_ITEM ".Label", "s", label)) < 0 ||
        (r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
        (r = sd_bus_message_append(m, "s", SS_ITEM ".Attributes")) < 0 ||
        (r = sd_bus_message_open_container(m, 'v', "a{ss}")) < 0 ||
        (r = append_attrs(m, attrs, n)) < 0 || (r = sd_bus_message_close_container(m)) < 0 ||
        (r = sd_bus_message_close_container(m)) < 0)
        return r;
    return sd_bus_message_close_container(m);
}

/* The Secret struct (session, parameters, value, content type) of the plain session. */
static int append_secret(sd_bus_message *m, const char *secret, size_t len)
{
    int r;

    if ((r = sd_bus_message_open_container(m, 'r', "oayays")) < 0 ||
        (r = sd_bus_message_append(m, "o", kr.session)) < 0 ||
        (r = sd_bus_message_append_array(m, 'y', NULL, 0)) < 0 ||
        (r = sd_bus_message_append_array(m, 'y', secret, len)) < 0 ||
        (r = sd_bus_message_append(m, "s", "text/plain")) < 0)
        return r;
    return sd_bus_message_close_container(m);
}

int keyring_store(const char *label, const KeyringAttr *attrs, size_t n, const char *secret,
                  size_t len, char **whyp)
{
    uint64_t deadline = now_us() + (uint64_t)KEYRING_CALL_TIMEOUT_MS * 1000u;
    sd_bus_message *m = NULL, *reply = NULL;
    const char *item = NULL, *prompt = NULL;
    int r;

    pthread_mutex_lock(&kr.lock);
    if ((r = ensure(deadline, whyp)) == 0 &&
        (r = new_call(&m, kr.collection, SS_COLL, "CreateItem")) >= 0 &&
        (r = append_props(m, label, attrs, n)) >= 0 && (r = append_secret(m, secret, len)) >= 0 &&
        (r = sd_bus_message_append(m, "b", 1)) >= 0 &&
        (r = call(deadline, m, &reply, "CreateItem", whyp)) >= 0 &&
        (r = sd_bus_message_read(reply, "oo", &item, &prompt)) >= 0 &&
        !streq(prompt, SS_NO_PROMPT)) {
        /* A prompt means a locked collection: a person would have to answer it. */
        if (whyp)
            *whyp = xstrdup("the Secret Service asks for a prompt to store the item (is the "
                            "default collection locked?)");
        r = -EACCES;
    }
    sd_bus_message_unref(m);
    sd_bus_message_unref(reply);
    pthread_mutex_unlock(&kr.lock);
    return r < 0 ? r : 0;
}

int keyring_delete(const KeyringAttr *attrs, size_t n, char **whyp)
{
    uint64_t deadline = now_us() + (uint64_t)KEYRING_CALL_TIMEOUT_MS * 1000u;
    char **items = NULL;
    int r;

    pthread_mutex_lock(&kr.lock);
    if ((r = ensure(deadline, whyp)) == 0 &&
        (r = search_items(deadline, attrs, n, &items, whyp)) >= 0) {
        r = items[0] ? 0 : -ENOKEY;
        for (size_t i = 0; items[i] && r >= 0; i++) {
            sd_bus_message *m = NULL, *reply = NULL;
            if ((r = new_call(&m, items[i], SS_ITEM, "Delete")) >= 0)
                r = call(deadline, m, &reply, "Item.Delete", whyp);
            sd_bus_message_unref(m);
            sd_bus_message_unref(reply);
        }
    }
    pthread_mutex_unlock(&kr.lock);
    strv_free(items);
    return r == -ENOKEY ? KEYRING_E_NOTFOUND : r < 0 ? r : 0;
}

void keyring_reset(void)
{
    pthread_mutex_lock(&kr.lock);
    drop_bus();
    free(kr.why_not);
    kr.why_not = NULL;
    kr.state = KR_UNKNOWN;
    kr.retry_at_us = 0;
    pthread_mutex_unlock(&kr.lock);
}
