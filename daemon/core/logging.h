// SPDX-License-Identifier: MIT
// logging: an upstream's log messages reach the agents that see its server, each at the level it
// asked for, and the upstream's own level follows the most verbose of them (logging/setLevel).
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/core/call.h"
#include "daemon/core/server.h"
#include "daemon/downstream/peer.h"

/** notifications/message from server s: to every agent that sees s, at its own level. */
void logging_message(CallRegistry *cr, Server *s, yajl_val params);
/** logging/setLevel from a peer (level already checked); upstream levels follow. */
void logging_set_level(CallRegistry *cr, Peer *p, int level);
/** Set the upstream log level to the most verbose any of its agents asked for. */
void logging_update(CallRegistry *cr, Server *s);
