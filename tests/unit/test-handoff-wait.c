// SPDX-License-Identifier: MIT
// test-handoff-wait: a handed-off bridge reads mcpd's last word (client/handoff-wait.c): the
// status and message of HANDOFF_ENDED, escapes and cuts, and every other line passed over.

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/handoff-wait.h"
#include "common/handoff.h"
#include "tests/unit/test.h"

#define ENDED(params) "{\"jsonrpc\":\"2.0\",\"method\":\"" HANDOFF_ENDED "\",\"params\":" params "}"

static int parse(const char *line, char *msg, size_t max)
{
    return handoff_ended_parse(line, strlen(line), msg, max);
}

static void test_status(void)
{
    char msg[64];

    CHECK_INTEQ(parse(ENDED("{\"status\":0}"), msg, sizeof(msg)), 0);
    CHECK_STREQ(msg, "");
    CHECK_INTEQ(parse(ENDED("{\"status\":3,\"message\":\"gone\"}"), msg, sizeof(msg)), 3);
    CHECK_STREQ(msg, "gone");
    /* Not a status a process can exit with: 1, as the bridge says for any failure. */
    CHECK_INTEQ(parse(ENDED("{\"status\":256}"), msg, sizeof(msg)), 1);
    CHECK_INTEQ(parse(ENDED("{\"status\":-1}"), msg, sizeof(msg)), 1);
    CHECK_INTEQ(parse(ENDED("{\"status\":\"0\"}"), msg, sizeof(msg)), 1);
    CHECK_INTEQ(parse(ENDED("{}"), msg, sizeof(msg)), 1);
    CHECK_INTEQ(parse(ENDED("{\"status\":0.5}"), msg, sizeof(msg)), 1);
}

static void test_not_ended(void)
{
    char msg[64];

    CHECK_INTEQ(parse("{\"jsonrpc\":\"2.0\",\"method\":\"" HANDOFF_TAKEN "\"}", msg, sizeof(msg)),
                -1);
    CHECK_INTEQ(parse("not json", msg, sizeof(msg)), -1);
    CHECK_INTEQ(parse(ENDED("{\"status\":0}") " x", msg, sizeof(msg)), -1);
    CHECK_INTEQ(parse("", msg, sizeof(msg)), -1);
    CHECK_INTEQ(parse("[\"" HANDOFF_ENDED "\"]", msg, sizeof(msg)), -1);
}

static void test_escapes(void)
{
    char msg[64];

    CHECK_INTEQ(
        parse(ENDED("{\"status\":1,\"message\":\"a\\\"b\\\\c\\/d\\ne\\u00e9\\ud83d\\ude00\"}"), msg,
              sizeof(msg)),
        1);
    CHECK_STREQ(msg, "a\"b\\c/d\ne\xc3\xa9\xf0\x9f\x98\x80");
    /* A message that is not a string is not said. */
    CHECK_INTEQ(parse(ENDED("{\"status\":1,\"message\":5}"), msg, sizeof(msg)), 1);
    CHECK_STREQ(msg, "");
}

/* A long message is cut at a character, never inside one. */
static void test_cut(void)
{
    char msg[6];

    CHECK_INTEQ(parse(ENDED("{\"status\":1,\"message\":\"abcdefgh\"}"), msg, sizeof(msg)), 1);
    CHECK_STREQ(msg, "abcde");
    CHECK_INTEQ(parse(ENDED("{\"status\":1,\"message\":\"abcd\xc3\xa9\"}"), msg, sizeof(msg)), 1);
    CHECK_STREQ(msg, "abcd");
    CHECK_INTEQ(parse(ENDED("{\"status\":1,\"message\":\"abcd\\u00e9\"}"), msg, sizeof(msg)), 1);
    CHECK_STREQ(msg, "abcd");
    CHECK_INTEQ(
        parse(ENDED("{\"status\":1,\"message\":\"ab\xf0\x9f\x98\x80x\"}"), msg, sizeof(msg)), 1);
    CHECK_STREQ(msg, "ab");
}

/* handoff_wait on a socket pair: lines before the end are passed over; EOF is status 1. */
static void test_wait(void)
{
    int sv[2];
    const char *lines = "{\"jsonrpc\":\"2.0\",\"method\":\"other\"}\n" ENDED("{\"status\":7}") "\n";

    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(write(sv[1], lines + 10, strlen(lines) - 10) > 0);
    CHECK_INTEQ(handoff_wait(sv[0], lines, 10), 7);
    close(sv[1]);
    close(sv[0]);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(write(sv[1], "{\"half", 6) == 6);
    close(sv[1]);
    CHECK_INTEQ(handoff_wait(sv[0], NULL, 0), 1);
    close(sv[0]);
}

int main(void)
{
    RUN(test_status);
    RUN(test_not_ended);
    RUN(test_escapes);
    RUN(test_cut);
    RUN(test_wait);
    return test_main_result();
}
