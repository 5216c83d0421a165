// SPDX-License-Identifier: MIT
// test-ctl-safeout: mcpctl's output filter shows control characters and passes only colours.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ctl-safeout.h"
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
    /* Colours (mcpctl's own, and any SGR) pass. */
    expect("\033[32mconnected\033[0m", "\033[32mconnected\033[0m");
    expect("\033[38;5;255mx\033[m", "\033[38;5;255mx\033[m");
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

int main(void)
{
    RUN(test_filter);
    return test_main_result();
}
