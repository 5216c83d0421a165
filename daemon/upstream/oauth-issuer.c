// SPDX-License-Identifier: MIT
// oauth-issuer: what a sign-in takes from a server: the SEP-2468 issuer checks (RFC 8414 3.3
// metadata issuer, RFC 9207 "iss"), which URLs may be used (scheme, host by address, text), and
// server text made safe to show.

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/oauth-issuer.h"

/* Issuers in error messages are cut here: a hostile server chooses them, the log keeps them. */
#define ISSUER_SHOWN_MAX 200

int oauth_check_metadata_issuer(const char *expected, const char *got, const char *meta_url,
                                char **whyp)
{
    /* Simple string comparison, no normalisation: a trailing "/" is another issuer. */
    if (got && streq(got, expected))
        return 0;
    if (!got)
        *whyp = xasprintf("the metadata at %s has no \"issuer\"; mcpd uses only metadata that "
                          "names the authorization server %s it was fetched for (RFC 8414 3.3); "
                          "ask the server's operator to fix it",
                          meta_url, expected);
    else {
        _cleanup_free_ char *shown = oauth_text_shown(got, ISSUER_SHOWN_MAX);
        *whyp = xasprintf("the metadata at %s names the issuer \"%s\", not the authorization "
                          "server %s it was fetched for; refusing it (RFC 8414 3.3: its endpoints "
                          "could send the sign-in elsewhere); ask the server's operator to fix it",
                          meta_url, shown, expected);
    }
    return -EPERM;
}

int oauth_check_response_iss(const char *issuer, const char *iss, bool advertised, char **whyp)
{
    if (iss && streq(iss, issuer))
        return 0;
    if (!iss && !advertised)
        return 0;
    if (!iss)
        *whyp = xasprintf("the authorization server %s says it names itself in its responses "
                          "(authorization_response_iss_parameter_supported) but this redirect "
                          "has no \"iss\"; the code was not used (RFC 9207); run mcpctl login "
                          "again, and report it to the server's operator if it repeats",
                          issuer);
    else {
        _cleanup_free_ char *shown = oauth_text_shown(iss, ISSUER_SHOWN_MAX);
        *whyp =
            xasprintf("the redirect came from the issuer \"%s\", not from the authorization "
                      "server %s this sign-in began with (RFC 9207: a mix-up or a misconfigured "
                      "server); the code was not used; run mcpctl login again, and report it "
                      "to the server's operator if it repeats",
                      shown, issuer);
    }
    return -EPERM;
}

static bool has_scheme(const char *url, const char *scheme)
{
    size_t n = strlen(scheme);
    return strncasecmp(url, scheme, n) == 0 && url[n] == ':' && url[n + 1] == '/' &&
           url[n + 2] == '/';
}

bool oauth_url_text_ok(const char *url)
{
    size_t n = 0;

    if (!url)
        return false;
    /* Printable ASCII only (RFC 3986): a space, control or non-ASCII byte is not a URL. */
    for (const unsigned char *p = (const unsigned char *)url; *p; p++, n++)
        if (*p <= 0x20 || *p >= 0x7f || n >= OAUTH_URL_MAX)
            return false;
    return n > 0;
}

bool oauth_scope_text_ok(const char *s)
{
    size_t n = 0;

    /* RFC 6749 3.3: scope tokens are %x21 / %x23-5B / %x5D-7E, joined by spaces. */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++, n++)
        if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\' || n >= OAUTH_URL_MAX)
            return false;
    return true;
}

/* The bytes a UTF-8 character with this lead byte takes (1 for anything else). */
static size_t utf8_len(unsigned char c)
{
    return c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

char *oauth_text_shown(const char *s, size_t max)
{
    StrBuf sb = STRBUF_INIT;
    const unsigned char *p = (const unsigned char *)(s ? s : "");

    /* Control characters (C0, DEL, C1 in UTF-8) become '?': no escape sequence survives. */
    while (*p && sb.len < max) {
        size_t k = utf8_len(*p), i;
        if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)) {
            strbuf_putc(&sb, '?');
            p += *p == 0xc2 ? 2 : 1;
            continue;
        }
        for (i = 1; i < k && (p[i] & 0xc0) == 0x80; i++)
            ;
        if (sb.len + i > max)
            break; /* a character is never cut in two */
        strbuf_append(&sb, (const char *)p, i);
        p += i;
    }
    if (*p)
        strbuf_puts(&sb, "...");
    return strbuf_detach(&sb, NULL);
}

/* The host curl would connect to for url (lower-cased; IPv6 in brackets), newly allocated. */
static char *url_host(const char *url)
{
    CURLU *u = curl_url();
    char *h = NULL, *out = NULL;

    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK && h) {
        out = xstrdup(h);
        for (char *p = out; *p; p++)
            *p = (char)tolower((unsigned char)*p);
    }
    curl_free(h);
    curl_url_cleanup(u);
    return out;
}

bool oauth_in6_is_loopback(const struct in6_addr *a)
{
    /* ::1, or an IPv4 loopback address in its IPv4-mapped form ::ffff:127.x.y.z. */
    return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

bool oauth_sockaddr_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return oauth_in6_is_loopback(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return false;
}

/* Whether host (as url_host gives it) is an address literal, and a loopback one. */
static bool host_literal(const char *host, bool *loopbackp)
{
    struct in_addr a4;
    struct in6_addr a6;
    char buf[INET6_ADDRSTRLEN + 2];
    size_t n = strlen(host);

    if (inet_pton(AF_INET, host, &a4) == 1) {
        *loopbackp = (ntohl(a4.s_addr) >> 24) == 127;
        return true;
    }
    if (n < 2 || host[0] != '[' || host[n - 1] != ']' || n - 2 >= sizeof(buf))
        return false;
    memcpy(buf, host + 1, n - 2);
    buf[n - 2] = '\0';
    if (inet_pton(AF_INET6, buf, &a6) != 1) {
        *loopbackp = false; /* a zone id or worse: an address, and not one we can vouch for */
        return true;
    }
    *loopbackp = oauth_in6_is_loopback(&a6);
    return true;
}

bool oauth_url_needs_loopback(const char *resource, const char *url)
{
    _cleanup_free_ char *host = NULL, *res_host = NULL;
    bool loopback = false;

    if (!has_scheme(url, "http"))
        return false; /* https: TLS names the host; other schemes are never fetched */
    host = url_host(url);
    res_host = resource ? url_host(resource) : NULL;
    if (host && res_host && streq(host, res_host))
        return false; /* the host the user chose to reach in plain http */
    return !host || !host_literal(host, &loopback) || !loopback;
}

/* Plain http may go to a loopback address or to the resource's own host, nowhere else. */
static bool plain_host_ok(const char *resource, const char *url)
{
    _cleanup_free_ char *host = url_host(url), *res_host = url_host(resource);
    bool loopback = false;

    if (!host)
        return false;
    if (res_host && streq(host, res_host))
        return true;
    /* A name is taken here only for what it resolves to: the fetch connects to loopback only. */
    return !host_literal(host, &loopback) || loopback;
}

int oauth_url_verdict(const char *resource, const char *url)
{
    bool https;

    if (!oauth_url_text_ok(url))
        return OAUTH_URL_BAD_TEXT;
    https = has_scheme(url, "https");
    if (!https && !has_scheme(url, "http"))
        return OAUTH_URL_NOT_HTTP;
    if (!https && has_scheme(resource, "https"))
        return OAUTH_URL_DOWNGRADE;
    if (!https && !plain_host_ok(resource, url))
        return OAUTH_URL_THIRD_HOST;
    return 0;
}

/* What to do, said at the end of each refusal: the server's operator, or the user's config. */
static char *url_refusal(int verdict, const char *resource, const char *what, const char *url,
                         const char *fix)
{
    _cleanup_free_ char *shown = oauth_text_shown(url, ISSUER_SHOWN_MAX);

    switch (verdict) {
    case OAUTH_URL_BAD_TEXT:
        return xasprintf("the %s \"%s\" is not a usable URL (empty, longer than %d bytes, or "
                         "holding spaces, control characters or non-ASCII bytes); refusing it; %s",
                         what, shown, OAUTH_URL_MAX, fix);
    case OAUTH_URL_NOT_HTTP:
        return xasprintf("the %s \"%s\" is not an http(s) URL; refusing it; %s", what, shown, fix);
    case OAUTH_URL_DOWNGRADE:
        return xasprintf("the server %s is https, but the %s is plain http (\"%s\"); refusing the "
                         "downgrade, which would let anyone on the way swap the sign-in; %s",
                         resource, what, shown, fix);
    default:
        return xasprintf("the %s \"%s\" for the server %s is plain http on another host; refusing "
                         "it: tokens and secrets would cross the network unencrypted (plain http "
                         "is accepted only to a loopback address (127.0.0.0/8, ::1) or to the "
                         "server's own host); %s",
                         what, shown, resource, fix);
    }
}

int oauth_check_url_scheme(const char *resource, const char *what, const char *url, char **whyp)
{
    int v = oauth_url_verdict(resource, url);

    if (v == 0)
        return 0;
    *whyp = url_refusal(v, resource, what, url,
                        v == OAUTH_URL_THIRD_HOST ? "ask the server's operator for an https one"
                                                  : "ask the server's operator to fix it");
    return -EPERM;
}

int oauth_check_config_url(const char *server, const char *resource, const char *field,
                           const char *url, char **whyp)
{
    _cleanup_free_ char *what = xasprintf("\"oauth.%s\" of server %s", field, server);
    int v = oauth_url_verdict(resource, url);

    if (v == 0)
        return 0;
    *whyp = url_refusal(v, resource, what, url,
                        "fix it in the server's config (an https URL, or http to 127.0.0.1)");
    return -EPERM;
}
