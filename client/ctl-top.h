// SPDX-License-Identifier: MIT
// ctl-top: mcpctl top, a live view of what each server costs, refreshed like top(1).
#pragma once

#include "client/ctl.h"

/** top: servers by memory or calls, and their busiest tools; one snapshot when not a terminal. */
int ctl_verb_top(Ctl *ctl, char **args, int n);
