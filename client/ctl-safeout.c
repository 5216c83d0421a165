// SPDX-License-Identifier: MIT
// ctl-safeout: mcpctl's output without terminal control sequences (see ctl-safeout.h).

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/ctl-safeout.h"
#include "common/util.h"

static void show_control(StrBuf *out, unsigned char c)
{
    strbuf_putc(out, '^');
    strbuf_putc(out, c == 0x7f ? '?' : (char)(c + 0x40));
}

/*
 * Whether the parameters of an SGR sequence (between "ESC[" and "m") only set what mcpctl's own
 * colours set: reset (0 or empty), bold (1, 22), red, green, yellow (31-33) and the default
 * colour (39). Everything else can hide text: concealed (8), faint (2), a background (40-49,
 * 100-107), a foreground (30, 34-37, 38;5;n, 90-97) as dark as the terminal's own background,
 * reverse video (7) with either.
 */
static bool sgr_safe(const char *p, size_t n)
{
    static const char *const safe[] = {"", "0", "1", "22", "31", "32", "33", "39"};

    for (size_t i = 0; i <= n;) {
        size_t len = 0;
        bool ok = false;
        while (i + len < n && p[i + len] != ';')
            len++;
        for (size_t k = 0; k < N_ELEMENTS(safe) && !ok; k++)
            ok = strlen(safe[k]) == len && memcmp(safe[k], p + i, len) == 0;
        if (!ok)
            return false;
        i += len + 1;
    }
    return true;
}

/*
 * held[0] is ESC: 1 when it is a whole SGR sequence that only sets mcpctl's own colours, 0 when
 * it may still become one, -1 not.
 */
static int sgr_state(const char *s, size_t n)
{
    if (n < 2)
        return 0;
    if (s[1] != '[')
        return -1;
    for (size_t i = 2; i < n; i++) {
        if (s[i] == 'm')
            return i == n - 1 && sgr_safe(s + 2, i - 2) ? 1 : -1;
        if (!((s[i] >= '0' && s[i] <= '9') || s[i] == ';'))
            return -1;
    }
    return n < SAFEOUT_MAX_SEQ ? 0 : -1;
}

static void feed(SafeOut *st, unsigned char c, StrBuf *out);

/* The held escape is not a colour: ESC is shown, the bytes after it filtered as ordinary ones. */
static void release_escape(SafeOut *st, StrBuf *out)
{
    size_t n = st->n_held;
    char rest[SAFEOUT_MAX_SEQ];

    memcpy(rest, st->held + 1, n - 1);
    st->n_held = 0;
    show_control(out, 0x1b);
    for (size_t i = 0; i < n - 1; i++)
        feed(st, (unsigned char)rest[i], out);
}

/* One byte after the held ones; returns with nothing held unless a sequence is undecided. */
static void feed(SafeOut *st, unsigned char c, StrBuf *out)
{
    if (st->n_held && (unsigned char)st->held[0] == 0xc2) {
        /* A UTF-8 lead byte 0xC2: 0x80-0x9F after it is a C1 control. */
        st->n_held = 0;
        if (c >= 0x80 && c <= 0x9f) {
            strbuf_printf(out, "\\u%04x", c);
            return;
        }
        strbuf_putc(out, (char)0xc2);
    } else if (st->n_held) {
        int s;
        st->held[st->n_held++] = (char)c;
        s = sgr_state(st->held, st->n_held);
        if (s == 0)
            return;
        if (s > 0) {
            strbuf_append(out, st->held, st->n_held);
            st->n_held = 0;
            return;
        }
        release_escape(st, out);
        return;
    }
    if (c == 0x1b || c == 0xc2) {
        st->held[0] = (char)c;
        st->n_held = 1;
    } else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
        show_control(out, c);
    } else {
        strbuf_putc(out, (char)c);
    }
}

void safeout_filter(SafeOut *st, const char *in, size_t n, StrBuf *out)
{
    for (size_t i = 0; i < n; i++)
        feed(st, (unsigned char)in[i], out);
}

void safeout_flush(SafeOut *st, StrBuf *out)
{
    if (!st->n_held)
        return;
    if ((unsigned char)st->held[0] == 0xc2) {
        strbuf_putc(out, (char)0xc2);
        st->n_held = 0;
        return;
    }
    release_escape(st, out);
    safeout_flush(st, out); /* a second ESC among them */
}

typedef struct Sink {
    int fd;
    SafeOut st;
    StrBuf buf;
} Sink;

static bool write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static ssize_t sink_write(void *cookie, const char *data, size_t n)
{
    Sink *s = cookie;

    strbuf_reset(&s->buf);
    safeout_filter(&s->st, data, n, &s->buf);
    return write_all(s->fd, s->buf.data, s->buf.len) ? (ssize_t)n : -1;
}

static int sink_close(void *cookie)
{
    Sink *s = cookie;

    strbuf_reset(&s->buf);
    safeout_flush(&s->st, &s->buf);
    write_all(s->fd, s->buf.data, s->buf.len);
    strbuf_deinit(&s->buf);
    free(s);
    return 0;
}

static FILE *wrap(FILE *old, int fd, int mode)
{
    cookie_io_functions_t io = {.write = sink_write, .close = sink_close};
    Sink *s = xcalloc(1, sizeof(*s));
    FILE *f;

    s->fd = fd;
    if (!(f = fopencookie(s, "w", io))) {
        free(s);
        return old;
    }
    fflush(old);
    setvbuf(f, NULL, mode, 0);
    return f;
}

/* The streams as they were, and the wrapped ones (closed at exit, so held bytes go out). */
static FILE *orig_out, *orig_err, *safe_out, *safe_err;

static void safeout_close(void)
{
    if (safe_out) {
        fclose(safe_out);
        stdout = orig_out;
    }
    if (safe_err) {
        fclose(safe_err);
        stderr = orig_err;
    }
    safe_out = safe_err = NULL;
}

bool safeout_install(bool keep_stdout)
{
    if (safe_err)
        return true;
    orig_out = stdout;
    orig_err = stderr;
    stderr = wrap(stderr, STDERR_FILENO, _IONBF);
    if (stderr != orig_err)
        safe_err = stderr;
    if (!keep_stdout) {
        stdout = wrap(stdout, STDOUT_FILENO, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
        if (stdout != orig_out)
            safe_out = stdout;
    }
    atexit(safeout_close);
    return safe_err && (keep_stdout || safe_out);
}
