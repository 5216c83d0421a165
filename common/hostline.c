// SPDX-License-Identifier: MIT
// hostline: what a stdio host's stream needs on its way to and from mcpd, line by line (the
// agent's identity in its initialize, the host's short tool names, the servers the host runs
// itself left out, the host's requests not answered yet), kept once for the bridge's relay and
// for a host's pipes handed to mcpd.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/hostline.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/jsonscan.h"
#include "common/mcp.h"
#include "common/util.h"

/*
 * Short names remembered (a tool mcpd no longer lists keeps its name, so a late call still
 * maps); far above any real tool count, it only stops a session with endless churn from growing.
 */
#define HOSTLINE_NAMES_MAX 100000

/* How every line mcpd writes begins: an answer's id follows at once. */
#define MCPD_LINE_HEAD "{\"jsonrpc\":\"2.0\",\""

static void ids_add(HostIds *ids, char *id)
{
    if (ids->n_ids == ids->cap) {
        ids->cap = ids->cap ? 2 * ids->cap : 16;
        ids->ids = xrealloc(ids->ids, ids->cap * sizeof(*ids->ids));
    }
    ids->ids[ids->n_ids++] = id;
}

/* Replies mostly come in order, so the search from the front is short. */
static bool ids_remove(HostIds *ids, const char *id)
{
    for (size_t i = 0; i < ids->n_ids; i++)
        if (streq(ids->ids[i], id)) {
            free(ids->ids[i]);
            memmove(ids->ids + i, ids->ids + i + 1, (ids->n_ids - i - 1) * sizeof(*ids->ids));
            ids->n_ids--;
            return true;
        }
    return false;
}

static void ids_deinit(HostIds *ids)
{
    for (size_t i = 0; i < ids->n_ids; i++)
        free(ids->ids[i]);
    free(ids->ids);
    *ids = (HostIds){0};
}

/* An id (string or integer) as one canonical text, to free; NULL if it is neither. */
static char *id_text(const char *p, size_t n)
{
    _cleanup_free_ char *copy = NULL;
    _cleanup_json_ yajl_val v = NULL;
    StrBuf sb = STRBUF_INIT;
    int64_t i;

    if (jsonscan_is_int((JsonSpan){p, n}, &i))
        return xasprintf("%" PRId64, i);
    if (jsonscan_is_plain_string((JsonSpan){p, n}))
        return xstrndup(p, n);
    copy = xstrndup(p, n);
    v = json_parse(copy, NULL);
    if (!v || !YAJL_IS_STRING(v))
        return NULL;
    json_write(&sb, v);
    return strbuf_detach(&sb, NULL);
}

/*
 * What a line is, as far as the host's stream cares: its id (canonical, to free, NULL if none)
 * and whether it carries a method. The scanner handles nearly every line without allocating; a
 * line it declines (escaped member names, deep nesting) is parsed in full.
 */
static void line_classify(const char *line, size_t len, char **idp, bool *has_methodp,
                          bool *initializep)
{
    static const char *const names[] = {"id", "method"};
    JsonSpan v[N_ELEMENTS(names)];
    _cleanup_free_ char *err = NULL;
    StrBuf sb = STRBUF_INIT;
    JsonrpcMsg m;

    *idp = NULL;
    *has_methodp = *initializep = false;
    if (jsonscan_members(line, len, names, N_ELEMENTS(names), v) >= 0) {
        *idp = v[0].p ? id_text(v[0].p, v[0].n) : NULL;
        *has_methodp = v[1].p != NULL;
        *initializep = jsonscan_span_eq(v[1], "\"initialize\"");
        return;
    }
    if (jsonrpc_msg_parse(&m, line, len, &err) == 0) {
        if (m.id) {
            json_write(&sb, m.id);
            *idp = strbuf_detach(&sb, NULL);
        }
        *has_methodp = m.method != NULL;
        *initializep = m.kind == JSONRPC_REQUEST && streq(m.method, "initialize");
    }
    jsonrpc_msg_deinit(&m);
}

/*
 * The host's initialize gains the agent's identity (h->identity: project, session, one
 * server's passthrough, tool mode, ...) where its _meta has none of those members. This holds
 * for an initialize that is not the host's first message (a host that probes with ping or
 * server/discover first): mcpd binds a connection to its workspace at initialize. A 2026-07-28
 * host sends no initialize: its requests carry _meta with the protocol version, and mcpd binds
 * the connection at the first one other than server/discover, so the identity rides on each of
 * them until that one has gone (h->attached then becomes true). Returns false, appending
 * nothing, when the line is not a request to rewrite.
 */
static bool add_identity(HostLine *h, StrBuf *out, const char *line, size_t len)
{
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;

    if (jsonrpc_msg_parse(&m, line, len, &err) != 0 || m.kind != JSONRPC_REQUEST ||
        (m.params && !YAJL_IS_OBJECT(m.params))) {
        jsonrpc_msg_deinit(&m);
        return false;
    }
    if (streq(m.method, "initialize")) {
        h->attached = true; /* a 2025 host: nothing more to add after this */
    } else {
        bool modern = !h->attached &&
                      (streq(m.method, "server/discover") ||
                       json_get(json_get_object(m.params, "_meta"), MCP_META_PROTOCOL_VERSION));
        if (!modern) {
            jsonrpc_msg_deinit(&m);
            return false;
        }
        if (!streq(m.method, "server/discover"))
            h->attached = true;
    }
    yajl_val params = m.params ? json_copy(m.params) : json_object_new();
    yajl_val meta = json_get_object(params, "_meta");
    if (!meta) {
        meta = json_object_new();
        json_object_set(params, "_meta", meta);
    }
    for (size_t i = 0; YAJL_IS_OBJECT(h->identity) && i < h->identity->u.object.len; i++) {
        const char *key = h->identity->u.object.keys[i];
        if (!json_get(meta, key))
            json_object_set(meta, key, json_copy(h->identity->u.object.values[i]));
    }
    /* Re-written with the host's id, whatever its type. */
    strbuf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
    json_write(out, m.id);
    strbuf_puts(out, ",\"method\":");
    json_write_string(out, m.method, strlen(m.method));
    strbuf_puts(out, ",\"params\":");
    json_write(out, params);
    strbuf_puts(out, "}\n");
    json_free(params);
    jsonrpc_msg_deinit(&m);
    return true;
}

/*
 * A 2026-07-28 subscriptions/listen request: it stays open until the host cancels it, so its
 * answer is not awaited when the host goes.
 */
static bool is_listen(const char *line, size_t len)
{
    static const char *const names[] = {"method"};
    JsonSpan v;

    return jsonscan_members(line, len, names, 1, &v) >= 0 &&
           jsonscan_span_eq(v, "\"subscriptions/listen\"");
}

/*
 * The request a notifications/cancelled line from the host gives up (its id, canonical as in
 * line_classify, to free), or NULL. mcpd sends no reply to a cancelled request (MCP says the
 * receiver should not), so it is no longer awaited.
 */
static char *cancelled_id(const char *line, size_t len)
{
    static const char *const names[] = {"method", "params"}, *const inner[] = {"requestId"};
    JsonSpan v[N_ELEMENTS(names)], req;
    _cleanup_free_ char *err = NULL;
    StrBuf sb = STRBUF_INIT;
    JsonrpcMsg m;

    if (jsonscan_members(line, len, names, N_ELEMENTS(names), v) >= 0) {
        if (!jsonscan_span_eq(v[0], "\"notifications/cancelled\"") || !v[1].p)
            return NULL;
        if (jsonscan_members(v[1].p, v[1].n, inner, N_ELEMENTS(inner), &req) >= 0)
            return req.p ? id_text(req.p, req.n) : NULL;
    }
    /* Escaped member names and the like: the full parser decides. */
    if (jsonrpc_msg_parse(&m, line, len, &err) == 0 && m.kind == JSONRPC_NOTIFICATION &&
        streq(m.method, "notifications/cancelled")) {
        yajl_val req_id = json_get(m.params, "requestId");
        if (YAJL_IS_STRING(req_id) || YAJL_IS_INTEGER(req_id)) {
            json_write(&sb, req_id);
            jsonrpc_msg_deinit(&m);
            return strbuf_detach(&sb, NULL);
        }
    }
    jsonrpc_msg_deinit(&m);
    return NULL;
}

/*
 * Short names: the host puts its own prefix before every tool name (Claude Code: mcp__mcpd__),
 * so mcpd's "mcp_" is dropped and a name that would still pass HOSTLINE_NAME_MAX with the
 * prefix is cut and ends in "_" + hash digits of mcpd's name. A short name taken by another
 * tool gets hash digits keyed on mcpd's name and a counter, as daemon/core/naming.c does, so two
 * tools never share one. tools/list replies are rewritten, tools/call requests mapped back.
 */
static const HostShortName *names_by_full(const HostNames *nm, const char *full)
{
    for (size_t i = 0; i < nm->n_map; i++)
        if (streq(nm->map[i].full, full))
            return &nm->map[i];
    return NULL;
}

static const HostShortName *names_by_brief(const HostNames *nm, const char *brief)
{
    for (size_t i = 0; i < nm->n_map; i++)
        if (streq(nm->map[i].brief, brief))
            return &nm->map[i];
    return NULL;
}

static void names_clear(HostNames *nm)
{
    for (size_t i = 0; i < nm->n_map; i++) {
        free(nm->map[i].full);
        free(nm->map[i].brief);
    }
    nm->n_map = 0;
}

static void names_deinit(HostNames *nm)
{
    names_clear(nm);
    nm->left = json_free(nm->left);
    free(nm->map);
    ids_deinit(&nm->lists);
}

/* name cut to leave room for "_" + hash digits of key, within room characters. */
static char *names_cut(const char *name, const char *key, size_t room)
{
    char hex[2 * SHA256_DIGEST_SIZE + 1];
    size_t n = MIN(strlen(name), room - 1 - HOSTLINE_HASH_DIGITS);

    sha256_hex(hex, key, strlen(key));
    while (n > 0 && name[n - 1] == '_')
        n--;
    return xasprintf("%.*s_%.*s", (int)n, name, HOSTLINE_HASH_DIGITS, hex);
}

/* The short name of mcpd's full name, assigned now if new (to keep: owned by nm). */
static const char *names_assign(HostNames *nm, const char *full)
{
    const HostShortName *had = names_by_full(nm, full);
    const char *base = full;
    char *brief;

    if (had)
        return had->brief;
    if (nm->n_map >= HOSTLINE_NAMES_MAX)
        names_clear(nm);
    if (strncmp(base, "mcp_", 4) == 0 && base[4])
        base += 4;
    brief = strlen(base) <= nm->room ? xstrdup(base) : names_cut(base, full, nm->room);
    for (unsigned k = 0; names_by_brief(nm, brief); k++) {
        _cleanup_free_ char *key = xasprintf("%s\x1f%u", full, k);
        char *alt = names_cut(brief, key, nm->room);
        free(brief);
        brief = alt;
    }
    if (nm->n_map == nm->cap) {
        nm->cap = nm->cap ? 2 * nm->cap : 64;
        nm->map = xrealloc(nm->map, nm->cap * sizeof(*nm->map));
    }
    nm->map[nm->n_map] = (HostShortName){xstrdup(full), brief};
    return nm->map[nm->n_map++].brief;
}

/*
 * The tools of servers the host runs itself leave the list (by mcpd's _meta["mcpd/server"]):
 * Claude Code starts the .mcp.json servers it approved, and lists them under their own name.
 */
static void names_leave_out(const HostNames *nm, yajl_val arr)
{
    size_t kept = 0;

    for (size_t i = 0; i < json_array_len(arr); i++) {
        yajl_val t = arr->u.array.values[i];
        const char *server = json_get_string(json_get_object(t, "_meta"), MCPD_META_SERVER);
        bool left = false;
        for (size_t k = 0; server && k < json_array_len(nm->left); k++)
            left |= streq(json_array_at(nm->left, k)->u.string, server);
        if (left)
            json_free(t);
        else
            arr->u.array.values[kept++] = t;
    }
    arr->u.array.len = kept;
}

static int cmp_tool_name(const void *a, const void *b)
{
    const char *x = json_get_string(*(yajl_val const *)a, "name");
    const char *y = json_get_string(*(yajl_val const *)b, "name");
    return strcmp(x, y);
}

/*
 * A tools/list reply with its names shortened, appended to out; false (nothing appended) when
 * it is not a result holding tools. New names are assigned in the order of mcpd's names, so
 * which of two colliding tools keeps the plain name does not depend on list order.
 */
static bool names_rewrite_list(HostNames *nm, StrBuf *out, const char *line, size_t len)
{
    _cleanup_free_ char *err = NULL;
    _cleanup_free_ yajl_val *tools = NULL;
    JsonrpcMsg m;
    size_t n = 0;

    if (jsonrpc_msg_parse(&m, line, len, &err) != 0 || m.kind != JSONRPC_RESPONSE ||
        !json_get_array(m.result, "tools")) {
        jsonrpc_msg_deinit(&m);
        return false;
    }
    yajl_val result = json_copy(m.result), arr = json_get_array(result, "tools");
    if (nm->left)
        names_leave_out(nm, arr);
    tools = xmalloc((json_array_len(arr) + 1) * sizeof(*tools));
    for (size_t i = 0; i < json_array_len(arr); i++)
        if (json_get_string(json_array_at(arr, i), "name"))
            tools[n++] = json_array_at(arr, i);
    if (n && nm->room)
        qsort(tools, n, sizeof(*tools), cmp_tool_name);
    for (size_t i = 0; i < n && nm->room; i++) {
        const char *brief = names_assign(nm, json_get_string(tools[i], "name"));
        json_object_set(tools[i], "name", json_string_new(brief));
    }
    strbuf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
    json_write(out, m.id);
    strbuf_puts(out, ",\"result\":");
    json_write(out, result);
    strbuf_puts(out, "}\n");
    json_free(result);
    jsonrpc_msg_deinit(&m);
    return true;
}

/*
 * A line from the host that is a tools/list request (its id awaited in nm->lists) or a
 * tools/call of a short name (re-written to out with mcpd's name). Returns true when the line
 * was appended to out; a name never listed goes through unchanged (mcpd answers Unknown tool).
 * Lines that cannot be either are not parsed.
 */
static bool names_host_line(HostNames *nm, StrBuf *out, const char *line, size_t len)
{
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;
    bool done = false;

    if (!memmem(line, len, "tools", 5))
        return false;
    if (jsonrpc_msg_parse(&m, line, len, &err) != 0 || m.kind != JSONRPC_REQUEST) {
        jsonrpc_msg_deinit(&m);
        return false;
    }
    if (streq(m.method, "tools/list")) {
        StrBuf id = STRBUF_INIT;
        json_write(&id, m.id);
        ids_add(&nm->lists, strbuf_detach(&id, NULL));
    } else if (streq(m.method, "tools/call") && YAJL_IS_OBJECT(m.params)) {
        const char *name = json_get_string(m.params, "name");
        const HostShortName *sn = name ? names_by_brief(nm, name) : NULL;
        if (sn) {
            yajl_val params = json_copy(m.params);
            json_object_set(params, "name", json_string_new(sn->full));
            strbuf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
            json_write(out, m.id);
            strbuf_puts(out, ",\"method\":\"tools/call\",\"params\":");
            json_write(out, params);
            strbuf_puts(out, "}\n");
            json_free(params);
            done = true;
        }
    }
    jsonrpc_msg_deinit(&m);
    return done;
}

/* Only JSON whitespace: no message, but mcpd would take it for one it cannot parse. */
static bool is_blank(const char *line, size_t len)
{
    return strspn(line, " \t\r") >= len;
}

void hostline_init(HostLine *h, yajl_val identity)
{
    *h = (HostLine){.identity = identity};
}

int hostline_set_prefix(HostLine *h, const char *prefix, char **whyp)
{
    size_t plen = strlen(prefix);

    if (plen + HOSTLINE_NAME_MIN_ROOM > HOSTLINE_NAME_MAX) {
        *whyp = xasprintf("--host-prefix \"%s\" is %zu characters; it must leave %d of the %d a "
                          "tool name may have (give the host's real prefix, or omit the option)",
                          prefix, plen, HOSTLINE_NAME_MIN_ROOM, HOSTLINE_NAME_MAX);
        return -EINVAL;
    }
    h->names.room = HOSTLINE_NAME_MAX - plen;
    return 0;
}

void hostline_leave_out(HostLine *h, yajl_val servers)
{
    json_free(h->names.left);
    h->names.left = json_array_len(servers) ? servers : json_free(servers);
}

bool hostline_rewrites_replies(const HostLine *h)
{
    return h->names.room || h->names.left;
}

/*
 * A batch (2025-03-26 hosts may send them): the ids of its requests are awaited like a lone
 * request's. The line is bounded by the framer, the tree by the parser's limits.
 */
static void batch_ids(HostLine *h, const char *line, size_t len)
{
    _cleanup_free_ char *copy = xstrndup(line, len);
    _cleanup_json_ yajl_val v = json_parse(copy, NULL);

    for (size_t i = 0; YAJL_IS_ARRAY(v) && i < json_array_len(v); i++) {
        yajl_val m = json_array_at(v, i), id = json_get(m, "id");
        if ((YAJL_IS_STRING(id) || YAJL_IS_INTEGER(id)) && json_get_string(m, "method")) {
            StrBuf sb = STRBUF_INIT;
            json_write(&sb, id);
            ids_add(&h->pending, strbuf_detach(&sb, NULL));
        }
    }
}

HostLineAction hostline_from_host(HostLine *h, StrBuf *out, const char *line, size_t len)
{
    HostNames *nm = &h->names;
    char *id;
    bool has_method, initialize, rewritten = false;

    if (is_blank(line, len))
        return HOSTLINE_SKIP; /* a host's stray blank line must not cost it the connection */
    if (line[strspn(line, " \t\r")] == '[') {
        batch_ids(h, line, len);
        return HOSTLINE_PASS;
    }
    line_classify(line, len, &id, &has_method, &initialize);
    if (initialize || (id && has_method && !h->attached))
        rewritten = add_identity(h, out, line, len);
    if (!rewritten && hostline_rewrites_replies(h))
        rewritten = names_host_line(nm, out, line, len);
    if (id && has_method && !is_listen(line, len)) {
        ids_add(&h->pending, id);
    } else if (!id && has_method) {
        _cleanup_free_ char *gone = cancelled_id(line, len);
        if (gone)
            ids_remove(&h->pending, gone);
    } else {
        free(id);
    }
    return rewritten ? HOSTLINE_REWRITTEN : HOSTLINE_PASS;
}

bool hostline_to_host(HostLine *h, StrBuf *out, char *line, size_t len)
{
    HostNames *nm = &h->names;
    char *id, save = line[len];
    bool has_method, initialize, done = false;

    if (!h->pending.n_ids && !nm->lists.n_ids)
        return false;
    if (!hostline_rewrites_replies(h) && hostline_to_host_start(h, line, len))
        return false;
    line[len] = '\0'; /* the full parser wants a terminated line */
    line_classify(line, len, &id, &has_method, &initialize);
    if (id && !has_method) {
        ids_remove(&h->pending, id);
        if (ids_remove(&nm->lists, id))
            done = names_rewrite_list(nm, out, line, len);
    }
    line[len] = save;
    free(id);
    return done;
}

bool hostline_to_host_start(HostLine *h, const char *p, size_t n)
{
    const size_t head = strlen(MCPD_LINE_HEAD);
    size_t i = head + 4; /* past `id":` */

    if (!h->pending.n_ids)
        return true;
    if (n < head || memcmp(p, MCPD_LINE_HEAD, head) != 0)
        return false;
    if (n >= head + 6 && memcmp(p + head, "method", 6) == 0)
        return true; /* a notification: it answers nothing */
    if (n < i || memcmp(p + head, "id\":", 4) != 0)
        return false;
    size_t start = i;
    if (i < n && p[i] == '"') {
        for (i++; i < n && p[i] != '"' && p[i] != '\\'; i++)
            ;
        if (i >= n || p[i] != '"')
            return false;
        i++;
    } else {
        while (i < n && (p[i] == '-' || (p[i] >= '0' && p[i] <= '9')))
            i++;
    }
    /* A request of mcpd's (a server's sampling or elicitation it forwards) answers nothing. */
    if (i + 9 <= n && memcmp(p + i, ",\"method\"", 9) == 0)
        return true;
    if (!(i + 9 <= n && memcmp(p + i, ",\"result\"", 9) == 0) &&
        !(i + 8 <= n && memcmp(p + i, ",\"error\"", 8) == 0))
        return false;
    _cleanup_free_ char *id = id_text(p + start, i - start);
    if (id)
        ids_remove(&h->pending, id);
    return id != NULL;
}

size_t hostline_unanswered(const HostLine *h)
{
    return h->pending.n_ids;
}

void hostline_deinit(HostLine *h)
{
    h->identity = json_free(h->identity);
    ids_deinit(&h->pending);
    names_deinit(&h->names);
}

char *hostline_request_id(const char *line, size_t len)
{
    char *id;
    bool has_method, initialize;

    if (is_blank(line, len))
        return NULL;
    line_classify(line, len, &id, &has_method, &initialize);
    if (!has_method) {
        free(id);
        return NULL;
    }
    return id;
}
