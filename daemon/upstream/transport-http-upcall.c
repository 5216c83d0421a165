// SPDX-License-Identifier: MIT
// transport-http-upcall: what the HTTP transport tells upstream.c (messages, a sign-in challenge,
// its close), queued and delivered from the loop, never inside curl or inside send().

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/idmap.h"
#include "common/json.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/oauth-issuer.h"
#include "daemon/upstream/transport-http-upcall.h"
#include "daemon/upstream/transport-http-xfer.h"
#include "daemon/upstream/transport.h"

struct Upcall {
    UpcallKind kind;
    char *text;
    size_t len;
    struct Upcall *next;
};

void ht_upcall(HttpTransport *t, UpcallKind kind, const char *text, size_t len)
{
    Upcall *u = xcalloc(1, sizeof(*u));

    u->kind = kind;
    u->text = xstrndup(text ? text : "", len);
    u->len = len;
    t->n_upcalls++;
    *t->up_tail = u;
    t->up_tail = &u->next;
    event_active(t->ev_deliver, EV_TIMEOUT, 0);
}

void ht_report_closed(HttpTransport *t, const char *fmt, ...)
{
    va_list ap;
    StrBuf sb = STRBUF_INIT;

    if (t->reported || t->closing)
        return;
    t->reported = true;
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    ht_upcall(t, UP_CLOSED, strbuf_str(&sb), sb.len);
    strbuf_deinit(&sb);
}

void ht_on_deliver(evutil_socket_t fd, short what, void *arg)
{
    HttpTransport *t = arg;
    Upcall *u;

    (void)fd, (void)what;
    while ((u = t->up_head)) {
        t->up_head = u->next;
        t->n_upcalls--;
        if (!t->up_head)
            t->up_tail = &t->up_head;
        if (!t->closing) {
            if (u->kind == UP_MESSAGE && t->base.cb.message)
                t->base.cb.message(t->base.userdata, u->text, u->len);
            else if (u->kind == UP_AUTH && t->base.cb.auth)
                t->base.cb.auth(t->base.userdata, u->text);
            else if (u->kind == UP_CLOSED && t->base.cb.closed)
                t->base.cb.closed(t->base.userdata, u->text);
        }
        free(u->text);
        free(u);
    }
    /* The queue is empty: paused streams go on (curl may hand their chunk over at once). */
    for (Xfer *x = t->closing ? NULL : t->xfers, *next; x; x = next) {
        next = x->next;
        ht_xfer_unpause(x);
    }
}

void ht_synth_error(HttpTransport *t, uint64_t id, const char *fmt, ...)
{
    StrBuf msg = STRBUF_INIT, line = STRBUF_INIT;
    va_list ap;

    if (!id || !idmap_remove(&t->outstanding, id))
        return;
    va_start(ap, fmt);
    strbuf_vprintf(&msg, fmt, ap);
    va_end(ap);
    strbuf_printf(&line,
                  "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"error\":{\"code\":%d,"
                  "\"message\":",
                  id, MCP_ERROR_CONNECTION_CLOSED);
    json_write_string(&line, msg.data, msg.len);
    strbuf_puts(&line, "}}");
    log_full(LOG_INFO, t->base.server, "http", "request %" PRIu64 " failed: %s", id,
             strbuf_str(&msg));
    ht_upcall(t, UP_MESSAGE, line.data, line.len);
    strbuf_deinit(&msg);
    strbuf_deinit(&line);
}

void ht_auth_needed(HttpTransport *t, Xfer *x)
{
    /* The server's words go to status, the log and the sign-in: no control character in them. */
    _cleanup_free_ char *clean =
        x->www_auth.len ? oauth_text_shown(strbuf_str(&x->www_auth), x->www_auth.len) : NULL;
    const char *w = clean;

    if (t->reported)
        return;
    ht_upcall(t, UP_AUTH, w ? w : "", w ? strlen(w) : 0);
    ht_report_closed(t, "HTTP 401 Unauthorized: the server needs authorization%s%.*s%s%s",
                     w ? " (WWW-Authenticate: " : "", WWW_AUTH_SHOWN, w ? w : "",
                     w && strlen(w) > WWW_AUTH_SHOWN ? " ..." : "", w ? ")" : "");
}

void ht_upcalls_free(HttpTransport *t)
{
    Upcall *u;

    while ((u = t->up_head)) {
        t->up_head = u->next;
        free(u->text);
        free(u);
    }
    t->up_tail = &t->up_head;
    t->n_upcalls = 0;
}
