// SPDX-License-Identifier: MIT
// methods-mcpd: the daemon's own methods (mcpd/status, reload, connect, disconnect, wait, logs,
// searchTools).
#pragma once

#include "daemon/methods/methods.h"

extern const Method methods_mcpd[];
