// SPDX-License-Identifier: MIT
// bridge: `mcpctl bridge`, a stdio MCP server that relays to mcpd's socket, so any MCP host
// (Claude Code, Cursor, the SDKs) can use mcpd as one server.

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "client/bridge.h"
#include "client/setup-claude.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/jsonscan.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"

/* Bytes read per wake-up from either side. */
#define BRIDGE_CHUNK 65536
/* Output queued for one side before the other side is no longer read (back-pressure). */
#define BRIDGE_QUEUE_MAX (4u << 20)
/*
 * After the host closes stdin, how long replies to requests it sent are still awaited. mcpd
 * answers every request within its call timeout (callTimeout, 60 s by default) or reports it
 * failed; a few seconds more cover a loaded machine. Past that mcpd is not going to answer.
 */
#define BRIDGE_DRAIN_MS 65000
/* The longest tool name MCP hosts accept (the same cap mcpd applies to its own names). */
#define BRIDGE_NAME_MAX 64
/* Hex digits of the hash that ends a cut short name: mcpd's own scheme (daemon/core/naming.c). */
#define BRIDGE_HASH_DIGITS 6
/* A host prefix must leave room for a few characters besides "_" and the hash digits. */
#define BRIDGE_NAME_MIN_ROOM (BRIDGE_HASH_DIGITS + 1 + 8)
/*
 * Short names remembered (a tool mcpd no longer lists keeps its name, so a late call still
 * maps); far above any real tool count, it only stops a session with endless churn from growing.
 */
#define BRIDGE_NAMES_MAX 100000

/*
 * One direction: bytes waiting to be written to fd. Written bytes are dropped from the front
 * once they make up half the buffer, so a side that never fully drains (a host streaming
 * requests to a busy mcpd) does not grow the buffer without end. keep marks bytes still
 * needed after they are written (the start of a reply line not yet complete).
 */
typedef struct Pipe {
    int fd;
    StrBuf q;
    size_t off;
    size_t keep;
    bool whole_lines; /* write only complete lines (up to keep): they may still be rewritten */
} Pipe;

static size_t pipe_queued(const Pipe *p)
{
    return p->q.len - p->off;
}

/* Bytes that may be written now. */
static size_t pipe_ready(const Pipe *p)
{
    return (p->whole_lines ? p->keep : p->q.len) - p->off;
}

static void pipe_compact(Pipe *p)
{
    size_t drop = MIN(p->off, p->keep);

    if (drop == p->q.len) {
        strbuf_reset(&p->q);
    } else if (drop >= BRIDGE_CHUNK && drop >= p->q.len / 2) {
        memmove(p->q.data, p->q.data + drop, p->q.len - drop + 1);
        p->q.len -= drop;
    } else {
        return;
    }
    p->off -= drop;
    p->keep -= drop;
}

static int pipe_flush(Pipe *p)
{
    int r = 0;

    while (pipe_ready(p)) {
        ssize_t w = write(p->fd, p->q.data + p->off, pipe_ready(p));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN)
            r = -errno;
        if (w < 0)
            break;
        p->off += (size_t)w;
    }
    pipe_compact(p);
    return r;
}

/*
 * Ids of the host's requests that mcpd has not answered yet, each in one canonical JSON text
 * (so the host's 1 matches mcpd's 1 and "a" matches "a"). Replies mostly come in order, so the
 * search from the front is short.
 */
typedef struct Pending {
    char **ids;
    size_t n_ids, cap;
} Pending;

static void pending_add(Pending *pd, char *id)
{
    if (pd->n_ids == pd->cap) {
        pd->cap = pd->cap ? 2 * pd->cap : 16;
        pd->ids = xrealloc(pd->ids, pd->cap * sizeof(*pd->ids));
    }
    pd->ids[pd->n_ids++] = id;
}

static void pending_remove(Pending *pd, const char *id)
{
    for (size_t i = 0; i < pd->n_ids; i++)
        if (streq(pd->ids[i], id)) {
            free(pd->ids[i]);
            memmove(pd->ids + i, pd->ids + i + 1, (pd->n_ids - i - 1) * sizeof(*pd->ids));
            pd->n_ids--;
            return;
        }
}

static void pending_deinit(Pending *pd)
{
    for (size_t i = 0; i < pd->n_ids; i++)
        free(pd->ids[i]);
    free(pd->ids);
    *pd = (Pending){0};
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
 * What a line is, as far as the bridge cares: its id (canonical, to free, NULL if none) and
 * whether it carries a method. The scanner handles nearly every line without allocating; a
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
 * The host's initialize gains the agent's project and session: _meta["mcpd/cwd"] from the
 * bridge's directory (or --cwd), _meta["mcpd/session"] from $MCPD_SESSION, unless it set them.
 * With a server name (--server), _meta["mcpd/server"] asks for that one server's passthrough;
 * $MCPD_TOOL_MODE ("search" or "all") gives _meta["mcpd/toolMode"], and $MCPD_PROFILE (or
 * --profile) _meta["mcpd/profile"] (docs/search.md).
 * This holds for an initialize that is not the host's first message (a host that probes with
 * ping or server/discover first): mcpd binds a connection to its workspace at initialize.
 * A 2026-07-28 host sends no initialize: its requests carry _meta with the protocol version,
 * and mcpd binds the connection at the first one other than server/discover, so the identity
 * rides on each of them until that one has gone (*attachedp then becomes true).
 * Returns false, appending nothing, when the line is not a request to rewrite.
 */
static bool add_identity(StrBuf *out, const char *line, size_t len, const char *cwd,
                         const char *server, bool *attachedp)
{
    _cleanup_free_ char *err = NULL;
    JsonrpcMsg m;
    const char *session = getenv("MCPD_SESSION");
    const char *tool_mode = getenv("MCPD_TOOL_MODE"), *profile = getenv("MCPD_PROFILE");
    bool modern = false;

    if (jsonrpc_msg_parse(&m, line, len, &err) != 0 || m.kind != JSONRPC_REQUEST ||
        (m.params && !YAJL_IS_OBJECT(m.params))) {
        jsonrpc_msg_deinit(&m);
        return false;
    }
    if (streq(m.method, "initialize")) {
        *attachedp = true; /* a 2025 host: nothing more to add after this */
    } else {
        modern = !*attachedp && (streq(m.method, "server/discover") ||
                                 json_get(json_get_object(m.params, "_meta"),
                                          "io.modelcontextprotocol/protocolVersion"));
        if (!modern) {
            jsonrpc_msg_deinit(&m);
            return false;
        }
        if (!streq(m.method, "server/discover"))
            *attachedp = true;
    }
    yajl_val params = m.params ? json_copy(m.params) : json_object_new();
    yajl_val meta = json_get_object(params, "_meta");
    if (!meta) {
        meta = json_object_new();
        json_object_set(params, "_meta", meta);
    }
    if (cwd && !json_get(meta, "mcpd/cwd"))
        json_object_set(meta, "mcpd/cwd", json_string_new(cwd));
    if (session && *session && !json_get(meta, "mcpd/session"))
        json_object_set(meta, "mcpd/session", json_string_new(session));
    if (server && !json_get(meta, "mcpd/server"))
        json_object_set(meta, "mcpd/server", json_string_new(server));
    if (tool_mode && *tool_mode && !json_get(meta, MCPD_META_TOOL_MODE)) /* search.md */
        json_object_set(meta, MCPD_META_TOOL_MODE, json_string_new(tool_mode));
    if (profile && *profile && !json_get(meta, MCPD_META_PROFILE)) /* search.md */
        json_object_set(meta, MCPD_META_PROFILE, json_string_new(profile));
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
 * A 2026-07-28 subscriptions/listen request: it stays open until the host cancels it, so the
 * bridge must not wait for its reply when the host goes.
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
 * receiver should not), so the bridge must stop awaiting it too.
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
 * Short names (--host-prefix): the host puts its own prefix before every tool name (Claude Code:
 * mcp__mcpd__), so mcpd's "mcp_" is dropped and a name that would still pass BRIDGE_NAME_MAX
 * with the prefix is cut and ends in "_" + hash digits of mcpd's name. A short name taken by
 * another tool gets hash digits keyed on mcpd's name and a counter, as daemon/core/naming.c does,
 * so two tools never share one. tools/list replies are rewritten, tools/call requests mapped back.
 */
typedef struct ShortName {
    char *full, *brief;
} ShortName;

typedef struct Names {
    size_t room;   /* characters left for a name after the host's prefix; 0: names unchanged */
    yajl_val left; /* servers whose tools the host runs itself (--host claude): not listed */
    Pending lists; /* ids of the host's tools/list requests not answered yet */
    ShortName *map;
    size_t n_map, cap;
} Names;

static const ShortName *names_by_full(const Names *nm, const char *full)
{
    for (size_t i = 0; i < nm->n_map; i++)
        if (streq(nm->map[i].full, full))
            return &nm->map[i];
    return NULL;
}

static const ShortName *names_by_brief(const Names *nm, const char *brief)
{
    for (size_t i = 0; i < nm->n_map; i++)
        if (streq(nm->map[i].brief, brief))
            return &nm->map[i];
    return NULL;
}

static void names_clear(Names *nm)
{
    for (size_t i = 0; i < nm->n_map; i++) {
        free(nm->map[i].full);
        free(nm->map[i].brief);
    }
    nm->n_map = 0;
}

static void names_deinit(Names *nm)
{
    names_clear(nm);
    nm->left = json_free(nm->left);
    free(nm->map);
    pending_deinit(&nm->lists);
}

/* name cut to leave room for "_" + hash digits of key, within room characters. */
static char *names_cut(const char *name, const char *key, size_t room)
{
    char hex[2 * SHA256_DIGEST_SIZE + 1];
    size_t n = MIN(strlen(name), room - 1 - BRIDGE_HASH_DIGITS);

    sha256_hex(hex, key, strlen(key));
    while (n > 0 && name[n - 1] == '_')
        n--;
    return xasprintf("%.*s_%.*s", (int)n, name, BRIDGE_HASH_DIGITS, hex);
}

/* The short name of mcpd's full name, assigned now if new (to keep: owned by nm). */
static const char *names_assign(Names *nm, const char *full)
{
    const ShortName *had = names_by_full(nm, full);
    const char *base = full;
    char *brief;

    if (had)
        return had->brief;
    if (nm->n_map >= BRIDGE_NAMES_MAX)
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
    nm->map[nm->n_map] = (ShortName){xstrdup(full), brief};
    return nm->map[nm->n_map++].brief;
}

/*
 * The tools of servers the host runs itself leave the list (by mcpd's _meta["mcpd/server"]):
 * Claude Code starts the .mcp.json servers it approved, and lists them under their own name.
 */
static void names_leave_out(const Names *nm, yajl_val arr)
{
    size_t kept = 0;

    for (size_t i = 0; i < json_array_len(arr); i++) {
        yajl_val t = arr->u.array.values[i];
        const char *server = json_get_string(json_get_object(t, "_meta"), "mcpd/server");
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
static bool names_rewrite_list(Names *nm, StrBuf *out, const char *line, size_t len)
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
 * was appended to out; a name the bridge never listed goes through unchanged (mcpd answers
 * Unknown tool). Lines that cannot be either are not parsed.
 */
static bool names_host_line(Names *nm, StrBuf *out, const char *line, size_t len)
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
        pending_add(&nm->lists, strbuf_detach(&id, NULL));
    } else if (streq(m.method, "tools/call") && YAJL_IS_OBJECT(m.params)) {
        const char *name = json_get_string(m.params, "name");
        const ShortName *sn = name ? names_by_brief(nm, name) : NULL;
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

/* One line from the host: to mcpd (initialize with identity), its id awaited if a request. */
static void host_line(Pipe *to_sock, Pending *pd, Names *nm, const char *line, size_t len,
                      const char *cwd, const char *server, bool *attachedp)
{
    char *id;
    bool has_method, initialize, identity = false;

    if (is_blank(line, len))
        return; /* a host's stray blank line must not cost it the connection */
    line_classify(line, len, &id, &has_method, &initialize);
    if (initialize || (id && has_method && !*attachedp))
        identity = add_identity(&to_sock->q, line, len, cwd, server, attachedp);
    if (!identity && ((!nm->room && !nm->left) || !names_host_line(nm, &to_sock->q, line, len))) {
        strbuf_append(&to_sock->q, line, len);
        strbuf_putc(&to_sock->q, '\n');
    }
    to_sock->keep = to_sock->q.len; /* only whole lines go to mcpd */
    if (id && has_method && !is_listen(line, len)) {
        pending_add(pd, id);
    } else if (!id && has_method) {
        _cleanup_free_ char *gone = cancelled_id(line, len);
        if (gone)
            pending_remove(pd, gone);
    } else {
        free(id);
    }
}

/* Replace the bytes [from, to) of q by with. */
static void strbuf_splice(StrBuf *q, size_t from, size_t to, const StrBuf *with)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_append(&sb, q->data, from);
    strbuf_append(&sb, with->data, with->len);
    strbuf_append(&sb, q->data + to, q->len - to);
    strbuf_deinit(q);
    *q = sb;
}

/*
 * Bytes from mcpd after scan are new; to_out->keep is where the first incomplete line starts.
 * Each complete line that answers a host request settles its id; one that answers a tools/list
 * gets short names (to_out holds whole lines then, so the line is not written yet).
 */
static void sock_lines(Pipe *to_out, Pending *pd, Names *nm, size_t scan)
{
    char *nl;

    while ((nl = memchr(to_out->q.data + scan, '\n', to_out->q.len - scan))) {
        char *line = to_out->q.data + to_out->keep;
        size_t len = (size_t)(nl - line);
        char *id;
        bool has_method, initialize;

        scan = (size_t)(nl - to_out->q.data) + 1;
        if (pd->n_ids || nm->lists.n_ids) {
            *nl = '\0'; /* the full parser wants a terminated line */
            line_classify(line, len, &id, &has_method, &initialize);
            *nl = '\n';
            if (id && !has_method) {
                pending_remove(pd, id);
                size_t lists = nm->lists.n_ids;
                pending_remove(&nm->lists, id);
                StrBuf sb = STRBUF_INIT;
                *nl = '\0';
                if (nm->lists.n_ids < lists && names_rewrite_list(nm, &sb, line, len)) {
                    strbuf_splice(&to_out->q, to_out->keep, scan, &sb);
                    scan = to_out->keep + sb.len;
                } else {
                    *nl = '\n';
                }
                strbuf_deinit(&sb);
            }
            free(id);
        }
        to_out->keep = scan;
    }
}

/* Connect to mcpd; on failure *whyp (to free) says why and what to do. */
static int connect_socket(const char *path, char **whyp)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        *whyp = xasprintf("mcpd's socket path %s is too long for a Unix socket; give a shorter "
                          "one with --socket or MCPD_SOCKET",
                          path);
        return -ENAMETOOLONG;
    }
    strcpy(sa.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        int e = errno;
        *whyp = xasprintf("cannot make a socket to reach mcpd: %s", strerror(e));
        return -e;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        *whyp = xasprintf(
            "mcpd is not running: nothing answers at %s (%s). Start it with `systemctl --user "
            "enable --now mcpd.socket` (or run `mcpd` in a shell), then restart the agent's mcpd "
            "server (or the agent); "
            "if mcpd listens elsewhere, give its socket to the bridge with --socket PATH or "
            "MCPD_SOCKET",
            path, strerror(e));
        close(fd);
        return -e;
    }
    return fd;
}

int bridge_reach(const char *socket_path, char **whyp)
{
    int fd = connect_socket(socket_path, whyp);

    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

/*
 * mcpd cannot be reached: a host shows only what comes back on the protocol (stderr goes to a
 * log few users find), so every request from the host, initialize first, is answered with a
 * JSON-RPC error carrying why, until the host closes stdin. Exit status 3, as mcpctl's "mcpd
 * not reachable".
 */
static int answer_unreachable(const char *why)
{
    StrBuf out = STRBUF_INIT;
    Framer in;
    char *line;
    size_t len;
    int r;

    fprintf(stderr, "mcpctl bridge: %s\n", why);
    framer_init(&in, JSONRPC_MAX_LINE_DEFAULT);
    for (;;) {
        struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
        if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
            break;
        ssize_t n = framer_read_fd(&in, STDIN_FILENO);
        if (n == -EINTR || n == -EAGAIN)
            continue;
        if (n == 0 && framer_pending(&in) && !in.discarding)
            framer_feed(&in, "\n", 1);
        while ((r = framer_next(&in, &line, &len)) != FRAMER_E_AGAIN) {
            _cleanup_free_ char *id = NULL;
            bool has_method, initialize;
            if (r == FRAMER_E_TOOBIG || is_blank(line, len))
                continue;
            line_classify(line, len, &id, &has_method, &initialize);
            if (!id || !has_method)
                continue; /* notifications and stray replies need no answer */
            strbuf_reset(&out);
            strbuf_printf(&out,
                          "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":", id,
                          MCP_ERROR_CONNECTION_CLOSED);
            json_write_string(&out, why, strlen(why));
            strbuf_puts(&out, "}}\n");
            if (fd_write_all(STDOUT_FILENO, out.data, out.len) < 0)
                n = 0; /* the host is gone */
        }
        if (n <= 0)
            break;
    }
    framer_deinit(&in);
    strbuf_deinit(&out);
    return 3;
}

/* Poll timeout: none while stdin is open, the drain time left once the host closed it. */
static int drain_poll_ms(bool in_eof, uint64_t drain_deadline)
{
    uint64_t now = now_ms();

    if (!in_eof)
        return -1;
    return now >= drain_deadline ? 0 : (int)MIN(drain_deadline - now, (uint64_t)INT_MAX);
}

int bridge_run(const char *socket_path, const char *cwd_opt, const char *server,
               const char *host_prefix, bool host_claude)
{
    char cwd_buf[PATH_MAX];
    const char *cwd = cwd_opt ? cwd_opt : getcwd(cwd_buf, sizeof(cwd_buf));
    Pipe to_sock = {.fd = -1}, to_out = {.fd = STDOUT_FILENO};
    Pending pd = {0};
    Names nm = {0};
    Framer in;
    bool in_eof = false, sock_eof = false;
    bool attached = false; /* a 2026-07-28 host's identity has reached mcpd (add_identity) */
    uint64_t drain_deadline = 0;
    int sock, ret = 0;

    if (host_prefix) {
        size_t plen = strlen(host_prefix);
        if (plen + BRIDGE_NAME_MIN_ROOM > BRIDGE_NAME_MAX) {
            fprintf(stderr,
                    "mcpctl bridge: --host-prefix \"%s\" is %zu characters; it must leave %d of "
                    "the %d a tool name may have (give the host's real prefix, or omit the "
                    "option)\n",
                    host_prefix, plen, BRIDGE_NAME_MIN_ROOM, BRIDGE_NAME_MAX);
            return 1;
        }
        nm.room = BRIDGE_NAME_MAX - plen;
        to_out.whole_lines = true;
    }
    if (host_claude && cwd && !server) {
        nm.left = setup_claude_own_servers(cwd);
        if (!json_array_len(nm.left))
            nm.left = json_free(nm.left);
        else
            to_out.whole_lines = true;
    }
    signal(SIGPIPE, SIG_IGN);
    _cleanup_free_ char *why = NULL;
    sock = connect_socket(socket_path, &why);
    if (sock < 0)
        return answer_unreachable(why);
    to_sock.fd = sock;
    fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
    fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);
    framer_init(&in, JSONRPC_MAX_LINE_DEFAULT);
    for (;;) {
        struct pollfd pfd[3] = {{-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}};
        /* Read a side only while the other side's queue has room. */
        if (!in_eof && pipe_queued(&to_sock) < BRIDGE_QUEUE_MAX)
            pfd[0] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
        pfd[1].fd = sock;
        pfd[1].events = (short)((!sock_eof && pipe_ready(&to_out) < BRIDGE_QUEUE_MAX ? POLLIN : 0) |
                                (pipe_queued(&to_sock) ? POLLOUT : 0));
        if (pipe_ready(&to_out))
            pfd[2] = (struct pollfd){STDOUT_FILENO, POLLOUT, 0};
        /* The host closed stdin (MCP's stdio shutdown): first every reply it is owed. */
        if (in_eof && !pipe_queued(&to_sock) && !pd.n_ids && !pipe_ready(&to_out))
            break;
        if (sock_eof && !pipe_ready(&to_out))
            break;
        /* Whole lines only: mcpd's lines are bounded like the host's (16 MiB by default). */
        if (to_out.whole_lines && to_out.q.len - to_out.keep > in.max) {
            fprintf(stderr, "mcpctl bridge: a message from mcpd exceeds %zu bytes\n", in.max);
            ret = 1;
            break;
        }
        int timeout = drain_poll_ms(in_eof, drain_deadline);
        if (in_eof && !timeout) {
            fprintf(stderr,
                    "mcpctl bridge: mcpd did not answer %zu request(s) within %d ms of the host "
                    "closing stdin; exiting without them\n",
                    pd.n_ids, BRIDGE_DRAIN_MS);
            ret = 1;
            break;
        }
        int n_ready = poll(pfd, 3, timeout);
        if (n_ready < 0 && errno == EINTR)
            continue;
        if (n_ready < 0) {
            ret = 1;
            break;
        }
        if (pfd[0].revents) {
            ssize_t n = framer_read_fd(&in, STDIN_FILENO);
            if (n == 0 || (n < 0 && n != -EAGAIN && n != -EINTR)) {
                in_eof = true;
                drain_deadline = now_ms() + BRIDGE_DRAIN_MS;
                /* A last message without its newline is still a message: end its line. */
                if (n == 0 && framer_pending(&in) && !in.discarding)
                    framer_feed(&in, "\n", 1);
            }
            char *line;
            size_t len;
            int r;
            while ((r = framer_next(&in, &line, &len)) != FRAMER_E_AGAIN) {
                if (r == FRAMER_E_TOOBIG) {
                    fprintf(stderr,
                            "mcpctl bridge: a message from the host exceeds %zu bytes; "
                            "dropped\n",
                            in.max);
                    continue;
                }
                host_line(&to_sock, &pd, &nm, line, len, cwd, server, &attached);
            }
        }
        if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            size_t scan = to_out.q.len;
            strbuf_reserve(&to_out.q, BRIDGE_CHUNK);
            ssize_t n = read(sock, to_out.q.data + to_out.q.len, BRIDGE_CHUNK);
            if (n > 0) {
                to_out.q.len += (size_t)n;
                to_out.q.data[to_out.q.len] = '\0';
                sock_lines(&to_out, &pd, &nm, scan);
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                sock_eof = true;
            }
        }
        if (pipe_flush(&to_sock) < 0) {
            sock_eof = true;
            strbuf_reset(&to_sock.q);
            to_sock.off = to_sock.keep = 0;
        }
        if (pipe_flush(&to_out) < 0) {
            ret = 1; /* the host is gone */
            break;
        }
    }
    if (sock_eof && !in_eof) {
        fprintf(stderr, "mcpctl bridge: mcpd closed the connection\n");
        ret = 1;
    }
    framer_deinit(&in);
    pending_deinit(&pd);
    names_deinit(&nm);
    strbuf_deinit(&to_sock.q);
    strbuf_deinit(&to_out.q);
    close(sock);
    return ret;
}
