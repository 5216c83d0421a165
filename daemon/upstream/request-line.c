// SPDX-License-Identifier: MIT
// request-line: the text of a legacy JSON-RPC request to an upstream, written from pieces in one
// pass (the hot path of every tools/call: no printf, no escaping of what is known plain).

#include <string.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/util.h"
#include "daemon/upstream/request-line.h"

/* Decimal digits of a uint64_t, at most. */
#define U64_DIGITS 20

size_t request_parts_len(const UpstreamPart *parts, size_t n)
{
    size_t len = 0;

    for (size_t i = 0; i < n; i++)
        len += parts[i].n;
    return len;
}

char *request_parts_join(const UpstreamPart *parts, size_t n)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_reserve(&sb, request_parts_len(parts, n) + 1);
    for (size_t i = 0; i < n; i++)
        strbuf_append(&sb, parts[i].p, parts[i].n);
    return strbuf_detach(&sb, NULL);
}

/* v in decimal at the end of buf[U64_DIGITS]: returns where the digits start. */
static char *u64_digits(char *buf, uint64_t v)
{
    char *p = buf + U64_DIGITS;

    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10));
    return p;
}

/* Copy n bytes at w, return the end (s may be NULL when n is 0). */
static char *put(char *w, const void *s, size_t n)
{
    if (n)
        memcpy(w, s, n);
    return w + n;
}

#define PUT_LIT(w, lit) put((w), (lit), sizeof(lit) - 1)

void request_line_legacy(StrBuf *sb, uint64_t id, const char *method, const char *meta,
                         const UpstreamPart *body, size_t n_body, bool progress)
{
    char buf[U64_DIGITS], *digits = u64_digits(buf, id), *w;
    size_t n_digits = (size_t)(buf + U64_DIGITS - digits), method_len = strlen(method);
    size_t meta_len = meta ? strlen(meta) : 0, body_len = request_parts_len(body, n_body);
    /* The method of nearly every request is known plain without a look at each byte. */
    bool plain = streq(method, "tools/call") || jsonrpc_text_plain(method, method_len);
    StrBuf esc = STRBUF_INIT;

    if (!plain) /* never for mcpd's own methods; kept right for any */
        json_write_string(&esc, method, method_len);
    strbuf_reset(sb);
    /* Everything but the pieces is under 128 bytes: sized once, then copied without checks. */
    strbuf_reserve(sb, 128 + 2 * n_digits + (plain ? method_len : esc.len) + meta_len + body_len);
    w = sb->data;
    w = PUT_LIT(w, "{\"jsonrpc\":\"2.0\",\"id\":");
    w = put(w, digits, n_digits);
    w = PUT_LIT(w, ",\"method\":");
    if (plain) {
        *w++ = '"';
        w = put(w, method, method_len);
        *w++ = '"';
    } else
        w = put(w, esc.data, esc.len);
    w = PUT_LIT(w, ",\"params\":{");
    if (progress || meta_len) {
        w = PUT_LIT(w, "\"_meta\":{");
        if (progress) {
            w = PUT_LIT(w, "\"progressToken\":");
            w = put(w, digits, n_digits);
            if (meta_len)
                *w++ = ',';
        }
        w = put(w, meta, meta_len);
        *w++ = '}';
        if (body_len)
            *w++ = ',';
    }
    for (size_t i = 0; i < n_body; i++)
        w = put(w, body[i].p, body[i].n);
    w = PUT_LIT(w, "}}\n");
    sb->len = (size_t)(w - sb->data);
    sb->data[sb->len] = '\0';
    if (!plain)
        strbuf_deinit(&esc);
}
