// SPDX-License-Identifier: MIT
// systemd: socket activation, sd_notify, the watchdog and journald, behind one interface.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/sys/journal.h"
#include "daemon/sys/systemd.h"

bool systemd_built_in(void)
{
    return true;
}

int systemd_listen_fd(void)
{
    char **names = NULL;
    int n = sd_listen_fds_with_names(1, &names), chosen = -1;

    if (n <= 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int fd = SD_LISTEN_FDS_START + i;
        const char *name = names && names[i] ? names[i] : "";
        bool ours = chosen < 0 && (streq(name, "mcpd") || n == 1 || streq(name, "unknown")) &&
                    sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0;
        if (ours) {
            chosen = fd;
            fd_set_cloexec(fd);
        } else {
            log_warning("closing fd %d (\"%s\") passed by systemd: not a listening Unix stream "
                        "socket named mcpd",
                        fd, name);
            close(fd);
        }
    }
    for (int i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
    return chosen;
}

void systemd_notify_ready(const char *status)
{
    sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void systemd_notify_status(const char *status)
{
    sd_notifyf(0, "STATUS=%s", status);
}

void systemd_notify_reloading(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
               (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
}

void systemd_notify_stopping(void)
{
    sd_notify(0, "STOPPING=1");
}

void systemd_notify_watchdog(void)
{
    sd_notify(0, "WATCHDOG=1");
}

uint64_t systemd_watchdog_usec(void)
{
    uint64_t usec = 0;

    if (sd_watchdog_enabled(0, &usec) <= 0)
        return 0;
    return usec;
}

bool systemd_stderr_is_journal(void)
{
    const char *e = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;

    if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
        return false;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static void journal_sink(int priority, const char *server, const char *event, const char *message)
{
    JournalFields f;
    struct iovec iov[JOURNAL_MAX_FIELDS];

    journal_fields_build(&f, priority, server, event, message);
    for (size_t i = 0; i < f.n; i++) {
        iov[i].iov_base = f.field[i];
        iov[i].iov_len = strlen(f.field[i]);
    }
    if (sd_journal_sendv(iov, (int)f.n) < 0)
        fprintf(stderr, "%s\n", message);
    journal_fields_deinit(&f);
}

int systemd_journal_sendv(const struct iovec *iov, int n)
{
    return sd_journal_sendv(iov, n);
}

void systemd_use_journal(void)
{
    log_set_sink(journal_sink);
}

yajl_val systemd_describe(void)
{
    yajl_val o = json_object_new();
    char *unit = NULL;
    bool under = getenv("NOTIFY_SOCKET") || getenv("INVOCATION_ID");

    json_object_set(o, "builtIn", json_bool_new(true));
    json_object_set(o, "underSystemd", json_bool_new(under));
    if (under && sd_pid_get_user_unit(0, &unit) >= 0 && unit) {
        json_object_set(o, "unit", json_string_new(unit));
        free(unit);
    }
    json_object_set(o, "watchdogUsec", json_int_new((int64_t)systemd_watchdog_usec()));
    json_object_set(o, "journal", json_bool_new(systemd_stderr_is_journal()));
    return o;
}
