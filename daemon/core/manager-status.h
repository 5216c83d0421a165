// SPDX-License-Identifier: MIT
// manager-status: what the core reports of its state: mcpd/status (every server, workspace and
// agent) and the counts sd_notify shows.
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/core/manager.h"

/** mcpd/status result. */
yajl_val manager_status(Manager *m);
/** Counts for sd_notify STATUS= and logs. */
void manager_counts(Manager *m, unsigned *connectedp, unsigned *totalp, unsigned *toolsp);
