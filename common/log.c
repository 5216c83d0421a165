// SPDX-License-Identifier: MIT
// log: levelled log lines tagged with a server and an event, to stderr or a pluggable sink.

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "common/log.h"
#include "common/strbuf.h"

static int log_level = LOG_INFO;
static LogSink log_sink;
static const char *log_ident = "mcpd";

static const char *const level_names[] = {
    [LOG_EMERG] = "emerg",     [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit", [LOG_ERR] = "error",
    [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void log_set_level(int priority)
{
    log_level = priority;
}

int log_get_level(void)
{
    return log_level;
}

int log_level_from_string(const char *s)
{
    for (int p = LOG_ERR; p <= LOG_DEBUG; p++)
        if (streq(s, level_names[p]))
            return p;
    if (streq(s, "warn"))
        return LOG_WARNING;
    return -EINVAL;
}

const char *log_level_name(int priority)
{
    if (priority < 0 || priority > LOG_DEBUG)
        return "unknown";
    return level_names[priority];
}

void log_set_sink(LogSink sink)
{
    log_sink = sink;
}

void log_set_ident(const char *ident)
{
    log_ident = ident;
}

static void stderr_sink(int priority, const char *server, const char *message)
{
    StrBuf sb = STRBUF_INIT;
    struct timespec ts;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    strbuf_printf(&sb, "%02d:%02d:%02d.%03ld %s[%d] %s: ", tm.tm_hour, tm.tm_min, tm.tm_sec,
                  ts.tv_nsec / 1000000, log_ident, (int)getpid(), log_level_name(priority));
    if (server)
        strbuf_printf(&sb, "[%s] ", server);
    strbuf_puts(&sb, message);
    strbuf_putc(&sb, '\n');
    /* One write per record, so lines of concurrent writers do not interleave. */
    (void)fd_write_all(STDERR_FILENO, sb.data, sb.len);
    strbuf_deinit(&sb);
}

void log_fullv(int priority, const char *server, const char *event, const char *fmt, va_list ap)
{
    StrBuf msg = STRBUF_INIT;
    int saved = errno;

    if (!log_enabled(priority))
        return;
    strbuf_vprintf(&msg, fmt, ap);
    /* A record is one line: fold newlines a message may carry (upstream text, yajl errors). */
    for (size_t i = 0; i < msg.len; i++)
        if (msg.data[i] == '\n' || msg.data[i] == '\r')
            msg.data[i] = ' ';
    if (log_sink)
        log_sink(priority, server, event, strbuf_str(&msg));
    else
        stderr_sink(priority, server, strbuf_str(&msg));
    strbuf_deinit(&msg);
    errno = saved;
}

void log_full(int priority, const char *server, const char *event, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_fullv(priority, server, event, fmt, ap);
    va_end(ap);
}
