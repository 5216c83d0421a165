// SPDX-License-Identifier: MIT
// core-fakes: the core (servers, workspaces, calls) wired by hand for unit tests, with a fake
// surface, agents on socketpairs and no mcpd: what test-call and test-workspace share.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/core/call.h"
#include "daemon/core/route.h"
#include "daemon/core/server.h"
#include "daemon/core/view.h"
#include "daemon/core/workspace.h"
#include "daemon/core/wssearch.h"
#include "tests/unit/test.h"

/*
 * How long a test waits for something the loop must do (a child's answer, a reply): generous,
 * since tests check behaviour, never speed, and the machine may be loaded.
 */
#define CORE_WAIT_MS 20000
/* How long a test waits to be sure that nothing comes (a reply that must not be sent). */
#define CORE_QUIET_MS 300

typedef struct Core {
    struct event_base *base;
    Settings settings;
    char *tmp;
    PeerRegistry peers;
    AgentRegistry agents;
    ServerRegistry servers;
    WorkspaceRegistry workspaces;
    CallRegistry calls;
    unsigned n_settled, n_removed, n_created, n_cleared;
} Core;

/* The events a manager would wire, counted. */
static inline void core_on_created(void *ud, Server *s)
{
    (void)s;
    ((Core *)ud)->n_created++;
}

static inline void core_on_settled(void *ud, Server *s)
{
    Core *c = ud;

    c->n_settled++;
    calls_server_settled(&c->calls, s);
    server_views_changed(&c->workspaces, s);
}

static inline void core_on_tools_changed(void *ud, Server *s)
{
    server_views_changed(&((Core *)ud)->workspaces, s);
}

static inline void core_on_cleared(void *ud, Server *s)
{
    (void)s;
    ((Core *)ud)->n_cleared++;
}

static inline void core_on_notification(void *ud, Server *s, const char *method, yajl_val params)
{
    route_notification(&((Core *)ud)->calls, s, method, params);
}

static inline void core_on_request(void *ud, Server *s, yajl_val id, const char *method,
                                   yajl_val params)
{
    route_request(&((Core *)ud)->calls, s, id, method, params);
}

static inline void core_on_closed(void *ud, Server *s, uint64_t upstream_id)
{
    route_upstream_closed(&((Core *)ud)->calls, s, upstream_id);
}

static inline void core_on_removed(void *ud, Server *s)
{
    Core *c = ud;

    c->n_removed++;
    calls_server_removed(&c->calls, s);
    route_server_removed(&c->calls, s);
}

static const ServerEvents core_server_events = {
    .created = core_on_created,
    .settled = core_on_settled,
    .tools_changed = core_on_tools_changed,
    .cleared = core_on_cleared,
    .notification = core_on_notification,
    .request = core_on_request,
    .closed = core_on_closed,
    .removed = core_on_removed,
};

/* The fake surface: URIs as they are, no passthrough agents, no prompts or resources. */
static char *fake_expose_uri(Workspace *ws, Server *s, const char *uri)
{
    (void)ws, (void)s;
    return xstrdup(uri);
}

static inline void fake_rewrite_result(Workspace *ws, Server *s, yajl_val result)
{
    (void)ws, (void)s, (void)result;
}

static inline bool fake_raw_has_uris(const char *raw, size_t len)
{
    (void)raw, (void)len;
    return false;
}

static inline bool fake_passthrough(void *ud, const Peer *p, Server **sp)
{
    (void)ud, (void)p, (void)sp;
    return false;
}

static inline void fake_list(void *ud, Peer *p, yajl_val id, int kind, yajl_val params)
{
    (void)ud, (void)params;
    _cleanup_free_ char *msg = xasprintf("fake list of kind %d", kind);
    StrBuf sb = STRBUF_INIT;
    yajl_val r = json_object_new();

    json_object_set(r, "fake", json_string_new(msg));
    jsonrpc_write_result(&sb, id, r);
    peer_send_sb(p, &sb);
    strbuf_deinit(&sb);
    json_free(r);
}

static inline void fake_ws_event(Workspace *ws)
{
    (void)ws;
}

static inline void fake_ws_changed(Workspace *ws, bool first)
{
    (void)ws, (void)first;
}

static const WorkspaceExt fake_ws_ext = {
    .expose_uri = fake_expose_uri,
    .rewrite_result = fake_rewrite_result,
    .raw_has_uris = fake_raw_has_uris,
    .passthrough = fake_passthrough,
    .list = fake_list,
    .changed = fake_ws_changed,
    .freed = fake_ws_event,
};

static inline void core_no_dispatch(Peer *p, JsonrpcMsg *m, void *userdata)
{
    (void)p, (void)m, (void)userdata;
}

static inline void core_init(Core *c)
{
    memset(c, 0, sizeof(*c));
    c->base = event_base_new();
    settings_init(&c->settings);
    c->tmp = test_tmpdir();
    peer_registry_init(&c->peers, c->base, (size_t)c->settings.max_message_bytes, core_no_dispatch,
                       NULL, c);
    server_registry_init(&c->servers, c->base, &c->settings, c->tmp, &core_server_events, c);
    ws_registry_init(&c->workspaces, &c->servers, &c->peers, &c->agents, &c->settings, NULL,
                     c->tmp);
    c->workspaces.ext = &fake_ws_ext;
    c->workspaces.views = &wssearch_views;
    c->workspaces.ext_ud = c;
    call_registry_init(&c->calls, &c->workspaces);
    c->workspaces.user_ws = ws_new(&c->workspaces, NULL);
}

static inline void core_deinit(Core *c)
{
    c->servers.shutting_down = true;
    ws_registry_shutdown(&c->workspaces);
    server_registry_shutdown(&c->servers);
    route_deinit(&c->calls);
    call_registry_deinit(&c->calls);
    ws_registry_deinit(&c->workspaces);
    server_registry_deinit(&c->servers);
    agent_registry_deinit(&c->agents);
    peer_registry_deinit(&c->peers);
    /* Let deferred frees (upstreams, transports) run. */
    for (int i = 0; i < 20; i++)
        event_base_loop(c->base, EVLOOP_NONBLOCK);
    event_base_free(c->base);
    test_rm_rf(c->tmp);
    free(c->tmp);
}

/* A server of cfg in the user workspace (a reference held by it), not connected. */
static Server *core_add_server(Core *c, ServerConfig *cfg)
{
    Workspace *ws = c->workspaces.user_ws;
    bool created;
    Server *s = server_acquire(&c->servers, cfg, c->tmp, &created);

    ws->servers = xrealloc(ws->servers, (ws->n_servers + 1) * sizeof(*ws->servers));
    ws->servers[ws->n_servers++] = s;
    ws->dirty = true;
    return s;
}

/* An initialized agent on a socketpair; *fdp is the agent's end (non-blocking). */
static Peer *core_agent(Core *c, int *fdp)
{
    int sv[2];
    Peer *p;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        abort();
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    p = peer_new(&c->peers, sv[0], getuid(), getpid()); /* sv[0] consumed */
    agent_ensure(&c->agents, p->id)->initialized = true;
    *fdp = sv[1];
    return p;
}

/*
 * Run the loop until fd has a whole line for us (returned, newly allocated) or ms pass (NULL).
 * Bytes after the line are kept for the next read of the same fd.
 */
static char *core_read_line(Core *c, int fd, int ms)
{
    static char buf[1 << 20]; /* the fake server's largest answer fits */
    static size_t have;
    static int last_fd = -1;
    uint64_t end = now_ms() + (uint64_t)ms;

    if (fd != last_fd)
        have = 0;
    last_fd = fd;

    for (;;) {
        char *nl = memchr(buf, '\n', have);
        if (nl) {
            char *line = xstrndup(buf, (size_t)(nl - buf));
            have -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, have);
            return line;
        }
        event_base_loop(c->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        ssize_t n = read(fd, buf + have, sizeof(buf) - have);
        if (n > 0) {
            have += (size_t)n;
            continue;
        }
        if (now_ms() >= end)
            return NULL;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        poll(&pfd, 1, 10);
    }
}

/* Run the loop until done(arg) or ms pass; whether it came. */
static inline bool core_run_until(Core *c, bool (*done)(void *), void *arg, int ms)
{
    uint64_t end = now_ms() + (uint64_t)ms;

    while (!done(arg)) {
        if (now_ms() >= end)
            return false;
        event_base_loop(c->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        usleep(2000);
    }
    return true;
}

/* A server config with tools set by hand: disabled, so nothing is started. */
static inline ServerConfig core_cfg_disabled(const char *name)
{
    return (ServerConfig){.name = (char *)name, .type = TRANSPORT_STDIO, .command = "true"};
}
