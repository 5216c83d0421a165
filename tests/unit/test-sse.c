// SPDX-License-Identifier: MIT
// test-sse: unit tests for the incremental text/event-stream parser.

#include <string.h>

#include "common/strbuf.h"
#include "daemon/upstream/sse.h"
#include "tests/unit/test.h"

/* Every event as "type|id|data\n", so one string shows what was dispatched. */
typedef struct Seen {
    StrBuf out;
    int n;
    int stop_after; /* 0: never stop */
} Seen;

static int on_event(void *userdata, const SseEvent *ev)
{
    Seen *s = userdata;

    CHECK(strlen(ev->data) == ev->data_len);
    strbuf_printf(&s->out, "%s|%s|%s\n", ev->event, ev->id, ev->data);
    s->n++;
    return s->stop_after && s->n >= s->stop_after ? 7 : 0;
}

/* Feed text in chunks of `chunk` bytes (0: all at once); return what was seen (to free). */
static char *feed(SseParser *p, const char *text, size_t chunk)
{
    Seen s = {STRBUF_INIT, 0, 0};
    size_t n = strlen(text);

    if (!chunk)
        chunk = n ? n : 1;
    for (size_t i = 0; i < n; i += chunk)
        CHECK(sse_parser_feed(p, text + i, i + chunk > n ? n - i : chunk, on_event, &s) == 0);
    return strbuf_detach(&s.out, NULL);
}

static char *parse_once(const char *text, size_t chunk)
{
    SseParser p;
    char *r;

    sse_parser_init(&p, 0);
    r = feed(&p, text, chunk);
    sse_parser_deinit(&p);
    return r;
}

static void test_basic_message(void)
{
    char *r = parse_once("event: message\ndata: {\"a\":1}\n\n", 0);
    CHECK_STREQ(r, "message||{\"a\":1}\n");
    free(r);
}

static void test_every_chunking_gives_the_same(void)
{
    const char *text = "\xEF\xBB\xBF: comment\r\nid: e1\r\nretry: 500\r\ndata: \r\n\r\n"
                       "id: e2\rdata: {\"x\":\rdata: 2}\r\revent: message\ndata:no-space\n\n"
                       "data: tail\n";
    char *whole = parse_once(text, 0);

    CHECK_STREQ(whole, "message|e1|\nmessage|e2|{\"x\":\n2}\nmessage|e2|no-space\n");
    for (size_t c = 1; c < 12; c++) {
        char *r = parse_once(text, c);
        CHECK_STREQ(r, whole);
        free(r);
    }
    free(whole);
}

static void test_priming_event_keeps_id_and_retry(void)
{
    SseParser p;
    char *r;

    sse_parser_init(&p, 0);
    r = feed(&p, "id: event-3\nretry: 500\ndata: \n\n", 0);
    CHECK_STREQ(r, "message|event-3|\n");
    CHECK_STREQ(strbuf_str(&p.id), "event-3");
    CHECK_INTEQ(p.retry_ms, 500);
    free(r);
    /* A retry that is not all digits is ignored. */
    r = feed(&p, "retry: 5s\nretry:\n\n", 0);
    CHECK_STREQ(r, "");
    CHECK_INTEQ(p.retry_ms, 500);
    free(r);
    /* A new connection forgets the partial event, not the id. */
    r = feed(&p, "data: partial", 0);
    sse_parser_reset(&p);
    free(r);
    r = feed(&p, "data: next\n\n", 0);
    CHECK_STREQ(r, "message|event-3|next\n");
    free(r);
    sse_parser_deinit(&p);
}

static void test_fields(void)
{
    char *r = parse_once("data\n\nevent: endpoint\ndata: /message?sessionId=1\n\n"
                         "foo: bar\ndata:  two spaces\n\nid\ndata: x\n\n",
                         0);
    /* "data" alone is an empty data line: the event is "\n" minus the last one = "". */
    CHECK_STREQ(r, "message||\nendpoint||/message?sessionId=1\nmessage|| two spaces\nmessage||x\n");
    free(r);
}

static void test_oversized_event_dropped(void)
{
    SseParser p;
    char big[200];
    char *r;

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    sse_parser_init(&p, 64);
    StrBuf in = STRBUF_INIT;
    strbuf_printf(&in, "data: %s\n\ndata: ok\n\ndata: %.40s\ndata: %.40s\n\ndata: ok2\n\n", big,
                  big, big);
    r = feed(&p, strbuf_str(&in), 7);
    CHECK_STREQ(r, "message||ok\nmessage||ok2\n");
    CHECK_INTEQ(p.n_dropped, 2);
    free(r);
    strbuf_deinit(&in);
    sse_parser_deinit(&p);
}

static void test_callback_stops_feed(void)
{
    SseParser p;
    Seen s = {STRBUF_INIT, 0, 1};
    const char *text = "data: 1\n\ndata: 2\n\n";

    sse_parser_init(&p, 0);
    CHECK_INTEQ(sse_parser_feed(&p, text, strlen(text), on_event, &s), 7);
    CHECK_INTEQ(s.n, 1);
    strbuf_deinit(&s.out);
    sse_parser_deinit(&p);
}

int main(void)
{
    RUN(test_basic_message);
    RUN(test_every_chunking_gives_the_same);
    RUN(test_priming_event_keeps_id_and_retry);
    RUN(test_fields);
    RUN(test_oversized_event_dropped);
    RUN(test_callback_stops_feed);
    return test_main_result();
}
