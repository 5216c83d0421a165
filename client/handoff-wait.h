// SPDX-License-Identifier: MIT
// handoff-wait: a handed-off bridge waits for mcpd to say how its host's time ended, in mcpctl
// or in mcpctl-bridge-wait (the small program the bridge becomes); nothing here allocates.
#pragma once

#include <stddef.h>

/*
 * The longest message of HANDOFF_ENDED the bridge repeats on stderr: mcpd's reasons are a
 * sentence or two; a longer one is cut (the status is what the host acts on).
 */
#define HANDOFF_WAIT_MESSAGE_MAX 1024

/**
 * The exit status that line (len bytes, no newline) gives when it is mcpd's HANDOFF_ENDED
 * notification: params.status when it is an integer 0-255, else 1; params.message, when there,
 * decoded into msg (at most msg_max - 1 bytes, cut at a character, NUL-terminated; "" if none).
 * -1 when line is not that notification (any other line, or not JSON).
 */
int handoff_ended_parse(const char *line, size_t len, char *msg, size_t msg_max);

/**
 * Wait on sock, mcpd's connection after it took the host's pipes, for HANDOFF_ENDED (pending:
 * bytes of it already read, n_pending of them): says its message on stderr and returns its
 * status. mcpd gone without saying (stopped, crashed), or a line past HANDOFF_LINE_MAX: says
 * "mcpd closed the connection" and returns 1, as a relaying bridge does.
 */
int handoff_wait(int sock, const char *pending, size_t n_pending);
