// SPDX-License-Identifier: MIT
// oauth-fetch: one bounded HTTP exchange (metadata, registration, token) on the daemon's multi.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/http.h"
#include "daemon/upstream/oauth-fetch.h"
#include "daemon/upstream/oauth-issuer.h"

/* An OAuth error code is a short word (RFC 6749 5.2); a description a sentence or two. */
#define FETCH_ERROR_SHOWN_MAX 100
#define FETCH_DESC_SHOWN_MAX  200

static bool header_is(const char *line, size_t n, const char *name, const char **valuep,
                      size_t *lenp)
{
    size_t k = strlen(name);
    const char *v, *end = line + n;

    if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0)
        return false;
    v = line + k + 1;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    *valuep = v;
    *lenp = (size_t)(end - v);
    return true;
}

static size_t on_header(char *data, size_t size, size_t nitems, void *userdata)
{
    Fetch *x = userdata;
    size_t n = size * nitems, len;
    const char *v;

    if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        /* A new response (after 100 Continue): forget the previous one's headers. */
        strbuf_reset(&x->www_auth);
        free(x->location);
        x->location = NULL;
    } else if (header_is(data, n, "location", &v, &len)) {
        free(x->location);
        x->location = xstrndup(v, len);
    } else if (header_is(data, n, "www-authenticate", &v, &len) &&
               x->www_auth.len + len < OAUTH_BODY_MAX) {
        if (x->www_auth.len)
            strbuf_puts(&x->www_auth, ", ");
        strbuf_append(&x->www_auth, v, len);
    }
    return n;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
    Fetch *x = userdata;
    size_t n = size * nmemb;

    if (x->body.len + n > OAUTH_BODY_MAX) {
        x->too_big = true;
        return 0; /* stops the transfer */
    }
    strbuf_append(&x->body, data, n);
    return n;
}

static void on_done(void *userdata, CURL *easy, CURLcode res)
{
    Fetch *x = userdata;

    x->res = res;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &x->status);
    http_stop(x->easy);
    x->fn(x->owner, x);
}

/*
 * The loopback guard: curl asks for each socket it would connect, with the address it resolved.
 * A plain http URL that named its host by a name gets a socket only for a loopback address, so
 * the request (and the secret in it) can reach only this machine, whatever the name resolves to.
 */
static curl_socket_t on_open_socket(void *userdata, curlsocktype purpose,
                                    struct curl_sockaddr *addr)
{
    Fetch *x = userdata;

    if (purpose == CURLSOCKTYPE_IPCXN && !oauth_sockaddr_is_loopback(&addr->addr)) {
        const void *a = addr->family == AF_INET6
                            ? (const void *)&((struct sockaddr_in6 *)&addr->addr)->sin6_addr
                            : (const void *)&((struct sockaddr_in *)&addr->addr)->sin_addr;
        if (!inet_ntop(addr->family, a, x->refused_addr, sizeof(x->refused_addr)))
            snprintf(x->refused_addr, sizeof(x->refused_addr), "(family %d)", addr->family);
        return CURL_SOCKET_BAD;
    }
    return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

/* Only loopback addresses for this fetch: no proxy, no connection made before the guard. */
static void guard_loopback(Fetch *x)
{
    curl_easy_setopt(x->easy, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    curl_easy_setopt(x->easy, CURLOPT_OPENSOCKETDATA, x);
    curl_easy_setopt(x->easy, CURLOPT_PROXY, "");
    curl_easy_setopt(x->easy, CURLOPT_FRESH_CONNECT, 1L);
}

Fetch *fetch_start(struct event_base *base, const char *resource, const char *url, const char *body,
                   const char *ctype, const char *extra_header, FetchFn fn, void *owner,
                   char **whyp)
{
    Fetch *x;
    int r;

    /* The last line of defence: every URL passes the sign-in's checks, whoever chose it. */
    if ((r = oauth_url_verdict(resource, url)) != 0) {
        _cleanup_free_ char *shown = oauth_text_shown(url, OAUTH_URL_MAX);
        *whyp = xasprintf("refusing to send anything to \"%s\": %s", shown,
                          r == OAUTH_URL_BAD_TEXT    ? "not a usable URL"
                          : r == OAUTH_URL_NOT_HTTP  ? "not an http(s) URL"
                          : r == OAUTH_URL_DOWNGRADE ? "plain http for an https server"
                                                     : "plain http to another host");
        return NULL;
    }
    x = xcalloc(1, sizeof(*x));
    x->url = xstrdup(url);
    x->fn = fn;
    x->owner = owner;
    x->easy = http_easy_new(url);
    if (!x->easy) {
        *whyp = xasprintf("cannot request %s", url);
        return fetch_free(x);
    }
    x->hdrs = curl_slist_append(x->hdrs, "Accept: application/json");
    if (body) {
        _cleanup_free_ char *ct = xasprintf("Content-Type: %s", ctype);
        x->post = xstrdup(body);
        x->hdrs = curl_slist_append(x->hdrs, ct);
        x->hdrs = curl_slist_append(x->hdrs, "Expect:");
        curl_easy_setopt(x->easy, CURLOPT_POST, 1L);
        curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, x->post);
        curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(x->post));
    }
    if (extra_header)
        x->hdrs = curl_slist_append(x->hdrs, extra_header);
    curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, (long)OAUTH_FETCH_TIMEOUT_MS);
    /* Sign-ins are rare: their connections close at once instead of idling in curl's cache. */
    curl_easy_setopt(x->easy, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
    if (oauth_url_needs_loopback(resource, url))
        guard_loopback(x);
    r = http_start(base, x->easy, on_done, x);
    if (r < 0) {
        *whyp = xasprintf("cannot request %s: %s", url, strerror(-r));
        return fetch_free(x);
    }
    return x;
}

Fetch *fetch_free(Fetch *x)
{
    if (!x)
        return NULL;
    if (x->easy) {
        http_stop(x->easy);
        curl_easy_cleanup(x->easy);
    }
    /* Headers and bodies carry client secrets, codes and tokens. */
    for (struct curl_slist *l = x->hdrs; l; l = l->next)
        explicit_bzero(l->data, strlen(l->data));
    curl_slist_free_all(x->hdrs);
    if (x->post)
        explicit_bzero(x->post, strlen(x->post));
    free(x->post);
    if (x->body.data)
        explicit_bzero(x->body.data, x->body.cap);
    strbuf_deinit(&x->body);
    strbuf_deinit(&x->www_auth);
    free(x->location);
    free(x->url);
    free(x);
    return NULL;
}

char *fetch_describe(Fetch *x)
{
    _cleanup_json_ yajl_val v = NULL;
    const char *err, *desc;

    if (x->too_big)
        return xasprintf("the answer from %s is larger than %u bytes", x->url, OAUTH_BODY_MAX);
    if (x->refused_addr[0] && !x->status)
        return xasprintf("%s is plain http, which goes only to this machine, but its host "
                         "resolves to %s, not a loopback address (127.0.0.0/8, ::1); nothing "
                         "was sent; ask the server's operator for an https URL",
                         x->url, x->refused_addr);
    if (x->res != CURLE_OK && !x->status)
        return xasprintf("%s: %s", x->url, curl_easy_strerror(x->res));
    v = json_parse(strbuf_str(&x->body), NULL);
    err = json_get_string(v, "error");
    desc = json_get_string(v, "error_description");
    if (err) {
        /* The server's own words: shown, never obeyed (no escape reaches a terminal or log). */
        _cleanup_free_ char *e = oauth_text_shown(err, FETCH_ERROR_SHOWN_MAX);
        _cleanup_free_ char *d = desc ? oauth_text_shown(desc, FETCH_DESC_SHOWN_MAX) : NULL;
        return xasprintf("%s answered HTTP %ld, error \"%s\"%s%s", x->url, x->status, e,
                         d ? ": " : "", d ? d : "");
    }
    return xasprintf("%s answered HTTP %ld", x->url, x->status);
}

yajl_val fetch_json(Fetch *x, char **whyp)
{
    yajl_val v;

    if (x->res != CURLE_OK || x->status / 100 != 2) {
        *whyp = fetch_describe(x);
        return NULL;
    }
    v = json_parse(strbuf_str(&x->body), NULL);
    if (!YAJL_IS_OBJECT(v)) {
        *whyp = xasprintf("%s did not answer with a JSON object", x->url);
        json_free(v);
        return NULL;
    }
    return v;
}

void fetch_form_add(StrBuf *sb, const char *key, const char *value)
{
    char *e = curl_easy_escape(NULL, value, 0);

    if (sb->len)
        strbuf_putc(sb, '&');
    strbuf_printf(sb, "%s=%s", key, e ? e : "");
    if (e)
        explicit_bzero(e, strlen(e));
    curl_free(e);
}
