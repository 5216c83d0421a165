// SPDX-License-Identifier: MIT
// surface: prompts, resources, resource templates, subscriptions and completion of the
// upstreams, listed, named, routed and rewritten into each workspace's view.

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/mcp.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/cache.h"
#include "daemon/core/agent.h"
#include "daemon/core/naming.h"
#include "daemon/core/surface.h"

/* One URI a server was asked to watch, and the agents that asked (by id). */
typedef struct SurfaceSub {
    char *uri; /* as the server names it */
    uint64_t *peers;
    size_t n_peers;
} SurfaceSub;

struct ServerSurface {
    yajl_val lists[SURFACE_N]; /* arrays as last listed, or NULL */
    bool listing[SURFACE_N];   /* one list of a kind in flight at most */
    bool relist[SURFACE_N];    /* list_changed came during it */
    char *notes[SURFACE_N];    /* the bound that cut the last list short, or NULL */
    yajl_val caps;             /* capabilities of its last session, kept across reconnects */
    char *instructions;
    struct event *ev_cache; /* the debounced cache write (CACHE_WRITE_DEBOUNCE_MS) */
    SurfaceSub *subs;
    size_t n_subs;
};

struct WsSurface {
    struct event *ev_notify;
    char hash[SURFACE_N][2 * SHA256_DIGEST_SIZE + 1]; /* of each view as agents last heard */
};

static const struct {
    const char *method, *key, *capability, *changed;
} kinds[SURFACE_N] = {
    [SURFACE_PROMPTS] = {"prompts/list", "prompts", "prompts",
                         "notifications/prompts/list_changed"},
    [SURFACE_RESOURCES] = {"resources/list", "resources", "resources",
                           "notifications/resources/list_changed"},
    [SURFACE_TEMPLATES] = {"resources/templates/list", "resourceTemplates", "resources",
                           "notifications/resources/list_changed"},
};

/* Scheme of the URIs of a server that lost a collision: mcpd://<server>/<its own URI>. */
#define LOSER_SCHEME "mcpd://"
#define UI_SCHEME    "ui://"
/*
 * Distinct URIs subscribed per server. Each costs memory here, one upstream request and a
 * linear search on every update; an agent watches the few files it works on (tens, a busy
 * one hundreds), so this stops only a runaway or hostile client.
 */
#define SURFACE_MAX_SUBS 1024

static void on_cache_timer(evutil_socket_t fd, short what, void *arg);

static ServerSurface *srv(Server *s)
{
    if (!s->surface) {
        s->surface = xcalloc(1, sizeof(*s->surface));
        s->surface->ev_cache = evtimer_new(s->reg->base, on_cache_timer, s);
    }
    return s->surface;
}

/* ---- the cache: what a server offered last, for the start-up gate and capabilities ---- */

/* Best effort, like the tool cache: a failure is logged, never fatal. */
static void on_cache_timer(evutil_socket_t fd, short what, void *arg)
{
    Server *s = arg;
    ServerSurface *ss = s->surface;
    _cleanup_json_ yajl_val o = json_object_new();
    _cleanup_free_ char *why = NULL;

    (void)fd, (void)what;
    json_object_set(o, "capabilities", ss->caps ? json_copy(ss->caps) : json_object_new());
    if (ss->instructions)
        json_object_set(o, "instructions", json_string_new(ss->instructions));
    for (int k = 0; k < SURFACE_N; k++)
        json_object_set(o, kinds[k].key, ss->lists[k] ? json_copy(ss->lists[k]) : json_array_new());
    _cleanup_free_ char *dir = cache_surface_dir(s->reg->cache_dir);

    if (cache_store_surface(dir, s->cfg, o, wall_ms(),
                            s->reg->settings->cache_ttl_days * 86400000LL, &why) < 0)
        log_full(LOG_WARNING, s->cfg->name, "cache", "surface cache not written: %s", why);
}

static void schedule_cache(Server *s)
{
    yajl_val caps = srv(s)->caps;
    struct timeval tv;

    /* A server that offers none of it has nothing to remember. */
    if (!json_get(caps, "prompts") && !json_get(caps, "resources") &&
        !json_get(caps, "completions"))
        return;
    if (evtimer_pending(s->surface->ev_cache, NULL))
        return;
    tv_ms(&tv, CACHE_WRITE_DEBOUNCE_MS);
    evtimer_add(s->surface->ev_cache, &tv);
}

void surface_load_cache(Server *s)
{
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val o = NULL;
    ServerSurface *ss;
    _cleanup_free_ char *dir = cache_surface_dir(s->reg->cache_dir);
    int r = cache_load_surface(dir, s->cfg, wall_ms(), &o, &why);

    if (r == CACHE_E_STALE)
        log_full(LOG_NOTICE, s->cfg->name, "cache", "surface cache miss: %s", why);
    if (r != 0)
        return;
    ss = srv(s);
    ss->caps = json_copy(json_get_object(o, "capabilities"));
    if (json_get_string(o, "instructions"))
        ss->instructions = xstrdup(json_get_string(o, "instructions"));
    for (int k = 0; k < SURFACE_N; k++) {
        yajl_val l = json_get_array(o, kinds[k].key);
        const char *key = k == SURFACE_PROMPTS     ? "name"
                          : k == SURFACE_RESOURCES ? "uri"
                                                   : "uriTemplate";
        ss->lists[k] = json_array_new();
        /* Only well-formed entries: the file is the user's own, but may be damaged. */
        for (size_t i = 0; i < json_array_len(l); i++)
            if (json_get_string(json_array_at(l, i), key))
                json_array_push(ss->lists[k], json_copy(json_array_at(l, i)));
    }
}

static yajl_val srv_list(const Server *s, SurfaceKind k)
{
    return s->surface ? s->surface->lists[k] : NULL;
}

/* ---- the servers of a workspace, in name order (every choice below is by this order) ---- */

static int cmp_server_name(const void *a, const void *b)
{
    const Server *x = *(Server *const *)a, *y = *(Server *const *)b;
    int c = strcmp(x->cfg->name, y->cfg->name);

    return c ? c : (x->id > y->id) - (x->id < y->id);
}

static Server **ws_sorted(Workspace *ws)
{
    Server **v = xcalloc(ws->n_servers + 1, sizeof(*v));

    if (ws->n_servers) { /* servers is NULL in a workspace with none */
        memcpy(v, ws->servers, ws->n_servers * sizeof(*v));
        qsort(v, ws->n_servers, sizeof(*v), cmp_server_name);
    }
    return v;
}

/* The server's name as it appears inside URIs (ui://<tag>/..., mcpd://<tag>/...). */
static char *srv_tag(const Server *s)
{
    return naming_sanitize(s->cfg->name, "server");
}

/* ---- single-server passthrough ---- */

static Server *ws_server_named(Workspace *ws, const char *name)
{
    ws_wait_discovered(ws);
    for (size_t i = 0; i < ws->n_servers; i++)
        if (streq(ws->servers[i]->cfg->name, name))
            return ws->servers[i];
    return NULL;
}

int surface_passthrough_set(Manager *m, Peer *p, const char *name, char **whyp)
{
    if (!ws_server_named(ws_of_peer(&m->workspaces, p), name)) {
        *whyp = xasprintf("_meta[\"mcpd/server\"]: no server \"%s\" in this agent's workspace "
                          "(see mcpctl status)",
                          name);
        return SURFACE_E_UNKNOWN_SERVER;
    }
    free(idmap_remove(&m->passthrough, p->id));
    idmap_put(&m->passthrough, p->id, xstrdup(name));
    return 0;
}

void surface_passthrough_clear(Manager *m, const Peer *p)
{
    free(idmap_remove(&m->passthrough, p->id));
}

bool surface_passthrough(Manager *m, const Peer *p, Server **sp)
{
    const char *name;

    /* The common case, no passthrough agent at all, costs one load. */
    if (!m->passthrough.n || !(name = idmap_get(&m->passthrough, p->id)))
        return false;
    *sp = ws_server_named(ws_of_peer(&m->workspaces, p), name);
    return true;
}

void surface_passthrough_deinit(Manager *m)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&m->passthrough, &pos, NULL, &v))
        free(v);
    idmap_deinit(&m->passthrough);
}

/* ---- URIs: exposing and routing ---- */

static bool list_has_uri(yajl_val list, const char *key, const char *uri)
{
    for (size_t i = 0; i < json_array_len(list); i++) {
        const char *u = json_get_string(json_array_at(list, i), key);
        if (u && streq(u, uri))
            return true;
    }
    return false;
}

/* Whether a server before s (in name order) already lists uri: then s's copy is renamed. */
static bool uri_taken_before(Server **sorted, size_t n, Server *s, SurfaceKind k, const char *uri)
{
    const char *key = k == SURFACE_TEMPLATES ? "uriTemplate" : "uri";

    for (size_t i = 0; i < n && sorted[i] != s; i++)
        if (list_has_uri(srv_list(sorted[i], k), key, uri))
            return true;
    return false;
}

static char *expose_kind(Workspace *ws, Server **sorted, Server *s, SurfaceKind k, const char *uri)
{
    _cleanup_free_ char *tag = srv_tag(s);

    if (!strncmp(uri, UI_SCHEME, strlen(UI_SCHEME)))
        /* MCP Apps hosts render ui:// only: the server goes into the authority. */
        return xasprintf(UI_SCHEME "%s/%s", tag, uri + strlen(UI_SCHEME));
    if (uri_taken_before(sorted, ws->n_servers, s, k, uri))
        return xasprintf(LOSER_SCHEME "%s/%s", tag, uri);
    return xstrdup(uri);
}

char *surface_expose_uri(Workspace *ws, Server *s, const char *uri)
{
    _cleanup_free_ Server **sorted = ws_sorted(ws);

    return expose_kind(ws, sorted, s, SURFACE_RESOURCES, uri);
}

/* The server whose tag starts text (followed by '/'); *restp is after the '/'. */
static Server *by_tag(Server **sorted, size_t n, const char *text, const char **restp)
{
    const char *slash = strchr(text, '/');

    if (!slash)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *tag = srv_tag(sorted[i]);
        if (strlen(tag) == (size_t)(slash - text) && !strncmp(tag, text, slash - text)) {
            *restp = slash + 1;
            return sorted[i];
        }
    }
    return NULL;
}

/*
 * RFC 6570 templates, as far as routing needs: literal text must match exactly; a simple
 * {var} matches a run without '/', '?' or '#'; other operators ({+var}, {/var}, {?var} ...)
 * match any run. Budgeted by *steps (SURFACE_MATCH_STEPS).
 */
static bool tmpl_match(const char *t, const char *u, long *steps)
{
    if (--*steps < 0)
        return false;
    while (*t && *t != '{') {
        if (*t != *u)
            return false;
        t++, u++;
    }
    if (!*t)
        return !*u;
    const char *close = strchr(t, '}');
    if (!close)
        return false;
    bool simple = t[1] != '+' && t[1] != '#' && t[1] != '/' && t[1] != '?' && t[1] != '&' &&
                  t[1] != '.' && t[1] != ';';
    for (const char *e = u;; e++) {
        if (tmpl_match(close + 1, e, steps))
            return true;
        if (!*e || (simple && strchr("/?#", *e)) || *steps < 0)
            return false;
    }
}

static bool uri_valid(const char *uri, char **whyp)
{
    size_t n = strlen(uri), i = 0;

    if (n > SURFACE_MAX_URI_BYTES) {
        *whyp =
            xasprintf("the URI is %zu bytes; at most %d are accepted", n, SURFACE_MAX_URI_BYTES);
        return false;
    }
    while (i < n && (isalnum((unsigned char)uri[i]) || (i && strchr("+.-", uri[i]))))
        i++;
    if (!i || i >= n || uri[i] != ':' || !isalpha((unsigned char)uri[0])) {
        *whyp = xasprintf("\"%.200s\" is not a URI: it needs a scheme such as file: or ui:", uri);
        return false;
    }
    for (i = 0; i < n; i++)
        if ((unsigned char)uri[i] < 0x20 || uri[i] == 0x7f) {
            *whyp = xasprintf("\"%.200s\" is not a URI: it holds control characters", uri);
            return false;
        }
    return true;
}

/*
 * The server an agent's URI belongs to, and the URI as that server names it: by the server
 * tag of ui:// and mcpd:// URIs, else the first server (name order) that lists it, else the
 * first with a template that matches, else the only server that offers resources.
 */
static Server *route_uri(Manager *m, Peer *p, const char *uri, SurfaceKind k, char **origp,
                         char **whyp)
{
    Workspace *ws = ws_of_peer(&m->workspaces, p);
    _cleanup_free_ Server **sorted = ws_sorted(ws);
    const char *key = k == SURFACE_TEMPLATES ? "uriTemplate" : "uri", *rest;
    Server *s, *only = NULL;
    size_t n_offer = 0;

    if (!uri_valid(uri, whyp))
        return NULL;
    if (surface_passthrough(m, p, &s)) {
        if (!s)
            *whyp = xstrdup("the server this agent sees has left its workspace");
        else
            *origp = xstrdup(uri);
        return s;
    }
    if (!strncmp(uri, UI_SCHEME, strlen(UI_SCHEME)) &&
        (s = by_tag(sorted, ws->n_servers, uri + strlen(UI_SCHEME), &rest))) {
        *origp = xasprintf(UI_SCHEME "%s", rest);
        return s;
    }
    if (!strncmp(uri, LOSER_SCHEME, strlen(LOSER_SCHEME)) &&
        (s = by_tag(sorted, ws->n_servers, uri + strlen(LOSER_SCHEME), &rest))) {
        *origp = xstrdup(rest);
        return s;
    }
    for (size_t i = 0; i < ws->n_servers; i++)
        if (list_has_uri(srv_list(sorted[i], k), key, uri)) {
            *origp = xstrdup(uri);
            return sorted[i];
        }
    for (size_t i = 0; k == SURFACE_RESOURCES && i < ws->n_servers; i++) {
        yajl_val tl = srv_list(sorted[i], SURFACE_TEMPLATES);
        for (size_t j = 0; j < json_array_len(tl); j++) {
            const char *t = json_get_string(json_array_at(tl, j), "uriTemplate");
            long steps = SURFACE_MATCH_STEPS;
            if (t && tmpl_match(t, uri, &steps)) {
                *origp = xstrdup(uri);
                return sorted[i];
            }
        }
    }
    for (size_t i = 0; i < ws->n_servers; i++)
        if (sorted[i]->surface && json_get(sorted[i]->surface->caps, "resources")) {
            n_offer++;
            only = sorted[i];
        }
    if (n_offer == 1) {
        /* One resource server: a URI it did not list (dynamic ones) is still its own. */
        *origp = xstrdup(uri);
        return only;
    }
    *whyp = xasprintf("Unknown resource: %.200s: no server of this workspace lists it or has a "
                      "template that matches it (see resources/list and resources/templates/list)",
                      uri);
    return NULL;
}

/* Rewrite one object's URI member in place. */
static void rewrite_member(Workspace *ws, Server **sorted, Server *s, yajl_val o, const char *key)
{
    const char *uri = json_get_string(o, key);

    if (uri)
        json_object_set(o, key,
                        json_string_new_take(expose_kind(ws, sorted, s, SURFACE_RESOURCES, uri)));
}

/* Content blocks (tool results, prompt messages): resource_link and embedded resource. */
static void rewrite_content(Workspace *ws, Server **sorted, Server *s, yajl_val item)
{
    const char *type = json_get_string(item, "type");

    if (!type)
        return;
    if (streq(type, "resource_link"))
        rewrite_member(ws, sorted, s, item, "uri");
    else if (streq(type, "resource"))
        rewrite_member(ws, sorted, s, json_get_object(item, "resource"), "uri");
}

void surface_rewrite_result(Workspace *ws, Server *s, yajl_val result)
{
    _cleanup_free_ Server **sorted = ws_sorted(ws);
    yajl_val contents = json_get_array(result, "contents");
    yajl_val content = json_get_array(result, "content");
    yajl_val messages = json_get_array(result, "messages");

    for (size_t i = 0; i < json_array_len(contents); i++)
        rewrite_member(ws, sorted, s, json_array_at(contents, i), "uri"); /* resources/read */
    for (size_t i = 0; i < json_array_len(content); i++)
        rewrite_content(ws, sorted, s, json_array_at(content, i)); /* tools/call */
    for (size_t i = 0; i < json_array_len(messages); i++)
        rewrite_content(ws, sorted, s, json_get_object(json_array_at(messages, i), "content"));
}

bool surface_raw_has_uris(const char *raw, size_t len)
{
    static const char needle[] = "\"resource";
    const size_t n = sizeof(needle) - 1;
    const char *end = raw + len, *p = raw + 1;

    /*
     * By its 'r' (memchr is vectorised; memmem sets up a shift table for every call, which
     * costs more than a typical tool result holds).
     */
    while (p < end && (p = memchr(p, 'r', (size_t)(end - p)))) {
        if (p[-1] == '"' && (size_t)(end - p) >= n - 1 && memcmp(p, needle + 1, n - 1) == 0)
            return true;
        p++;
    }
    return false;
}

/* ---- views ---- */

/* The exposed prompts of a workspace, sorted by name; items carry their server and name. */
typedef struct PromptRef {
    Server *s;
    yajl_val def;
} PromptRef;

static NamingEntry *prompt_names(Workspace *ws, size_t *np)
{
    size_t n = 0, k = 0;
    NamingEntry *e;

    for (size_t i = 0; i < ws->n_servers; i++)
        n += json_array_len(srv_list(ws->servers[i], SURFACE_PROMPTS));
    e = xcalloc(n + 1, sizeof(*e));
    for (size_t i = 0; i < ws->n_servers; i++) {
        yajl_val l = srv_list(ws->servers[i], SURFACE_PROMPTS);
        for (size_t j = 0; j < json_array_len(l); j++, k++) {
            PromptRef *r = xcalloc(1, sizeof(*r));
            r->s = ws->servers[i];
            r->def = json_array_at(l, j);
            e[k].server = r->s->cfg->name;
            e[k].tool = json_get_string(r->def, "name");
            e[k].data = r;
        }
    }
    naming_assign(e, n);
    *np = n;
    return e;
}

static void prompt_names_free(NamingEntry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].name);
        free(e[i].data);
    }
    free(e);
}

static void set_meta(yajl_val o, yajl_val def, Server *s, const char *orig_key, const char *orig)
{
    yajl_val meta = json_copy(json_get_object(def, "_meta"));

    if (!meta)
        meta = json_object_new();
    json_object_set(meta, MCPD_META_SERVER, json_string_new(s->cfg->name));
    if (orig_key)
        json_object_set(meta, orig_key, json_string_new(orig));
    /* An idle server's entries are listed as while it runs: a call starts it. */
    json_object_set(meta, MCPD_META_DEFERRED,
                    json_bool_new(s->state != SERVER_CONNECTED && !s->idle_stopped));
    json_object_set(o, "_meta", meta);
}

static const char *sort_key; /* the member view_sort orders by: one list sorted at a time */

static int cmp_by_key(const void *a, const void *b)
{
    yajl_val x = *(yajl_val const *)a, y = *(yajl_val const *)b;
    const char *kx = json_get_string(json_get_object(x, "_meta"), MCPD_META_SERVER);
    const char *ky = json_get_string(json_get_object(y, "_meta"), MCPD_META_SERVER);
    int c = strcmp(kx ? kx : "", ky ? ky : "");

    if (c)
        return c;
    kx = json_get_string(x, sort_key);
    ky = json_get_string(y, sort_key);
    return strcmp(kx ? kx : "", ky ? ky : "");
}

/*
 * Resources and templates by server name, then by exposed URI (or template): a server may
 * list them in any order (a directory's, a map's), and a host's prompt cache wants the same
 * bytes for the same set (issue 33, test-stable-order). Each server's entries stay together,
 * so a small server's are not pushed past the first page by a big one's.
 */
static void view_sort(yajl_val list, const char *key)
{
    if (json_array_len(list) < 2)
        return;
    sort_key = key;
    qsort(list->u.array.values, list->u.array.len, sizeof(yajl_val), cmp_by_key);
    sort_key = NULL;
}

/* The whole merged list of one kind, in its deterministic order. */
static yajl_val view_build(Workspace *ws, SurfaceKind k)
{
    yajl_val out = json_array_new();

    if (k == SURFACE_PROMPTS) {
        size_t n;
        NamingEntry *e = prompt_names(ws, &n);
        for (size_t i = 0; i < n; i++) {
            PromptRef *r = e[i].data;
            yajl_val o = json_copy(r->def);
            json_object_set(o, "name", json_string_new(e[i].name));
            set_meta(o, r->def, r->s, MCPD_META_PROMPT, e[i].tool);
            json_array_push(out, o);
        }
        prompt_names_free(e, n);
        return out;
    }
    _cleanup_free_ Server **sorted = ws_sorted(ws);
    const char *key = k == SURFACE_TEMPLATES ? "uriTemplate" : "uri";
    for (size_t i = 0; i < ws->n_servers; i++) {
        yajl_val l = srv_list(sorted[i], k);
        for (size_t j = 0; j < json_array_len(l); j++) {
            yajl_val def = json_array_at(l, j), o = json_copy(def);
            const char *uri = json_get_string(def, key);
            json_object_set(o, key,
                            json_string_new_take(expose_kind(ws, sorted, sorted[i], k, uri)));
            set_meta(o, def, sorted[i],
                     k == SURFACE_TEMPLATES ? MCPD_META_URI_TEMPLATE : MCPD_META_URI, uri);
            json_array_push(out, o);
        }
    }
    view_sort(out, key);
    return out;
}

void surface_list(Manager *m, Peer *p, yajl_val id, SurfaceKind k, yajl_val params)
{
    Workspace *ws = ws_of_peer(&m->workspaces, p);
    yajl_val cur = json_get(params, "cursor"), r, page;
    Server *s;
    _cleanup_json_ yajl_val all = NULL;
    unsigned long long off = 0;
    char *end;

    if (cur) {
        const char *c = YAJL_IS_STRING(cur) ? cur->u.string : NULL;
        errno = 0;
        off = c && *c ? strtoull(c, &end, 10) : 0;
        if (!c || !*c || *end || errno || !isdigit((unsigned char)*c)) {
            agent_reply_error(m->peers, p->id, id, JSONRPC_INVALID_PARAMS,
                              "invalid cursor: pass back the nextCursor of the previous page");
            return;
        }
    }
    if (surface_passthrough(m, p, &s))
        all = json_copy(s ? srv_list(s, k) : NULL);
    else
        all = view_build(ws, k);
    if (!all)
        all = json_array_new();
    r = json_object_new();
    page = json_array_new();
    for (size_t i = off; i < json_array_len(all) && i < off + SURFACE_PAGE_SIZE; i++) {
        json_array_push(page, all->u.array.values[i]);
        all->u.array.values[i] = NULL;
    }
    json_object_set(r, kinds[k].key, page);
    if (off + SURFACE_PAGE_SIZE < json_array_len(all)) {
        _cleanup_free_ char *next = xasprintf("%llu", off + SURFACE_PAGE_SIZE);
        json_object_set(r, "nextCursor", json_string_new(next));
    }
    agent_reply(m->peers, p->id, id, r);
    json_free(r);
}

/* ---- list_changed, coalesced per workspace ---- */

/* The hash of each of ws's views now; *changed[k]: it differs from the one agents last heard
 * (changed may be NULL). Records them as heard. */
static void ws_surface_rehash(Workspace *ws, bool changed[SURFACE_N])
{
    StrBuf sb = STRBUF_INIT;

    for (int k = 0; k < SURFACE_N; k++) {
        _cleanup_json_ yajl_val v = view_build(ws, (SurfaceKind)k);
        char hash[2 * SHA256_DIGEST_SIZE + 1];
        json_write(&sb, v);
        sha256_hex(hash, sb.data ? sb.data : "", sb.len);
        strbuf_reset(&sb);
        if (!streq(hash, ws->surface->hash[k])) {
            memcpy(ws->surface->hash[k], hash, sizeof(hash));
            if (changed)
                changed[k == SURFACE_TEMPLATES ? SURFACE_RESOURCES : k] = true;
        }
    }
    strbuf_deinit(&sb);
}

static void on_ws_notify(evutil_socket_t fd, short what, void *arg)
{
    Workspace *ws = arg;
    bool send[SURFACE_N] = {false};

    (void)fd, (void)what;
    ws_surface_rehash(ws, send);
    for (int k = 0; k < SURFACE_TEMPLATES; k++) {
        if (!send[k])
            continue;
        agent_broadcast(ws->reg->peers, ws->reg->agents, kinds[k].changed, NULL, ws_agent_attached,
                        ws);
    }
}

static WsSurface *ws_surface(Workspace *ws)
{
    if (!ws->surface) {
        ws->surface = xcalloc(1, sizeof(*ws->surface));
        ws->surface->ev_notify = evtimer_new(ws->reg->base, on_ws_notify, ws);
    }
    return ws->surface;
}

void surface_ws_free(Workspace *ws)
{
    if (!ws->surface)
        return;
    event_free(ws->surface->ev_notify);
    free(ws->surface);
    ws->surface = NULL;
}

void surface_ws_changed(Workspace *ws, bool first)
{
    struct timeval tv;

    if (ws->reg->servers->shutting_down)
        return;
    ws_surface(ws);
    if (first) {
        /* A new workspace's lists are where its agents start: only a change from them is news. */
        ws_surface_rehash(ws, NULL);
        return;
    }
    if (evtimer_pending(ws->surface->ev_notify, NULL))
        return;
    tv_ms(&tv, LIST_CHANGED_COALESCE_MS);
    evtimer_add(ws->surface->ev_notify, &tv);
}

/* A server's lists changed: the workspaces that see it compare and tell their agents. */
static void surface_changed(Server *s)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&server_manager(s)->workspaces.by_id, &pos, NULL, &v))
        if (ws_has_server(v, s))
            surface_ws_changed(v, false);
}

/* ---- fetching a server's lists ---- */

typedef struct ListJob {
    uint64_t server_id;
    Manager *m;
    SurfaceKind kind;
} ListJob;

static void surface_fetch(Server *s, SurfaceKind k);

static void on_surface_list(Upstream *u, void *ctx, const UpstreamReply *r)
{
    ListJob *job = ctx;
    Server *s = server_get(&job->m->servers, job->server_id);
    SurfaceKind k = job->kind;
    ServerSurface *ss;
    yajl_val list;

    free(job);
    if (!s || !s->surface || s->up != u || r->outcome == UPSTREAM_CANCELLED)
        return;
    ss = s->surface;
    ss->listing[k] = false;
    if (r->outcome != UPSTREAM_OK) {
        log_full(LOG_WARNING, s->cfg->name, kinds[k].key, "%s failed: %s", kinds[k].method,
                 r->message ? r->message : "?");
    } else {
        free(ss->notes[k]);
        ss->notes[k] = r->message ? xstrdup(r->message) : NULL;
        if (ss->notes[k])
            log_full(LOG_WARNING, s->cfg->name, kinds[k].key, "%s", ss->notes[k]);
        list = json_object_take(r->result, kinds[k].key);
        if (!json_equal(list, ss->lists[k])) {
            json_free(ss->lists[k]);
            ss->lists[k] = list;
            surface_changed(s);
            schedule_cache(s);
        } else {
            json_free(list);
        }
    }
    if (ss->relist[k] && s->state == SERVER_CONNECTED && s->up)
        surface_fetch(s, k);
}

static void surface_fetch(Server *s, SurfaceKind k)
{
    ServerSurface *ss = srv(s);
    UpstreamListLimits lim = {
        .max_tools = s->reg->settings->max_tools_per_server,
        .max_pages = s->reg->settings->max_list_pages,
        .max_bytes = s->reg->settings->max_list_bytes,
    };
    ListJob *job;

    if (ss->listing[k]) {
        ss->relist[k] = true;
        return;
    }
    job = xcalloc(1, sizeof(*job));
    job->server_id = s->id;
    job->m = server_manager(s);
    job->kind = k;
    ss->listing[k] = true;
    ss->relist[k] = false;
    upstream_list(s->up, kinds[k].method, kinds[k].key, kinds[k].capability, s->cfg->timeout_ms,
                  &lim, on_surface_list, job);
}

static void on_subscribed(Upstream *u, void *ctx, const UpstreamReply *r)
{
    char *uri = ctx;

    if (r->outcome == UPSTREAM_ERROR || r->outcome == UPSTREAM_TIMEOUT)
        log_full(LOG_WARNING, u->name, "subscribe", "resources/subscribe %s failed: %s", uri,
                 r->message);
    free(uri);
}

static void send_subscribe(Server *s, const char *method, const char *uri)
{
    yajl_val params = json_object_new();

    json_object_set(params, "uri", json_string_new(uri));
    upstream_request(s->up, method, params, s->cfg->timeout_ms, 0, on_subscribed, xstrdup(uri),
                     NULL);
}

size_t surface_resubscribe(Server *s)
{
    ServerSurface *ss = s->surface;

    for (size_t i = 0; ss && s->up && i < ss->n_subs; i++)
        send_subscribe(s, "resources/subscribe", ss->subs[i].uri);
    return ss && s->up ? ss->n_subs : 0;
}

void surface_server_connected(Server *s)
{
    ServerSurface *ss = srv(s);

    json_free(ss->caps);
    ss->caps = json_copy(s->up->capabilities);
    free(ss->instructions);
    ss->instructions = s->up->instructions ? xstrdup(s->up->instructions) : NULL;
    schedule_cache(s);
    for (int k = 0; k < SURFACE_N; k++) {
        ss->listing[k] = false; /* a list of the old session never answers */
        surface_fetch(s, (SurfaceKind)k);
    }
    surface_resubscribe(s); /* a new session knows nothing of the old one's subscriptions */
    surface_changed(s);
}

void surface_server_clear(Server *s)
{
    if (!s->surface)
        return;
    for (int k = 0; k < SURFACE_N; k++)
        s->surface->lists[k] = json_free(s->surface->lists[k]);
    /* Nothing is offered until it connects again (which sets them anew); the cache keeps
     * what it last offered, for the next start. */
    s->surface->caps = json_free(s->surface->caps);
    event_del(s->surface->ev_cache);
    surface_changed(s);
}

void surface_server_free(Server *s)
{
    ServerSurface *ss = s->surface;

    if (!ss)
        return;
    if (evtimer_pending(ss->ev_cache, NULL))
        on_cache_timer(-1, 0, s); /* a debounced write is not lost when the server goes */
    for (int k = 0; k < SURFACE_N; k++) {
        json_free(ss->lists[k]);
        free(ss->notes[k]);
    }
    for (size_t i = 0; i < ss->n_subs; i++) {
        free(ss->subs[i].uri);
        free(ss->subs[i].peers);
    }
    free(ss->subs);
    json_free(ss->caps);
    free(ss->instructions);
    event_free(ss->ev_cache);
    free(ss);
    s->surface = NULL;
}

/* resources/updated goes to exactly the agents subscribed to that URI, in their own view. */
static void route_updated(Server *s, yajl_val params)
{
    const char *uri = json_get_string(params, "uri");
    ServerSurface *ss = s->surface;

    for (size_t i = 0; uri && ss && i < ss->n_subs; i++) {
        if (!streq(ss->subs[i].uri, uri))
            continue;
        for (size_t j = 0; j < ss->subs[i].n_peers; j++) {
            Peer *p = peer_get(server_manager(s)->peers, ss->subs[i].peers[j]);
            if (!p)
                continue;
            _cleanup_json_ yajl_val out = json_copy(params);
            Server *only;
            if (!surface_passthrough(server_manager(s), p, &only))
                json_object_set(out, "uri",
                                json_string_new_take(surface_expose_uri(
                                    ws_of_peer(&server_manager(s)->workspaces, p), s, uri)));
            agent_notify(server_manager(s)->peers, p->id, "notifications/resources/updated", out);
        }
        return;
    }
}

bool surface_notification(Server *s, const char *method, yajl_val params)
{
    if (streq(method, "notifications/resources/updated")) {
        route_updated(s, params);
        return true;
    }
    for (int k = 0; k < SURFACE_N; k++) {
        if (!streq(method, kinds[k].changed))
            continue;
        if (s->state == SERVER_CONNECTED && s->up) {
            surface_fetch(s, (SurfaceKind)k);
            if (k == SURFACE_RESOURCES)
                surface_fetch(s, SURFACE_TEMPLATES);
        }
        return true;
    }
    return false;
}

bool surface_server_busy(Server *s)
{
    return s->surface && s->surface->n_subs;
}

void surface_status(Server *s, yajl_val o)
{
    ServerSurface *ss = s->surface;
    size_t n_subs = ss ? ss->n_subs : 0;

    for (int k = 0; k < SURFACE_N; k++) {
        json_object_set(o, kinds[k].key, json_int_new((int64_t)json_array_len(srv_list(s, k))));
        if (ss && ss->notes[k]) {
            _cleanup_free_ char *key = xasprintf("%sLimit", kinds[k].key);
            json_object_set(o, key, json_string_new(ss->notes[k]));
        }
    }
    json_object_set(o, "subscriptions", json_int_new((int64_t)n_subs));
}

/* ---- capabilities ---- */

void surface_capabilities(Manager *m, Peer *p, yajl_val caps)
{
    Workspace *ws = ws_of_peer(&m->workspaces, p);
    bool prompts = false, resources = false, subscribe = false, completions = false;
    bool tasks = false;
    Server *only = NULL;
    bool pass = surface_passthrough(m, p, &only);

    for (size_t i = 0; i < ws->n_servers; i++) {
        Server *s = ws->servers[i];
        yajl_val c = s->surface ? s->surface->caps : NULL, res = json_get_object(c, "resources");
        bool sub = false;
        if (!s->cfg->enabled || (pass && s != only))
            continue;
        prompts |= json_get_object(c, "prompts") != NULL;
        resources |= res != NULL;
        if (json_get_bool(res, "subscribe", &sub) == 0)
            subscribe |= sub;
        completions |= json_get_object(c, "completions") != NULL;
        /* Live capabilities first: a cached set may predate the server's tasks. */
        tasks |= tasks_server_supports(s->up && s->up->capabilities ? s->up->capabilities : c);
    }
    if (prompts) {
        yajl_val o = json_object_new();
        json_object_set(o, "listChanged", json_bool_new(true));
        json_object_set(caps, "prompts", o);
    }
    if (resources) {
        yajl_val o = json_object_new();
        json_object_set(o, "subscribe", json_bool_new(subscribe));
        json_object_set(o, "listChanged", json_bool_new(true));
        json_object_set(caps, "resources", o);
    }
    if (completions)
        json_object_set(caps, "completions", json_object_new());
    if (tasks)
        json_object_set(caps, "tasks", tasks_capability());
}

char *surface_instructions(Manager *m, Peer *p)
{
    Workspace *ws = ws_of_peer(&m->workspaces, p);
    _cleanup_free_ Server **sorted = ws_sorted(ws);
    StrBuf sb = STRBUF_INIT;
    Server *only;

    if (surface_passthrough(m, p, &only)) {
        /* The server's own words, as if the agent spoke to it directly. */
        const char *t = only && only->surface ? only->surface->instructions : NULL;
        return t && *t ? xstrdup(t) : NULL;
    }
    for (size_t i = 0; i < ws->n_servers; i++) {
        const char *t = sorted[i]->surface ? sorted[i]->surface->instructions : NULL;
        if (!t || !*t)
            continue;
        strbuf_printf(&sb, "%s## %s\n%s\n", sb.len ? "\n" : "", sorted[i]->cfg->name, t);
    }
    return sb.len ? strbuf_detach(&sb, NULL) : (strbuf_deinit(&sb), NULL);
}

/* ---- requests routed to one server ---- */

void surface_prompt_get(Manager *m, Peer *p, yajl_val id, yajl_val params)
{
    const char *name = json_get_string(params, "name");
    size_t n;
    NamingEntry *e;
    _cleanup_json_ yajl_val fwd = NULL;
    Server *only;

    if (surface_passthrough(m, p, &only) && only) {
        call_route(&m->calls, p, id, only, "prompts/get", params);
        return;
    }
    e = prompt_names(ws_of_peer(&m->workspaces, p), &n);

    for (size_t i = 0; i < n; i++) {
        if (!streq(e[i].name, name))
            continue;
        PromptRef *r = e[i].data;
        fwd = json_copy(params);
        json_object_set(fwd, "name", json_string_new(e[i].tool));
        call_route(&m->calls, p, id, r->s, "prompts/get", fwd);
        prompt_names_free(e, n);
        return;
    }
    prompt_names_free(e, n);
    _cleanup_free_ char *msg = xasprintf("Unknown prompt: %s (see prompts/list)", name);
    agent_reply_error(m->peers, p->id, id, JSONRPC_INVALID_PARAMS, msg);
}

void surface_read(Manager *m, Peer *p, yajl_val id, yajl_val params)
{
    _cleanup_free_ char *orig = NULL, *why = NULL;
    Server *s = route_uri(m, p, json_get_string(params, "uri"), SURFACE_RESOURCES, &orig, &why);
    _cleanup_json_ yajl_val fwd = NULL;

    if (!s) {
        agent_reply_error(m->peers, p->id, id, JSONRPC_INVALID_PARAMS, why);
        return;
    }
    fwd = json_copy(params);
    json_object_set(fwd, "uri", json_string_new(orig));
    call_route(&m->calls, p, id, s, "resources/read", fwd);
}

static SurfaceSub *sub_find(ServerSurface *ss, const char *uri)
{
    for (size_t i = 0; i < ss->n_subs; i++)
        if (streq(ss->subs[i].uri, uri))
            return &ss->subs[i];
    return NULL;
}

static bool sub_has(const SurfaceSub *sub, uint64_t peer_id)
{
    for (size_t i = 0; i < sub->n_peers; i++)
        if (sub->peers[i] == peer_id)
            return true;
    return false;
}

/* Drop one agent from a subscription; the last one out unsubscribes upstream. */
static void sub_leave(Server *s, SurfaceSub *sub, uint64_t peer_id)
{
    ServerSurface *ss = s->surface;

    for (size_t i = 0; i < sub->n_peers; i++)
        if (sub->peers[i] == peer_id)
            sub->peers[i] = sub->peers[--sub->n_peers];
    if (sub->n_peers)
        return;
    if (s->state == SERVER_CONNECTED && s->up)
        send_subscribe(s, "resources/unsubscribe", sub->uri);
    free(sub->uri);
    free(sub->peers);
    *sub = ss->subs[--ss->n_subs];
}

int surface_subscribe_uri(Manager *m, Peer *p, const char *uri, bool on, char **whyp)
{
    _cleanup_free_ char *orig = NULL;
    Server *s = route_uri(m, p, uri, SURFACE_RESOURCES, &orig, whyp);
    ServerSurface *ss;
    SurfaceSub *sub;
    bool can = false;

    if (!s)
        return JSONRPC_INVALID_PARAMS;
    ss = srv(s);
    json_get_bool(json_get_object(ss->caps, "resources"), "subscribe", &can);
    if (on && !can) {
        *whyp =
            xasprintf("MCP server %s does not offer resource subscriptions (resources.subscribe)",
                      s->cfg->name);
        return JSONRPC_METHOD_NOT_FOUND;
    }
    sub = sub_find(ss, orig);
    if (!on) {
        if (sub && sub_has(sub, p->id))
            sub_leave(s, sub, p->id);
        return 0;
    }
    if (!sub && ss->n_subs >= SURFACE_MAX_SUBS) {
        *whyp = xasprintf("MCP server %s already has %d resource subscriptions, the most mcpd "
                          "keeps per server; unsubscribe from some (resources/unsubscribe) first",
                          s->cfg->name, SURFACE_MAX_SUBS);
        return JSONRPC_INVALID_REQUEST;
    }
    if (!sub) {
        ss->subs = xrealloc(ss->subs, (ss->n_subs + 1) * sizeof(*ss->subs));
        sub = &ss->subs[ss->n_subs++];
        *sub = (SurfaceSub){.uri = xstrdup(orig)};
        /* The first agent subscribes upstream; a server still connecting is subscribed then. */
        if (s->state == SERVER_CONNECTED && s->up)
            send_subscribe(s, "resources/subscribe", orig);
    }
    if (!sub_has(sub, p->id)) {
        sub->peers = xrealloc(sub->peers, (sub->n_peers + 1) * sizeof(*sub->peers));
        sub->peers[sub->n_peers++] = p->id;
    }
    /* Only a running server tells of updates: an idle one starts, and is subscribed once it
     * is connected (surface_server_connected); the subscription then keeps it up. */
    server_wake(s);
    return 0;
}

void surface_subscribe(Manager *m, Peer *p, yajl_val id, yajl_val params, bool on)
{
    _cleanup_free_ char *why = NULL;
    int code = surface_subscribe_uri(m, p, json_get_string(params, "uri"), on, &why);

    if (code)
        agent_reply_error(m->peers, p->id, id, code, why);
    else
        agent_reply(m->peers, p->id, id, NULL);
}

void surface_peer_gone(Manager *m, Peer *p)
{
    surface_passthrough_clear(m, p);
    for (size_t i = 0; i < m->servers.n_order; i++) {
        Server *s = m->servers.order[i];
        ServerSurface *ss = s->surface;
        for (size_t j = ss ? ss->n_subs : 0; j-- > 0;)
            if (sub_has(&ss->subs[j], p->id))
                sub_leave(s, &ss->subs[j], p->id);
    }
}

void surface_complete(Manager *m, Peer *p, yajl_val id, yajl_val params)
{
    yajl_val ref = json_get_object(params, "ref");
    const char *type = json_get_string(ref, "type");
    _cleanup_json_ yajl_val fwd = json_copy(params);
    yajl_val fref = json_get_object(fwd, "ref");
    _cleanup_free_ char *orig = NULL, *why = NULL;
    Server *s = NULL;

    if (surface_passthrough(m, p, &s)) {
        if (!s)
            why = xstrdup("the server this agent sees has left its workspace");
    } else if (type && streq(type, "ref/prompt") && json_get_string(ref, "name")) {
        size_t n;
        NamingEntry *e = prompt_names(ws_of_peer(&m->workspaces, p), &n);
        for (size_t i = 0; i < n && !s; i++)
            if (streq(e[i].name, json_get_string(ref, "name"))) {
                s = ((PromptRef *)e[i].data)->s;
                orig = xstrdup(e[i].tool);
            }
        prompt_names_free(e, n);
        if (!s)
            why = xasprintf("Unknown prompt: %s (see prompts/list)", json_get_string(ref, "name"));
        else
            json_object_set(fref, "name", json_string_new(orig));
    } else if (type && streq(type, "ref/resource") && json_get_string(ref, "uri")) {
        s = route_uri(m, p, json_get_string(ref, "uri"), SURFACE_TEMPLATES, &orig, &why);
        if (s)
            json_object_set(fref, "uri", json_string_new(orig));
    } else {
        why = xstrdup("params.ref must be {type:\"ref/prompt\", name} or "
                      "{type:\"ref/resource\", uri}");
    }
    if (!s) {
        agent_reply_error(m->peers, p->id, id, JSONRPC_INVALID_PARAMS, why);
        return;
    }
    if (s->surface && s->surface->caps && !json_get(s->surface->caps, "completions")) {
        _cleanup_free_ char *msg =
            xasprintf("MCP server %s does not offer completions", s->cfg->name);
        agent_reply_error(m->peers, p->id, id, JSONRPC_METHOD_NOT_FOUND, msg);
        return;
    }
    call_route(&m->calls, p, id, s, "completion/complete", fwd);
}

/* ---- set-up ---- */

void surface_list_gated(Manager *m, Peer *p, yajl_val id, SurfaceKind kind, yajl_val params)
{
    ws_list_gated(&m->workspaces, p, id, (int)kind, params);
}

static bool ext_passthrough(void *ud, const Peer *p, Server **sp)
{
    return surface_passthrough(ud, p, sp);
}

static void ext_list(void *ud, Peer *p, yajl_val id, int kind, yajl_val params)
{
    surface_list(ud, p, id, (SurfaceKind)kind, params);
}

static const WorkspaceExt ws_ext = {
    .expose_uri = surface_expose_uri,
    .rewrite_result = surface_rewrite_result,
    .raw_has_uris = surface_raw_has_uris,
    .passthrough = ext_passthrough,
    .list = ext_list,
    .changed = surface_ws_changed,
    .freed = surface_ws_free,
};

void surface_init(Manager *m)
{
    m->ext.server_created = surface_load_cache;
    m->ext.server_connected = surface_server_connected;
    m->ext.server_cleared = surface_server_clear;
    m->ext.server_removed = surface_server_free;
    m->ext.server_notification = surface_notification;
    m->ext.server_status = surface_status;
    m->ext.server_busy = surface_server_busy;
    m->ext.peer_gone = surface_peer_gone;
    m->ext.deinit = surface_passthrough_deinit;
    m->workspaces.ext = &ws_ext;
    m->workspaces.ext_ud = m;
}
