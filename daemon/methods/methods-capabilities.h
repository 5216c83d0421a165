// SPDX-License-Identifier: MIT
// methods-capabilities: what mcpd declares of itself to an agent, the same for both eras: its
// capabilities and its Implementation object (initialize, server/discover).
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/core/manager.h"
#include "daemon/downstream/peer.h"

/** initialize's and server/discover's capabilities for a peer (a new tree). */
yajl_val methods_capabilities(Manager *mg, Peer *p);
/** mcpd's Implementation object (a new tree). */
yajl_val methods_server_info(void);
