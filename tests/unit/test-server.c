// SPDX-License-Identifier: MIT
// test-server: one server's lifecycle on its own (server.c with no workspaces, calls or agents):
// the events it fires and their order for connect, tools changed, stop, restart and removal, the
// backoff and the breaker, and its tool cache, against the fake stdio server.

#include <signal.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/core/server.h"
#include "daemon/core/toolset.h"
#include "tests/unit/test.h"

/*
 * How long a test waits for something the loop must do (a child's answer): generous, since
 * tests check behaviour, never speed, and the machine may be loaded.
 */
#define SERVER_WAIT_MS 20000

/* One registry wired to an event log, as a manager would wire it. */
typedef struct T {
    struct event_base *base;
    Settings settings;
    char *tmp;
    ServerRegistry reg;
    StrBuf log; /* "event;" per event, state changes as "state:NAME;" */
    unsigned n_closed;
    uint64_t last_closed_upstream;
} T;

static void note(void *ud, const char *what)
{
    T *t = ud;

    strbuf_puts(&t->log, what);
    strbuf_puts(&t->log, ";");
}

static void on_created(void *ud, Server *s)
{
    (void)s;
    note(ud, "created");
}

static void on_state_changed(void *ud, Server *s)
{
    _cleanup_free_ char *w = xasprintf("state:%s", server_state_name(s->state));

    note(ud, w);
}

static void on_settled(void *ud, Server *s)
{
    (void)s;
    note(ud, "settled");
}

static void on_tools_changed(void *ud, Server *s)
{
    (void)s;
    note(ud, "tools_changed");
}

static void on_connected(void *ud, Server *s)
{
    (void)s;
    note(ud, "connected");
}

static void on_cleared(void *ud, Server *s)
{
    /* What the layers above hold is void: the server holds no tools either. */
    CHECK(s->tools == NULL);
    note(ud, "cleared");
}

static void on_closed(void *ud, Server *s, uint64_t upstream_id)
{
    T *t = ud;

    CHECK(s->up == NULL); /* the session is already detached when the layers above hear of it */
    t->n_closed++;
    t->last_closed_upstream = upstream_id;
    note(ud, "closed");
}

static void on_removed(void *ud, Server *s)
{
    CHECK_INTEQ(s->state, SERVER_STOPPED);
    note(ud, "removed");
}

static const ServerEvents events = {
    .created = on_created,
    .state_changed = on_state_changed,
    .settled = on_settled,
    .tools_changed = on_tools_changed,
    .connected = on_connected,
    .cleared = on_cleared,
    .closed = on_closed,
    .removed = on_removed,
};

static void t_init(T *t)
{
    memset(t, 0, sizeof(*t));
    t->base = event_base_new();
    settings_init(&t->settings);
    t->tmp = test_tmpdir();
    server_registry_init(&t->reg, t->base, &t->settings, t->tmp, &events, t);
}

static void t_deinit(T *t)
{
    server_registry_deinit(&t->reg);
    /* Let deferred frees (upstreams, transports) run. */
    for (int i = 0; i < 20; i++)
        event_base_loop(t->base, EVLOOP_NONBLOCK);
    event_base_free(t->base);
    strbuf_deinit(&t->log);
    test_rm_rf(t->tmp);
    free(t->tmp);
}

/* The events since the last call, and forget them. */
static char *t_events(T *t)
{
    char *s = xstrdup(t->log.data ? t->log.data : "");

    strbuf_reset(&t->log);
    return s;
}

static void check_events(T *t, const char *want)
{
    _cleanup_free_ char *got = t_events(t);

    if (!streq(got, want))
        fprintf(stderr, "events: got  %s\n        want %s\n", got, want);
    CHECK(streq(got, want));
}

/* A stdio server running the fake server with args (NULL-terminated). */
static Server *fake(T *t, const char *name, bool reconnect, const char *const *args)
{
    char *argv[8];
    size_t n = 0;
    ServerConfig cfg = {
        .name = (char *)name,
        .type = TRANSPORT_STDIO,
        .command = getenv("FAKE_SERVER"),
        .enabled = true,
        .reconnect = reconnect,
        .timeout_ms = SERVER_WAIT_MS,
        .call_timeout_ms = SERVER_WAIT_MS,
    };
    bool created;

    for (; args && args[n]; n++)
        argv[n] = (char *)args[n];
    cfg.args = argv;
    cfg.n_args = n;
    return server_acquire(&t->reg, &cfg, t->tmp, &created);
}

static bool not_connecting(void *arg)
{
    Server *s = arg;

    return s->state != SERVER_CONNECTING;
}

static bool run_until(T *t, bool (*done)(void *), void *arg)
{
    uint64_t end = now_ms() + SERVER_WAIT_MS;

    while (!done(arg)) {
        if (now_ms() >= end)
            return false;
        event_base_loop(t->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        usleep(2000);
    }
    return true;
}

static void connect_and_wait(T *t, Server *s)
{
    server_connect(s);
    CHECK(run_until(t, not_connecting, s));
}

/* Connect, tools in, cache written; stop; restart; remove. */
static void test_lifecycle_events(void)
{
    static const char *const args[] = {"--name", "life", "--tools", "3", NULL};
    T t;

    t_init(&t);
    Server *s = fake(&t, "life", false, args);
    check_events(&t, "created;");
    CHECK_INTEQ(s->state, SERVER_STOPPED);
    CHECK(s->tools == NULL); /* no cache yet */

    connect_and_wait(&t, s);
    CHECK_INTEQ(s->state, SERVER_CONNECTED);
    check_events(&t, "state:connecting;state:connected;connected;settled;");
    CHECK(s->tools != NULL);
    size_t n_tools = s->tools ? toolset_len(s->tools) : 0;
    CHECK(n_tools > 3); /* the fake's own tools and tool0..tool2 */
    CHECK(s->tools && toolset_has(s->tools, "tool2"));
    CHECK(!s->tools_deferred);
    CHECK_INTEQ(s->lists_total, 1);
    /* A connect writes the cache at once. */
    CHECK_INTEQ(s->cache_writes, 1);
    CHECK(s->cache_saved_wall_ms > 0);
    CHECK(s->cache_problem == NULL);

    /* mcpd/disconnect: the session closes, the tools go, and the layers above hear it. */
    uint64_t up_id = s->up->id;
    server_stop(s);
    check_events(&t, "closed;cleared;state:stopped;settled;");
    CHECK_INTEQ(t.last_closed_upstream, up_id);
    CHECK(s->up == NULL);
    CHECK(s->tools == NULL);

    /* mcpd/connect: back again, a new session. */
    server_restart(s);
    CHECK(run_until(&t, not_connecting, s));
    CHECK_INTEQ(s->state, SERVER_CONNECTED);
    check_events(&t, "state:connecting;state:connected;connected;settled;");
    CHECK(s->up && s->up->id != up_id);
    /* Restart of a connected server changes nothing. */
    server_restart(s);
    check_events(&t, "");

    /* The last reference: the session closes, then the server goes. */
    server_release(s);
    check_events(&t, "closed;removed;");
    CHECK_INTEQ(t.reg.n_order, 0);
    CHECK_INTEQ(t.n_closed, 2);
    t_deinit(&t);
}

/* A second reference finds the same server; only the last release removes it. */
static void test_acquire_shares(void)
{
    static const char *const args[] = {"--name", "shared", NULL};
    T t;

    t_init(&t);
    Server *a = fake(&t, "shared", false, args);
    Server *b = fake(&t, "shared", false, args);
    uint64_t id = a->id;
    CHECK(a == b);
    CHECK_INTEQ(a->n_refs, 2);
    check_events(&t, "created;");
    server_release(a);
    check_events(&t, "");
    CHECK(server_get(&t.reg, id) == b);
    server_release(b);
    check_events(&t, "removed;"); /* never connected: no session to close */
    CHECK(server_get(&t.reg, id) == NULL);
    t_deinit(&t);
}

static bool tools_changed_seen(void *arg)
{
    T *t = arg;

    return t->log.data && strstr(t->log.data, "tools_changed;");
}

/* list_changed upstream: one re-list, its tools replace the old ones, one tools_changed. */
static void test_tools_changed(void)
{
    static const char *const args[] = {"--name", "chg", "--tools", "1", "--list-changed-after-ms",
                                       "50",     NULL};
    T t;

    t_init(&t);
    Server *s = fake(&t, "chg", false, args);
    connect_and_wait(&t, s);
    CHECK_INTEQ(s->state, SERVER_CONNECTED);
    size_t before = toolset_len(s->tools);
    strbuf_reset(&t.log);
    CHECK(run_until(&t, tools_changed_seen, &t));
    check_events(&t, "tools_changed;");
    CHECK_INTEQ(toolset_len(s->tools), before + 1); /* the fake's late_tool */
    CHECK_INTEQ(s->lists_total, 2);
    CHECK(s->state == SERVER_CONNECTED && !s->tools_deferred);
    /* The re-list's cache write is debounced: pending, not yet done. */
    CHECK_INTEQ(s->cache_writes, 1);
    CHECK(evtimer_pending(s->ev_cache, NULL));
    /* Stopping the server writes it now, while its session is still known. */
    server_stop(s);
    CHECK_INTEQ(s->cache_writes, 2);
    server_release(s);
    t_deinit(&t);
}

/* The cache a connect wrote is what a new server of the same config starts with (deferred). */
static void test_cache_load(void)
{
    static const char *const args[] = {"--name", "cached", "--tools", "4", NULL};
    T t;

    t_init(&t);
    Server *s = fake(&t, "cached", false, args);
    connect_and_wait(&t, s);
    CHECK_INTEQ(s->state, SERVER_CONNECTED);
    CHECK_INTEQ(s->cache_writes, 1);
    size_t n_tools = toolset_len(s->tools);
    server_release(s);
    strbuf_reset(&t.log);

    s = fake(&t, "cached", false, args);
    check_events(&t, "created;");
    CHECK(s->tools != NULL);
    CHECK_INTEQ(s->tools ? toolset_len(s->tools) : 0, n_tools);
    CHECK(s->tools && toolset_has(s->tools, "tool3"));
    CHECK(s->tools_deferred); /* last known, not live */
    CHECK(s->cache_saved_wall_ms > 0);
    CHECK_INTEQ(s->state, SERVER_STOPPED);
    /* Connecting keeps them deferred until the live list replaces them. */
    server_connect(s);
    CHECK(s->tools_deferred && s->tools);
    CHECK(run_until(&t, not_connecting, s));
    CHECK_INTEQ(s->state, SERVER_CONNECTED);
    CHECK(!s->tools_deferred);
    CHECK_INTEQ(toolset_len(s->tools), n_tools);
    server_release(s);
    t_deinit(&t);
}

typedef struct Retry {
    Server *s;
    unsigned restarts_before;
} Retry;

static bool retry_ended(void *arg)
{
    Retry *r = arg;

    return r->s->restarts > r->restarts_before && r->s->state != SERVER_CONNECTING;
}

/* Run the retry timer now rather than after its backoff, and wait for that attempt to end. */
static void fire_retry(T *t, Server *s)
{
    Retry r = {s, s->restarts};

    CHECK(evtimer_pending(s->ev_retry, NULL));
    event_del(s->ev_retry);
    event_active(s->ev_retry, EV_TIMEOUT, 1);
    CHECK(run_until(t, retry_ended, &r));
}

/* A server that keeps dying: backoff doubles, the breaker trips, a restart resets it. */
static void test_backoff_and_breaker(void)
{
    static const char *const args[] = {"--exit-immediately", NULL};
    T t;
    int64_t want_backoff = BACKOFF_FIRST_MS;

    t_init(&t);
    Server *s = fake(&t, "dies", true, args);
    strbuf_reset(&t.log);
    for (int i = 0; i < BREAKER_FAILURES - 1; i++) {
        if (i == 0) {
            server_connect(s);
            CHECK(run_until(&t, not_connecting, s));
        } else {
            fire_retry(&t, s);
        }
        CHECK_INTEQ(s->state, SERVER_BACKOFF);
        CHECK_INTEQ(s->backoff_ms, want_backoff);
        CHECK(evtimer_pending(s->ev_retry, NULL));
        CHECK(s->next_attempt_wall_ms > 0);
        CHECK(s->last_error != NULL);
        CHECK_INTEQ(s->restarts, (unsigned)i);
        _cleanup_free_ char *ev = t_events(&t);
        /* Each attempt: connecting, then its session closes and it backs off (still settled). */
        CHECK(streq(ev, "state:connecting;closed;state:backoff;settled;"));
        if (!streq(ev, "state:connecting;closed;state:backoff;settled;"))
            fprintf(stderr, "attempt %d: %s\n", i, ev);
        want_backoff = MIN(want_backoff * 2, BACKOFF_MAX_MS);
    }
    /* The fifth failure within the window trips the breaker: failed, no retry, tools cleared. */
    fire_retry(&t, s);
    CHECK_INTEQ(s->state, SERVER_FAILED);
    CHECK(!evtimer_pending(s->ev_retry, NULL));
    CHECK(s->last_error && strstr(s->last_error, "not retrying"));
    CHECK(s->last_error && strstr(s->last_error, "mcpctl connect dies"));
    check_events(&t, "state:connecting;closed;state:failed;cleared;settled;");

    /* mcpd/connect resets the breaker and the backoff: the next failure backs off again. */
    server_restart(s);
    CHECK(run_until(&t, not_connecting, s));
    CHECK_INTEQ(s->state, SERVER_BACKOFF);
    CHECK_INTEQ(s->backoff_ms, BACKOFF_FIRST_MS);
    server_release(s);
    t_deinit(&t);
}

/* Without reconnect, one failure is final. */
static void test_no_reconnect_fails_once(void)
{
    static const char *const args[] = {"--exit-immediately", NULL};
    T t;

    t_init(&t);
    Server *s = fake(&t, "once", false, args);
    strbuf_reset(&t.log);
    connect_and_wait(&t, s);
    CHECK_INTEQ(s->state, SERVER_FAILED);
    CHECK(!evtimer_pending(s->ev_retry, NULL));
    CHECK_INTEQ(s->backoff_ms, 0);
    check_events(&t, "state:connecting;closed;state:failed;cleared;settled;");
    server_release(s);
    check_events(&t, "removed;");
    t_deinit(&t);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (!getenv("FAKE_SERVER")) {
        printf("skip: FAKE_SERVER not set\n");
        return 77;
    }
    RUN(test_lifecycle_events);
    RUN(test_acquire_shares);
    RUN(test_tools_changed);
    RUN(test_cache_load);
    RUN(test_backoff_and_breaker);
    RUN(test_no_reconnect_fails_once);
    return test_main_result();
}
