// SPDX-License-Identifier: MIT
// log: levelled log lines tagged with a server and an event, to stderr or a pluggable sink.
#pragma once

#include <stdarg.h>
#include <syslog.h>

#include "common/util.h"

/*
 * A sink receives finished records; the daemon installs a journald sink when stderr is the
 * journal (daemon/sys/systemd.c), so this file stays free of systemd.
 */
typedef void (*LogSink)(int priority, const char *server, const char *event, const char *message);

/** Set the most verbose priority that is emitted (LOG_ERR .. LOG_DEBUG). */
void log_set_level(int priority);
/** Current level. */
int log_get_level(void);
/** Parse "error", "warning", "notice", "info", "debug"; return the priority or -EINVAL. */
int log_level_from_string(const char *s);
/** Name of a priority. */
const char *log_level_name(int priority);
/** Replace the sink (NULL restores stderr). */
void log_set_sink(LogSink sink);
/** Set the program name used in stderr lines. */
void log_set_ident(const char *ident);
/** Return whether a record of this priority would be emitted. */
static inline bool log_enabled(int priority)
{
    return priority <= log_get_level();
}

/** Emit one record. server and event may be NULL. */
void log_full(int priority, const char *server, const char *event, const char *fmt, ...)
    _printf_(4, 5);
void log_fullv(int priority, const char *server, const char *event, const char *fmt, va_list ap);

#define log_error(...)   log_full(LOG_ERR, NULL, NULL, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, NULL, NULL, __VA_ARGS__)
#define log_notice(...)  log_full(LOG_NOTICE, NULL, NULL, __VA_ARGS__)
#define log_info(...)    log_full(LOG_INFO, NULL, NULL, __VA_ARGS__)
#define log_debug(...)                                                                             \
    do {                                                                                           \
        if (log_enabled(LOG_DEBUG))                                                                \
            log_full(LOG_DEBUG, NULL, NULL, __VA_ARGS__);                                          \
    } while (0)
