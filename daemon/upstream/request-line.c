// SPDX-License-Identifier: MIT
// request-line: the text of a legacy JSON-RPC request to an upstream, written from pieces in one
// pass (the hot path of every tools/call: no printf, no escaping of what is known plain).

#include <inttypes.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/mcp.h"
#include "common/util.h"
#include "daemon/upstream/request-line.h"

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

/* Decimal digits of a uint64_t, at most. */
#define U64_DIGITS 20

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

/* A literal: a copy of known size, which the compiler makes a few moves rather than a call. */
#define PUT_LIT(w, lit) (memcpy((w), (lit), sizeof(lit) - 1), (w) + sizeof(lit) - 1)

void request_line_legacy(StrBuf *sb, uint64_t id, const char *method, const char *meta,
                         const UpstreamPart *body, size_t n_body, bool progress)
{
    char buf[U64_DIGITS], *digits = u64_digits(buf, id), *w;
    size_t n_digits = (size_t)(buf + U64_DIGITS - digits), method_len = strlen(method);
    size_t meta_len = meta ? strlen(meta) : 0, body_len = request_parts_len(body, n_body);
    /* The method of nearly every request is known plain without a look at each byte. */
    bool plain = (method_len == 10 && memcmp(method, "tools/call", 10) == 0) ||
                 jsonrpc_text_plain(method, method_len);
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

/* The prefix of the _meta keys the protocol reserves: an agent's own are not passed on. */
#define MODERN_META_PREFIX "io.modelcontextprotocol/"

/*
 * The _meta members every modern request carries; an agent's own io.modelcontextprotocol/ keys
 * are dropped from *metap (mcpd is the client here), except its logLevel, which wins.
 */
static void modern_meta(StrBuf *sb, const char **metap, char **ownedp, const char *level)
{
    strbuf_puts(sb, "\"" MCP_META_PROTOCOL_VERSION "\":\"" MCP_PROTOCOL_2026_07_28 "\","
                    "\"" MCP_META_CLIENT_CAPABILITIES "\":" CLIENT_CAPABILITIES_JSON ","
                    "\"" MCP_META_CLIENT_INFO "\":{\"name\":\"mcpd\",\"version\":\"" MCPD_VERSION
                    "\"}");
    if (*metap && strstr(*metap, "\"" MODERN_META_PREFIX)) {
        _cleanup_free_ char *text = xasprintf("{%s}", *metap);
        _cleanup_json_ yajl_val m = json_parse(text, NULL);
        for (size_t i = 0; m && YAJL_IS_OBJECT(m) && i < m->u.object.len;) {
            const char *k = m->u.object.keys[i];
            if (startswith(k, MODERN_META_PREFIX) && !streq(k, MCP_META_LOG_LEVEL))
                json_free(json_object_take(m, k));
            else
                i++;
        }
        if (json_get(m, MCP_META_LOG_LEVEL))
            level = NULL;
        *metap = *ownedp = json_members_text(m);
    }
    if (level)
        strbuf_printf(sb, ",\"" MCP_META_LOG_LEVEL "\":\"%s\"", level);
}

void request_line_modern(StrBuf *sb, uint64_t id, const char *method, const char *meta,
                         const char *body, bool progress, const char *level)
{
    _cleanup_free_ char *owned = NULL;
    StrBuf m = STRBUF_INIT;

    /* _meta is never empty here: the members mcpd adds come first. */
    if (progress)
        strbuf_printf(&m, "\"progressToken\":%" PRIu64 ",", id);
    modern_meta(&m, &meta, &owned, level);
    if (meta && *meta)
        strbuf_printf(&m, ",%s", meta);
    strbuf_reset(sb);
    strbuf_printf(sb, "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"method\":", id);
    json_write_string(sb, method, strlen(method));
    strbuf_printf(sb, ",\"params\":{\"_meta\":{%s}%s%s}}\n", strbuf_str(&m),
                  body && *body ? "," : "", body ? body : "");
    strbuf_deinit(&m);
}
