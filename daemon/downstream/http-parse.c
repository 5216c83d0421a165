// SPDX-License-Identifier: MIT
// http-parse: the head of one HTTP/1.1 request (RFC 9112), checked and bounded, in place.

#include <string.h>
#include <strings.h>

#include "daemon/downstream/http-parse.h"

/*
 * A Content-Length has at most this many digits: the body bound (maxMessageBytes) is checked by
 * the server on the number; this only keeps the number from overflowing while it is read.
 */
#define HTTP_MAX_LENGTH_DIGITS 15

/* RFC 9110 tchar: what a method and a field name are made of. */
static bool is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A field value's bytes: visible ASCII, space, tab and obs-text; no other control. */
static bool is_value_char(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* Where the head's empty line ends (the byte after it), from *scanp on; 0 if not yet. */
static size_t head_end(const char *buf, size_t n, size_t *scanp)
{
    for (size_t i = *scanp; i + 3 < n; i++)
        if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n')
            return i + 4;
    *scanp = n > 3 ? n - 3 : 0;
    return 0;
}

/* The request line: method SP target SP HTTP/1.x; returns the status to refuse with, or 0. */
static int parse_request_line(HttpHead *h, const char *s, size_t n)
{
    const char *sp1 = memchr(s, ' ', n), *sp2;

    if (!sp1 || sp1 == s)
        return 400;
    for (const char *c = s; c < sp1; c++)
        if (!is_tchar((unsigned char)*c))
            return 400;
    sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - s));
    if (!sp2 || sp2 == sp1 + 1)
        return 400;
    h->method = s;
    h->method_len = (size_t)(sp1 - s);
    h->target = sp1 + 1;
    h->target_len = (size_t)(sp2 - sp1 - 1);
    if (h->target_len > HTTP_MAX_TARGET)
        return 414;
    for (size_t i = 0; i < h->target_len; i++)
        if ((unsigned char)h->target[i] <= 0x20 || (unsigned char)h->target[i] >= 0x7f)
            return 400;
    size_t vlen = n - (size_t)(sp2 + 1 - s);
    const char *v = sp2 + 1;
    if (vlen != 8 || memcmp(v, "HTTP/", 5) != 0 || v[6] != '.' || v[7] < '0' || v[7] > '9')
        return 400;
    if (v[5] != '1')
        return 505;
    h->minor = v[7] - '0';
    return 0;
}

/* One field line name: OWS value OWS; returns the status to refuse with, or 0. */
static int parse_field(HttpHead *h, const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);

    if (!colon || colon == s)
        return 400; /* also a folded line (obs-fold), which starts with white space */
    for (const char *c = s; c < colon; c++)
        if (!is_tchar((unsigned char)*c))
            return 400;
    const char *v = colon + 1, *end = s + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    for (const char *c = v; c < end; c++)
        if (!is_value_char((unsigned char)*c))
            return 400;
    if (h->n_fields == HTTP_MAX_FIELDS)
        return 431;
    h->fields[h->n_fields++] = (HttpField){s, v, (size_t)(colon - s), (size_t)(end - v)};
    return 0;
}

/* Content-Length (all copies equal: RFC 9112 6.3), Transfer-Encoding, Connection. */
static int parse_framing(HttpHead *h)
{
    bool have_length = false;

    h->keep_alive = h->minor >= 1;
    for (size_t i = 0; i < h->n_fields; i++) {
        const HttpField *f = &h->fields[i];
        if (f->name_len == 17 && strncasecmp(f->name, "transfer-encoding", 17) == 0) {
            /* Only chunked alone: a coding mcpd does not know is 501 (RFC 9112 6.1), and a
             * second field or HTTP/1.0 is a smuggling attempt (400). */
            if (h->chunked || h->minor == 0)
                return 400;
            if (f->value_len != 7 || strncasecmp(f->value, "chunked", 7) != 0)
                return 501;
            h->chunked = true;
        }
        if (f->name_len == 10 && strncasecmp(f->name, "connection", 10) == 0) {
            if (f->value_len == 5 && strncasecmp(f->value, "close", 5) == 0)
                h->keep_alive = false;
            else if (f->value_len == 10 && strncasecmp(f->value, "keep-alive", 10) == 0)
                h->keep_alive = true;
        }
        if (f->name_len != 14 || strncasecmp(f->name, "content-length", 14) != 0)
            continue;
        if (f->value_len == 0 || f->value_len > HTTP_MAX_LENGTH_DIGITS)
            return 400;
        size_t v = 0;
        for (size_t j = 0; j < f->value_len; j++) {
            if (f->value[j] < '0' || f->value[j] > '9')
                return 400;
            v = v * 10 + (size_t)(f->value[j] - '0');
        }
        if (have_length && v != h->content_length)
            return 400;
        h->content_length = v;
        have_length = true;
    }
    /* Both framings at once is how requests are smuggled past a proxy: refused (RFC 9112 6.3). */
    return h->chunked && have_length ? 400 : 0;
}

int http_parse_head(HttpHead *h, const char *buf, size_t n, size_t *scanp)
{
    size_t end = head_end(buf, n, scanp), pos, line_end;
    int r;

    if (!end)
        return n >= HTTP_MAX_HEAD ? 431 : HTTP_PARSE_AGAIN;
    if (end > HTTP_MAX_HEAD)
        return 431;
    memset(h, 0, offsetof(HttpHead, fields));
    h->n_fields = 0;
    h->head_len = end;
    h->content_length = 0;
    h->chunked = false;
    /* Each line ends in CRLF; a bare CR or LF inside one is refused (request smuggling). */
    for (pos = 0; pos < end - 2; pos = line_end + 2) {
        const char *cr = memchr(buf + pos, '\r', end - 2 - pos + 1);
        line_end = (size_t)(cr - buf);
        if (buf[line_end + 1] != '\n' || memchr(buf + pos, '\n', line_end - pos))
            return 400;
        r = pos == 0 ? parse_request_line(h, buf, line_end)
                     : parse_field(h, buf + pos, line_end - pos);
        if (r)
            return r;
    }
    if (!h->method)
        return 400;
    return parse_framing(h);
}

const char *http_field(const HttpHead *h, const char *name, size_t *lenp)
{
    size_t n = strlen(name);

    for (size_t i = 0; i < h->n_fields; i++)
        if (h->fields[i].name_len == n && strncasecmp(h->fields[i].name, name, n) == 0) {
            *lenp = h->fields[i].value_len;
            return h->fields[i].value;
        }
    *lenp = 0;
    return NULL;
}

bool http_field_is(const HttpHead *h, const char *name, const char *text)
{
    size_t n;
    const char *v = http_field(h, name, &n);

    return v && n == strlen(text) && strncasecmp(v, text, n) == 0;
}

bool http_method_is(const HttpHead *h, const char *m)
{
    return h->method_len == strlen(m) && memcmp(h->method, m, h->method_len) == 0;
}

bool http_field_lists(const HttpHead *h, const char *name, const char *type)
{
    size_t n, tn = strlen(type);
    const char *v = http_field(h, name, &n), *end;

    if (!v)
        return false;
    end = v + n;
    while (v < end) {
        while (v < end && (*v == ' ' || *v == '\t' || *v == ','))
            v++;
        const char *e = v;
        while (e < end && *e != ',' && *e != ';' && *e != ' ')
            e++;
        if ((size_t)(e - v) == tn && strncasecmp(v, type, tn) == 0)
            return true;
        if ((size_t)(e - v) == 3 && memcmp(v, "*/*", 3) == 0)
            return true;
        while (e < end && *e != ',')
            e++;
        v = e;
    }
    return false;
}
