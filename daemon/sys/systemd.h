// SPDX-License-Identifier: MIT
// systemd: socket activation, sd_notify, the watchdog and journald, behind one interface.
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <yajl/yajl_tree.h>

/*
 * systemd.c implements this with libsystemd; systemd-fallback.c, for -Dsystemd=disabled,
 * reports "not under systemd" everywhere, so the rest of the daemon has no #ifdefs.
 */

/**
 * The listening socket systemd passed (named "mcpd", or the only one), checked to be a Unix
 * stream socket; unknown fds are closed with a log line. Return the fd or -1.
 */
int systemd_listen_fd(void);
/** READY=1 with a STATUS= line. */
void systemd_notify_ready(const char *status);
/** STATUS= only. */
void systemd_notify_status(const char *status);
/** RELOADING=1 with MONOTONIC_USEC=. */
void systemd_notify_reloading(void);
/** STOPPING=1. */
void systemd_notify_stopping(void);
/** WATCHDOG=1. */
void systemd_notify_watchdog(void);
/** The watchdog interval asked of us in microseconds, or 0. */
uint64_t systemd_watchdog_usec(void);
/** Whether stderr is connected to the journal ($JOURNAL_STREAM matches fd 2). */
bool systemd_stderr_is_journal(void);
/**
 * One journal entry of n "NAME=value" fields (sd_journal_sendv): 0, or -errno (-ENOSYS
 * without libsystemd).
 */
int systemd_journal_sendv(const struct iovec *iov, int n);
/** Install the journald log sink (structured fields). */
void systemd_use_journal(void);
/** The service context for mcpd/status: built in, under systemd, unit, watchdog, journal. */
yajl_val systemd_describe(void);
/** Whether this build has systemd support. */
bool systemd_built_in(void);
