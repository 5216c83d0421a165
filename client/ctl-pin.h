// SPDX-License-Identifier: MIT
// ctl-pin: mcpctl pin and unpin, a server kept running (no idle stop) while a command holds it.
#pragma once

#include "client/ctl.h"

/* The client name `mcpctl pin` connects under: how `mcpctl unpin` finds the pins it holds. */
#define CTL_PIN_CLIENT "mcpctl pin"

/** pin SERVER: pin it (mcpd/pin, starting it if idle) and hold the pin until a signal or unpin. */
int ctl_verb_pin(Ctl *ctl, char **args, int n);
/** unpin SERVER: end the `mcpctl pin SERVER` commands that hold it, and wait for them to go. */
int ctl_verb_unpin(Ctl *ctl, char **args, int n);
