// SPDX-License-Identifier: MIT
// view: a workspace's tool view, the merged tools/list its agents see, built once per change.
#pragma once

#include "daemon/core/manager.h"

/* ws_view_ensure() and ws_view_find() are declared in manager-private.h. */

/** Free the view (safe on a workspace that never built one). */
void ws_view_deinit(Workspace *ws);
