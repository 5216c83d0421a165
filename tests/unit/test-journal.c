// SPDX-License-Identifier: MIT
// test-journal: the structured journald fields of a log record.

#include "daemon/sys/journal.h"
#include "tests/unit/test.h"

static void test_server_record(void)
{
    JournalFields f;

    journal_fields_build(&f, 4, "github", "exit", "process 12 exited with status 1");
    CHECK_INTEQ(f.n, 5);
    CHECK_STREQ(f.field[0], "MESSAGE=[github] process 12 exited with status 1");
    CHECK_STREQ(f.field[1], "PRIORITY=4");
    CHECK_STREQ(f.field[2], "SYSLOG_IDENTIFIER=mcpd");
    CHECK_STREQ(f.field[3], "MCPD_SERVER=github");
    CHECK_STREQ(f.field[4], "MCPD_EVENT=exit");
    journal_fields_deinit(&f);
    CHECK_INTEQ(f.n, 0);
}

static void test_plain_record(void)
{
    JournalFields f;

    journal_fields_build(&f, 6, NULL, NULL, "listening");
    CHECK_INTEQ(f.n, 3);
    CHECK_STREQ(f.field[0], "MESSAGE=listening");
    CHECK_STREQ(f.field[1], "PRIORITY=6");
    journal_fields_deinit(&f);
}

static void test_newlines_and_bounds(void)
{
    JournalFields f;

    /* A newline would split the field in journald's simple form: it must not survive. */
    journal_fields_build(&f, 42, "a\nb", "ev\r", "two\nlines");
    CHECK_STREQ(f.field[0], "MESSAGE=[a b] two lines");
    CHECK_STREQ(f.field[1], "PRIORITY=7");
    CHECK_STREQ(f.field[3], "MCPD_SERVER=a b");
    CHECK_STREQ(f.field[4], "MCPD_EVENT=ev ");
    journal_fields_deinit(&f);
    journal_fields_build(&f, -3, NULL, "only-event", "m");
    CHECK_INTEQ(f.n, 4);
    CHECK_STREQ(f.field[1], "PRIORITY=0");
    CHECK_STREQ(f.field[3], "MCPD_EVENT=only-event");
    journal_fields_deinit(&f);
}

int main(void)
{
    RUN(test_server_record);
    RUN(test_plain_record);
    RUN(test_newlines_and_bounds);
    return test_main_result();
}
