// SPDX-License-Identifier: MIT
// test-jsonrpc: unit tests for the JSON-RPC message model, the writers and the NDJSON framer.

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonrpc.h"
#include "tests/unit/test.h"

/* Parse a NUL-terminated line; the message must be deinitialised by the caller. */
static int parse(JsonrpcMsg *m, const char *line, char **errp)
{
    return jsonrpc_msg_parse(m, line, strlen(line), errp);
}

static void test_parse_request(void)
{
    JsonrpcMsg m;
    char *err = NULL;
    int r = parse(&m,
                  "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                  "\"params\":{\"name\":\"x\"}}",
                  &err);

    CHECK_INTEQ(r, 0);
    CHECK(err == NULL);
    CHECK_INTEQ(m.kind, JSONRPC_REQUEST);
    CHECK(m.id && YAJL_IS_INTEGER(m.id) && m.id->u.number.i == 7);
    CHECK_STREQ(m.method, "tools/call");
    CHECK_STREQ(json_get_string(m.params, "name"), "x");
    CHECK(m.result == NULL && m.error == NULL);
    jsonrpc_msg_deinit(&m);

    /* String ids and array params; params may be absent. */
    r = parse(&m, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"m\",\"params\":[1]}", &err);
    CHECK_INTEQ(r, 0);
    CHECK_INTEQ(m.kind, JSONRPC_REQUEST);
    CHECK(m.id && YAJL_IS_STRING(m.id));
    CHECK_STREQ(m.id ? m.id->u.string : NULL, "abc");
    CHECK(YAJL_IS_ARRAY(m.params));
    jsonrpc_msg_deinit(&m);

    r = parse(&m, "{\"method\":\"ping\",\"id\":0,\"jsonrpc\":\"2.0\"}", &err);
    CHECK_INTEQ(r, 0);
    CHECK_INTEQ(m.kind, JSONRPC_REQUEST);
    CHECK(m.params == NULL);
    CHECK(m.id && m.id->u.number.i == 0);
    jsonrpc_msg_deinit(&m);
    free(err);
}

static void test_parse_notification(void)
{
    JsonrpcMsg m;
    char *err = NULL;

    CHECK_INTEQ(parse(&m, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &err),
                0);
    CHECK_INTEQ(m.kind, JSONRPC_NOTIFICATION);
    CHECK(m.id == NULL);
    CHECK_STREQ(m.method, "notifications/initialized");
    jsonrpc_msg_deinit(&m);

    /* "id": null is not a request id: treated as a notification. */
    CHECK_INTEQ(parse(&m, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"n\",\"params\":{}}", &err),
                0);
    CHECK_INTEQ(m.kind, JSONRPC_NOTIFICATION);
    CHECK(m.id == NULL);
    CHECK(YAJL_IS_OBJECT(m.params));
    jsonrpc_msg_deinit(&m);
    CHECK(err == NULL);
}

static void test_parse_responses(void)
{
    JsonrpcMsg m;
    char *err = NULL;

    CHECK_INTEQ(parse(&m, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[]}}", &err), 0);
    CHECK_INTEQ(m.kind, JSONRPC_RESPONSE);
    CHECK(m.id && m.id->u.number.i == 3);
    CHECK(YAJL_IS_OBJECT(m.result));
    CHECK(m.method == NULL && m.error == NULL);
    jsonrpc_msg_deinit(&m);

    /* A result may be any value, null included. */
    CHECK_INTEQ(parse(&m, "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":null}", &err), 0);
    CHECK_INTEQ(m.kind, JSONRPC_RESPONSE);
    jsonrpc_msg_deinit(&m);

    CHECK_INTEQ(parse(&m,
                      "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32601,"
                      "\"message\":\"nope\"}}",
                      &err),
                0);
    CHECK_INTEQ(m.kind, JSONRPC_ERROR_RESPONSE);
    CHECK(m.id && m.id->u.number.i == 4);
    int64_t code = 0;
    CHECK_INTEQ(json_get_int(m.error, "code", &code), 0);
    CHECK_INTEQ(code, JSONRPC_METHOD_NOT_FOUND);
    CHECK_STREQ(json_get_string(m.error, "message"), "nope");
    jsonrpc_msg_deinit(&m);

    /* An error for a request whose id could not be read carries id null. */
    CHECK_INTEQ(parse(&m,
                      "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                      "\"message\":\"parse\"}}",
                      &err),
                0);
    CHECK_INTEQ(m.kind, JSONRPC_ERROR_RESPONSE);
    CHECK(m.id == NULL);
    jsonrpc_msg_deinit(&m);
    CHECK(err == NULL);
}

/* Expect an invalid message with outcome want and a non-empty error message. */
static void expect_invalid(const char *line, size_t len, int want)
{
    JsonrpcMsg m;
    char *err = NULL;
    int r = jsonrpc_msg_parse(&m, line, len, &err);

    CHECK_INTEQ(r, want);
    CHECK(err && err[0]);
    if (r != want)
        fprintf(stderr, "  line: %s\n", line);
    free(err);
    jsonrpc_msg_deinit(&m);
}

static void test_parse_invalid(void)
{
    static const char *const invalid[] = {
        "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"m\"}",
        "{\"jsonrpc\":2.0,\"id\":1,\"method\":\"m\"}",
        "{\"id\":1,\"method\":\"m\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"m\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"m\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"m\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"m\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":\"s\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":3}",
        "{\"jsonrpc\":\"2.0\",\"id\":1}",
        "{\"jsonrpc\":\"2.0\",\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":false,\"result\":{}}",
        "\"just a string\"",
        "42",
        "null",
    };

    for (size_t i = 0; i < N_ELEMENTS(invalid); i++)
        expect_invalid(invalid[i], strlen(invalid[i]), JSONRPC_E_INVALID);

    static const char *const batch[] = {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}]", "[]"};
    for (size_t i = 0; i < N_ELEMENTS(batch); i++)
        expect_invalid(batch[i], strlen(batch[i]), JSONRPC_E_BATCH);
    static const char *const not_json[] = {"{\"jsonrpc\":", "not json", "", "{\"a\":1} {}"};
    for (size_t i = 0; i < N_ELEMENTS(not_json); i++)
        expect_invalid(not_json[i], strlen(not_json[i]), JSONRPC_E_PARSE);

    /* A NUL byte inside the line: the text after it must not be silently ignored. */
    static const char nul[] = "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\0garbage";
    expect_invalid(nul, sizeof(nul) - 1, JSONRPC_E_PARSE);
    static const char nul2[] = "{\"jsonrpc\":\"2.0\",\"method\":\"m\0\"}";
    expect_invalid(nul2, sizeof(nul2) - 1, JSONRPC_E_PARSE);

    /* An answer to id 1 that breaks a rule is an error response to id 1 naming the rule, so
     * the request waiting for it fails at once; without an id it stays invalid (above). */
    static const char *const bad_answers[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}",
        "{\"id\":1,\"result\":{}}",
    };
    for (size_t i = 0; i < N_ELEMENTS(bad_answers); i++) {
        JsonrpcMsg b;
        char *err = NULL;
        int64_t code = 0;
        CHECK_INTEQ(jsonrpc_msg_parse(&b, bad_answers[i], strlen(bad_answers[i]), &err), 0);
        CHECK_INTEQ(b.kind, JSONRPC_ERROR_RESPONSE);
        CHECK(b.id && YAJL_IS_INTEGER(b.id) && b.id->u.number.i == 1);
        CHECK_INTEQ(json_get_int(b.error, "code", &code), 0);
        CHECK_INTEQ(code, JSONRPC_INTERNAL_ERROR);
        CHECK(strstr(json_get_string(b.error, "message") ?: "", "malformed answer"));
        CHECK(err == NULL);
        jsonrpc_msg_deinit(&b);
    }

    /* errp is optional. */
    JsonrpcMsg m;
    CHECK_INTEQ(jsonrpc_msg_parse(&m, "[]", 2, NULL), JSONRPC_E_BATCH);
    jsonrpc_msg_deinit(&m);
    CHECK_INTEQ(jsonrpc_msg_parse(&m, "{", 1, NULL), JSONRPC_E_PARSE);
    jsonrpc_msg_deinit(&m);
}

static void test_parse_invalid_keeps_id(void)
{
    JsonrpcMsg m;
    char *err = NULL;

    /* The id of an invalid request is kept, so the error response can name it. */
    CHECK_INTEQ(parse(&m, "{\"jsonrpc\":\"1.0\",\"id\":9,\"method\":\"m\"}", &err),
                JSONRPC_E_INVALID);
    CHECK(m.id && YAJL_IS_INTEGER(m.id) && m.id->u.number.i == 9);
    free(err);
    err = NULL;
    jsonrpc_msg_deinit(&m);

    CHECK_INTEQ(
        parse(&m, "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"m\",\"params\":1}", &err),
        JSONRPC_E_INVALID);
    CHECK_STREQ(m.id && YAJL_IS_STRING(m.id) ? m.id->u.string : NULL, "r1");
    free(err);
    err = NULL;
    jsonrpc_msg_deinit(&m);

    /* An id of the wrong type is not reported as an id. */
    CHECK_INTEQ(parse(&m, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"m\"}", &err),
                JSONRPC_E_INVALID);
    CHECK(m.id == NULL);
    free(err);
    jsonrpc_msg_deinit(&m);

    /* deinit on a zeroed value and twice in a row is safe. */
    JsonrpcMsg z = {0};
    jsonrpc_msg_deinit(&z);
    jsonrpc_msg_deinit(&z);
}

/* Check that sb holds exactly one line, ending in "\n", that parses back as kind. */
static void check_one_line(const StrBuf *sb, JsonrpcKind kind)
{
    const char *s = strbuf_str(sb);
    const char *nl = strchr(s, '\n');
    JsonrpcMsg m;

    CHECK(sb->len > 0 && s[sb->len - 1] == '\n');
    CHECK(nl == s + sb->len - 1);
    _cleanup_free_ char *line = xstrndup(s, sb->len ? sb->len - 1 : 0);
    CHECK_INTEQ(parse(&m, line, NULL), 0);
    CHECK_INTEQ(m.kind, kind);
    jsonrpc_msg_deinit(&m);
}

static void test_write_result(void)
{
    StrBuf sb = STRBUF_INIT;
    _cleanup_json_ yajl_val int_id = json_int_new(12);
    _cleanup_json_ yajl_val str_id = json_string_new("12");
    _cleanup_json_ yajl_val result = json_parse("{\"text\":\"a\\nb\"}", NULL);

    jsonrpc_write_result(&sb, int_id, result);
    CHECK_STREQ(strbuf_str(&sb),
                "{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"text\":\"a\\nb\"}}\n");
    check_one_line(&sb, JSONRPC_RESPONSE);
    strbuf_reset(&sb);

    /* A string id stays a string, and a missing result is written as {}. */
    jsonrpc_write_result(&sb, str_id, NULL);
    CHECK_STREQ(strbuf_str(&sb), "{\"jsonrpc\":\"2.0\",\"id\":\"12\",\"result\":{}}\n");
    check_one_line(&sb, JSONRPC_RESPONSE);
    strbuf_reset(&sb);

    jsonrpc_write_result(&sb, NULL, result);
    CHECK_STREQ(strbuf_str(&sb),
                "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{\"text\":\"a\\nb\"}}\n");
    strbuf_reset(&sb);

    jsonrpc_write_result_raw(&sb, str_id, "[1,2]", 5);
    CHECK_STREQ(strbuf_str(&sb), "{\"jsonrpc\":\"2.0\",\"id\":\"12\",\"result\":[1,2]}\n");
    check_one_line(&sb, JSONRPC_RESPONSE);
    strbuf_deinit(&sb);
}

static void test_write_error(void)
{
    StrBuf sb = STRBUF_INIT;
    _cleanup_json_ yajl_val id = json_string_new("x\"y");
    _cleanup_json_ yajl_val data = json_parse("{\"server\":\"s\"}", NULL);

    jsonrpc_write_error(&sb, id, JSONRPC_INVALID_PARAMS, "bad \"arg\"\nsecond line", NULL);
    CHECK_STREQ(strbuf_str(&sb),
                "{\"jsonrpc\":\"2.0\",\"id\":\"x\\\"y\",\"error\":{\"code\":-32602,"
                "\"message\":\"bad \\\"arg\\\"\\nsecond line\"}}\n");
    check_one_line(&sb, JSONRPC_ERROR_RESPONSE);
    strbuf_reset(&sb);

    jsonrpc_write_error(&sb, NULL, MCPD_ERROR_UNAVAILABLE, "down", data);
    CHECK_STREQ(strbuf_str(&sb), "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32004,"
                                 "\"message\":\"down\",\"data\":{\"server\":\"s\"}}}\n");
    check_one_line(&sb, JSONRPC_ERROR_RESPONSE);
    strbuf_deinit(&sb);
}

static void test_write_request_notification(void)
{
    StrBuf sb = STRBUF_INIT;
    _cleanup_json_ yajl_val params = json_parse("{\"a\":[1,\"\\n\"]}", NULL);

    jsonrpc_write_request(&sb, 18446744073709551615ull, "tools/list", NULL);
    CHECK_STREQ(strbuf_str(&sb),
                "{\"jsonrpc\":\"2.0\",\"id\":18446744073709551615,\"method\":\"tools/list\"}\n");
    strbuf_reset(&sb);

    jsonrpc_write_request(&sb, 5, "tools/call", params);
    CHECK_STREQ(strbuf_str(&sb), "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
                                 "\"params\":{\"a\":[1,\"\\n\"]}}\n");
    check_one_line(&sb, JSONRPC_REQUEST);
    strbuf_reset(&sb);

    jsonrpc_write_notification(&sb, "notifications/initialized", NULL);
    CHECK_STREQ(strbuf_str(&sb),
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    check_one_line(&sb, JSONRPC_NOTIFICATION);
    strbuf_reset(&sb);

    jsonrpc_write_notification(&sb, "m\n", params);
    CHECK_STREQ(strbuf_str(&sb),
                "{\"jsonrpc\":\"2.0\",\"method\":\"m\\n\",\"params\":{\"a\":[1,\"\\n\"]}}\n");
    check_one_line(&sb, JSONRPC_NOTIFICATION);
    strbuf_deinit(&sb);
}

static void test_roundtrip_ids(void)
{
    /* An id read from a request is echoed in its JSON type, whatever its text. */
    static const char *const ids[] = {"0", "-1", "9007199254740993", "\"\"", "\"a b\"", "\"1\""};

    for (size_t i = 0; i < N_ELEMENTS(ids); i++) {
        _cleanup_free_ char *line =
            xasprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"m\"}", ids[i]);
        _cleanup_free_ char *expect =
            xasprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n", ids[i]);
        JsonrpcMsg m;
        StrBuf sb = STRBUF_INIT;
        CHECK_INTEQ(parse(&m, line, NULL), 0);
        jsonrpc_write_result(&sb, m.id, NULL);
        CHECK_STREQ(strbuf_str(&sb), expect);
        strbuf_deinit(&sb);
        jsonrpc_msg_deinit(&m);
    }
}

/* Take the next line from f and compare it with want. */
static void expect_line(Framer *f, const char *want)
{
    char *line = NULL;
    size_t len = 0;
    int r = framer_next(f, &line, &len);

    CHECK_INTEQ(r, 0);
    if (r == 0) {
        CHECK_STREQ(line, want);
        CHECK_INTEQ(len, strlen(want));
    }
}

static void expect_outcome(Framer *f, int want)
{
    char *line = NULL;
    size_t len = 0;
    int r = framer_next(f, &line, &len);

    CHECK_INTEQ(r, want);
    if (r == 0)
        fprintf(stderr, "  unexpected line: %s\n", line);
}

static void test_framer_byte_by_byte(void)
{
    static const char input[] = "{\"a\":1}\n{\"b\":2}\r\n\n\r\nlast";
    Framer f;
    char *line;
    size_t len;
    int n_lines = 0;
    const char *want[] = {"{\"a\":1}", "{\"b\":2}"};

    framer_init(&f, 1024);
    for (size_t i = 0; i < sizeof(input) - 1; i++) {
        framer_feed(&f, input + i, 1);
        int r;
        while ((r = framer_next(&f, &line, &len)) == 0) {
            CHECK(n_lines < 2);
            if (n_lines < 2) {
                CHECK_STREQ(line, want[n_lines]);
                CHECK_INTEQ(len, strlen(want[n_lines]));
            }
            n_lines++;
        }
        CHECK_INTEQ(r, FRAMER_E_AGAIN);
    }
    CHECK_INTEQ(n_lines, 2);
    /* The unterminated tail waits for its newline. */
    CHECK_INTEQ(framer_pending(&f), 4);
    framer_feed(&f, "\n", 1);
    expect_line(&f, "last");
    expect_outcome(&f, FRAMER_E_AGAIN);
    CHECK_INTEQ(framer_pending(&f), 0);
    framer_deinit(&f);
}

static void test_framer_many_in_one_feed(void)
{
    Framer f;
    StrBuf in = STRBUF_INIT;
    char *line;
    size_t len;
    int n = 0, ok = 1;

    for (int i = 0; i < 5000; i++)
        strbuf_printf(&in, "{\"n\":%d}%s", i, i % 3 == 0 ? "\r\n" : i % 7 == 0 ? "\n\n" : "\n");
    framer_init(&f, 0);
    CHECK_INTEQ(f.max, JSONRPC_MAX_LINE_DEFAULT);
    framer_feed(&f, in.data, in.len);
    while (framer_next(&f, &line, &len) == 0) {
        char want[32];
        snprintf(want, sizeof(want), "{\"n\":%d}", n);
        if (strcmp(line, want) != 0 || len != strlen(want))
            ok = 0;
        n++;
    }
    CHECK(ok);
    CHECK_INTEQ(n, 5000);
    CHECK_INTEQ(framer_pending(&f), 0);
    strbuf_deinit(&in);
    framer_deinit(&f);
}

static void test_framer_blank_and_cr(void)
{
    Framer f;

    framer_init(&f, 64);
    framer_feed(&f, "\n\n\r\n\r\nx\r\ny\rz\n", 13);
    expect_line(&f, "x");
    /* Only a trailing CR is removed; one inside the line stays. */
    expect_line(&f, "y\rz");
    expect_outcome(&f, FRAMER_E_AGAIN);
    framer_deinit(&f);
}

static void test_framer_toobig(void)
{
    Framer f;
    char big[40];

    memset(big, 'A', sizeof(big));
    framer_init(&f, 16);

    /* Exactly max bytes is allowed. */
    framer_feed(&f, big, 16);
    framer_feed(&f, "\n", 1);
    expect_line(&f, "AAAAAAAAAAAAAAAA");

    /* An oversized line without its newline yet: reported once, then skipped. */
    framer_feed(&f, big, 20);
    expect_outcome(&f, FRAMER_E_TOOBIG);
    expect_outcome(&f, FRAMER_E_AGAIN);
    framer_feed(&f, big, 40);
    expect_outcome(&f, FRAMER_E_AGAIN);
    framer_feed(&f, big, 40);
    expect_outcome(&f, FRAMER_E_AGAIN);
    CHECK(framer_pending(&f) <= 16); /* nothing of the skipped line is kept */
    framer_feed(&f, "AAA\nnext\n", 9);
    expect_line(&f, "next");
    expect_outcome(&f, FRAMER_E_AGAIN);

    /* An oversized line arriving whole with the start of the following one. */
    framer_feed(&f, big, 30);
    framer_feed(&f, "\nfoll", 5);
    expect_outcome(&f, FRAMER_E_TOOBIG);
    expect_outcome(&f, FRAMER_E_AGAIN);
    framer_feed(&f, "owing\n", 6);
    expect_line(&f, "following");
    expect_outcome(&f, FRAMER_E_AGAIN);
    framer_deinit(&f);
}

static void test_framer_toobig_byte_by_byte(void)
{
    Framer f;
    int n_toobig = 0, n_lines = 0;
    char *line;
    size_t len;

    framer_init(&f, 8);
    for (int i = 0; i < 100; i++) {
        framer_feed(&f, "B", 1);
        int r;
        while ((r = framer_next(&f, &line, &len)) != FRAMER_E_AGAIN) {
            if (r == FRAMER_E_TOOBIG)
                n_toobig++;
            else
                n_lines++;
        }
    }
    static const char tail[] = "\nok\n";
    for (size_t i = 0; i < sizeof(tail) - 1; i++) {
        framer_feed(&f, tail + i, 1);
        int r;
        while ((r = framer_next(&f, &line, &len)) != FRAMER_E_AGAIN) {
            if (r == FRAMER_E_TOOBIG) {
                n_toobig++;
            } else {
                CHECK_STREQ(line, "ok");
                n_lines++;
            }
        }
    }
    CHECK_INTEQ(n_toobig, 1);
    CHECK_INTEQ(n_lines, 1);
    framer_deinit(&f);
}

static void test_framer_read_fd(void)
{
    int fds[2];
    Framer f;
    StrBuf in = STRBUF_INIT;
    char *line;
    size_t len;
    int n = 0, ok = 1;

    CHECK(pipe(fds) == 0);
    /* Several read chunks' worth; writes and reads alternate so the pipe never fills. */
    for (int i = 0; i < 20000; i++)
        strbuf_printf(&in, "line %d\n", i);
    framer_init(&f, 0);
    size_t off = 0;
    bool eof = false;
    while (!eof) {
        if (off < in.len) {
            size_t chunk = MIN(in.len - off, 4093);
            CHECK_INTEQ(fd_write_all(fds[1], in.data + off, chunk), 0);
            off += chunk;
            if (off == in.len)
                close(fds[1]);
        }
        ssize_t r = framer_read_fd(&f, fds[0]);
        CHECK(r >= 0);
        if (r <= 0)
            eof = true;
        while (framer_next(&f, &line, &len) == 0) {
            char want[32];
            snprintf(want, sizeof(want), "line %d", n);
            if (strcmp(line, want) != 0)
                ok = 0;
            n++;
        }
    }
    CHECK(ok);
    CHECK_INTEQ(n, 20000);
    close(fds[0]);

    /* A non-blocking fd with nothing to read gives -EAGAIN. */
    CHECK(pipe(fds) == 0);
    CHECK_INTEQ(fd_set_nonblock(fds[0]), 0);
    CHECK_INTEQ(framer_read_fd(&f, fds[0]), -EAGAIN);
    close(fds[1]);
    CHECK_INTEQ(framer_read_fd(&f, fds[0]), 0);
    close(fds[0]);
    /* A closed fd gives -EBADF. */
    CHECK_INTEQ(framer_read_fd(&f, fds[0]), -EBADF);

    strbuf_deinit(&in);
    framer_deinit(&f);
}

static void test_framer_zeroed(void)
{
    Framer f = {0};

    framer_deinit(&f);
    framer_deinit(&f);
    CHECK(f.buf == NULL);
}

/* A line whose params (or result) nest n levels deep; the caller frees it. */
static char *deep_line(const char *head, int n)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, head);
    for (int i = 0; i < n; i++)
        strbuf_putc(&sb, '[');
    for (int i = 0; i < n; i++)
        strbuf_putc(&sb, ']');
    strbuf_putc(&sb, '}');
    return strbuf_detach(&sb, NULL);
}

static void test_limits(void)
{
    JsonrpcMsg m;
    char *err = NULL;

    /* A request past the depth limit is invalid, its id kept for the answer. */
    _cleanup_free_ char *req =
        deep_line("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\",\"params\":", 100000);
    CHECK_INTEQ(parse(&m, req, &err), JSONRPC_E_INVALID);
    CHECK(m.id && YAJL_IS_INTEGER(m.id) && m.id->u.number.i == 5);
    CHECK_STREQ(err, "JSON nested deeper than 128 levels (mcpd's limit)");
    free(err);
    err = NULL;
    jsonrpc_msg_deinit(&m);

    /* A response past it becomes an error response to the same id, naming the limit. */
    _cleanup_free_ char *resp = deep_line("{\"id\":\"s7\",\"jsonrpc\":\"2.0\",\"result\":", 100000);
    CHECK_INTEQ(parse(&m, resp, &err), 0);
    CHECK_INTEQ(m.kind, JSONRPC_ERROR_RESPONSE);
    CHECK_STREQ(m.id && YAJL_IS_STRING(m.id) ? m.id->u.string : NULL, "s7");
    CHECK_STREQ(json_get_string(m.error, "message"),
                "JSON nested deeper than 128 levels (mcpd's limit)");
    CHECK(err == NULL);
    jsonrpc_msg_deinit(&m);

    /* A notification has no id to answer. */
    _cleanup_free_ char *note = deep_line("{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":", 200);
    CHECK_INTEQ(parse(&m, note, &err), JSONRPC_E_INVALID);
    CHECK(m.id == NULL);
    free(err);
    err = NULL;
    jsonrpc_msg_deinit(&m);

    /* Invalid UTF-8: refused from agents, repaired otherwise. */
    static const char bad[] = "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"m\\udc00\"}";
    CHECK_INTEQ(jsonrpc_msg_parse_mode(&m, bad, strlen(bad), JSON_UTF8_REFUSE, &err),
                JSONRPC_E_INVALID);
    CHECK(m.id && YAJL_IS_INTEGER(m.id) && m.id->u.number.i == 6);
    CHECK(err && strstr(err, "lone UTF-16 surrogate escape"));
    free(err);
    err = NULL;
    jsonrpc_msg_deinit(&m);
    CHECK_INTEQ(parse(&m, bad, &err), 0);
    CHECK_STREQ(m.method, "m\xef\xbf\xbd");
    jsonrpc_msg_deinit(&m);
}

static void test_int64_min_id(void)
{
    JsonrpcMsg m;
    StrBuf sb = STRBUF_INIT;

    CHECK_INTEQ(
        parse(&m, "{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775808,\"method\":\"ping\"}", NULL),
        0);
    CHECK_INTEQ(m.kind, JSONRPC_REQUEST);
    CHECK(m.id && YAJL_IS_INTEGER(m.id) && m.id->u.number.i == INT64_MIN);
    jsonrpc_write_result(&sb, m.id, NULL);
    CHECK(strstr(strbuf_str(&sb), "\"id\":-9223372036854775808,") != NULL);
    strbuf_deinit(&sb);
    jsonrpc_msg_deinit(&m);
}

/* Once every line read is taken, the next read lands at the front of the buffer again. */
static void test_framer_reads_to_front(void)
{
    Framer f;
    int fds[2];
    char *line;
    size_t len;

    CHECK(pipe(fds) == 0);
    framer_init(&f, 0);
    for (int i = 0; i < 3; i++) {
        CHECK_INTEQ(write(fds[1], "{\"a\":1}\n", 8), 8);
        CHECK_INTEQ(framer_read_fd(&f, fds[0]), 8);
        CHECK_INTEQ(framer_next(&f, &line, &len), 0);
        CHECK(line == f.buf);
        CHECK_INTEQ(framer_next(&f, &line, &len), FRAMER_E_AGAIN);
    }
    /* A partial line stays where it is: the rest is appended after it. */
    CHECK_INTEQ(write(fds[1], "{\"b\"", 4), 4);
    CHECK_INTEQ(framer_read_fd(&f, fds[0]), 4);
    CHECK_INTEQ(framer_next(&f, &line, &len), FRAMER_E_AGAIN);
    CHECK_INTEQ(write(fds[1], ":2}\n", 4), 4);
    CHECK_INTEQ(framer_read_fd(&f, fds[0]), 4);
    CHECK_INTEQ(framer_next(&f, &line, &len), 0);
    CHECK_STREQ(line, "{\"b\":2}");
    framer_deinit(&f);
    close(fds[0]);
    close(fds[1]);
}

int main(void)
{
    RUN(test_framer_reads_to_front);
    RUN(test_parse_request);
    RUN(test_parse_notification);
    RUN(test_parse_responses);
    RUN(test_parse_invalid);
    RUN(test_parse_invalid_keeps_id);
    RUN(test_limits);
    RUN(test_int64_min_id);
    RUN(test_write_result);
    RUN(test_write_error);
    RUN(test_write_request_notification);
    RUN(test_roundtrip_ids);
    RUN(test_framer_byte_by_byte);
    RUN(test_framer_many_in_one_feed);
    RUN(test_framer_blank_and_cr);
    RUN(test_framer_toobig);
    RUN(test_framer_toobig_byte_by_byte);
    RUN(test_framer_read_fd);
    RUN(test_framer_zeroed);
    return test_main_result();
}
