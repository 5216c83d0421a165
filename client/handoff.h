// SPDX-License-Identifier: MIT
// handoff: `mcpctl bridge` hands its host's stdin and stdout to mcpd, then waits for the end.
#pragma once

#include <stdbool.h>

#include "common/hostline.h"

/*
 * Set to "0", the bridge never hands its pipes over and relays the host's messages itself (to
 * compare the two, or should a system refuse passing fds).
 */
#define HANDOFF_ENV "MCPD_BRIDGE_HANDOFF"
/*
 * The path of mcpctl-bridge-wait, the small program a handed-off bridge becomes (client/
 * bridge-wait.c), instead of the one next to mcpctl or installed; "" waits in mcpctl itself.
 */
#define HANDOFF_WAITER_ENV "MCPCTL_BRIDGE_WAIT"

/** Whether stdin and stdout can be handed over at all: false with *whyp (to free) if not. */
bool handoff_possible(char **whyp);

/**
 * Give stdin and stdout to mcpd on sock (a fresh connection, consumed) with what h says of the host
 * (its identity, host_prefix or NULL, the servers it runs itself), then wait until mcpd has served
 * the host to the end. Returns the bridge's exit status, or -1 when nothing was handed over and the
 * bridge must relay instead: *whyp (to free) then says why.
 */
int handoff_run(int sock, const HostLine *h, const char *host_prefix, char **whyp);
