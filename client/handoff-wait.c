// SPDX-License-Identifier: MIT
// handoff-wait: a handed-off bridge waits for mcpd to say how its host's time ended, in mcpctl
// or in mcpctl-bridge-wait (the small program the bridge becomes); nothing here allocates.

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "client/handoff-wait.h"
#include "common/handoff.h"
#include "common/jsonscan.h"
#include "common/util.h"

static unsigned hex4(const char *p)
{
    unsigned v = 0;

    for (int i = 0; i < 4; i++)
        v = v << 4 | (unsigned)hex_digit(p[i]);
    return v;
}

/* Code point cp as UTF-8 into out (4 bytes of room); its length. */
static size_t utf8_put(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/*
 * The JSON string s (quotes included, already validated by the scanner: every escape is whole,
 * every \u surrogate paired) decoded into msg, cut at a character to fit msg_max - 1 bytes.
 */
static void decode_string(JsonSpan s, char *msg, size_t msg_max)
{
    const char *p = s.p + 1, *end = s.p + s.n - 1;
    size_t k = 0;

    while (p < end) {
        char one[4];
        size_t n = 1;
        if (*p != '\\') {
            one[0] = *p++;
        } else {
            char e = p[1];
            p += 2;
            switch (e) {
            case 'b':
                one[0] = '\b';
                break;
            case 'f':
                one[0] = '\f';
                break;
            case 'n':
                one[0] = '\n';
                break;
            case 'r':
                one[0] = '\r';
                break;
            case 't':
                one[0] = '\t';
                break;
            case 'u': {
                unsigned cp = hex4(p);
                p += 4;
                if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(p + 2) - 0xDC00);
                    p += 6;
                }
                n = utf8_put(one, cp);
                break;
            }
            default:
                one[0] = e;
                break; /* \" \\ \/ */
            }
        }
        if (k + n >= msg_max) { /* cut: drop a character left incomplete (and its lead) */
            while (k > 0 && ((unsigned char)msg[k - 1] & 0xC0) == 0x80)
                k--;
            if (k > 0 && (unsigned char)msg[k - 1] >= 0xC0)
                k--;
            break;
        }
        memcpy(msg + k, one, n);
        k += n;
    }
    msg[k] = '\0';
}

int handoff_ended_parse(const char *line, size_t len, char *msg, size_t msg_max)
{
    static const char *const names[] = {"method", "params"};
    static const char *const inner_names[] = {"status", "message"};
    JsonSpan top[2], inner[2];
    JsonscanLevel t = {names, 2, top, 0, 0}, in = {inner_names, 2, inner, 0, 0};
    int64_t status;

    if (msg_max)
        msg[0] = '\0';
    if (jsonscan_object(line, len, &t, 1, &in) < 0 ||
        !jsonscan_span_eq(top[0], "\"" HANDOFF_ENDED "\""))
        return -1;
    if (msg_max && inner[1].p && inner[1].p[0] == '"')
        decode_string(inner[1], msg, msg_max);
    return jsonscan_is_int(inner[0], &status) && status >= 0 && status < 256 ? (int)status : 1;
}

/* text to stderr, as the bridge's own words; best effort (the host may not read it). */
static void say(const char *text)
{
    static const char prefix[] = "mcpctl bridge: ";
    size_t n = strlen(text);
    struct {
        const char *p;
        size_t n;
    } parts[3] = {{prefix, sizeof(prefix) - 1}, {text, n}, {"\n", 1}};

    for (int i = 0; i < 3; i++)
        for (size_t off = 0; off < parts[i].n;) {
            ssize_t w = write(STDERR_FILENO, parts[i].p + off, parts[i].n - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return;
            off += (size_t)w;
        }
}

int handoff_wait(int sock, const char *pending, size_t n_pending)
{
    /* Static: its pages are touched only as far as mcpd's lines reach (one short line). */
    static char buf[HANDOFF_LINE_MAX + 1];
    static char msg[HANDOFF_WAIT_MESSAGE_MAX];
    size_t len = 0;

    if (n_pending > HANDOFF_LINE_MAX)
        n_pending = 0; /* cannot be: the bridge reads at most that much */
    memcpy(buf, pending ? pending : "", n_pending);
    len = n_pending;
    for (;;) {
        char *nl;
        while ((nl = memchr(buf, '\n', len))) {
            size_t used = (size_t)(nl - buf) + 1;
            int status = handoff_ended_parse(buf, used - 1, msg, sizeof(msg));
            if (status >= 0) {
                if (msg[0])
                    say(msg);
                return status;
            }
            memmove(buf, nl + 1, len - used);
            len -= used;
        }
        if (len >= HANDOFF_LINE_MAX)
            break;
        struct pollfd pfd = {sock, POLLIN, 0};
        if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
            break;
        ssize_t n = read(sock, buf + len, HANDOFF_LINE_MAX - len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    say("mcpd closed the connection");
    return 1;
}
