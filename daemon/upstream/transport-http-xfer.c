// SPDX-License-Identifier: MIT
// transport-http-xfer: one HTTP transfer of the MCP HTTP transports (its request, and its
// response's headers, body and SSE events), which tells the layer above what it brought through
// t->hooks.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/http.h"
#include "daemon/upstream/oauth-store.h"
#include "daemon/upstream/sse.h"
#include "daemon/upstream/transport-http-xfer.h"
#include "daemon/upstream/transport.h"

/* ---- transfers ---- */

void ht_xfer_free(Xfer *x)
{
    HttpTransport *t = x->t;

    if (x->prev)
        x->prev->next = x->next;
    else
        t->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    if (x->easy) {
        http_stop(x->easy);
        curl_easy_cleanup(x->easy);
    }
    curl_slist_free_all(x->hdrs);
    curl_slist_free_all(x->mcp_hdrs);
    if (x->timer)
        event_free(x->timer);
    if (x->ev_delay)
        event_free(x->ev_delay);
    sse_parser_deinit(&x->parser);
    strbuf_deinit(&x->resp);
    strbuf_deinit(&x->www_auth);
    free(x->hdr_session);
    free(x->content_encoding);
    free(x->last_event_id);
    free(x->url);
    free(x->body);
    free(x);
}

static void arm_timer(Xfer *x)
{
    int64_t ms = x->timeout_ms;
    struct timeval tv;

    if (ms <= 0)
        return;
    if (x->cap_ms) {
        uint64_t now = now_ms();
        ms = MIN(ms, x->cap_ms > now ? (int64_t)(x->cap_ms - now) : 0);
    }
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    evtimer_add(x->timer, &tv);
}

bool ht_header_name_is(const char *line, size_t n, const char *name)
{
    size_t k = strlen(name);
    return n > k && line[k] == ':' && strncasecmp(line, name, k) == 0;
}

char *ht_header_value(const char *line, size_t n, size_t name_len)
{
    const char *v = line + name_len + 1, *end = line + n;

    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    return xstrndup(v, (size_t)(end - v));
}

static void on_headers_done(Xfer *x);

/* Status shows how messages fare: the optional GET stream's 405 is not news. */
void ht_note_status(Xfer *x)
{
    if (x->kind == XFER_POST || x->kind == XFER_LEGACY_GET)
        x->t->last_status = x->status;
}

size_t ht_on_header(char *data, size_t size, size_t nitems, void *userdata)
{
    Xfer *x = userdata;
    size_t n = size * nitems;

    x->header_bytes += n;
    if (x->header_bytes > HT_HEADERS_MAX)
        return 0; /* curl stops the transfer; the done handler names the bound */
    if (n <= 2 && (data[0] == '\r' || data[0] == '\n')) {
        on_headers_done(x);
        return n;
    }
    if (ht_header_name_is(data, n, "mcp-session-id")) {
        free(x->hdr_session);
        x->hdr_session = ht_header_value(data, n, strlen("mcp-session-id"));
    } else if (ht_header_name_is(data, n, "content-encoding")) {
        free(x->content_encoding);
        x->content_encoding = ht_header_value(data, n, strlen("content-encoding"));
    } else if (ht_header_name_is(data, n, "www-authenticate")) {
        char *v = ht_header_value(data, n, strlen("www-authenticate"));
        /* Whole challenges only, up to the bound: a cut one would parse as another. */
        if (x->www_auth.len + 2 + strlen(v) <= WWW_AUTH_MAX) {
            if (x->www_auth.len)
                strbuf_puts(&x->www_auth, ", ");
            strbuf_puts(&x->www_auth, v);
        }
        free(v);
    }
    return n;
}

static void on_headers_done(Xfer *x)
{
    char *ct = NULL;

    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
    ht_headers_apply(x, ct);
}

/* The status and content type of a response are known (ct may be NULL): decide how to read it. */
void ht_headers_apply(Xfer *x, const char *ct)
{
    HttpTransport *t = x->t;

    if (x->status < 200) {
        /* 100 Continue and friends: the real response follows. */
        strbuf_reset(&x->www_auth);
        return;
    }
    x->headers_done = true;
    ht_note_status(x);
    x->sse = x->status / 100 == 2 && ct && strncasecmp(ct, "text/event-stream", 17) == 0;
    if (x->status / 100 == 2 && x->hdr_session && x->kind == XFER_POST && !x->modern &&
        !streq(x->hdr_session, t->session_id) && !t->hooks.session(x))
        return;
    if (!x->sse)
        return;
    if (x->kind == XFER_GET) {
        /* A live server stream has no end; only its start was bounded. */
        evtimer_del(x->timer);
        x->timeout_ms = 0;
    } else {
        arm_timer(x);
    }
}

static int on_event(void *userdata, const SseEvent *ev)
{
    Xfer *x = userdata;

    x->got_event = true;
    if (x->timeout_ms > 0)
        arm_timer(x); /* activity (progress, priming) keeps a stream alive, up to its cap */
    return x->t->hooks.event(x, ev);
}

size_t ht_on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
    Xfer *x = userdata;
    size_t n = size * nmemb;

    if (!x->headers_done)
        on_headers_done(x);
    if (x->sse) {
        uint64_t dropped = x->parser.n_dropped;
        if (x->t->n_upcalls >= HT_UPCALLS_MAX && x->easy) {
            /* Backpressure: the loop delivers what is queued first (ht_on_deliver resumes). */
            x->paused = true;
            return CURL_WRITEFUNC_PAUSE;
        }
        if (sse_parser_feed(&x->parser, data, n, on_event, x) != 0)
            return 0; /* fatal for this transport: stop the transfer */
        if (x->parser.skip_line && (x->kind == XFER_GET || x->kind == XFER_LEGACY_GET)) {
            /* No message can come whole on a stream stuck in such a line: drop the stream. */
            x->line_cut = true;
            log_full(LOG_WARNING, x->t->base.server, "http",
                     "the %s stream of %s sent a line of more than %zu bytes with no newline: "
                     "the stream was dropped; report it to the server's maintainers",
                     x->kind == XFER_LEGACY_GET ? "SSE" : "GET", x->t->shown_url,
                     x->parser.max_event);
            return 0;
        }
        if (x->parser.oversized && x->req_id && (x->kind == XFER_POST || x->kind == XFER_RESUME)) {
            /* The request's stream cannot bring its answer whole: fail it now, not at timeout. */
            x->too_big = true;
            return 0;
        }
        if (x->parser.n_dropped > dropped)
            log_full(LOG_WARNING, x->t->base.server, "http",
                     "dropped %" PRIu64 " server message(s) larger than %zu bytes on the %s "
                     "stream of %s",
                     x->parser.n_dropped - dropped, x->parser.max_event,
                     x->kind == XFER_LEGACY_GET ? "SSE" : "GET", x->t->shown_url);
        return n;
    }
    if (x->resp.len + n > (x->status / 100 == 2 ? JSONRPC_MAX_LINE_DEFAULT : ERROR_BODY_MAX)) {
        if (x->status / 100 != 2)
            return n; /* a huge error page is cut, not fatal */
        x->too_big = true;
        return 0;
    }
    strbuf_append(&x->resp, data, n);
    return n;
}

static struct curl_slist *add_header(struct curl_slist *l, const char *name, const char *value)
{
    _cleanup_free_ char *h = xasprintf("%s: %s", name, value);
    return curl_slist_append(l, h);
}

/* The configured headers, minus those the transport owns and any that could split a line. */
static struct curl_slist *add_config_headers(HttpTransport *t, struct curl_slist *l)
{
    static const char *const owned[] = {"content-type",         "accept",        "mcp-session-id",
                                        "mcp-protocol-version", "last-event-id", "expect"};
    yajl_val h = t->headers;

    for (size_t i = 0; YAJL_IS_OBJECT(h) && i < h->u.object.len; i++) {
        const char *k = h->u.object.keys[i], *v = YAJL_GET_STRING(h->u.object.values[i]);
        bool skip = !v || !*v || strpbrk(k, "\r\n:") || strpbrk(v, "\r\n");
        for (size_t j = 0; !skip && j < N_ELEMENTS(owned); j++)
            skip = strcasecmp(k, owned[j]) == 0;
        if (skip) {
            /* The value is never logged: it is often a secret. */
            log_full(LOG_DEBUG, t->base.server, "http", "header \"%s\" not sent", k);
            continue;
        }
        l = add_header(l, k, v);
    }
    return l;
}

/* curl is done with the transfer: the layer above hears what it brought. */
static void on_curl_done(void *userdata, CURL *easy, CURLcode res)
{
    Xfer *x = userdata;

    (void)easy;
    x->t->hooks.done(x, res);
}

/* (Re)build the easy handle for x->url and start it. */
int ht_xfer_launch(Xfer *x)
{
    HttpTransport *t = x->t;
    bool streamable = t->mode != MODE_LEGACY;
    struct curl_slist *l = NULL;
    int r;

    if (x->easy) {
        http_stop(x->easy);
        curl_easy_cleanup(x->easy);
    }
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
    x->status = 0;
    x->headers_done = x->sse = x->headers_cut = x->line_cut = false;
    x->header_bytes = 0;
    x->errbuf[0] = '\0';
    free(x->hdr_session);
    x->hdr_session = NULL;
    free(x->content_encoding);
    x->content_encoding = NULL;
    strbuf_reset(&x->www_auth);
    strbuf_reset(&x->resp);
    sse_parser_reset(&x->parser);
    x->easy = http_easy_new(x->url);
    if (!x->easy)
        return -ENOMEM;
    switch (x->kind) {
    case XFER_POST:
        l = curl_slist_append(l, "Content-Type: application/json");
        l = curl_slist_append(l, "Accept: application/json, text/event-stream");
        l = curl_slist_append(l, "Expect:"); /* no 100-continue round trip for large bodies */
        curl_easy_setopt(x->easy, CURLOPT_POST, 1L);
        curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, x->body);
        curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
        break;
    case XFER_DELETE:
        curl_easy_setopt(x->easy, CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    default:
        l = curl_slist_append(l, "Accept: text/event-stream");
        l = curl_slist_append(l, "Cache-Control: no-cache");
        if (x->last_event_id)
            l = add_header(l, "Last-Event-ID", x->last_event_id);
    }
    x->sent_session = streamable && t->session_id && !x->foreign && !x->modern;
    if (x->sent_session)
        l = add_header(l, "MCP-Session-Id", t->session_id);
    if (streamable && t->protocol_version && !x->foreign && !x->modern)
        l = add_header(l, "MCP-Protocol-Version", t->protocol_version);
    for (struct curl_slist *h = x->mcp_hdrs; h; h = h->next)
        l = curl_slist_append(l, h->data); /* modern: the version, method and names */
    if (!x->foreign)
        l = add_config_headers(t, l);
    if (!x->foreign) /* a stored sign-in (mcpctl login), unless the config sets Authorization */
        l = oauth_store_add_bearer(l, t->url, t->headers);
    x->hdrs = l;
    curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, l);
    curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, ht_on_header);
    curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, ht_on_write);
    curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
    if (!x->timer)
        x->timer = evtimer_new(t->base.base, ht_xfer_on_timeout, x);
    arm_timer(x);
    r = http_start(t->base.base, x->easy, on_curl_done, x);
    return r;
}

Xfer *ht_xfer_new(HttpTransport *t, XferKind kind, const char *url, int64_t timeout_ms)
{
    Xfer *x = xcalloc(1, sizeof(*x));

    x->t = t;
    x->kind = kind;
    x->url = xstrdup(url);
    x->timeout_ms = timeout_ms;
    sse_parser_init(&x->parser, JSONRPC_MAX_LINE_DEFAULT);
    x->next = t->xfers;
    if (t->xfers)
        t->xfers->prev = x;
    t->xfers = x;
    return x;
}

void ht_xfer_start(Xfer *x)
{
    int r = ht_xfer_launch(x);

    if (r < 0) {
        x->t->hooks.unstarted(x, r);
        ht_xfer_free(x);
    }
}

void ht_xfer_on_timeout(evutil_socket_t fd, short what, void *arg)
{
    Xfer *x = arg;

    (void)fd, (void)what;
    x->timed_out = true;
    /* Treated as a failed transfer; the easy handle is stopped first so curl forgets it. */
    http_stop(x->easy);
    x->t->hooks.done(x, CURLE_OPERATION_TIMEDOUT);
}

void ht_xfer_unpause(Xfer *x)
{
    if (x->paused) {
        x->paused = false;
        curl_easy_pause(x->easy, CURLPAUSE_CONT);
    }
}

/* ---- what a transfer's end says ---- */

/* Whether a Location may be followed: http and https only, as the transfers themselves. */
bool ht_redirect_scheme_ok(const char *loc)
{
    if (!strstr(loc, "://"))
        return true; /* relative: curl resolves it against the request's URL */
    return strncasecmp(loc, "http://", 7) == 0 || strncasecmp(loc, "https://", 8) == 0;
}

/*
 * A redirect from https to plain http: never followed. The request (tool arguments, the
 * session) would cross the network in the clear and the answer could be anyone's.
 */
bool ht_redirect_downgrades(const Xfer *x, const char *loc)
{
    return strncasecmp(x->url, "https://", 8) == 0 && strncasecmp(loc, "http://", 7) == 0;
}

/* What failed a transfer: curl's error buffer if it said anything, else the code's text. */
const char *ht_curl_error(const Xfer *x, CURLcode res)
{
    return x->errbuf[0] ? x->errbuf : curl_easy_strerror(res);
}

/* A short text for an HTTP error: the JSON-RPC error message in the body, or its start. */
char *ht_error_text(Xfer *x)
{
    _cleanup_json_ yajl_val v = x->resp.len ? json_parse(strbuf_str(&x->resp), NULL) : NULL;
    const char *m = json_get_string(json_get_object(v, "error"), "message");
    StrBuf sb = STRBUF_INIT;

    strbuf_printf(&sb, "HTTP %ld", x->status);
    if (x->status / 100 == 3 && x->status != 304) {
        char *loc = NULL;
        curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc);
        if (!loc)
            strbuf_puts(&sb, ": a redirect without a Location header");
        else if (!ht_redirect_scheme_ok(loc))
            strbuf_printf(&sb,
                          ": a redirect to a %.*s URL, refused (only http and https are "
                          "followed)",
                          (int)MIN(strcspn(loc, ":"), (size_t)16), loc);
        else if (ht_redirect_downgrades(x, loc))
            strbuf_printf(&sb,
                          ": %s redirects from https to plain http (%.300s), refused: the "
                          "request would cross the network unencrypted; ask the server's "
                          "operator to fix the redirect, or give the https URL it should reach",
                          x->t->base.server, loc);
        else if (x->redirects >= REDIRECT_MAX)
            strbuf_printf(&sb,
                          ": more than %d redirects in a row (a redirect loop?); give "
                          "the final URL in the config",
                          REDIRECT_MAX);
        return strbuf_detach(&sb, NULL);
    }
    if (m)
        strbuf_printf(&sb, ": %.300s", m);
    else if (x->resp.len && !memchr(x->resp.data, '<', MIN(x->resp.len, 64)))
        strbuf_printf(&sb, ": %.200s", strbuf_str(&x->resp));
    return strbuf_detach(&sb, NULL);
}
