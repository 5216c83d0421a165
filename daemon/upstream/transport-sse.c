// SPDX-License-Identifier: MIT
// transport-sse: the legacy HTTP+SSE transport (2024-11-05): a GET stream whose first event names
// the URL that messages are POSTed to; answers come on the stream.

#include <stdlib.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/util.h"
#include "daemon/upstream/http.h"
#include "daemon/upstream/transport-http-upcall.h"
#include "daemon/upstream/transport-http-xfer.h"
#include "daemon/upstream/transport-sse.h"

void ht_start_legacy(HttpTransport *t)
{
    t->mode = MODE_LEGACY;
    ht_xfer_start(ht_xfer_new(t, XFER_LEGACY_GET, t->url, t->timeout_ms));
}

/* The legacy stream's first event names the URL that messages are POSTed to (same origin only). */
int ht_legacy_endpoint(Xfer *x, const SseEvent *ev)
{
    HttpTransport *t = x->t;
    _cleanup_free_ char *u = http_url_resolve(x->url, ev->data);
    if (!u || !http_same_origin(u, t->url)) {
        ht_report_closed(t, "the SSE endpoint event names %s, which is not on the origin of %s",
                         u ? "a URL" : "an invalid URL", t->shown_url);
        return 1;
    }
    free(t->post_url);
    t->post_url = xstrdup(u);
    evtimer_del(x->timer);
    x->timeout_ms = 0;
    /* Flushing sends, which curl forbids inside its callbacks: do it from the loop. */
    event_active(t->ev_get, EV_TIMEOUT, 0);
    return 0;
}

void ht_legacy_get_done(Xfer *x, CURLcode res)
{
    HttpTransport *t = x->t;
    _cleanup_free_ char *e = NULL;

    if (x->status == 401)
        return ht_auth_needed(t, x);
    if (x->headers_done && (x->status / 100 != 2 || !x->sse)) {
        e = x->status / 100 == 2 ? xasprintf("HTTP %ld but not an event stream", x->status)
                                 : ht_error_text(x);
        if (t->probe_status)
            ht_report_closed(t,
                             "neither Streamable HTTP (POST: %s) nor legacy SSE (GET: %s) "
                             "answered at %s",
                             t->probe_status, e, t->shown_url);
        else
            ht_report_closed(t, "SSE stream at %s refused: %s", t->shown_url, e);
        return;
    }
    if (x->line_cut)
        ht_report_closed(t,
                         "SSE stream at %s sent a line of more than %zu bytes with no newline, "
                         "mcpd's bound on one message: the stream was dropped; report it to the "
                         "server's maintainers",
                         t->shown_url, x->parser.max_event);
    else if (x->timed_out)
        ht_report_closed(t, "SSE stream at %s sent no endpoint event in time", t->shown_url);
    else if (res != CURLE_OK)
        ht_report_closed(t, "SSE stream at %s failed: %s", t->shown_url, ht_curl_error(x, res));
    else
        ht_report_closed(t, "SSE stream at %s ended", t->shown_url);
}
