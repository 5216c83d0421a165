// SPDX-License-Identifier: MIT
// oauth-listener: the loopback listener a browser sign-in's redirect comes back to.

/*
 * Any process on the machine can connect to a loopback port, so nothing that arrives here is
 * trusted: the owner decides what a redirect is worth (its state must match), and the listener
 * bounds what a connection may cost: its bytes, its time, and how many are open at once. It
 * reads one request per connection, answers it, and closes; it never keeps a connection alive.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/upstream/oauth-listener.h"

/* The redirect is one GET with a short query; a browser's headers fit easily in this. */
#define LISTENER_MAX_HEADERS (16u * 1024u)
/*
 * A connection to the listener lives at most this long: the redirect is one request and its
 * answer, which a browser sends and reads at once. A whole-life bound, not an idle one, so a
 * client trickling bytes cannot keep it; and a timer of mcpd's own (not a bufferevent's), which
 * the daemon's loop knows of as it is set (daemon/sys/turn.c).
 */
#define LISTENER_CONN_LIFETIME_S 30
/*
 * Connections open at once. A browser opens one or two per redirect (the page, a favicon, a
 * speculative preconnect); a few tabs or retries stay well under this, and each open one costs a
 * buffer of up to LISTENER_MAX_HEADERS. Past it the oldest is closed, not the newest: a browser
 * sends its request as soon as it connects, so a process that holds connections open to block
 * the sign-in only loses its own.
 */
#define LISTENER_MAX_CONNS 16
/* Pending connections the kernel queues before mcpd accepts them. */
#define LISTENER_BACKLOG 16
/*
 * Out of fds (EMFILE, ENFILE): accepting stops this long rather than spin on a socket that stays
 * readable, as the agents' listener does; long enough for calls to end and give fds back, short
 * enough that a browser's redirect waits unnoticed.
 */
#define LISTENER_ERROR_PAUSE_MS 100

typedef struct Conn {
    OAuthListener *l;
    struct bufferevent *bev;
    struct event *ev_expire; /* LISTENER_CONN_LIFETIME_S after the accept */
    bool answering;          /* the answer is being written: the connection goes when it is out */
    struct Conn *prev, *next;
} Conn;

struct OAuthListener {
    struct event_base *base;
    struct evconnlistener *lev[2]; /* 127.0.0.1, and [::1] for a "localhost" redirect */
    struct event *ev_resume;       /* accepting again after LISTENER_ERROR_PAUSE_MS */
    unsigned long n_accept_errors;
    char *server, *path;
    char *where; /* the addresses, for messages: "127.0.0.1:PORT" */
    uint16_t port;
    OAuthRedirectFn fn; /* NULL once closed */
    void *userdata;
    Conn *conns, *last; /* oldest first */
    unsigned n_conns;
    unsigned long n_evicted;
    bool closing;               /* on the closing list: freed with its last connection */
    struct OAuthListener *next; /* among the closed ones still answering */
};

/* Closed listeners whose last answers are still going out. */
static OAuthListener *closing_listeners;

static void listener_free(OAuthListener *l)
{
    for (OAuthListener **pp = &closing_listeners; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    for (size_t i = 0; i < N_ELEMENTS(l->lev); i++)
        if (l->lev[i])
            evconnlistener_free(l->lev[i]);
    if (l->ev_resume)
        event_free(l->ev_resume);
    free(l->where);
    free(l->server);
    free(l->path);
    free(l);
}

static void conn_free(Conn *c)
{
    OAuthListener *l = c->l;

    if (c->prev)
        c->prev->next = c->next;
    else
        l->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->last = c->prev;
    l->n_conns--;
    bufferevent_free(c->bev);
    if (c->ev_expire)
        event_free(c->ev_expire);
    free(c);
    if (l->closing && !l->conns)
        listener_free(l);
}

static void answer(Conn *c, int status, const char *text)
{
    struct evbuffer *out = bufferevent_get_output(c->bev);
    const char *reason = status == 200   ? "OK"
                         : status == 404 ? "Not Found"
                         : status == 405 ? "Method Not Allowed"
                         : status == 431 ? "Request Header Fields Too Large"
                                         : "Bad Request";
    _cleanup_free_ char *body = xasprintf("<!doctype html><meta charset=utf-8><title>mcpd</title>"
                                          "<p>%s</p><p>You can close this window.</p>\n",
                                          text);

    c->answering = true;
    bufferevent_disable(c->bev, EV_READ);
    evbuffer_add_printf(out,
                        "HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\n"
                        "Cache-Control: no-store\r\nContent-Length: %zu\r\n"
                        "Connection: close\r\n\r\n%s",
                        status, reason, strlen(body), body);
}

/* The request line of a complete head: the owner's verdict on a GET of the path, else 404/405. */
static void take_request(Conn *c)
{
    OAuthListener *l = c->l;
    size_t n = 0;
    _cleanup_free_ char *line =
        evbuffer_readln(bufferevent_get_input(c->bev), &n, EVBUFFER_EOL_CRLF_STRICT);
    char *target, *query, *sp;
    const char *text = "This address only takes mcpd's sign-in redirect.";
    int status;

    if (!line || !startswith(line, "GET ") || !(sp = strchr(line + 4, ' '))) {
        answer(c, line && !startswith(line, "GET ") ? 405 : 400, text);
        return;
    }
    *sp = '\0';
    target = line + 4;
    if ((sp = strchr(target, '#')))
        *sp = '\0';
    if ((query = strchr(target, '?')))
        *query++ = '\0';
    if (!l->fn || !streq(target, l->path)) {
        answer(c, 404, text);
        return;
    }
    status = l->fn(l->userdata, query, &text);
    answer(c, status, text);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    Conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);

    if (end.pos >= 0)
        take_request(c);
    else if (evbuffer_get_length(in) > LISTENER_MAX_HEADERS)
        answer(c, 431, "The request was too large.");
}

static void on_written(struct bufferevent *bev, void *arg)
{
    Conn *c = arg;

    (void)bev;
    if (c->answering)
        conn_free(c);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev, (void)what; /* EOF or an error: the connection is over */
    conn_free(arg);
}

/* Make room for one more connection: the oldest goes, preferably one not being answered. */
static void evict_one(OAuthListener *l)
{
    Conn *victim = l->conns;

    for (Conn *c = l->conns; c; c = c->next)
        if (!c->answering) {
            victim = c;
            break;
        }
    if (l->n_evicted++ == 0)
        log_full(LOG_WARNING, l->server, "oauth",
                 "the sign-in's redirect listener on %s has %d connections open, its "
                 "bound: closing the oldest (a process on this machine is holding connections "
                 "open; the sign-in goes on)",
                 l->where, LISTENER_MAX_CONNS);
    conn_free(victim);
}

static void on_expire(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    conn_free(arg);
}

static void on_accept(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa, int len,
                      void *arg)
{
    OAuthListener *l = arg;
    struct timeval tv = {LISTENER_CONN_LIFETIME_S, 0};
    Conn *c;

    (void)lev, (void)sa, (void)len;
    if (l->n_conns >= LISTENER_MAX_CONNS)
        evict_one(l);
    c = xcalloc(1, sizeof(*c));
    c->l = l;
    c->bev = bufferevent_socket_new(l->base, fd, BEV_OPT_CLOSE_ON_FREE); /* takes fd */
    if (!c->bev) {
        evutil_closesocket(fd);
        free(c);
        return;
    }
    c->prev = l->last;
    if (l->last)
        l->last->next = c;
    else
        l->conns = c;
    l->last = c;
    l->n_conns++;
    bufferevent_setcb(c->bev, on_read, on_written, on_event, c);
    c->ev_expire = evtimer_new(l->base, on_expire, c);
    if (c->ev_expire)
        evtimer_add(c->ev_expire, &tv);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
    OAuthListener *l = arg;

    (void)fd, (void)what;
    for (size_t i = 0; i < N_ELEMENTS(l->lev); i++)
        if (l->lev[i])
            evconnlistener_enable(l->lev[i]);
}

/* accept failed for a reason other than a retry (libevent handles EAGAIN, EINTR, ECONNABORTED). */
static void on_accept_error(struct evconnlistener *lev, void *arg)
{
    OAuthListener *l = arg;
    int err = EVUTIL_SOCKET_ERROR();
    struct timeval tv = {0, LISTENER_ERROR_PAUSE_MS * 1000};

    if (l->n_accept_errors++ == 0)
        log_full(LOG_WARNING, l->server, "oauth",
                 "the sign-in's redirect listener on %s cannot accept: %s; it pauses "
                 "%d ms each time (if out of file descriptors: raise LimitNOFILE or end idle "
                 "agents)",
                 l->where, strerror(err), LISTENER_ERROR_PAUSE_MS);
    evconnlistener_disable(lev);
    evtimer_add(l->ev_resume, &tv);
}

/* Listen on one loopback address; 0 or -errno. */
static int listen_on(OAuthListener *l, size_t i, struct sockaddr *sa, socklen_t len)
{
    l->lev[i] = evconnlistener_new_bind(
        l->base, on_accept, l, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
        LISTENER_BACKLOG, sa, (int)len);
    if (!l->lev[i])
        return -errno;
    evconnlistener_set_error_cb(l->lev[i], on_accept_error);
    return 0;
}

/*
 * "localhost" is ::1 as well as 127.0.0.1 (RFC 6761), and browsers try ::1 first: whoever holds
 * [::1]:port would get the redirect, code and state. So the port is taken there too; held by
 * someone else, the sign-in does not begin. A machine without IPv6 on loopback has no ::1 that
 * anyone could hold.
 */
static int listen_v6(OAuthListener *l, char **whyp)
{
    struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6, .sin6_port = htons(l->port)};
    int r;

    sa6.sin6_addr = in6addr_loopback;
    r = listen_on(l, 1, (struct sockaddr *)&sa6, sizeof(sa6));
    if (r == -EADDRNOTAVAIL || r == -EAFNOSUPPORT) {
        log_full(LOG_INFO, l->server, "oauth",
                 "no IPv6 loopback here: the redirect listener for localhost is on "
                 "127.0.0.1:%u only",
                 l->port);
        return 0;
    }
    if (r < 0)
        *whyp = xasprintf("cannot listen on [::1]:%u for the redirect to localhost: %s; %s",
                          l->port, strerror(-r),
                          r == -EADDRINUSE
                              ? "another program holds that port on ::1, where browsers send "
                                "\"localhost\" first, so it would get the sign-in's code; stop "
                                "it, or choose another port in \"oauth.redirectUri\""
                              : "choose another port in \"oauth.redirectUri\"");
    return r;
}

OAuthListener *oauth_listener_new(struct event_base *base, const char *server, uint16_t port,
                                  bool localhost, const char *path, OAuthRedirectFn fn,
                                  void *userdata, uint16_t *portp, char **whyp)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    socklen_t len = sizeof(sa);
    OAuthListener *l;
    int r;

    /* Loopback only: the code must never be reachable from another machine. */
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    l = xcalloc(1, sizeof(*l));
    l->base = base;
    l->server = xstrdup(server);
    r = listen_on(l, 0, (struct sockaddr *)&sa, len);
    if (r < 0 || getsockname(evconnlistener_get_fd(l->lev[0]), (struct sockaddr *)&sa, &len) < 0) {
        *whyp = xasprintf("cannot listen on 127.0.0.1:%u for the redirect: %s", port,
                          strerror(r < 0 ? -r : errno));
        listener_free(l);
        return NULL;
    }
    l->port = ntohs(sa.sin_port);
    if (localhost && listen_v6(l, whyp) < 0) {
        listener_free(l);
        return NULL;
    }
    l->where = l->lev[1] ? xasprintf("127.0.0.1:%u and [::1]:%u", l->port, l->port)
                         : xasprintf("127.0.0.1:%u", l->port);
    l->ev_resume = evtimer_new(base, on_resume, l);
    l->path = xstrdup(path);
    l->fn = fn;
    l->userdata = userdata;
    *portp = l->port;
    return l;
}

OAuthListener *oauth_listener_close(OAuthListener *l)
{
    if (!l)
        return NULL;
    l->fn = NULL;
    for (size_t i = 0; i < N_ELEMENTS(l->lev); i++) {
        if (l->lev[i])
            evconnlistener_free(l->lev[i]);
        l->lev[i] = NULL;
    }
    /* Idle connections go now; answers being written finish first. */
    for (Conn *c = l->conns, *next; c; c = next) {
        next = c->next;
        if (!c->answering)
            conn_free(c);
    }
    if (!l->conns) {
        listener_free(l);
        return NULL;
    }
    l->closing = true;
    l->next = closing_listeners;
    closing_listeners = l;
    return NULL;
}

void oauth_listener_shutdown(void)
{
    while (closing_listeners)
        conn_free(
            closing_listeners->conns); /* a closing listener has one at least; the last frees it */
}
