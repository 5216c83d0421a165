// SPDX-License-Identifier: MIT
// transport-http-modern: what Streamable HTTP adds for 2026-07-28 requests: the
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers (the last from tools'
// x-mcp-header parameters).

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "common/base64.h"
#include "common/json.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/transport-http-modern.h"

/* A tool's mirrored parameters: the headers of one POST stay far below any server's limit. */
#define HTM_MAX_PARAM_HEADERS 32
/* A header name from a tool's schema; longer ones are a broken schema, not a header. */
#define HTM_MAX_HEADER_NAME 64
/* Tools remembered with mirrored parameters: bounded like any list a server sends. */
#define HTM_MAX_TOOLS 10000

const char *htm_version(yajl_val msg)
{
    return json_get_string(json_get_object(json_get_object(msg, "params"), "_meta"),
                           MCP_META_PROTOCOL_VERSION);
}

/*
 * A header value as the transport spec encodes it: printable ASCII without leading or trailing
 * white space goes as it is; anything else as =?base64?<UTF-8 bytes in base64>?=.
 */
static char *header_value(const char *v, size_t n)
{
    bool plain = n == 0 || (v[0] != ' ' && v[n - 1] != ' ');
    _cleanup_free_ char *b = NULL;

    for (size_t i = 0; plain && i < n; i++)
        plain = (unsigned char)v[i] >= 0x20 && (unsigned char)v[i] <= 0x7e;
    if (plain)
        return xstrndup(v, n);
    b = base64_encode(v, n, false);
    return xasprintf("=?base64?%s?=", b);
}

static struct curl_slist *add(struct curl_slist *l, const char *name, const char *v, size_t n)
{
    _cleanup_free_ char *value = header_value(v, n);
    /* curl drops "Name:" as "no such header"; "Name;" is how it sends an empty one. */
    _cleanup_free_ char *h = n ? xasprintf("%s: %s", name, value) : xasprintf("%s;", name);

    return curl_slist_append(l, h);
}

/* A parameter's value as a header: strings, numbers (as written) and booleans; else NULL. */
static char *param_text(yajl_val v)
{
    if (YAJL_IS_STRING(v))
        return xstrdup(v->u.string);
    if (YAJL_IS_NUMBER(v))
        return xstrdup(v->u.number.r);
    if (YAJL_IS_TRUE(v))
        return xstrdup("true");
    if (YAJL_IS_FALSE(v))
        return xstrdup("false");
    return NULL; /* null, objects and arrays are never mirrored */
}

/* Mcp-Param-<Name> for each x-mcp-header parameter of the tool that has a value. */
static struct curl_slist *add_params(HttpTransport *t, struct curl_slist *l, yajl_val params)
{
    yajl_val map = json_get_object(t->tool_headers, json_get_string(params, "name"));
    yajl_val args = json_get_object(params, "arguments");

    for (size_t i = 0; map && i < map->u.object.len; i++) {
        _cleanup_free_ char *v = param_text(json_get(args, map->u.object.keys[i]));
        _cleanup_free_ char *name = NULL;
        if (!v)
            continue;
        name = xasprintf("Mcp-Param-%s", YAJL_GET_STRING(map->u.object.values[i]));
        l = add(l, name, v, strlen(v));
    }
    return l;
}

struct curl_slist *htm_request_headers(HttpTransport *t, yajl_val msg)
{
    const char *version = htm_version(msg), *method = json_get_string(msg, "method"), *name = NULL;
    yajl_val params = json_get_object(msg, "params");
    struct curl_slist *l = NULL;

    if (!version || !method)
        return NULL;
    l = add(l, "MCP-Protocol-Version", version, strlen(version));
    l = add(l, "Mcp-Method", method, strlen(method));
    if (streq(method, "tools/call") || streq(method, "prompts/get"))
        name = json_get_string(params, "name");
    else if (streq(method, "resources/read"))
        name = json_get_string(params, "uri");
    if (name)
        l = add(l, "Mcp-Name", name, strlen(name));
    if (streq(method, "tools/call"))
        l = add_params(t, l, params);
    return l;
}

/* A header name a tool may ask for: a token of visible ASCII, no separators. */
static bool header_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > HTM_MAX_HEADER_NAME)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f ||
            strchr(":()<>@,;\\\"/[]?={}", s[i]))
            return false;
    return true;
}

/* The x-mcp-header parameters of one tool ({param: HeaderName}), or NULL for none. */
static yajl_val tool_params(HttpTransport *t, yajl_val tool)
{
    yajl_val props = json_get_object(json_get_object(tool, "inputSchema"), "properties");
    yajl_val map = NULL;

    for (size_t i = 0; props && i < props->u.object.len; i++) {
        const char *h = json_get_string(props->u.object.values[i], "x-mcp-header");
        if (!json_get(props->u.object.values[i], "x-mcp-header"))
            continue;
        if (!header_name_ok(h)) {
            log_full(LOG_NOTICE, t->base.server, "http",
                     "tool %s: parameter %s has an x-mcp-header that is not a header name: "
                     "not mirrored",
                     json_get_string(tool, "name"), props->u.object.keys[i]);
            continue;
        }
        if (!map)
            map = json_object_new();
        if (map->u.object.len < HTM_MAX_PARAM_HEADERS)
            json_object_set(map, props->u.object.keys[i], json_string_new(h));
    }
    return map;
}

void htm_note_tools(HttpTransport *t, yajl_val result, bool first_page)
{
    yajl_val tools = json_get_array(result, "tools");

    if (first_page) {
        json_free(t->tool_headers);
        t->tool_headers = NULL;
    }
    for (size_t i = 0; tools && i < tools->u.array.len; i++) {
        const char *name = json_get_string(tools->u.array.values[i], "name");
        yajl_val map;
        if (!name || json_get(t->tool_headers, name))
            continue;
        if (!(map = tool_params(t, tools->u.array.values[i])))
            continue;
        if (!t->tool_headers)
            t->tool_headers = json_object_new();
        if (t->tool_headers->u.object.len >= HTM_MAX_TOOLS) {
            json_free(map);
            break;
        }
        json_object_set(t->tool_headers, name, map);
    }
}

char *htm_error_line(Xfer *x)
{
    _cleanup_json_ yajl_val v = x->resp.len ? json_parse(strbuf_str(&x->resp), NULL) : NULL;
    yajl_val err = json_get_object(v, "error"), id = json_get(v, "id");
    StrBuf sb = STRBUF_INIT;

    if (!YAJL_IS_INTEGER(json_get(err, "code")) || !x->req_id ||
        (id && !YAJL_IS_NULL(id) &&
         !(YAJL_IS_INTEGER(id) && (uint64_t)id->u.number.i == x->req_id)))
        return NULL;
    /* Under the request's own id: servers that could not read it answer with id null. */
    strbuf_printf(&sb, "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"error\":", x->req_id);
    json_write(&sb, err);
    strbuf_putc(&sb, '}');
    return strbuf_detach(&sb, NULL);
}
