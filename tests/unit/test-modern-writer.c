// SPDX-License-Identifier: MIT
// test-modern-writer: the 2026-07-28 writer ends each request it answers: a result whose text does
// not parse goes out as it is under the agent's id, an error in the era's code, a held answer
// after the retry; the request is then gone from every index.

#include <event2/event.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/methods/modern-pending.h"
#include "daemon/methods/modern-writer.h"
#include "tests/unit/test.h"

/* One agent of the era on a transport's peer, whose output the test reads. */
typedef struct Fixture {
    struct event_base *base;
    PeerRegistry reg;
    Peer *p;
    StrBuf got;
    ModernAgent ma;
} Fixture;

static void on_dispatch(Peer *p, JsonrpcMsg *m, void *ud)
{
    (void)p, (void)m, (void)ud;
}

static void on_gone(Peer *p, void *ud)
{
    (void)p, (void)ud;
}

static void sink_collect(Peer *p, const char *data, size_t n, void *ctx)
{
    (void)p;
    strbuf_append(ctx, data, n);
}

static void setup(Fixture *f)
{
    *f = (Fixture){.got = STRBUF_INIT};
    f->base = event_base_new();
    peer_registry_init(&f->reg, f->base, 1 << 20, on_dispatch, on_gone, NULL);
    f->p = peer_new_sink(&f->reg, getuid(), getpid(), sink_collect, &f->got);
    CHECK(f->p != NULL);
    f->ma.writer.write = modern_writer_write;
    f->ma.peer_id = f->p->id;
    strbuf_putc(&f->got, '\0'); /* got.data is a string even when nothing came */
    strbuf_reset(&f->got);
}

static void teardown(Fixture *f)
{
    modern_pending_clear(&f->ma);
    peer_close(f->p, NULL);
    peer_registry_deinit(&f->reg);
    event_base_free(f->base);
    strbuf_deinit(&f->got);
}

/* The request with id text id, as the handlers answer it, and as the agent's retry named it. */
static Pending *retried(ModernAgent *ma, const char *id, const char *method, const char *retry)
{
    Pending *pd = modern_pending_add(ma, id, method);

    modern_pending_index_remove(ma, pd, MODERN_BY_DOWN);
    pd->down_id = xstrdup(retry);
    modern_pending_index_add(ma, pd, MODERN_BY_DOWN);
    return pd;
}

/* Gone from the list and from both id indexes. */
static void check_done(ModernAgent *ma, const char *id, const char *retry)
{
    CHECK_INTEQ(ma->pending.n, 0);
    CHECK(modern_pending_find(ma, id, MODERN_BY_ID) == NULL);
    CHECK(modern_pending_find(ma, retry, MODERN_BY_DOWN) == NULL);
}

/* A result whose text does not parse: out as it is, under the retry's id, and the request ends. */
static void test_unparsed_result_ends_request(void)
{
    static const char raw[] = "{\"content\":[";
    Fixture f;

    setup(&f);
    retried(&f.ma, "7", "tools/call", "\"r2\"");
    f.ma.writer.write(
        &f.ma.writer, f.p,
        &(AgentOut){
            .kind = AGENT_OUT_RESULT, .id_text = "7", .raw = raw, .raw_len = sizeof(raw) - 1});
    CHECK_STREQ(f.got.data, "{\"jsonrpc\":\"2.0\",\"id\":\"r2\",\"result\":{\"content\":[}\n");
    check_done(&f.ma, "7", "\"r2\"");
    teardown(&f);
}

/* An error: resources/read's not-found is the era's -32602, and the request ends. */
static void test_error_ends_request(void)
{
    Fixture f;

    setup(&f);
    retried(&f.ma, "3", "resources/read", "4");
    f.ma.writer.write(
        &f.ma.writer, f.p,
        &(AgentOut){.kind = AGENT_OUT_ERROR, .id_text = "3", .code = -32002, .message = "gone"});
    CHECK(strstr(f.got.data, "\"id\":4,") != NULL);
    CHECK(strstr(f.got.data, "\"code\":-32602") != NULL);
    check_done(&f.ma, "3", "4");
    teardown(&f);
}

/* An answer while the agent answers input requests is held, and goes out at the retry. */
static void test_held_answer_after_retry(void)
{
    Fixture f;
    Pending *pd;

    setup(&f);
    pd = retried(&f.ma, "5", "tools/call", "6");
    pd->parked = true;
    f.ma.writer.write(
        &f.ma.writer, f.p,
        &(AgentOut){.kind = AGENT_OUT_ERROR, .id_text = "5", .code = -32603, .message = "late"});
    CHECK_INTEQ(f.got.len, 0);
    CHECK(pd->has_held);
    CHECK_INTEQ(f.ma.pending.n, 1);
    pd->parked = false;
    modern_writer_held_out(&f.ma, f.p, pd);
    CHECK(strstr(f.got.data, "\"id\":6,") != NULL);
    CHECK(strstr(f.got.data, "\"message\":\"late\"") != NULL);
    check_done(&f.ma, "5", "6");
    teardown(&f);
}

int main(void)
{
    RUN(test_unparsed_result_ends_request);
    RUN(test_error_ends_request);
    RUN(test_held_answer_after_retry);
    return test_main_result();
}
