// SPDX-License-Identifier: MIT
// systemd-fallback: the systemd interface for builds without libsystemd (-Dsystemd=disabled).

#include <errno.h>

#include "common/json.h"
#include "daemon/sys/systemd.h"

bool systemd_built_in(void)
{
    return false;
}

int systemd_listen_fd(void)
{
    return -1;
}

void systemd_notify_ready(const char *status)
{
    (void)status;
}

void systemd_notify_status(const char *status)
{
    (void)status;
}

void systemd_notify_reloading(void)
{
}

void systemd_notify_stopping(void)
{
}

void systemd_notify_watchdog(void)
{
}

uint64_t systemd_watchdog_usec(void)
{
    return 0;
}

bool systemd_stderr_is_journal(void)
{
    return false;
}

int systemd_journal_sendv(const struct iovec *iov, int n)
{
    (void)iov, (void)n;
    return -ENOSYS;
}

void systemd_use_journal(void)
{
}

yajl_val systemd_describe(void)
{
    yajl_val o = json_object_new();

    json_object_set(o, "builtIn", json_bool_new(false));
    json_object_set(o, "underSystemd", json_bool_new(false));
    return o;
}
