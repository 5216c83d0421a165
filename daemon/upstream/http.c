// SPDX-License-Identifier: MIT
// http: the daemon's one libcurl multi handle, driven by the libevent loop (sockets and timer).

#include <errno.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/upstream/http.h"

/* A connection that cannot be made in this time will not be made: fail the request early. */
#define HTTP_CONNECT_TIMEOUT_MS 15000

typedef struct HttpXfer {
    HttpDoneFn done;
    void *userdata;
} HttpXfer;

/* One socket curl watches, with its event. */
typedef struct HttpSock {
    struct event *ev;
    curl_socket_t fd;
} HttpSock;

static struct {
    CURLM *multi;
    struct event_base *base;
    struct event *timer;
    unsigned n_running;
    bool global_init;
} http;

static void check_done(void)
{
    CURLMsg *msg;
    int left;

    while ((msg = curl_multi_info_read(http.multi, &left))) {
        HttpXfer *x = NULL;
        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        if (x && x->done)
            x->done(x->userdata, msg->easy_handle, msg->data.result);
    }
}

static void on_socket_event(evutil_socket_t fd, short what, void *arg)
{
    int running, flags = 0;

    (void)arg;
    if (what & EV_READ)
        flags |= CURL_CSELECT_IN;
    if (what & EV_WRITE)
        flags |= CURL_CSELECT_OUT;
    curl_multi_socket_action(http.multi, fd, flags, &running);
    check_done();
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    int running;

    (void)fd, (void)what, (void)arg;
    curl_multi_socket_action(http.multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done();
}

static int on_curl_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    HttpSock *hs = socketp;
    short kind = EV_PERSIST;

    (void)easy, (void)userp;
    if (what == CURL_POLL_REMOVE) {
        if (hs) {
            event_free(hs->ev);
            free(hs);
            curl_multi_assign(http.multi, s, NULL);
        }
        return 0;
    }
    if (what & CURL_POLL_IN)
        kind |= EV_READ;
    if (what & CURL_POLL_OUT)
        kind |= EV_WRITE;
    if (!hs) {
        hs = xcalloc(1, sizeof(*hs));
        hs->fd = s;
        curl_multi_assign(http.multi, s, hs);
    } else {
        event_free(hs->ev);
    }
    hs->ev = event_new(http.base, s, kind, on_socket_event, NULL);
    event_add(hs->ev, NULL);
    return 0;
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
    struct timeval tv;

    (void)multi, (void)userp;
    if (timeout_ms < 0) {
        evtimer_del(http.timer);
        return 0;
    }
    /* 0 means "at once": from the loop, never from inside curl. */
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    evtimer_add(http.timer, &tv);
    return 0;
}

static int http_init(struct event_base *base)
{
    if (http.multi)
        return http.base == base ? 0 : -EINVAL;
    if (!http.global_init) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            return -EIO;
        http.global_init = true;
    }
    http.multi = curl_multi_init();
    if (!http.multi)
        return -ENOMEM;
    http.base = base;
    http.timer = evtimer_new(base, on_timer, NULL);
    curl_multi_setopt(http.multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
    curl_multi_setopt(http.multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
    /* HTTP/2 streams share one connection per origin when the server offers it. */
    curl_multi_setopt(http.multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    return 0;
}

CURL *http_easy_new(const char *url)
{
    CURL *e = curl_easy_init();

    if (!e)
        return NULL;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)HTTP_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    /* HTTP/2 over TLS when offered, HTTP/1.1 otherwise (curl's default, said out loud). */
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    /* Redirects are followed by the transport, which decides what a new origin may see. */
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "mcpd/" MCPD_VERSION);
    /* Proxies: curl reads http_proxy, https_proxy and no_proxy from the environment. */
    return e;
}

int http_start(struct event_base *base, CURL *easy, HttpDoneFn done, void *userdata)
{
    HttpXfer *x;
    int r = http_init(base);

    if (r < 0)
        return r;
    x = xcalloc(1, sizeof(*x));
    x->done = done;
    x->userdata = userdata;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, (char *)x);
    if (curl_multi_add_handle(http.multi, easy) != CURLM_OK) {
        curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
        free(x);
        return -EIO;
    }
    http.n_running++;
    return 0;
}

void http_stop(CURL *easy)
{
    HttpXfer *x = NULL;

    if (!easy || !http.multi)
        return;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    if (!x)
        return;
    curl_multi_remove_handle(http.multi, easy);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
    free(x);
    http.n_running--;
}

unsigned http_n_running(void)
{
    return http.n_running;
}

void http_shutdown(void)
{
    if (http.multi) {
        if (http.n_running)
            log_warning("%u HTTP transfers still running at exit", http.n_running);
        curl_multi_cleanup(http.multi);
        event_free(http.timer);
        http.multi = NULL;
        http.timer = NULL;
        http.base = NULL;
    }
    if (http.global_init) {
        curl_global_cleanup();
        http.global_init = false;
    }
}

/* ---- URLs ---- */

static CURLU *url_parse(const char *url)
{
    CURLU *u = curl_url();

    if (u && curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
        curl_url_cleanup(u);
        return NULL;
    }
    return u;
}

static char *url_text(CURLU *u)
{
    char *s = NULL, *copy;

    if (curl_url_get(u, CURLUPART_URL, &s, 0) != CURLUE_OK)
        return NULL;
    copy = xstrdup(s);
    curl_free(s);
    return copy;
}

char *http_url_redact(const char *url)
{
    CURLU *u = url_parse(url);
    char *r;

    if (!u)
        return NULL;
    curl_url_set(u, CURLUPART_USER, NULL, 0);
    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
    r = url_text(u);
    curl_url_cleanup(u);
    return r;
}

char *http_url_resolve(const char *base, const char *ref)
{
    CURLU *u = url_parse(base);
    char *r = NULL;

    if (!u)
        return NULL;
    /* Setting a URL on a handle that has one resolves it as a relative reference. */
    if (curl_url_set(u, CURLUPART_URL, ref, 0) == CURLUE_OK)
        r = url_text(u);
    curl_url_cleanup(u);
    return r;
}

static bool part_equal(CURLU *a, CURLU *b, CURLUPart part, unsigned flags, bool nocase)
{
    char *x = NULL, *y = NULL;
    bool eq;

    curl_url_get(a, part, &x, flags);
    curl_url_get(b, part, &y, flags);
    eq = x && y && (nocase ? strcasecmp(x, y) == 0 : strcmp(x, y) == 0);
    curl_free(x);
    curl_free(y);
    return eq;
}

bool http_same_origin(const char *a, const char *b)
{
    CURLU *ua = url_parse(a), *ub = url_parse(b);
    bool same = ua && ub && part_equal(ua, ub, CURLUPART_SCHEME, 0, true) &&
                part_equal(ua, ub, CURLUPART_HOST, 0, true) &&
                part_equal(ua, ub, CURLUPART_PORT, CURLU_DEFAULT_PORT, false);

    curl_url_cleanup(ua);
    curl_url_cleanup(ub);
    return same;
}
