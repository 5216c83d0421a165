// SPDX-License-Identifier: MIT
// toolcost: what tool definitions cost an agent's model, per server and per workspace view.
#pragma once

#include <yajl/yajl_tree.h>

#include "common/tokens.h"
#include "daemon/core/server.h"
#include "daemon/core/workspace.h"

/** The server's tools as a host sends them, under the names mcpd gives them by default. */
void toolcost_server(const Server *s, TokenCost *c);
/** The workspace's tools/list as a host sends it: what an agent there is shown (cached per build).
 */
const TokenCost *toolcost_view(Workspace *ws);
/** toolBytes and toolTokens members of a status object. */
void toolcost_status(yajl_val o, const TokenCost *c);
