// SPDX-License-Identifier: MIT
// transport-http: MCP over Streamable HTTP (and the auto probe that falls back to legacy HTTP+SSE,
// transport-sse.c), on libcurl: the top of the HTTP transport, told by one transfer
// (transport-http-xfer.c, below it) what it brought through t->hooks.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/idmap.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/http.h"
#include "daemon/upstream/oauth-issuer.h"
#include "daemon/upstream/oauth-store.h"
#include "daemon/upstream/sse.h"
#include "daemon/upstream/transport-http-incoming.h"
#include "daemon/upstream/transport-http-modern.h"
#include "daemon/upstream/transport-http-upcall.h"
#include "daemon/upstream/transport-http-xfer.h"
#include "daemon/upstream/transport-sse.h"
#include "daemon/upstream/transport-http.h"
#include "daemon/upstream/transport.h"

static const TransportOps http_ops_legacy;
static unsigned n_live;
static HttpTransport *all_http;

static const TransportOps http_ops_auto, http_ops_streamable;

unsigned transport_http_live_count(void)
{
    return n_live;
}

/* ---- sending ---- */

typedef struct OutInfo {
    uint64_t id; /* a request's integer id, else 0 */
    bool request;
    const char *method;
    uint64_t cancel_id; /* notifications/cancelled: the request given up */
    bool modern;        /* _meta names a protocol version: a 2026-07-28 request */
    yajl_val root;
} OutInfo;

static void out_info(OutInfo *o, const char *body)
{
    yajl_val id, rid;

    memset(o, 0, sizeof(*o));
    o->root = json_parse(body, NULL);
    o->method = json_get_string(o->root, "method");
    id = json_get(o->root, "id");
    o->request = o->method && id;
    if (o->request && YAJL_IS_INTEGER(id) && id->u.number.i > 0)
        o->id = (uint64_t)id->u.number.i;
    if (streq(o->method, "notifications/cancelled") &&
        YAJL_IS_INTEGER(rid = json_get(json_get_object(o->root, "params"), "requestId")) &&
        rid->u.number.i > 0)
        o->cancel_id = (uint64_t)rid->u.number.i;
    o->modern = htm_version(o->root) != NULL;
}

/*
 * The longest a tasks/result POST is held open: it waits for the task's end, which may be far
 * past any timeout, up to the task's ttl (at most a day, TASKS_TTL_MAX_MS in daemon/core/tasks.h,
 * whose deadline upstream ends it sooner: its cancel drops the POST).
 */
#define HTTP_TASK_RESULT_MAX_MS (24 * 3600 * 1000LL)

/* The request gave up upstream: its open stream, or its POST still waiting, is not wanted. */
static void drop_streams_for(HttpTransport *t, uint64_t id)
{
    Xfer *x = t->xfers, *next;

    idmap_remove(&t->outstanding, id);
    for (; x; x = next) {
        next = x->next;
        if (x->req_id == id &&
            (x->kind == XFER_RESUME ||
             (x->kind == XFER_POST && (x->sse || x->modern || !x->headers_done))))
            ht_xfer_free(x);
    }
}

static void post_message(HttpTransport *t, char *body, size_t len)
{
    OutInfo o;
    const char *url = t->mode == MODE_LEGACY ? t->post_url : t->url;
    int64_t bound = t->timeout_ms;
    Xfer *x;

    out_info(&o, body);
    if (o.cancel_id && t->modern) {
        /* 2026-07-28: closing the response stream is the cancellation. */
        drop_streams_for(t, o.cancel_id);
        json_free(o.root);
        free(body);
        return;
    }
    if (streq(o.method, "tools/call") && t->call_timeout_ms > bound)
        bound = t->call_timeout_ms;
    if (streq(o.method, "tasks/result"))
        bound = HTTP_TASK_RESULT_MAX_MS;
    if (streq(o.method, "subscriptions/listen"))
        bound = 0; /* a stream that stays open for as long as the session: no inactivity bound */
    x = ht_xfer_new(t, XFER_POST, url, bound);
    x->body = body;
    x->body_len = len;
    x->is_request = o.request;
    x->req_id = o.id;
    x->is_initialized_note = streq(o.method, "notifications/initialized");
    if (streq(o.method, "tools/call") && t->max_call_ms > 0)
        x->cap_ms = now_ms() + (uint64_t)MAX(t->max_call_ms, bound);
    if (o.id) {
        idmap_put(&t->outstanding, o.id, t);
        if (streq(o.method, "initialize")) {
            t->init_id = o.id;
            t->have_init_id = true;
        }
    }
    if (o.cancel_id)
        drop_streams_for(t, o.cancel_id);
    if (o.modern) {
        x->modern = true;
        x->mcp_hdrs = htm_request_headers(t, o.root);
        if (streq(o.method, "tools/list") && o.id)
            idmap_put(&t->list_ids, o.id,
                      (void *)(uintptr_t)(json_get(json_get(o.root, "params"), "cursor") ? 2 : 1));
    }
    json_free(o.root);
    ht_xfer_start(x);
}

static void hold_message(HttpTransport *t, char *body)
{
    t->held = xrealloc(t->held, (t->n_held + 1) * sizeof(*t->held));
    t->held[t->n_held++] = body;
}

static void flush_held(HttpTransport *t)
{
    char **held = t->held;
    size_t n = t->n_held;

    t->held = NULL;
    t->n_held = 0;
    for (size_t i = 0; i < n; i++)
        post_message(t, held[i], strlen(held[i]));
    free(held);
}

static int http_send(Transport *tr, const char *line, size_t len)
{
    HttpTransport *t = (HttpTransport *)tr;
    char *body;

    if (t->closing || t->reported)
        return -ENOTCONN;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    body = xstrndup(line, len);
    /* Until the probe answers, or the legacy endpoint is known, messages wait in order. */
    if ((t->mode == MODE_PROBE && t->xfers) || (t->mode == MODE_LEGACY && !t->post_url) ||
        t->n_held) {
        hold_message(t, body);
        return 0;
    }
    post_message(t, body, len);
    return 0;
}

/* ---- streams ---- */

static Xfer *get_new(HttpTransport *t, XferKind kind, const char *last_id, uint64_t req_id,
                     unsigned resumes)
{
    Xfer *x =
        ht_xfer_new(t, kind, t->url, kind == XFER_RESUME ? t->call_timeout_ms : t->timeout_ms);

    if (kind == XFER_RESUME && t->timeout_ms > x->timeout_ms)
        x->timeout_ms = t->timeout_ms;
    x->last_event_id = last_id ? xstrdup(last_id) : NULL;
    x->req_id = req_id;
    x->resumes = resumes;
    return x;
}

/* The loop-side hook: flush held messages (legacy endpoint known) or (re)open the GET stream. */
static void on_get_timer(evutil_socket_t fd, short what, void *arg)
{
    HttpTransport *t = arg;

    (void)fd, (void)what;
    if (t->closing || t->reported)
        return;
    if (t->mode == MODE_LEGACY) {
        if (t->post_url && t->n_held)
            flush_held(t);
        return;
    }
    if (t->get_wanted && !t->get_unsupported) {
        bool open = false;
        for (Xfer *x = t->xfers; x; x = x->next)
            open = open || x->kind == XFER_GET;
        if (!open)
            ht_xfer_start(get_new(t, XFER_GET, t->get_last_id, 0, 0));
    }
}

static void on_resume_timer(evutil_socket_t fd, short what, void *arg)
{
    Xfer *x = arg;

    (void)fd, (void)what;
    if (x->t->reported || !idmap_get(&x->t->outstanding, x->req_id)) {
        ht_xfer_free(x);
        return;
    }
    /* With "resuming in" above, the log shows when the wait was armed and when it ended. */
    log_full(LOG_DEBUG, x->t->base.server, "http", "resuming the dropped stream now");
    ht_xfer_start(x);
}

/*
 * 2026-07-28 has no resumption: a stream that ends before its response lost the request, and
 * upstream.c sends it again under a new id when the error says so.
 */
static void stream_lost(Xfer *x)
{
    HttpTransport *t = x->t;
    StrBuf line = STRBUF_INIT;

    if (!x->req_id || !idmap_remove(&t->outstanding, x->req_id))
        return;
    strbuf_printf(&line,
                  "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"error\":{\"code\":%d,\"message\":"
                  "\"the server closed the response stream before answering\",\"data\":{"
                  "\"" MCPD_DATA_STREAM_LOST "\":true}}}",
                  x->req_id, MCP_ERROR_CONNECTION_CLOSED);
    ht_upcall(t, UP_MESSAGE, line.data, line.len);
    strbuf_deinit(&line);
}

/* A stream ended before its response: wait `retry` and GET with Last-Event-ID (2025-11-25). */
static void schedule_resume(Xfer *x)
{
    HttpTransport *t = x->t;
    int64_t ms = x->parser.retry_ms >= 0 ? MAX(x->parser.retry_ms, RETRY_MIN_MS) : RETRY_DEFAULT_MS;
    Xfer *r;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    if (x->modern)
        return stream_lost(x);
    if (!x->parser.id.len || x->resumes >= RESUME_MAX) {
        ht_synth_error(t, x->req_id, "%s closed the response stream before answering%s%s",
                       t->shown_url,
                       x->parser.id.len ? " (gave up resuming it)" : " (and it cannot be resumed)",
                       x->got_event || x->kind != XFER_POST
                           ? ""
                           : ": it sent no SSE event at all (a body labelled "
                             "text/event-stream that is not one?); report this to the "
                             "server's maintainers");
        return;
    }
    /* A transfer from now on, so closing the transport also cancels the wait. */
    r = get_new(t, XFER_RESUME, strbuf_str(&x->parser.id), x->req_id, x->resumes + 1);
    r->ev_delay = evtimer_new(t->base.base, on_resume_timer, r);
    evtimer_add(r->ev_delay, &tv);
    log_full(LOG_DEBUG, t->base.server, "http", "stream dropped: resuming in %" PRId64 " ms", ms);
}

/* The standalone GET ended: reopen it after the server's retry (or a growing default). */
static void schedule_get(HttpTransport *t, Xfer *x)
{
    int64_t ms;
    struct timeval tv;

    if (x->parser.id.len) {
        free(t->get_last_id);
        t->get_last_id = xstrdup(strbuf_str(&x->parser.id));
    }
    if (x->parser.retry_ms >= 0)
        ms = MAX(x->parser.retry_ms, RETRY_MIN_MS);
    else if (x->got_event)
        ms = RETRY_DEFAULT_MS;
    else
        ms = t->get_retry_ms =
            MIN(t->get_retry_ms ? t->get_retry_ms * 3 / 2 : RETRY_DEFAULT_MS, RETRY_MAX_MS);
    if (x->got_event)
        t->get_retry_ms = 0;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    evtimer_add(t->ev_get, &tv);
}

/* ---- what a transfer tells ---- */

/* An SSE event of one of t's transfers (t->hooks.event): the legacy endpoint, or messages. */
static int xfer_event(Xfer *x, const SseEvent *ev)
{
    if (x->kind == XFER_LEGACY_GET && streq(ev->event, "endpoint"))
        return ht_legacy_endpoint(x, ev);
    if (!streq(ev->event, "message") || ev->data_len == 0)
        return 0; /* priming events and unknown types carry no message */
    ht_take_messages(x->t, ev->data, ev->data_len);
    return 0;
}

/*
 * A new Mcp-Session-Id: kept if it can go back in a header as it came (visible ASCII, the spec
 * says, and at most SESSION_ID_MAX bytes). Any other is the server's bug, and a session that
 * cannot be continued: the transport is closed saying so (sending no id would only earn a 400
 * that hides why, and a CR or LF in it would split the next request's headers).
 */
static bool xfer_session(Xfer *x)
{
    HttpTransport *t = x->t;
    size_t n = strlen(x->hdr_session);
    const char *bad = n == 0 ? "is empty" : NULL;

    for (const char *p = x->hdr_session; !bad && *p; p++)
        if (*p < 0x21 || *p > 0x7e)
            bad = "holds control characters, spaces or non-ASCII bytes (visible ASCII only)";
    if (!bad && n > SESSION_ID_MAX)
        bad = "is longer than mcpd's bound of 4096 bytes";
    _Static_assert(SESSION_ID_MAX == 4096, "the message above names the bound");
    if (!bad) {
        free(t->session_id);
        t->session_id = xstrdup(x->hdr_session);
        return true;
    }
    ht_report_closed(t,
                     "%s sent an Mcp-Session-Id header that %s (%zu bytes): it cannot be sent "
                     "back, so the session cannot go on; report this to the server's maintainers",
                     t->shown_url, bad, n);
    return false;
}

/* A transfer could not be started (t->hooks.unstarted): its request fails. */
static void xfer_unstarted(Xfer *x, int r)
{
    ht_synth_error(x->t, x->req_id, "cannot start the HTTP request: %s", strerror(-r));
}

/* ---- completion ---- */

static bool follow_redirect(Xfer *x)
{
    HttpTransport *t = x->t;
    char *loc = NULL;

    if (x->status / 100 != 3 || x->status == 304 || x->kind == XFER_DELETE)
        return false;
    curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc);
    if (!loc || x->redirects >= REDIRECT_MAX || !ht_redirect_scheme_ok(loc) ||
        ht_redirect_downgrades(x, loc))
        return false; /* ht_error_text() says which */
    x->redirects++;
    free(x->url);
    x->url = xstrdup(loc);
    /* Headers (credentials, session) never go to another origin, and it stays that way. */
    if (!http_same_origin(x->url, t->url)) {
        if (!x->foreign)
            log_full(LOG_NOTICE, t->base.server, "http",
                     "redirected to another origin: following without the configured headers");
        x->foreign = true;
    }
    ht_xfer_start(x);
    return true;
}

static bool session_expired(Xfer *x)
{
    if (!x->sent_session)
        return false;
    if (x->status == 404)
        return true;
    /* The TS SDK answers an unknown session with 400 "No valid session ID provided". */
    return x->status == 400 && strcasestr(strbuf_str(&x->resp), "session") != NULL;
}

/* A 2xx answer past the message bound (ht_on_write stopped it): its request fails, naming why. */
static void too_big_error(Xfer *x)
{
    ht_synth_error(x->t, x->req_id,
                   "the %s from %s is larger than %zu bytes, mcpd's bound on one message: it was "
                   "dropped (ask for less, for example a smaller page or range, or report it to "
                   "the server's maintainers)",
                   x->sse ? "SSE event answering the request" : "HTTP response body",
                   x->t->shown_url,
                   x->sse ? x->parser.max_event : (size_t)JSONRPC_MAX_LINE_DEFAULT);
}

/*
 * Whether a request's answer could still come on the standalone GET stream: one is open or about
 * to be. The spec wants a request answered on its own POST; a 202 for one is the server's bug,
 * waited out only while a stream exists that could carry the answer.
 */
static bool get_stream_may_answer(HttpTransport *t)
{
    if (t->get_unsupported)
        return false;
    for (Xfer *x = t->xfers; x; x = x->next)
        if (x->kind == XFER_GET)
            return true;
    return t->get_wanted && evtimer_pending(t->ev_get, NULL);
}

static void post_done(Xfer *x, CURLcode res)
{
    HttpTransport *t = x->t;
    _cleanup_free_ char *why = NULL;

    if (res != CURLE_OK && (!x->headers_done || x->headers_cut)) {
        if (x->timed_out)
            why = xasprintf("no %s in %" PRId64 " ms; if the server is slow rather than stuck, "
                            "raise its callTimeout (or timeout) in the config",
                            x->headers_cut ? "end of the response headers" : "response",
                            x->timeout_ms);
        else if (x->header_bytes > HT_HEADERS_MAX)
            why = xasprintf("its response headers passed %u bytes, mcpd's bound (real servers "
                            "send a few KB); report this to the server's maintainers",
                            HT_HEADERS_MAX);
        else if (x->headers_cut && res == CURLE_OUT_OF_MEMORY && !x->errbuf[0])
            /* What curl says, with no word of its own, of a header line past its bound. */
            why = xasprintf("one of its response header lines passed %d bytes, curl's bound "
                            "(CURL_MAX_HTTP_HEADER); report this to the server's maintainers",
                            CURL_MAX_HTTP_HEADER);
        else if (x->headers_cut)
            why = xasprintf("its response headers could not be read (%s)", ht_curl_error(x, res));
        else
            why = xstrdup(ht_curl_error(x, res));
        if (t->mode == MODE_PROBE)
            t->mode = MODE_STREAMABLE; /* nothing answered: nothing to fall back on */
        ht_synth_error(t, x->req_id, "HTTP request to %s failed: %s", t->shown_url, why);
        return;
    }
    if (x->modern && x->status / 100 == 2)
        t->modern = true;
    /* A 401, and a 403 insufficient_scope (step-up, below), are sign-in matters in both eras. */
    if (x->modern && x->status / 100 != 2 && x->status != 401 &&
        !(x->status == 403 && strcasestr(strbuf_str(&x->www_auth), "insufficient_scope"))) {
        /*
         * A 4xx with a JSON-RPC error is the answer (-32022 with the versions, -32601, ...);
         * anything else is an error too, and upstream.c reads it as "not modern". Either way
         * the auto probe is not decided by it: the initialize that may follow decides.
         */
        _cleanup_free_ char *line = htm_error_line(x);
        _cleanup_free_ char *e = line ? NULL : ht_error_text(x);
        if (line && idmap_remove(&t->outstanding, x->req_id))
            ht_upcall(t, UP_MESSAGE, line, strlen(line));
        else if (!line)
            ht_synth_error(t, x->req_id, "%s", e);
        return;
    }
    if (t->mode == MODE_PROBE) {
        if (x->status == 400 || x->status == 404 || x->status == 405) {
            /* The backwards-compatibility probe: an old server does not take the POST. */
            free(t->probe_status);
            t->probe_status = xasprintf("HTTP %ld", x->status);
            hold_message(t, x->body);
            x->body = NULL;
            idmap_remove(&t->outstanding, x->req_id);
            log_full(LOG_INFO, t->base.server, "http",
                     "POST initialize got HTTP %ld: trying the legacy SSE transport", x->status);
            t->base.ops = &http_ops_legacy;
            ht_start_legacy(t);
            return;
        }
        t->mode = MODE_STREAMABLE;
        t->base.ops = &http_ops_streamable;
    }
    if (x->status == 401)
        return ht_auth_needed(t, x);
    if (session_expired(x)) {
        ht_report_closed(t,
                         "session expired (HTTP %ld for a request with the session id): "
                         "starting a new session",
                         x->status);
        return;
    }
    if (x->status == 403 && strcasestr(strbuf_str(&x->www_auth), "insufficient_scope")) {
        /* Step-up: the call fails with the way out; the challenge's scope goes to mcpd/login. */
        _cleanup_free_ char *clean = oauth_text_shown(x->www_auth.data, x->www_auth.len);
        ht_upcall(t, UP_AUTH, clean, strlen(clean));
        ht_synth_error(t, x->req_id,
                       "HTTP 403 insufficient_scope: the server wants more scope: run: "
                       "mcpctl login %s",
                       t->base.server);
        return;
    }
    if (x->status / 100 != 2) {
        _cleanup_free_ char *e = ht_error_text(x);
        if (!x->is_request)
            log_full(LOG_WARNING, t->base.server, "http", "POST of a message failed: %s", e);
        ht_synth_error(t, x->req_id, "%s", e);
        return;
    }
    if (x->too_big)
        return too_big_error(x);
    if (res != CURLE_OK) {
        why = xasprintf("%s", x->timed_out ? "timed out" : ht_curl_error(x, res));
        if ((x->sse || x->modern) && !x->timed_out)
            return schedule_resume(x);
        ht_synth_error(t, x->req_id, "HTTP response from %s %s (body incomplete)", t->shown_url,
                       why);
        return;
    }
    if (t->mode == MODE_LEGACY)
        return; /* the answer comes on the SSE stream */
    if (x->sse) {
        if (x->req_id && idmap_get(&t->outstanding, x->req_id))
            schedule_resume(x);
    } else if (x->is_request && x->resp.len) {
        /* Only a request's body is an answer; some servers put {} on notifications too. */
        ht_take_messages(t, strbuf_str(&x->resp), x->resp.len);
    }
    if (x->req_id && !x->sse && idmap_get(&t->outstanding, x->req_id) && x->status == 202 &&
        !get_stream_may_answer(t))
        ht_synth_error(t, x->req_id,
                       "HTTP 202 Accepted for a request, and no GET stream is open that could "
                       "carry its answer: %s must answer a request with JSON or an SSE stream; "
                       "report this to the server's maintainers",
                       t->shown_url);
    if (x->req_id && !x->sse && idmap_get(&t->outstanding, x->req_id) && x->status != 202) {
        char *ct = NULL;
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
        if (x->content_encoding && *x->content_encoding)
            /* mcpd asks for no encoding, so it decodes none: the body is the server's bug. */
            ht_synth_error(t, x->req_id,
                           "HTTP %ld with a body in Content-Encoding: %.100s, which mcpd did not "
                           "ask for and does not decode: %s must answer plain JSON or SSE; "
                           "report this to the server's maintainers",
                           x->status, x->content_encoding, t->shown_url);
        else /* A web page here usually means the URL is the site, not its MCP endpoint. */
            ht_synth_error(t, x->req_id,
                           "HTTP %ld (Content-Type: %.100s) without a JSON-RPC response to the "
                           "request: is %s the server's MCP endpoint?",
                           x->status, ct ? ct : "none", t->shown_url);
    }
    if (x->is_initialized_note) {
        t->get_wanted = true;
        event_active(t->ev_get, EV_TIMEOUT, 0);
    }
}

static void get_done(Xfer *x, CURLcode res)
{
    HttpTransport *t = x->t;

    if (x->headers_done && x->status / 100 != 2) {
        /* 405 is the specified "no stream here"; servers send 400 and 404 too. */
        log_full(LOG_DEBUG, t->base.server, "http", "no standalone GET stream (HTTP %ld)",
                 x->status);
        if (session_expired(x))
            ht_report_closed(t,
                             "session expired (HTTP %ld on the GET stream): starting a new "
                             "session",
                             x->status);
        t->get_unsupported = true;
        return;
    }
    if (res != CURLE_OK && !x->headers_done)
        log_full(LOG_DEBUG, t->base.server, "http", "GET stream failed: %s", ht_curl_error(x, res));
    if (!x->sse && x->headers_done) {
        t->get_unsupported = true; /* answered, but not with a stream */
        return;
    }
    schedule_get(t, x);
}

static void resume_done(Xfer *x, CURLcode res)
{
    HttpTransport *t = x->t;

    if (!idmap_get(&t->outstanding, x->req_id))
        return;
    if (x->too_big)
        return too_big_error(x);
    if (x->headers_done && x->status / 100 != 2) {
        ht_synth_error(t, x->req_id, "the response stream dropped and resuming it failed: HTTP %ld",
                       x->status);
        return;
    }
    if (res != CURLE_OK && !x->headers_done) {
        ht_synth_error(t, x->req_id, "the response stream dropped and resuming it failed: %s",
                       x->timed_out ? "no response in time" : ht_curl_error(x, res));
        return;
    }
    if (x->timed_out) {
        ht_synth_error(t, x->req_id, "no response in time on the resumed stream");
        return;
    }
    schedule_resume(x);
}

static void http_maybe_free(HttpTransport *t);

/* A transfer finished, failed or timed out (t->hooks.done): what it means for the transport. */
static void xfer_done(Xfer *x, CURLcode res)
{
    HttpTransport *t = x->t;

    evtimer_del(x->timer);
    if (!x->headers_done && x->status == 0)
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->status >= 200 && !x->headers_done) {
        /* A status line, and no end of headers: they were cut (too many, a drip, a reset). */
        x->headers_cut = res != CURLE_OK;
        x->headers_done = true;
        ht_note_status(x);
    }
    if (!t->closing) {
        if (follow_redirect(x))
            return;
        switch (x->kind) {
        case XFER_POST:
            post_done(x, res);
            break;
        case XFER_GET:
            get_done(x, res);
            break;
        case XFER_RESUME:
            resume_done(x, res);
            break;
        case XFER_LEGACY_GET:
            ht_legacy_get_done(x, res);
            break;
        case XFER_DELETE:
            break;
        }
    }
    ht_xfer_free(x);
    /* The probe decided for Streamable HTTP: what waited for it goes out now. */
    if (!t->closing && !t->reported && t->n_held && t->mode == MODE_STREAMABLE)
        flush_held(t);
    http_maybe_free(t);
}

/* ---- lifecycle ---- */

static void http_free(HttpTransport *t)
{
    while (t->xfers)
        ht_xfer_free(t->xfers);
    ht_upcalls_free(t);
    for (size_t i = 0; i < t->n_held; i++)
        free(t->held[i]);
    free(t->held);
    if (t->prev_live)
        t->prev_live->next_live = t->next_live;
    else
        all_http = t->next_live;
    if (t->next_live)
        t->next_live->prev_live = t->prev_live;
    event_free(t->ev_deliver);
    event_free(t->ev_free);
    event_free(t->ev_get);
    idmap_deinit(&t->outstanding);
    idmap_deinit(&t->list_ids);
    json_free(t->tool_headers);
    json_free(t->headers);
    free(t->url);
    free(t->shown_url);
    free(t->post_url);
    free(t->session_id);
    free(t->protocol_version);
    free(t->get_last_id);
    free(t->probe_status);
    free(t->base.server);
    free(t);
    n_live--;
}

static void on_free(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    http_free(arg);
}

static void http_maybe_free(HttpTransport *t)
{
    if (t->closing && !t->xfers)
        event_active(t->ev_free, EV_TIMEOUT, 0);
}

static void http_close(Transport *tr)
{
    HttpTransport *t = (HttpTransport *)tr;
    Xfer *x;

    if (t->closing)
        return;
    t->closing = true;
    t->base.cb = (TransportCallbacks){0};
    event_del(t->ev_get);
    while (t->xfers)
        ht_xfer_free(t->xfers);
    if (t->session_id && t->mode == MODE_STREAMABLE && !t->reported) {
        /* The spec's "client SHOULD send DELETE"; bounded, and a 405 is fine. */
        x = ht_xfer_new(t, XFER_DELETE, t->url,
                        MIN(t->timeout_ms ? t->timeout_ms : DELETE_TIMEOUT_MS, DELETE_TIMEOUT_MS));
        if (ht_xfer_launch(x) < 0)
            ht_xfer_free(x);
    }
    http_maybe_free(t);
}

void transport_http_kill_all(void)
{
    for (HttpTransport *t = all_http; t; t = t->next_live)
        while (t->xfers)
            ht_xfer_free(t->xfers);
    for (HttpTransport *t = all_http; t; t = t->next_live)
        http_maybe_free(t);
}

void transport_http_shutdown(void)
{
    while (all_http) {
        HttpTransport *t = all_http;
        t->closing = true;
        http_free(t);
    }
    http_shutdown();
}

static void http_status(Transport *tr, yajl_val obj)
{
    HttpTransport *t = (HttpTransport *)tr;
    static const char *const modes[] = {"probing", "streamable-http", "sse"};
    yajl_val signed_in = oauth_store_describe(t->url);

    json_object_set(obj, "url", json_string_new(t->shown_url));
    json_object_set(obj, "httpTransport", json_string_new(modes[t->mode]));
    json_object_set(obj, "session", json_bool_new(t->session_id != NULL));
    if (t->modern)
        json_object_set(obj, "httpProtocol",
                        json_string_new(MCP_PROTOCOL_2026_07_28 " (stateless)"));
    if (t->last_status)
        json_object_set(obj, "lastHttpStatus", json_int_new(t->last_status));
    if (t->mode == MODE_STREAMABLE)
        json_object_set(obj, "getStream", json_bool_new(t->get_wanted && !t->get_unsupported));
    if (signed_in)
        json_object_set(obj, "signIn", signed_in);
}

static const TransportOps http_ops_auto = {
    .kind = "auto",
    .send = http_send,
    .close = http_close,
    .status = http_status,
};
static const TransportOps http_ops_streamable = {
    .kind = "http",
    .send = http_send,
    .close = http_close,
    .status = http_status,
};
static const TransportOps http_ops_legacy = {
    .kind = "sse",
    .send = http_send,
    .close = http_close,
    .status = http_status,
};

int transport_http_new(Transport **tp, struct event_base *base, const ServerConfig *cfg,
                       int64_t max_call_timeout_ms, const TransportCallbacks *cb, void *userdata,
                       char **whyp)
{
    HttpTransport *t;
    char *shown = http_url_redact(cfg->url);

    if (!shown || (!startswith(cfg->url, "http://") && !startswith(cfg->url, "https://"))) {
        *whyp = xasprintf("\"url\" of server %s is not an http:// or https:// URL", cfg->name);
        free(shown);
        return -EINVAL;
    }
    /* Each connection takes the sign-in as the Secret Service holds it now. */
    oauth_store_sync(cfg->url);
    t = xcalloc(1, sizeof(*t));
    n_live++;
    t->base.cb = *cb;
    t->base.userdata = userdata;
    t->base.base = base;
    t->base.server = xstrdup(cfg->name);
    t->url = xstrdup(cfg->url);
    t->shown_url = shown;
    t->headers = json_copy(cfg->headers);
    t->timeout_ms = cfg->timeout_ms;
    t->call_timeout_ms = cfg->call_timeout_ms;
    t->max_call_ms = max_call_timeout_ms;
    t->up_tail = &t->up_head;
    t->ev_deliver = event_new(base, -1, 0, ht_on_deliver, t);
    t->ev_free = event_new(base, -1, 0, on_free, t);
    t->ev_get = evtimer_new(base, on_get_timer, t);
    t->hooks = (XferHooks){
        .event = xfer_event,
        .session = xfer_session,
        .unstarted = xfer_unstarted,
        .done = xfer_done,
    };
    t->next_live = all_http;
    if (all_http)
        all_http->prev_live = t;
    all_http = t;
    switch (cfg->type) {
    case TRANSPORT_SSE:
        t->base.ops = &http_ops_legacy;
        ht_start_legacy(t);
        break;
    case TRANSPORT_HTTP:
        t->mode = MODE_STREAMABLE;
        t->base.ops = &http_ops_streamable;
        break;
    default:
        t->mode = MODE_PROBE;
        t->base.ops = &http_ops_auto;
    }
    log_full(LOG_INFO, cfg->name, "connect", "connecting to %s (%s)", shown, t->base.ops->kind);
    *tp = &t->base;
    return 0;
}

/*
 * Fuzzing entry (tests/fuzz/fuzz-http.c). data (n bytes, then a NUL) is one response as curl
 * hands it over: a status line and header lines up to an empty line (interim 1xx blocks may come
 * first), then the body, given to the write callback chunk bytes at a time. kind % 4 picks the
 * transfer (POST, GET, resume, legacy GET); a POST then ends as a finished request would. It runs
 * the same header, content-type, body, SSE and message handling as a live transfer, with no
 * network: nothing is started, upcalls are dropped, and the transport is freed before returning.
 */
void transport_http_fuzz_response(struct event_base *base, unsigned kind, const char *data,
                                  size_t n, size_t chunk);
void transport_http_fuzz_response(struct event_base *base, unsigned kind, const char *data,
                                  size_t n, size_t chunk)
{
    static const XferKind kinds[] = {XFER_POST, XFER_GET, XFER_RESUME, XFER_LEGACY_GET};
    char name[] = "fuzz", url[] = "http://127.0.0.1:9/mcp";
    ServerConfig cfg = {.name = name, .type = TRANSPORT_HTTP, .url = url, .timeout_ms = 1000};
    TransportCallbacks cb = {0};
    _cleanup_free_ char *why = NULL, *ct = NULL;
    Transport *tr;
    size_t off = 0;

    if (transport_http_new(&tr, base, &cfg, 1000, &cb, NULL, &why) < 0)
        abort();
    HttpTransport *t = (HttpTransport *)tr;
    Xfer *x = ht_xfer_new(t, kinds[kind % N_ELEMENTS(kinds)], t->url, t->timeout_ms);
    x->timer = evtimer_new(base, ht_xfer_on_timeout, x);
    x->is_request = true;
    x->req_id = 1;
    idmap_put(&t->outstanding, 1, t);
    while (!x->headers_done && off < n) {
        const char *line = data + off, *nl = memchr(line, '\n', n - off);
        size_t len = nl ? (size_t)(nl - line) + 1 : n - off;
        off += len;
        if (len > 5 && strncmp(line, "HTTP/", 5) == 0) {
            const char *sp = memchr(line, ' ', len);
            x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
            free(ct), ct = NULL;
        } else if (line[0] == '\r' || line[0] == '\n') {
            ht_headers_apply(x, ct);
        } else {
            if (ht_header_name_is(line, len, "content-type"))
                free(ct), ct = ht_header_value(line, len, strlen("content-type"));
            ht_on_header((char *)line, 1, len, x);
        }
    }
    while (x->headers_done && off < n) {
        size_t k = MIN(chunk, n - off);
        if (ht_on_write((char *)data + off, 1, k, x) != k)
            break;
        off += k;
    }
    if (x->headers_done && x->kind == XFER_POST)
        post_done(x, CURLE_OK);
    ht_on_deliver(-1, 0, t);
    http_free(t);
}
